//! End-to-end tests of `loopc check` (spec §4): exit statuses, formats, flags.

use crate::harness::Test;

const VALID: &str = "task build { run = \"make\" }\n";
const WARNING: &str = "gate lint = \"make lint\"\ntask build { run = \"make\" }\n";
const ERROR: &str = "task build: nope { run = \"make\" }\n";

#[test]
fn a_valid_plan_exits_0_with_one_ok_line() {
    let test = Test::new().file("plan.loop", VALID);
    test.loopc(&["check", "plan.loop"])
        .stdout("")
        .stderr("ok: 1 task, 0 warnings\n")
        .status(0)
        .run();
    // `-q`: nothing at all; several files are counted.
    test.loopc(&["-q", "check", "plan.loop"])
        .stdout("")
        .stderr("")
        .run();
    test.loopc(&["check", "plan.loop", "plan.loop"])
        .stderr("ok: 2 plans, 2 tasks, 0 warnings\n")
        .run();
}

#[test]
fn errors_exit_1_with_the_diagnostic_and_a_summary() {
    Test::new()
        .file("plan.loop", ERROR)
        .loopc(&["check", "plan.loop"])
        .stdout("")
        .stderr(
            "error[E0005]: unknown task `nope`
  ┌─ plan.loop:1:13
  │
1 │ task build: nope { run = \"make\" }
  │             ^^^^ no task is called `nope`
  │
  = this plan defines no other task

error: 1 plan checked: 1 error, 0 warnings
",
        )
        .status(1)
        .run();
}

#[test]
fn warnings_exit_0_unless_denied() {
    Test::new()
        .file("plan.loop", WARNING)
        .loopc(&["check", "plan.loop"])
        .stderr_contains("warning[W0001]: gate `lint` is defined but never used")
        .status(0)
        .run();
    Test::new()
        .file("plan.loop", WARNING)
        .loopc(&["check", "--deny-warnings", "plan.loop"])
        .stderr_contains("error[W0001]: gate `lint` is defined but never used")
        .status(1)
        .run();
}

#[test]
fn json_prints_one_object_per_line_on_stdout() {
    let out = Test::new()
        .file("a.loop", ERROR)
        .file("b.loop", WARNING)
        .loopc(&["check", "--format", "json", "a.loop", "b.loop"])
        .stderr("")
        .status(1)
        .run();
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], "a.loop");
    assert_eq!(lines[0]["severity"], "error");
    assert_eq!(lines[0]["code"], "E0005");
    assert_eq!(lines[0]["range"]["start"]["line"], 0);
    assert_eq!(lines[0]["range"]["start"]["character"], 12);
    assert_eq!(lines[0]["range"]["end"]["character"], 16);
    assert_eq!(lines[1]["file"], "b.loop");
    assert_eq!(lines[1]["severity"], "warning");
    assert_eq!(lines[1]["code"], "W0001");
    assert!(lines[1]["labels"].is_array());
    assert!(lines[1]["notes"].is_array());
}

#[test]
fn a_missing_file_is_a_one_line_error_with_exit_2() {
    Test::new()
        .loopc(&["check", "missing.loop"])
        .stdout("")
        .stderr("error: cannot read `missing.loop`: No such file or directory (os error 2)\n")
        .status(2)
        .run();
}

