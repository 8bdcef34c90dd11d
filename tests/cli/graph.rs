//! `loopc graph` (spec §7): every format of every example against reviewed
//! snapshots, escaping of hostile names and titles in every format (dot
//! through the real Graphviz, svg through a real XML parser), plans with
//! errors, `--state`, and pipes. Every test runs the real binary.
//!
//! Needs `python3` on PATH, and `dot` (Debian package `graphviz`) for the
//! checks through Graphviz: without it those are skipped, saying so
//! ([`harness::require`]), unless `LOOPC_REQUIRE` names `dot`.
//!
//! Over 600 lines: five output formats, each checked by its real consumer
//! (Graphviz, an XML parser, a Mermaid label decoder) with those helpers here.

use crate::harness::{self, Test};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const FORMATS: [&str; 5] = ["text", "dot", "mermaid", "json", "svg"];

/// A plan whose loop name and titles need escaping in every format.
const ESCAPING_PLAN: &str = r#"# Names and titles that need escaping in every output format.
loop "say \"hi\" <&> \\ naïve ✓\nsecond line" {
  branch   = "loop/escaping"
  parallel = 1
}

budget {
  iterations = 5
}

agent a_b {
  run = "echo \"<&>\" \\"
}

defaults {
  agent = a_b
}

task "x.1" "Quote \" back\\slash <tag> & amp; ünïcødé 🎉\nline two\tend\u{1b}[31m" {
  prompt = "Write <b>bold</b> & \"quoted\" text."
}

task node "`tick` #quot; #35; {braces} [brackets] |pipe| 'apos' 100%": "x.1" {
  run = "printf '%s\\n' \"\\\\\""
}

task end "]]> --> -- %% end": node {
  prompt = """
    Line one.
    Line two with "quotes".
    """
}
"#;

/// The escaping plan's loop name and titles, as they are in the plan.
const ESCAPING_NAME: &str = "say \"hi\" <&> \\ naïve ✓\nsecond line";
const ESCAPING_TITLES: [(&str, &str); 3] = [
    (
        "x.1",
        "Quote \" back\\slash <tag> & amp; ünïcødé 🎉\nline two\tend\u{1b}[31m",
    ),
    (
        "node",
        "`tick` #quot; #35; {braces} [brackets] |pipe| 'apos' 100%",
    ),
    ("end", "]]> --> -- %% end"),
];

/// Every `*.loop` under `examples/` (one directory level deep too), sorted;
/// their file stems are unique (they name the snapshots).
fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("read examples/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            for inner in std::fs::read_dir(&path).expect("read example dir") {
                files.push(inner.expect("dir entry").path());
            }
        } else {
            files.push(path);
        }
    }
    files.retain(|p| p.extension().is_some_and(|e| e == "loop"));
    files.sort();
    assert!(!files.is_empty(), "no examples found");
    let mut stems: Vec<String> = files.iter().map(|p| stem(p)).collect();
    stems.sort();
    stems.dedup();
    assert_eq!(
        stems.len(),
        files.len(),
        "example file stems must be unique"
    );
    files
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .and_then(|s| s.to_str())
        .expect("file stem")
        .to_string()
}

/// A test directory holding the escaping plan as `escaping.loop`.
fn escaping() -> Test {
    Test::new().file("escaping.loop", ESCAPING_PLAN)
}

/// Runs `graph PLAN --format FORMAT` in `test`'s directory and asserts a
/// clean success; returns stdout.
fn graph_ok(test: &Test, plan: &Path, format: &str) -> String {
    let plan = plan.to_str().expect("UTF-8 path");
    test.loopc(&["graph", plan, "--format", format])
        .stderr("")
        .run()
        .stdout
}

/// Runs a program with `input` on stdin; returns (exit code, stdout, stderr).
fn pipe(program: &str, args: &[&str], input: &str) -> (Option<i32>, String, String) {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `{program}` ({e}); install it (see .ci/run)"));
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("join").expect("write stdin");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Parses `xml` with Python's XML parser (fails on any well-formedness
/// error) and returns the text of every SVG element named in `tags`, in
/// document order.
fn svg_elements(xml: &str, tags: &str) -> Vec<String> {
    let script = r#"
import sys, json, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.buffer.read())
ns = "{http://www.w3.org/2000/svg}"
tags = [ns + t for t in sys.argv[1].split(",")]
out = [e.text or "" for e in root.iter() if e.tag in tags]
sys.stdout.write(json.dumps(out))
"#;
    let (code, out, err) = pipe("python3", &["-c", script, tags], xml);
    assert_eq!(code, Some(0), "not well-formed XML: {err}");
    serde_json::from_str(&out).expect("python output")
}

/// [`svg_elements`] of every `<title>` and `<text>`.
fn svg_texts(xml: &str) -> Vec<String> {
    svg_elements(xml, "title,text")
}

/// Whether Graphviz's `dot` is here (else what needs it is skipped,
/// saying so: [`harness::require`]).
fn have_dot() -> bool {
    harness::require("dot", harness::program_runs("dot", &["-V"]))
}

/// Runs the real Graphviz `dot -Tsvg` on `dot`; returns the SVG.
fn graphviz(dot: &str) -> String {
    let (code, out, err) = pipe("dot", &["-Tsvg"], dot);
    assert_eq!(code, Some(0), "dot rejected the input: {err}\n{dot}");
    assert_eq!(err, "", "dot warned");
    out
}

/// How every drawn format shows plan text: control characters other than
/// line breaks as visible escapes (`\t`, `\u{1b}`).
fn visible(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c != '\n' && c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Snapshots and determinism

#[test]
fn every_format_of_every_example_matches_its_snapshot() {
    let test = Test::new();
    for plan in examples() {
        for format in FORMATS {
            let first = graph_ok(&test, &plan, format);
            let second = graph_ok(&test, &plan, format);
            assert_eq!(first, second, "{} --format {format} varies", plan.display());
            insta::assert_snapshot!(format!("{}_{format}", stem(&plan)), first);
        }
    }
}

#[test]
fn every_format_of_the_escaping_plan_matches_its_snapshot() {
    let test = escaping();
    for format in FORMATS {
        let out = graph_ok(&test, Path::new("escaping.loop"), format);
        insta::assert_snapshot!(format!("escaping_{format}"), out);
    }
}

// ---------------------------------------------------------------------------
// Each format is accepted by a real consumer and escapes exactly

#[test]
fn dot_of_every_example_is_accepted_by_graphviz() {
    if !have_dot() {
        return;
    }
    let test = Test::new();
    for plan in examples() {
        let svg = graphviz(&graph_ok(&test, &plan, "dot"));
        let texts = svg_texts(&svg);
        for line in graph_ok(&test, &plan, "text")
            .lines()
            .filter(|l| l.starts_with("  "))
        {
            let name = line.split_whitespace().next().expect("task name");
            assert!(texts.iter().any(|t| t == name), "{name} not drawn by dot");
        }
    }
}

#[test]
fn dot_escaping_round_trips_through_graphviz() {
    if !have_dot() {
        return;
    }
    let test = escaping();
    let dot = graph_ok(&test, Path::new("escaping.loop"), "dot");
    let drawn = svg_elements(&graphviz(&dot), "text");
    // Graphviz draws each label line as one <text>: the graph label first,
    // then per node its name, title lines and kind.
    let mut expected: Vec<String> = ESCAPING_NAME.split('\n').map(String::from).collect();
    let kinds = ["a_b", "command", "a_b"];
    for ((name, title), kind) in ESCAPING_TITLES.iter().zip(kinds) {
        expected.push(name.to_string());
        expected.extend(visible(title).split('\n').map(String::from));
        expected.push(kind.to_string());
    }
    assert_eq!(drawn, expected);
}

#[test]
fn svg_is_well_formed_xml_and_keeps_text_exactly() {
    let test = escaping();
    let svg = graph_ok(&test, Path::new("escaping.loop"), "svg");
    let texts = svg_texts(&svg);
    // Tooltips carry the full name and title (line breaks as spaces).
    for (name, title) in ESCAPING_TITLES {
        let tip = format!("{name}: {}", visible(title).replace('\n', " "));
        assert!(texts.contains(&tip), "missing tooltip {tip:?} in {texts:?}");
        assert!(
            texts.contains(&name.to_string()),
            "missing node name {name:?}"
        );
    }
    assert_eq!(texts[0], ESCAPING_NAME.replace('\n', " "), "document title");
    // Title lines that fit are drawn whole.
    assert!(texts.contains(&"]]> --> -- %% end".to_string()));
    assert!(texts.contains(&"line two\\tend\\u{1b}[31m".to_string()));
    for plan in examples() {
        let svg = graph_ok(&test, &plan, "svg");
        assert!(!svg_texts(&svg).is_empty());
    }
}

#[test]
fn json_keeps_every_string_exactly() {
    let test = escaping();
    let json = graph_ok(&test, Path::new("escaping.loop"), "json");
    let doc: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["name"], ESCAPING_NAME);
    let tasks = doc["tasks"].as_array().expect("tasks");
    let names: Vec<&str> = tasks
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["x.1", "node", "end"]);
    for (task, (name, title)) in tasks.iter().zip(ESCAPING_TITLES) {
        assert_eq!(task["name"], name);
        assert_eq!(task["title"], title);
    }
    assert_eq!(tasks[0]["prompt"], "Write <b>bold</b> & \"quoted\" text.");
    assert_eq!(tasks[1]["run"], "printf '%s\\n' \"\\\\\"");
    assert_eq!(tasks[1]["dependencies"], serde_json::json!(["x.1"]));
    assert_eq!(tasks[2]["prompt"], "Line one.\nLine two with \"quotes\".");
    assert_eq!(tasks[0]["agent"]["run"], "echo \"<&>\" \\");
}