#[test]
fn a_directory_is_not_a_plan() {
    let out = Test::new()
        .file("dir/x", "")
        .loopc(&["check", "dir"])
        .status(2)
        .run();
    assert!(
        out.stderr.starts_with("error: cannot read `dir`"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1);
}

#[test]
fn usage_errors_exit_2() {
    Test::new().loopc(&["check"]).status(2).run();
    Test::new()
        .file("plan.loop", VALID)
        .loopc(&["check", "--format", "xml", "plan.loop"])
        .status(2)
        .run();
}

#[test]
fn output_is_plain_when_not_a_terminal() {
    let out = Test::new()
        .file("plan.loop", ERROR)
        .loopc(&["check", "plan.loop"])
        .status(1)
        .run();
    assert!(!out.stderr.contains('\u{1b}'), "no escape codes expected");
}

#[test]
fn crlf_and_bom_are_accepted() {
    Test::new()
        .file(
            "plan.loop",
            "\u{feff}# plan\r\ntask build {\r\n  run = \"make\"\r\n  prompt_note = 1\r\n}\r\n",
        )
        .loopc(&["check", "plan.loop"])
        .stderr_contains("plan.loop:4:3")
        .status(1)
        .run();
    Test::new()
        .file(
            "plan.loop",
            "\u{feff}task build {\r\n  run = \"\"\"\r\n    make\r\n    \"\"\"\r\n}\r\n",
        )
        .loopc(&["-q", "check", "plan.loop"])
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn invalid_utf8_is_a_diagnostic() {
    Test::new()
        .file("plan.loop", b"task a { run = \"\xff\" }\n")
        .loopc(&["check", "plan.loop"])
        .stderr_contains("error[E0001]: file is not valid UTF-8")
        .status(1)
        .run();
}

#[test]
fn every_example_checks_clean() {
    let mut count = 0;
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(crate::harness::examples_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            for inner in std::fs::read_dir(&path).unwrap() {
                paths.push(inner.unwrap().path());
            }
        } else {
            paths.push(path);
        }
    }
    for path in paths {
        if path.extension().is_some_and(|e| e == "loop") {
            let c = loopc::compile_file(&path).unwrap();
            assert!(
                c.diagnostics.is_empty(),
                "{}: {:?}",
                path.display(),
                c.diagnostics
            );
            assert!(c.plan.is_some());
            count += 1;
        }
    }
    assert!(
        count >= 3,
        "expected at least three examples, found {count}"
    );
}

#[test]
fn a_loop_name_that_cannot_be_a_branch_is_e0009() {
    Test::new()
        .file(
            "plan.loop",
            "loop \"auth refactor\" {}\ntask a { run = \"x\" }\n",
        )
        .loopc(&["check", "plan.loop"])
        .stderr_contains(
            "error[E0009]: the loop name `auth refactor` does not make a valid branch name",
        )
        .status(1)
        .run();
    Test::new()
        .file(
            "plan.loop",
            "loop \"auth refactor\" { branch = \"loop/auth\" }\ntask a { run = \"x\" }\n",
        )
        .loopc(&["-q", "check", "plan.loop"])
        .stderr("")
        .status(0)
        .run();
}

/// (source, file name, expected codes in order, line:column of the first).
fn codes(name: &str, source: &str) -> (Vec<&'static str>, String) {
    let c = loopc::compile(name, source);
    let first = c
        .diagnostics
        .first()
        .map(|d| {
            let idx = loopc::diagnostic::LineIndex::new(&c.source);
            let p = idx.position(&c.source, d.primary.span.start);
            format!("{}:{}", p.line + 1, p.character + 1)
        })
        .unwrap_or_default();
    (
        c.diagnostics.iter().map(|d| d.code.as_str()).collect(),
        first,
    )
}

#[test]
fn unterminated_strings_are_e0012_at_the_opening_quote() {
    assert_eq!(
        codes("p.loop", "task u { run = \"abc"),
        (vec!["E0012"], "1:16".into())
    );
    assert_eq!(
        codes("p.loop", "task u { run = \"x }\ntask v { run = \"y\" }\n"),
        (vec!["E0012"], "1:16".into())
    );
    assert_eq!(
        codes("p.loop", "task u {\n  run = \"\"\"\n    abc\n"),
        (vec!["E0012"], "2:9".into())
    );
    // Inside an item that still parses, the string ends at its line.
    assert_eq!(
        codes(
            "p.loop",
            "task u { run = \"abc\n}\ntask v { run = \"y\" }\n"
        ),
        (vec!["E0012"], "1:16".into())
    );
}

#[test]
fn literal_mistakes_get_their_own_codes() {
    let (c, _) = codes(
        "p.loop",
        "budget { cost = $1e3 }\ntask a { run = \"x\" timeout = 1.5h attempts = -1 }\n",
    );
    assert_eq!(c, ["E0012", "E0012", "E0009"]);
    // Money without dollars before the point, and a duration part that
    // starts with `_` (it only separates digits): E0012 at the mistake.
    let msgs = |src: &str| -> Vec<String> {
        loopc::compile("p.loop", src)
            .diagnostics
            .iter()
            .map(|d| format!("{} {}", d.code.as_str(), d.message))
            .collect()
    };
    assert_eq!(
        msgs("budget { cost = $.5 }\ntask a { run = \"x\" }\n"),
        ["E0012 invalid amount `$.5`: expected digits before `.`"]
    );
    assert_eq!(
        codes("p.loop", "task a { run = \"x\" timeout = 1h_30m }\n"),
        (vec!["E0012"], "1:32".into())
    );
    assert_eq!(
        msgs("task a { run = \"x\" timeout = 1d_ }\n"),
        ["E0012 invalid duration `1d_`"]
    );
    assert_eq!(
        msgs("task a { run = \"x\" timeout = 1_000ms }\n"),
        Vec::<String>::new()
    );
    let (c, _) = codes(
        "p.loop",
        "task a \"t\\0\" { run = \"x\\0\" env = { A = \"\\0\" } }\n",
    );
    assert_eq!(c, ["E0009", "E0009", "E0009"]);
}

#[test]
fn dependency_names_follow_the_task_name_rule() {
    let (c, _) = codes("p.loop", "task b: \"a/b\" \"\" { run = \"x\" }\n");
    assert_eq!(c, ["E0011", "E0011"]);
}

#[test]
fn a_byte_order_mark_does_not_count_as_a_column() {
    assert_eq!(
        codes("p.loop", "\u{feff}task a { promt = \"x\" }\n"),
        (vec!["E0002"], "1:10".into())
    );
}

#[test]
fn integration_branches_must_be_usable() {
    let (c, _) = codes("my plan.loop", "task a { run = \"x\" }\n");
    assert_eq!(c, ["E0009"]);
    let (c, _) = codes("my plan.loop", "loop \"ok\" {}\ntask a { run = \"x\" }\n");
    assert!(c.is_empty());
    let (c, _) = codes(
        "p.loop",
        "loop { branch = \"loopc/x\" }\ntask a { run = \"x\" }\n",
    );
    assert_eq!(c, ["E0009"]);
}

#[test]
fn a_directory_of_plans_checks_each_plan() {
    let out = Test::new()
        .file("plans/a.loop", VALID)
        .file("plans/b.loop", ERROR)
        .loopc(&["check", "--format", "json", "plans"])
        .status(1)
        .run();
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0]["file"].as_str().unwrap().ends_with("b.loop"),
        "{}",
        lines[0]
    );
}