/// Decodes a quoted Mermaid label the way Mermaid does (`#name;` and
/// `#123;` entity codes, `<br/>` line breaks).
fn mermaid_decode(label: &str) -> String {
    let mut out = String::new();
    let mut rest = label;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("<br/>") {
            out.push('\n');
            rest = r;
        } else if let Some(r) = rest.strip_prefix('#') {
            let end = r.find(';').expect("entity ends in ;");
            let code = &r[..end];
            out.push(match code {
                "quot" => '"',
                "lt" => '<',
                "gt" => '>',
                "amp" => '&',
                n => char::from_u32(n.parse().expect("numeric entity")).expect("char"),
            });
            rest = &r[end + 1..];
        } else {
            let c = rest.chars().next().expect("char");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[test]
fn mermaid_labels_have_no_raw_delimiters_and_decode_exactly() {
    let test = escaping();
    let mermaid = graph_ok(&test, Path::new("escaping.loop"), "mermaid");
    let mut lines = mermaid.lines();
    assert_eq!(lines.next(), Some("flowchart TD"));
    let kinds = ["a_b", "command", "a_b"];
    for (i, ((name, title), kind)) in ESCAPING_TITLES.iter().zip(kinds).enumerate() {
        let line = lines.next().expect("node line");
        let prefix = format!("  t{i}[\"");
        let label = line
            .strip_prefix(&prefix)
            .and_then(|l| l.strip_suffix("\"]"))
            .unwrap_or_else(|| panic!("not a node line: {line}"));
        assert!(!label.contains('"'), "raw quote in {label}");
        let bare = label.replace("<br/>", "");
        for c in ['<', '>', '&', '`', '%'] {
            assert!(!bare.contains(c), "raw {c:?} in {label}");
        }
        assert_eq!(
            mermaid_decode(label),
            format!("{name}\n{}\n{kind}", visible(title))
        );
    }
    assert_eq!(lines.collect::<Vec<_>>(), ["  t0 --> t1", "  t1 --> t2"]);
}

#[test]
fn text_shows_control_characters_and_line_breaks_as_escapes() {
    let test = escaping();
    let text = graph_ok(&test, Path::new("escaping.loop"), "text");
    assert!(!text.chars().any(|c| c != '\n' && c.is_control()));
    assert_eq!(
        text,
        "say \"hi\" <&> \\ naïve ✓\\nsecond line: 3 tasks in 3 layers\n\
         \n\
         layer 0\n  \
         x.1   a_b      Quote \" back\\slash <tag> & amp; ünïcødé 🎉\\nline two\\tend\\u{1b}[31m\n\
         \n\
         layer 1\n  \
         node  command  `tick` #quot; #35; {braces} [brackets] |pipe| 'apos' 100%  ← x.1\n\
         \n\
         layer 2\n  \
         end   a_b      ]]> --> -- %% end  ← node\n"
    );
}

// ---------------------------------------------------------------------------
// Diagnostics and exit statuses

const BAD_PLAN: &str = r#"agent claude {
  run = "claude -p"
  colour = "blue"
}

task a "A" {
  prompt = "do a"
  agent  = claud
}

task b: a c {
  run = "make b"
}
"#;

#[test]
fn a_plan_with_errors_prints_checks_diagnostics_and_draws_nothing() {
    let test = Test::new().file("bad.loop", BAD_PLAN);
    let check = test.loopc(&["check", "bad.loop"]).output();
    assert_eq!(check.status, 1);
    let check_err = check.stderr;
    let summary = "error: 1 plan checked: 3 errors, 2 warnings\n";
    let diagnostics = check_err
        .strip_suffix(summary)
        .unwrap_or_else(|| panic!("check's summary changed: {check_err}"));
    assert!(diagnostics.contains("E0002"), "{diagnostics}");
    assert!(diagnostics.contains("E0005"), "{diagnostics}");
    for format in FORMATS {
        let o = test
            .loopc(&["graph", "bad.loop", "--format", format])
            .output();
        assert_eq!(o.status, 1, "{format}");
        assert_eq!(o.stdout, "", "{format} drew something");
        assert_eq!(
            o.stderr,
            format!("{diagnostics}error: `bad.loop` has 3 errors; no graph drawn\n"),
            "{format}"
        );
    }
    let o = test.loopc(&["graph", "bad.loop", "--state"]).output();
    assert_eq!(o.status, 1);
    assert_eq!(o.stdout, "");
}

#[test]
fn warnings_are_printed_like_check_and_the_graph_is_drawn() {
    let plan = "task a { run = \"a\" }\ntask b: a { run = \"b\" }\ntask c: a b { run = \"c\" }\n";
    let test = Test::new().file("warn.loop", plan);
    let check = test.loopc(&["check", "warn.loop"]).output();
    assert_eq!(check.status, 0);
    // `check` ends with its one-line verdict; `graph` draws instead.
    let warnings = check
        .stderr
        .strip_suffix("ok: 3 tasks, 1 warning\n")
        .unwrap_or_default()
        .to_string();
    assert!(warnings.contains("W0002"), "{warnings}");
    let o = test.loopc(&["graph", "warn.loop"]).output();
    assert_eq!(o.status, 0);
    assert_eq!(o.stderr, warnings);
    assert_eq!(
        o.stdout,
        "warn: 3 tasks in 3 layers\n\nlayer 0\n  a  command\n\nlayer 1\n  \
         b  command  ← a\n\nlayer 2\n  c  command  ← a, b\n"
    );
}

#[test]
fn an_empty_plan_draws_an_empty_graph_in_every_format() {
    let test = Test::new().file("empty.loop", "# nothing yet\n");
    for format in FORMATS {
        let o = test
            .loopc(&["graph", "empty.loop", "--format", format])
            .output();
        assert_eq!(o.status, 0, "{format}");
        assert!(o.stderr.contains("W0004"), "{format}: {}", o.stderr);
        let out = o.stdout;
        match format {
            "text" => assert_eq!(out, "empty: 0 tasks in 0 layers\n"),
            "dot" => {
                if have_dot() {
                    graphviz(&out);
                }
            }
            "mermaid" => assert_eq!(out, "flowchart TD\n"),
            "json" => {
                let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
                assert_eq!(doc["tasks"], serde_json::json!([]));
            }
            _ => assert_eq!(svg_texts(&out), ["empty", "empty"]),
        }
    }
}

#[test]
fn an_unreadable_plan_is_a_usage_error() {
    let test = Test::new();
    let o = test.loopc(&["graph", "missing.loop"]).output();
    assert_eq!(o.status, 2);
    assert_eq!(o.stdout, "");
    assert_eq!(
        o.stderr,
        "error: cannot read `missing.loop`: No such file or directory (os error 2)\n"
    );
    let o = test.loopc(&["graph", "x.loop", "--format", "png"]).output();
    assert_eq!(o.status, 2);
}

// ---------------------------------------------------------------------------
// --state

fn pipeline() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pipeline.loop")
}

/// A copy of the pipeline example in `dir`: `--state` reads the state of
/// the plan's own directory's repository (or of that directory outside
/// one), as `loopc run` writes it.
fn pipeline_at(dir: &Path) -> PathBuf {
    let copy = dir.join("pipeline.loop");
    std::fs::copy(pipeline(), &copy).expect("copy the pipeline example");
    copy
}

/// A state file of the pipeline example: schema passed, 0f3a9b2c failed,
/// client cached, e2e skipped, plus a task the plan no longer has.
const STATE_MAP_FORM: &str = r#"{
  "version": 1,
  "plan": "api-v2",
  "tasks": {
    "schema": {"status": "passed", "attempts": 1},
    "0f3a9b2c": {"status": "failed", "reason": "out of attempts"},
    "client": {"status": "cached"},
    "e2e": {"status": "skipped"},
    "gone": {"status": "running"}
  },
  "spent": {"iterations": 4}
}"#;

#[test]
fn state_at_the_repository_root_colors_every_format() {
    let repo = Test::repo()
        .file(".loopc/state.json", STATE_MAP_FORM)
        .file("deep/er/.keep", "");
    let cwd = repo.root.join("deep/er");
    let plan = pipeline_at(&repo.root);
    let plan = plan.to_str().expect("path");
    let run = |format: &str| {
        repo.loopc(&["graph", plan, "--state", "--format", format])
            .current_dir(&cwd)
            .stderr("")
            .run()
            .stdout
    };
    assert_eq!(
        run("text"),
        "api-v2: 4 tasks in 3 layers\n\nlayer 0\n  \
         passed       schema    command  Regenerate the API schema\n\nlayer 1\n  \
         failed       0f3a9b2c  codex    Implement the v2 endpoints  ← schema\n  \
         cached       client    codex    Update the typed client  ← schema\n\nlayer 2\n  \
         skipped      e2e       command  End-to-end report  ← 0f3a9b2c, client\n"
    );
    let doc: serde_json::Value = serde_json::from_str(&run("json")).expect("json");
    let statuses: Vec<(&str, &str)> = doc["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().expect("n"),
                t["status"].as_str().expect("s"),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("schema", "passed"),
            ("0f3a9b2c", "failed"),
            ("client", "cached"),
            ("e2e", "skipped")
        ]
    );
    let dot = run("dot");
    assert!(dot.contains(
        "\"schema\" [label=\"schema\\nRegenerate the API schema\\ncommand\\n[passed]\", \
         fillcolor=\"#a5d6a7\", color=\"#2e7d32\"];"
    ));
    if have_dot() {
        graphviz(&dot);
    }
    let mermaid = run("mermaid");
    assert!(mermaid.contains("  class t0 passed\n"), "{mermaid}");
    assert!(mermaid.contains("  class t1 failed\n"), "{mermaid}");
    assert!(mermaid.contains("  classDef failed fill:#ef9a9a,stroke:#c62828\n"));
    let svg = run("svg");
    assert!(svg.contains("fill=\"#ef9a9a\" stroke=\"#c62828\""), "{svg}");
    assert!(svg_texts(&svg).contains(&"codex · failed".to_string()));
    for format in FORMATS {
        insta::assert_snapshot!(format!("state_pipeline_{format}"), run(format));
    }
    // Without --state the state file is not read.
    let o = repo.loopc(&["graph", plan]).current_dir(&cwd).run();
    assert!(!o.stdout.contains("passed"));
}