#[test]
fn a_directory_with_specs_and_plans_checks_both() {
    let defaults = "agent a { run = \"x\" }\ndefaults { agent = a }\nbudget { iterations = 3 }\n";
    let spec = "## 0a1b2c3d: Do it\nDo the thing.\n\n**Acceptance:** `true`\n";
    Test::new()
        .file("d/defaults.loop", defaults)
        .file("d/spec.md", spec)
        .file("d/x.loop", "task a { run = \"x\" bogus = 1 }\n")
        .loopc(&["check", "d"])
        .stderr_contains("error[E0002]: unknown field `bogus` in task `a`")
        .stderr_contains("2 plans checked")
        .status(1)
        .run();
}

#[test]
fn fmt_takes_directories_and_refuses_specs() {
    let out = Test::new()
        .file("d/a.loop", "task a {run=\"x\"}\n")
        .file("d/b.loop", "task b {\n  run = \"y\"\n}\n")
        .loopc(&["fmt", "--check", "d"])
        .status(1)
        .run();
    assert_eq!(out.stdout.trim().replace('\\', "/"), "d/a.loop");
    Test::new()
        .file("s.md", "## 0a1b2c3d: x\n")
        .loopc(&["fmt", "s.md"])
        .stderr_contains("is a REEL spec")
        .status(2)
        .run();
}