#[test]
fn state_in_list_form_outside_a_repository_is_read_from_the_plans_directory() {
    let test = Test::new().file(
        ".loopc/state.json",
        r#"{"version":1,"tasks":[{"name":"schema","status":"running","title":null},
            {"name":"client","status":"interrupted"},{"name":"0f3a9b2c","status":"blocked"}]}"#,
    );
    let plan = pipeline_at(&test.root);
    test.loopc(&["graph", plan.to_str().expect("path"), "--state"])
        .stderr("")
        .stdout(
            "api-v2: 4 tasks in 3 layers\n\nlayer 0\n  \
         running      schema    command  Regenerate the API schema\n\nlayer 1\n  \
         blocked      0f3a9b2c  codex    Implement the v2 endpoints  ← schema\n  \
         interrupted  client    codex    Update the typed client  ← schema\n\nlayer 2\n  \
         pending      e2e       command  End-to-end report  ← 0f3a9b2c, client\n",
        )
        .run();
}

#[test]
fn a_corrupt_or_missing_state_file_is_a_warning_and_the_graph_is_drawn_plain() {
    let test = Test::new();
    let root = test.root.canonicalize().expect("canonical");
    let plan = pipeline_at(&root);
    let plan = plan.to_str().expect("path");
    let graph = |args: &[&str]| test.loopc(args).current_dir(&root).output();
    let plain = graph(&["graph", plan, "--format", "json"]).stdout;
    let path = root.join(".loopc/state.json");
    let shown = path.display();

    let o = graph(&["graph", plan, "--format", "json", "--state"]);
    assert_eq!(o.status, 0);
    assert_eq!(o.stdout, plain);
    assert_eq!(
        o.stderr,
        format!(
            "warning: no run state at `{shown}` (no `loopc run` here yet); drawing without status\n"
        )
    );

    std::fs::create_dir_all(root.join(".loopc")).expect("mkdir");
    let cases = [
        (
            "{\"version\": 1, \"tasks\": ",
            "not valid JSON (EOF while parsing a value at line 1 column 24)",
        ),
        (
            "{\"version\": 9, \"tasks\": []}",
            "unsupported state format version 9",
        ),
        (
            "{\"tasks\": {\"schema\": {\"status\": \"exploded\"}}}",
            "unknown task status `exploded`",
        ),
        ("[1, 2]", "expected a JSON object"),
    ];
    for (content, why) in cases {
        std::fs::write(&path, content).expect("write");
        let o = graph(&["graph", plan, "--format", "json", "--state"]);
        assert_eq!(o.status, 0, "{content}");
        assert_eq!(o.stdout, plain, "{content}");
        assert_eq!(
            o.stderr,
            format!(
                "warning: cannot understand run state `{shown}`: {why}; drawing without status\n"
            )
        );
    }

    // The state of another plan in the same repository.
    std::fs::write(
        &path,
        r#"{"version":1,"plan":"other","tasks":{"schema":"passed"}}"#,
    )
    .expect("write");
    let o = graph(&["graph", plan, "--format", "json", "--state"]);
    assert_eq!(o.status, 0);
    assert_eq!(o.stdout, plain);
    assert_eq!(
        o.stderr,
        format!(
            "warning: the run state `{shown}` is for plan `other`, not `api-v2`; drawing without status\n"
        )
    );

    // A directory where the file should be: unreadable.
    std::fs::remove_file(&path).expect("rm");
    std::fs::create_dir(&path).expect("mkdir");
    let o = graph(&["graph", plan, "--state"]);
    assert_eq!(o.status, 0);
    assert!(
        o.stderr
            .starts_with(&format!("warning: cannot read run state `{shown}`: ")),
        "{}",
        o.stderr
    );
}

// ---------------------------------------------------------------------------
// Pipes and size

/// A plan of `n` command tasks: a chain with a fan of side tasks.
fn big_plan(n: usize) -> String {
    let mut s = String::with_capacity(n * 48);
    s.push_str("task t0 \"Task 0\" { run = \"true\" }\n");
    for i in 1..n {
        let dep = if i % 3 == 0 { i - 3 } else { i - 1 };
        s.push_str(&format!(
            "task t{i} \"Task {i}\": t{dep} {{ run = \"true\" }}\n"
        ));
    }
    s
}

#[test]
fn a_closed_stdout_is_a_normal_exit() {
    let test = Test::new().file("big.loop", big_plan(3000));
    for format in FORMATS {
        let mut child = test
            .loopc(&["graph", "big.loop", "--format", format])
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut out = child.stdout.take().expect("stdout");
        let mut head = [0u8; 16];
        out.read_exact(&mut head).expect("read the head");
        drop(out);
        let o = child.wait_with_output().expect("wait");
        assert_eq!(o.status.code(), Some(0), "{format}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), "", "{format}");
    }
}

#[test]
fn a_large_plan_is_drawn_completely_in_every_format() {
    let n = 3000;
    let test = Test::new().file("big.loop", big_plan(n));
    let big = Path::new("big.loop");
    let text = graph_ok(&test, big, "text");
    assert_eq!(text.lines().filter(|l| l.starts_with("  t")).count(), n);
    let dot = graph_ok(&test, big, "dot");
    assert_eq!(dot.matches(" -> ").count(), n - 1);
    let mermaid = graph_ok(&test, big, "mermaid");
    assert_eq!(mermaid.matches(" --> ").count(), n - 1);
    let json: serde_json::Value =
        serde_json::from_str(&graph_ok(&test, big, "json")).expect("json");
    assert_eq!(json["tasks"].as_array().map(Vec::len), Some(n));
    let svg = graph_ok(&test, big, "svg");
    let edges = svg
        .lines()
        .filter(|l| l.starts_with("<path d=\"M ") && l.contains(" C "));
    assert_eq!(edges.count(), n - 1);
    assert_eq!(svg_texts(&svg).len(), 2 + 4 * n);
}

#[test]
fn text_on_a_terminal_colors_the_status_unless_no_color_is_set() {
    let test = Test::new().file(
        ".loopc/state.json",
        r#"{"version":1,"tasks":{"schema":"passed","client":"failed"}}"#,
    );
    let plan = pipeline_at(&test.root);
    // `script` (util-linux) gives loopc a terminal as stdout.
    let command = format!(
        "'{}' graph '{}' --state",
        harness::loopc_path().display(),
        plan.display()
    );
    let on_terminal = |no_color: Option<&str>| {
        let mut cmd = Command::new("script");
        cmd.args(["-qec", &command, "/dev/null"])
            .current_dir(&test.root)
            .env("GIT_CEILING_DIRECTORIES", std::env::temp_dir())
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        }
        let o = cmd.output().expect("run script (util-linux)");
        assert_eq!(o.status.code(), Some(0));
        String::from_utf8(o.stdout)
            .expect("UTF-8")
            .replace("\r\n", "\n")
    };
    let colored = on_terminal(None);
    assert!(
        colored.contains("  \x1b[32mpassed\x1b[0m       schema    command"),
        "{colored:?}"
    );
    assert!(
        colored.contains("  \x1b[31mfailed\x1b[0m       client"),
        "{colored:?}"
    );
    assert!(
        colored.contains("  \x1b[2mpending\x1b[0m      e2e"),
        "{colored:?}"
    );
    let plain = on_terminal(Some("1"));
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert!(
        plain.contains("  passed       schema    command"),
        "{plain:?}"
    );
}