#[test]
fn a_lone_carriage_return_ends_a_line_in_every_format() {
    // Editors and LSP count `\r` alone as a line break: the second item is on
    // line 2 (1-based) for people and line 1 (0-based) in JSON.
    let plan = "agent b { run = \"x\" }\rtask a { agent = b  promt = \"x\" }\n";
    Test::new()
        .file("plan.loop", plan)
        .loopc(&["check", "plan.loop"])
        .stderr_contains("┌─ plan.loop:2:21")
        .stderr_contains("2 │ task a { agent = b  promt = \"x\" }\n")
        .status(1)
        .run();
    let out = Test::new()
        .file("plan.loop", plan)
        .loopc(&["check", "--format", "json", "plan.loop"])
        .status(1)
        .run();
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["range"]["start"]["line"], 1, "{v}");
    assert_eq!(v["range"]["start"]["character"], 20, "{v}");
    // A comment ends at a lone `\r` too: the task after it is not commented out.
    Test::new()
        .file("plan.loop", "# comment\rtask a { run = \"x\" }\r")
        .loopc(&["-q", "check", "plan.loop"])
        .stdout("")
        .stderr("")
        .status(0)
        .run();
    // And so does the line break after a block string's `\"\"\"`: the plan
    // reads as its LF twin, prompt and all.
    let lf = "task a {\n  prompt = \"\"\"\n    hello\n      there\n    \"\"\"\n  agent = x\n}\nagent x { run = \"true\" }\nbudget { iterations = 1 }\n";
    let graph = |plan: &str| {
        Test::new()
            .file("plan.loop", plan)
            .loopc(&["graph", "--format", "json", "plan.loop"])
            .run()
            .stdout
    };
    let cr = graph(&lf.replace('\n', "\r"));
    assert!(cr.contains(r#""prompt": "hello\n  there""#), "{cr}");
    assert_eq!(cr, graph(lf));
}

#[test]
fn a_block_string_closed_only_by_a_later_one_is_named_as_the_mistake() {
    // The quotes that would end `bad`'s prompt open `t2`'s: the parse of
    // `bad` runs through `task x` into `t2`. The mistake is line 4's.
    let plan = "agent a { run = \"true\" }\nbudget { iterations = 5 }\ntask bad {\n  prompt = \"\"\"\n    unfinished\n  agent = a\n}\ntask x {\n}\ntask t2 {\n  prompt = \"\"\"\n    hello\n    \"\"\"\n  agent = a\n}\n";
    let diagnostics = json_diagnostics(plan);
    let first = &diagnostics[0];
    assert_eq!(first["code"], "E0012", "{first}");
    assert_eq!(first["range"]["start"]["line"], 3, "{first}");
    assert_eq!(first["range"]["start"]["character"], 11, "{first}");
    assert_eq!(first["labels"][1]["range"]["start"]["line"], 10, "{first}");
    assert!(
        diagnostics.iter().all(|d| d["code"] != "E0001"),
        "{diagnostics:?}"
    );
}

/// What `loopc check --format json` reports on `plan` (and exits 1 for).
fn json_diagnostics(plan: &str) -> Vec<serde_json::Value> {
    let out = Test::new()
        .file("plan.loop", plan)
        .loopc(&["check", "--format", "json", "plan.loop"])
        .status(1)
        .run();
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn human_output_shows_100_diagnostics_per_file_and_counts_the_rest() {
    let plan = format!("task a {{ run = \"{}\" }}\n", "\\q".repeat(2000));
    let out = Test::new()
        .file("plan.loop", &plan)
        .loopc(&["check", "plan.loop"])
        .stderr_contains(
            "note: 1900 more diagnostics in `plan.loop` not shown; `loopc check --format json` lists them all\n",
        )
        .stderr_contains("error: 1 plan checked: 2000 errors, 0 warnings\n")
        .status(1)
        .run();
    assert_eq!(out.stderr.matches("error[E0012]").count(), 100);
    let json = Test::new()
        .file("plan.loop", &plan)
        .loopc(&["check", "--format", "json", "plan.loop"])
        .status(1)
        .run();
    assert_eq!(json.stdout.lines().count(), 2000);
}

#[test]
fn an_item_keyword_used_as_a_field_name_is_an_unknown_field() {
    // `gate = [t]` for `gates`: one E0002 each, no syntax error, no knock-on
    // E0013 although `defaults` names an agent, and no W0001 for `t`, which
    // the misspelled field names.
    let plan = "agent a { run = \"x\" }\ngate t = \"true\"\ndefaults {\n  agent = a\n  gate = [t]\n}\ntask one {\n  prompt = \"p\"\n  task = [t]\n}\nbudget { iterations = 3 }\n";
    let codes: Vec<String> = json_diagnostics(plan)
        .iter()
        .map(|v| {
            format!(
                "{} {}",
                v["code"].as_str().unwrap(),
                v["labels"][0]["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        codes,
        ["E0002 did you mean `gates`?", "E0002 unknown field"],
    );
}

#[test]
fn a_closed_stderr_is_a_normal_end_not_a_panic() {
    // As `loopc check plan.loop 2>&1 >/dev/null | head -1`: stderr is a pipe
    // whose reader has gone before loopc writes.
    let plan = format!("task a {{ run = \"{}\" }}\n", "\\q".repeat(50));
    let test = Test::new().file("plan.loop", &plan);
    for args in [
        &["check", "plan.loop"][..],
        &["graph", "plan.loop"],
        &["fmt", "--check", "plan.loop"],
    ] {
        let mut child = test
            .loopc(args)
            .command()
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(1), "{args:?}: {status:?}");
    }
}

#[test]
fn color_follows_one_rule_and_the_color_flag() {
    let test = Test::new().file("plan.loop", WARNING);
    let colored = |args: &[&str], env: &[(&str, &str)]| {
        let mut inv = test.loopc(args);
        for (k, v) in env {
            inv = inv.env(k, v);
        }
        inv.output().stderr.contains('\u{1b}')
    };
    assert!(colored(&["--color", "always", "check", "plan.loop"], &[]));
    assert!(colored(
        &["check", "--color=always", "plan.loop"],
        &[("TERM", "dumb")]
    ));
    assert!(!colored(&["check", "--color", "never", "plan.loop"], &[]));
    // Not a terminal: plain, whatever TERM says.
    assert!(!colored(
        &["check", "plan.loop"],
        &[("TERM", "xterm-256color")]
    ));
}

#[test]
fn common_mistakes_get_a_hint_that_says_what_to_write() {
    let notes = |plan: &str| -> Vec<String> {
        let out = Test::new()
            .file("plan.loop", plan)
            .loopc(&["check", "--format", "json", "plan.loop"])
            .status(1)
            .run();
        let first: serde_json::Value =
            serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
        first["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    let deps = "task x { run = \"a\" }\ntask w { run = \"a\" }\ntask y: x, w { run = \"b\" }\n";
    assert_eq!(
        notes(deps),
        ["dependencies are separated by whitespace only, as in make: `task y: x w { … }`"]
    );
    assert_eq!(
        notes("task x { run = 'a' }\n"),
        ["strings are written in double quotes: `\"…\"`"]
    );
    let field = notes("task x { run = \"a\" }\ntask y { run = \"b\"  depends = [x] }\n");
    assert_eq!(
        field.last().map(String::as_str),
        Some("dependencies go in the task header, as in make: `task NAME: DEP1 DEP2 { … }`")
    );
    // An item keyword as a dependency name ends the list: quote it.
    for (kw, plan) in [
        (
            "task",
            "task \"task\" { run = \"a\" }\ntask z: task { run = \"b\" }\n",
        ),
        (
            "gate",
            "task a { run = \"a\" }\ntask z: a gate { run = \"b\" }\n",
        ),
    ] {
        assert_eq!(
            notes(plan),
            [format!(
                "`{kw}` is an item keyword, so it ends the dependency list: write a \
                 dependency named `{kw}` quoted (`\"{kw}\"`), or rename that task"
            )],
            "{plan}"
        );
    }
    // Quoted, it is a dependency like any other.
    Test::new()
        .file(
            "plan.loop",
            "task \"task\" { run = \"a\" }\ntask z: \"task\" { run = \"b\" }\n",
        )
        .loopc(&["-q", "check"])
        .stderr("")
        .run();
}

#[test]
fn a_fifo_or_a_device_is_refused_at_once_not_read_forever() {
    let t = Test::new();
    let fifo = t.root.join("pipe.loop");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_string_lossy().into_owned();
    for args in [
        vec!["check", fifo.as_str()],
        vec!["graph", fifo.as_str()],
        vec!["fmt", "--check", fifo.as_str()],
        vec!["check", "/dev/zero"],
        vec!["fmt", "/dev/zero"],
    ] {
        let path = args.last().unwrap();
        // A read of either would never end: the harness would hang here.
        t.loopc(&args)
            .status(2)
            .stderr_contains(&format!("cannot read `{path}`: not a regular file"))
            .run();
    }
}

#[test]
fn an_agents_fallback_is_a_checked_reference() {
    Test::new()
        .file(
            "plan.loop",
            "agent claude { run = \"claude -p\"  fallback = codx }\n\
             agent codex { run = \"codex exec -\" }\n\
             task a { agent = claude  prompt = \"x\" }\n",
        )
        .loopc(&["check", "plan.loop"])
        .stderr_contains("error[E0005]: unknown agent `codx`")
        .stderr_contains("did you mean `codex`?")
        .status(1)
        .run();
    // An agent is never suggested as its own fallback.
    let r = Test::new()
        .file(
            "plan.loop",
            "agent claude { run = \"claude -p\"  fallback = claud }\n\
             task a { agent = claude  prompt = \"x\" }\n",
        )
        .loopc(&["check", "plan.loop"])
        .stderr_contains("error[E0005]: unknown agent `claud`")
        .status(1)
        .run();
    assert!(!r.stderr.contains("did you mean"), "{}", r.stderr);
    Test::new()
        .file(
            "plan.loop",
            "agent claude { run = \"claude -p\"  fallback = codex }\n\
             agent codex { run = \"codex exec -\"  fallback = gemini }\n\
             agent gemini { run = \"gemini\"  fallback = claude }\n\
             agent solo { run = \"solo\"  fallback = solo }\n\
             task a { agent = claude  prompt = \"x\" }\n\
             task b { agent = solo  prompt = \"x\" }\n",
        )
        .loopc(&["check", "plan.loop"])
        .stderr_contains("error[E0006]: fallback cycle: claude → codex → gemini → claude")
        .stderr_contains("`gemini` falls back to `claude`")
        .stderr_contains("error[E0006]: fallback cycle: solo → solo")
        .status(1)
        .run();
    // A fallback in use counts for W0005 like the agent it stands in for.
    Test::new()
        .file(
            "plan.loop",
            "budget { cost = $5 }\n\
             agent claude { run = \"claude -p --output-format json\"  output = claude-json  fallback = codex }\n\
             agent codex { run = \"codex exec --json -\"  output = codex-json }\n\
             task a { agent = claude  prompt = \"x\" }\n",
        )
        .loopc(&["check", "plan.loop"])
        .stderr_contains("warning[W0005]: the budget caps cost, but agent `codex` may report none")
        .stderr_contains("- the fallback of agent `claude`, which is in use")
        .stderr_contains("------ this budget caps the run's cost")
        .status(0)
        .run();
    Test::new()
        .file(
            "plan.loop",
            "budget { iterations = 3 }\n\
             agent claude { run = \"claude -p\"  fallback = codex }\n\
             agent codex { run = \"codex exec -\" }\n\
             task a { agent = claude  prompt = \"x\" }\n",
        )
        .loopc(&["check", "plan.loop"])
        .stderr("ok: 1 task, 0 warnings\n")
        .status(0)
        .run();
}

#[test]
fn empty_commands_prompts_and_names_are_e0009_where_written() {
    let out = Test::new()
        .file(
            "plan.loop",
            "loop { base = \"\" }\ngate g = \"\"\nagent a { run = \"  \" }\n\
             task v { run = \"\"  gates = [g]  accept = \"\" }\n\
             task w { agent = a  prompt = \"\" }\nbudget { iterations = 3 }\n",
        )
        .loopc(&["check", "--format", "json", "plan.loop"])
        .status(1)
        .run();
    let found: Vec<(String, String, u64)> = out
        .stdout
        .lines()
        .map(|l| {
            let d: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                d["code"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
                d["range"]["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("E0009", "`base` is empty", 0),
        ("E0009", "the command of gate `g` is empty", 1),
        ("E0009", "`run` is empty", 2),
        ("E0009", "`run` is empty", 3),
        ("E0009", "`accept` is empty", 3),
        ("E0009", "`prompt` is empty", 4),
    ];
    let want: Vec<(String, String, u64)> = want
        .iter()
        .map(|(c, m, l)| (c.to_string(), m.to_string(), *l))
        .collect();
    assert_eq!(found, want, "{}", out.stdout);
}

#[test]
fn a_branch_written_with_refs_heads_is_e0009() {
    Test::new()
        .file(
            "plan.loop",
            "loop { branch = \"refs/heads/x\" }\ntask t { run = \"true\" }\n",
        )
        .loopc(&["check", "plan.loop"])
        .stderr_contains("error[E0009]: `refs/heads/x` is a ref name, not a branch name")
        .stderr_contains("a branch is named without `refs/heads/`")
        .stderr_contains("= write `branch = \"x\"`")
        .status(1)
        .run();
}

#[test]
fn a_branch_named_at_or_empty_gets_one_diagnostic_that_says_why() {
    let at = Test::new()
        .file(
            "plan.loop",
            "loop { branch = \"@\" }\ntask t { run = \"true\" }\n",
        )
        .loopc(&["check", "plan.loop"])
        .status(1)
        .run();
    assert!(
        at.stderr.contains("`@` alone is git's name for HEAD"),
        "{}",
        at.stderr
    );
    assert!(!at.stderr.contains("`..`"), "{}", at.stderr);
    let empty = Test::new()
        .file(
            "plan.loop",
            "loop { branch = \"\" }\ntask t { run = \"true\" }\n",
        )
        .loopc(&["check", "plan.loop"])
        .status(1)
        .run();
    assert_eq!(
        empty.stderr.matches("error[E0009]").count(),
        1,
        "{}",
        empty.stderr
    );
    assert!(
        empty.stderr.contains("`branch` is empty"),
        "{}",
        empty.stderr
    );
}