/// The numbers in `s` after `key="`, e.g. `x="12"`.
fn attr(line: &str, key: &str) -> i64 {
    let pat = format!(" {key}=\"");
    let start = line
        .find(&pat)
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        + pat.len();
    let end = start + line[start..].find('"').expect("closing quote");
    line[start..end].parse().expect("integer")
}

#[test]
fn svg_routes_long_edges_between_the_nodes_of_the_rows_they_cross() {
    let plan = r#"task a "Set up" { run = "a" }
task b "Backend API": a { run = "b" }
task c "Frontend shell": a { run = "c" }
task d "Database schema": a { run = "d" }
task e "Auth": b d { run = "e" }
task f "Pages": c { run = "f" }
task g "Integration tests": e f { run = "g" }
task h "Docs" { run = "h" }
task i "Release": g h { run = "i" }
"#;
    let test = Test::new().file("wide.loop", plan);
    let svg = graph_ok(&test, Path::new("wide.loop"), "svg");
    svg_texts(&svg);
    let rects: Vec<(i64, i64, i64, i64)> = svg
        .lines()
        .filter(|l| l.starts_with("<rect") && l.contains(" rx=\"6\""))
        .map(|l| {
            (
                attr(l, "x"),
                attr(l, "y"),
                attr(l, "width"),
                attr(l, "height"),
            )
        })
        .collect();
    assert_eq!(rects.len(), 9);
    let paths: Vec<&str> = svg
        .lines()
        .filter(|l| l.starts_with("<path d=\"M ") && l.contains(" C "))
        .collect();
    assert_eq!(paths.len(), 10);
    // h → i spans four rows, so it passes three: three straight segments.
    let through: Vec<&&str> = paths.iter().filter(|p| p.contains(" L ")).collect();
    assert_eq!(through.len(), 1, "{paths:?}");
    // Every point of the route lies outside every node's box.
    let numbers: Vec<i64> = through[0]
        .split(|c: char| !c.is_ascii_digit() && c != '-')
        .filter_map(|w| w.parse().ok())
        .collect();
    for pt in numbers.chunks(2).skip(1) {
        let (px, py) = (pt[0], pt[1]);
        for &(x, y, w, h) in &rects {
            let inside = x < px && px < x + w && y < py && py < y + h;
            assert!(!inside, "({px},{py}) is inside node at ({x},{y},{w},{h})");
        }
    }
    // Without slots the route would cross rows in straight lines: the
    // straight segments run vertically between nodes.
    for seg in through[0].split(" L ").skip(1) {
        let mut it = seg.split(' ');
        let lx: i64 = it.next().expect("x").parse().expect("x");
        let ly: i64 = it.next().expect("y").parse().expect("y");
        for &(x, y, w, h) in &rects {
            let crosses = x <= lx && lx <= x + w && y < ly && ly - 1 <= y + h;
            assert!(
                !crosses,
                "segment at x={lx} crosses node at ({x},{y},{w},{h})"
            );
        }
    }
}

#[test]
fn state_written_by_a_real_run_is_shown() {
    let repo = Test::repo();
    repo.plan(
        r#"task a "Write a" { run = "echo a > a.txt" }
task b "Write b": a { run = "echo b > b.txt" }
task broken "Fails" {
  run      = "exit 1"
  attempts = 1
}
task after: broken { run = "echo x > x.txt" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    repo.loopc(&["graph", "plan.loop", "--state"])
        .stderr("")
        .stdout(
            "plan: 4 tasks in 2 layers\n\nlayer 0\n  \
             passed       a       command  Write a\n  \
             failed       broken  command  Fails\n\nlayer 1\n  \
             passed       b       command  Write b  ← a\n  \
             skipped      after   command  ← broken\n",
        )
        .run();
}

#[test]
fn an_unwritable_stdout_is_an_io_error() {
    let plan = pipeline();
    let o = Test::new()
        .loopc(&["graph", plan.to_str().expect("path"), "--format", "json"])
        .output_to_a_full_disk();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: cannot write the graph: No space left on device (os error 28)\n"
    );
}
