//! REEL specs as plans (docs/reel.md): the three formats, the directory form,
//! one snapshot per diagnostic, `import` round trips and `id`.
//!
//! Over 600 lines: the REEL front-end as a library, all formats and their
//! mutation tests together; the binary's side is in `reel_cli` and `reel_run`.

use loopc::diagnostic::Code;
use loopc::import;
use loopc::reel::{self, Format};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A fixture path relative to the package root, as a user would type it
/// (cargo runs tests there), so that rendered file names are stable.
fn fixture(rel: &str) -> PathBuf {
    PathBuf::from("tests/fixtures/reel").join(rel)
}

fn compile(paths: &[PathBuf]) -> loopc::compile::Reel {
    loopc::compile::compile_specs(paths, None).expect("specs are readable")
}

fn codes(c: &loopc::Compilation) -> Vec<&'static str> {
    c.diagnostics.iter().map(|d| d.code.as_str()).collect()
}

fn names(plan: &loopc::plan::Plan) -> Vec<&str> {
    plan.tasks.iter().map(|t| t.name.as_str()).collect()
}

fn deps(plan: &loopc::plan::Plan, name: &str) -> Vec<String> {
    let t = &plan.tasks[plan.task_index(name).expect(name)];
    t.dependencies
        .iter()
        .map(|&i| plan.tasks[i].name.clone())
        .collect()
}

const AUTH: [&str; 4] = ["a1b2c3d4", "b2c3d4e5", "c3d4e5f6", "d4e5f6a7"];

#[test]
fn the_auth_refactor_reads_the_same_in_every_format() {
    let mut plans = Vec::new();
    for ext in ["md", "json", "feature"] {
        let r = compile(&[fixture(&format!("formats/auth-refactor.{ext}"))]);
        let c = &r.compilation;
        assert!(
            c.diagnostics.is_empty(),
            "{ext}: {}",
            c.render_plain(&c.diagnostics)
        );
        let plan = c.plan.clone().expect("a plan");
        assert_eq!(plan.name, "auth-refactor", "{ext}");
        assert_eq!(plan.settings.branch, "loop/auth-refactor");
        assert_eq!(names(&plan), AUTH, "{ext}");
        assert_eq!(deps(&plan, "b2c3d4e5"), ["a1b2c3d4"]);
        assert_eq!(deps(&plan, "c3d4e5f6"), ["a1b2c3d4"]);
        assert_eq!(deps(&plan, "d4e5f6a7"), ["b2c3d4e5", "c3d4e5f6"]);
        let first = &plan.tasks[0];
        assert_eq!(first.title.as_deref(), Some("Extract session manager"));
        assert_eq!(
            first.accept.as_deref(),
            Some("pytest -q tests/test_session.py")
        );
        // Agent and gates come from defaults.loop beside the specs.
        assert_eq!(loopc::render::kind_label(first), "claude");
        assert_eq!(first.gates.len(), 1);
        assert_eq!(plan.tasks[3].accept.as_deref(), Some("pytest -q"));
        plans.push(plan);
    }
    let prompt = |p: &loopc::plan::Plan, i: usize| match &p.tasks[i].kind {
        loopc::plan::TaskKind::Agent { prompt, .. } => prompt.to_string(),
        other => panic!("not an agent task: {other:?}"),
    };
    assert_eq!(
        prompt(&plans[0], 0),
        "Move session handling out of the route handlers into a module of its own\n(`src/auth/session.py`). Keep every public route's behaviour."
    );
    // The fenced code block is part of the description, heading-like lines and all.
    assert!(prompt(&plans[0], 2).ends_with("```python\n@app.get(\"/me\")\ndef me(session: Session = Depends(current_session)): ...\n```"));
    // The Markdown and JSON specs say the same thing: the same keys (spec §6).
    for i in 0..4 {
        assert_eq!(plans[0].tasks[i].key, plans[1].tasks[i].key, "task {i}");
    }
    // The Gherkin prompt is the background, then the scenario's steps.
    assert_eq!(
        prompt(&plans[2], 0),
        "Given a Flask app whose routes check sessions themselves\nWhen session handling moves into src/auth/session.py\nThen every public route behaves as before"
    );
}

#[test]
fn task_spans_point_at_the_ids_in_the_spec() {
    for (ext, line) in [("md", 21), ("json", 19), ("feature", 23)] {
        let r = compile(&[fixture(&format!("formats/auth-refactor.{ext}"))]);
        let c = &r.compilation;
        let task = r
            .tasks
            .iter()
            .find(|t| t.name.text == "c3d4e5f6")
            .expect("c3d4e5f6");
        let (file, local) = c.files.locate(task.name.span).expect("located");
        assert!(file.name.ends_with(&format!("auth-refactor.{ext}")));
        let text = &c.source[file.span.range()];
        assert!(text[local.range()].contains("c3d4e5f6"), "{ext}");
        let line_no = text[..local.start].matches('\n').count() + 1;
        assert_eq!(line_no, line, "{ext}: the id's line");
    }
}

#[test]
fn a_directory_namespaces_tasks_by_file_stem() {
    let r = compile(&[fixture("dir")]);
    let c = &r.compilation;
    assert!(
        c.diagnostics.is_empty(),
        "{}",
        c.render_plain(&c.diagnostics)
    );
    let plan = c.plan.as_ref().expect("a plan");
    assert_eq!(plan.name, "dir");
    assert_eq!(
        names(plan),
        [
            "auth.a1b2c3d4",
            "auth.b2c3d4e5",
            "billing.0f3a9b2c",
            "notify.9e8d7c6b"
        ]
    );
    // Bare ids stay in their file; qualified ones cross files.
    assert_eq!(deps(plan, "auth.b2c3d4e5"), ["auth.a1b2c3d4"]);
    assert_eq!(deps(plan, "billing.0f3a9b2c"), ["auth.a1b2c3d4"]);
    assert_eq!(
        deps(plan, "notify.9e8d7c6b"),
        ["auth.b2c3d4e5", "billing.0f3a9b2c"]
    );
    // README.md is documentation, not a spec.
    assert!(r.files.iter().all(|f| !f.ends_with("README.md")));
    assert_eq!(r.files.len(), 3);
}

/// A directory `specs/` of spec files in a temporary directory (named so,
/// since a directory's name is its plan's name and `.tmp…` is not a valid
/// branch component).
struct Specs {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Specs {
    fn path(&self) -> &Path {
        &self.dir
    }
}

fn temp_specs(files: &[(&str, &str)]) -> Specs {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("specs");
    std::fs::create_dir(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    Specs { _tmp: tmp, dir }
}

const DEFAULTS: &str =
    "budget { iterations = 10 }\nagent bot { run = \"sh agent.sh\" }\ndefaults { agent = bot }\n";

#[test]
fn cross_file_problems_are_reported_in_each_file() {
    let dir = temp_specs(&[
        ("defaults.loop", DEFAULTS),
        (
            "auth.md",
            "## a1b2c3d4: Session\n\nDo it.\n\n**Acceptance:** `true`\n",
        ),
        (
            "billing.json",
            "{\"tasks\": [\n  {\"id\": \"0f3a9b2c\", \"description\": \"Bill.\", \"acceptance\": \"true\",\n   \"depends_on\": [\"auth.a1b2c3d4\", \"auth.ffffffff\"]}\n]}\n",
        ),
    ]);
    let r = compile(&[dir.path().to_path_buf()]);
    let c = &r.compilation;
    assert_eq!(codes(c), ["E0005"]);
    let json: serde_json::Value =
        serde_json::from_str(&c.files.to_json_line(&c.source, &c.diagnostics[0])).unwrap();
    assert!(json["file"].as_str().unwrap().ends_with("billing.json"));
    assert_eq!(json["range"]["start"]["line"], 2);
    assert_eq!(json["message"], "unknown task `auth.ffffffff`");

    // A cycle across the two files labels each edge in its own file.
    std::fs::write(
        dir.path().join("auth.md"),
        "## a1b2c3d4: Session\n\nDo it.\n\n**Depends on:** billing.0f3a9b2c\n**Acceptance:** `true`\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("billing.json"),
        "{\"tasks\": [\n  {\"id\": \"0f3a9b2c\", \"description\": \"Bill.\", \"acceptance\": \"true\",\n   \"depends_on\": [\"auth.a1b2c3d4\"]}\n]}\n",
    )
    .unwrap();
    let r = compile(&[dir.path().to_path_buf()]);
    let c = &r.compilation;
    assert_eq!(codes(c), ["E0006"]);
    let text = c.render_plain(&c.diagnostics);
    let base = dir.path().display().to_string();
    insta::assert_snapshot!(text.replace(&base, "DIR"));
}

#[test]
fn every_reel_diagnostic_renders() {
    let root = Path::new(ROOT);
    insta::glob!("../fixtures/reel/bad", "E*", |path| {
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        let stem = path.file_name().unwrap().to_str().unwrap();
        let code = &stem[..5];
        let r = compile(std::slice::from_ref(&rel));
        let c = &r.compilation;
        assert_eq!(
            codes(c),
            [code],
            "{stem} must produce exactly {code}:\n{}",
            c.render_plain(&c.diagnostics)
        );
        assert!(c.plan.is_none());
        insta::assert_snapshot!(c.render_plain(&c.diagnostics));
    });
}

#[test]
fn without_a_defaults_plan_the_missing_agent_says_where_it_comes_from() {
    let dir = temp_specs(&[(
        "spec.md",
        "## a1b2c3d4: Session\n\nDo it.\n\n**Acceptance:** `true`\n",
    )]);
    let r = compile(&[dir.path().join("spec.md")]);
    let c = &r.compilation;
    assert_eq!(codes(c), ["E0013", "W0003"]);
    assert!(c.diagnostics[0].notes[0].contains("defaults.loop"));
    // --defaults names one explicitly, from anywhere.
    let other = temp_specs(&[("mine.loop", DEFAULTS)]);
    let with = loopc::compile::compile_specs(
        &[dir.path().join("spec.md")],
        Some(&other.path().join("mine.loop")),
    )
    .unwrap();
    assert!(with.compilation.diagnostics.is_empty());
    // A missing defaults file is an I/O error, not a diagnostic.
    let missing =
        loopc::compile::compile_specs(&[dir.path().join("spec.md")], Some(Path::new("nope.loop")));
    assert!(missing.is_err());
}

#[test]
fn defaults_only_apply_to_specs() {
    let dir = temp_specs(&[
        ("plan.loop", "task a { run = \"true\" }\n"),
        ("d.loop", DEFAULTS),
    ]);
    let err = loopc::compile_path(
        &dir.path().join("plan.loop"),
        Some(&dir.path().join("d.loop")),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("--defaults applies to REEL specs"),
        "{err}"
    );
    // And a .loop file still compiles as before through the same entry point.
    let c = loopc::compile_path(&dir.path().join("plan.loop"), None).unwrap();
    assert!(c.diagnostics.is_empty());
}

#[test]
fn a_spec_may_name_its_own_tasks_qualified() {
    let dir = temp_specs(&[
        ("defaults.loop", DEFAULTS),
        (
            "auth.md",
            "## a1b2c3d4: A\n\nDo a.\n\n**Acceptance:** `true`\n\n## b2c3d4e5: B\n\nDo b.\n\n**Depends on:** auth.a1b2c3d4\n**Acceptance:** `true`\n",
        ),
    ]);
    for input in [dir.path().join("auth.md"), dir.path().to_path_buf()] {
        let r = compile(std::slice::from_ref(&input));
        let plan = r.compilation.plan.as_ref().expect("a plan");
        let b = plan
            .tasks
            .iter()
            .find(|t| t.name.ends_with("b2c3d4e5"))
            .unwrap();
        assert_eq!(b.dependencies.len(), 1, "{input:?}");
    }
}

#[test]
fn reels_colon_spelling_of_a_dependency_on_another_file_works_in_every_format() {
    let dir = temp_specs(&[
        ("defaults.loop", DEFAULTS),
        (
            "auth.md",
            "## a1b2c3d4: A\n\nDo a.\n\n**Acceptance:** `true`\n\n## b2c3d4e5: B\n\nDo b.\n\n**Depends on:** auth:a1b2c3d4\n**Acceptance:** `true`\n",
        ),
        (
            "billing.json",
            r#"{"tasks": [{"id": "0f3a9b2c", "description": "Bill.", "acceptance": "true", "depends_on": ["auth:b2c3d4e5"]}]}"#,
        ),
        (
            "notify.feature",
            "Feature: Notify\n\n  @id:9e8d7c6b @depends-on:billing:0f3a9b2c\n  @acceptance:true\n  Scenario: Tell\n    Given it\n",
        ),
    ]);
    let r = compile(&[dir.path().to_path_buf()]);
    let c = &r.compilation;
    assert!(
        c.diagnostics.is_empty(),
        "{}",
        c.render_plain(&c.diagnostics)
    );
    let plan = c.plan.as_ref().expect("a plan");
    assert_eq!(deps(plan, "auth.b2c3d4e5"), ["auth.a1b2c3d4"]);
    assert_eq!(deps(plan, "billing.0f3a9b2c"), ["auth.b2c3d4e5"]);
    assert_eq!(deps(plan, "notify.9e8d7c6b"), ["billing.0f3a9b2c"]);
    // One file on its own: its own stem's colon form is its bare id.
    let r = compile(&[dir.path().join("auth.md")]);
    let plan = r.compilation.plan.as_ref().expect("a plan");
    assert_eq!(deps(plan, "b2c3d4e5"), ["a1b2c3d4"]);
    // An unknown one is still reported (E0005), in loopc's spelling.
    let bad = temp_specs(&[
        ("defaults.loop", DEFAULTS),
        (
            "auth.md",
            "## a1b2c3d4: A\n\nDo a.\n\n**Depends on:** billing:0f3a9b2c\n**Acceptance:** `true`\n",
        ),
    ]);
    let r = compile(&[bad.path().to_path_buf()]);
    let text = r.compilation.render_plain(&r.compilation.diagnostics);
    assert!(
        text.contains("E0005") && text.contains("billing.0f3a9b2c"),
        "{text}"
    );
}

#[test]
fn a_spec_file_name_that_cannot_start_task_names_is_one_diagnostic_at_the_file() {
    let dir = temp_specs(&[
        ("defaults.loop", DEFAULTS),
        (
            "ünï 🎉.md",
            "## a1b2c3d4: A\n\nDo a.\n\n**Acceptance:** `true`\n\n## b2c3d4e5: B\n\nDo b.\n\n**Depends on:** a1b2c3d4\n**Acceptance:** `true`\n",
        ),
        (
            "ok.md",
            "## 0badf00d: C\n\nDo c.\n\n**Acceptance:** `true`\n",
        ),
    ]);
    let r = compile(&[dir.path().to_path_buf()]);
    let c = &r.compilation;
    assert_eq!(codes(c), ["E0011"], "{}", c.render_plain(&c.diagnostics));
    let d = &c.diagnostics[0];
    assert_eq!(
        d.message,
        "the spec file name `ünï 🎉` cannot start its tasks' names"
    );
    let (file, local) = c.files.locate(d.primary.span).unwrap();
    assert!(file.name.ends_with("ünï 🎉.md"), "{}", file.name);
    assert_eq!(local.start, 0);
}

#[test]
fn import_writes_the_same_plan_formatted() {
    let inputs: Vec<Vec<PathBuf>> = vec![
        vec![fixture("formats/auth-refactor.md")],
        vec![fixture("formats/auth-refactor.json")],
        vec![fixture("formats/auth-refactor.feature")],
        vec![fixture("dir")],
        vec![fixture("dir/auth.md"), fixture("dir/billing.json")],
    ];
    for input in inputs {
        let r = compile(&input);
        let want = r.compilation.plan.as_ref().expect("a plan");
        let text = import::to_loop(&r).expect("formats");
        // Formatted: formatting it again changes nothing.
        assert_eq!(loopc::fmt::format_source(&text).unwrap(), text);
        let got = loopc::compile("plan.loop", &text);
        assert!(
            got.diagnostics.is_empty(),
            "{input:?}:\n{}\n{text}",
            got.render_plain(&got.diagnostics)
        );
        let got = got.plan.expect("a plan");
        assert_eq!(got.name, want.name, "{input:?}");
        assert_eq!(names(&got), names(want), "{input:?}");
        for (a, b) in got.tasks.iter().zip(&want.tasks) {
            assert_eq!(a.key, b.key, "{input:?}: task {}", a.name);
            assert_eq!(a.dependencies, b.dependencies);
            assert_eq!(a.title, b.title);
        }
    }
}

#[test]
fn import_names_an_unnamed_loop_and_keeps_the_defaults_comments() {
    let dir = temp_specs(&[
        (
            "defaults.loop",
            "# Our agent.\nloop { parallel = 2 }\nagent bot { run = \"sh agent.sh\" }\ndefaults { agent = bot }\n",
        ),
        (
            "spec.md",
            "## a1b2c3d4: A\n\n  Two lines,\n    the second indented; \"\"\" and \\ kept.\n\n**Acceptance:** `test -f \"a b\"`\n",
        ),
    ]);
    let r = compile(&[dir.path().join("spec.md")]);
    let text = import::to_loop(&r).unwrap();
    assert!(text.contains("# Our agent."), "{text}");
    assert!(text.contains("loop \"spec\" {"), "{text}");
    let got = loopc::compile("other-name.loop", &text);
    let got = got.plan.expect("a plan");
    assert_eq!(got.name, "spec");
    assert_eq!(got.settings.parallel, 2);
    let want = r.compilation.plan.unwrap();
    assert_eq!(got.tasks[0].key, want.tasks[0].key);
    match &got.tasks[0].kind {
        loopc::plan::TaskKind::Agent { prompt, .. } => {
            assert_eq!(
                &**prompt,
                "Two lines,\n  the second indented; \"\"\" and \\ kept."
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn literals_survive_every_awkward_text() {
    for s in [
        "plain",
        "two\nlines",
        "  leading\n  indent everywhere",
        "tab\tand \"quotes\" and \\",
        "\"\"\" inside",
        "trailing space \nline",
        "ends with newline\n",
        "\n\nstarts blank",
        "ctrl \u{1} \u{7f} é 😀",
        // (An empty prompt is E0009; `""` itself round-trips in the
        // literal printer's own tests.)
    ] {
        let lit = loopc::syntax::literal::print_text(s);
        let src = format!(
            "budget {{ iterations = 1 }}\nagent a {{ run = \"x\" }}\ndefaults {{ agent = a }}\ntask x {{ prompt = {lit} }}"
        );
        let c = loopc::compile("t.loop", &src);
        let plan = c.plan.unwrap_or_else(|| panic!("{src}"));
        match &plan.tasks[0].kind {
            loopc::plan::TaskKind::Agent { prompt, .. } => assert_eq!(&**prompt, s, "{lit}"),
            _ => unreachable!(),
        }
    }
}

#[test]
fn ids_are_new_to_the_directory() {
    let used = reel::id::used_ids(&fixture("formats")).unwrap();
    for id in AUTH {
        assert!(used.contains(id), "{id}");
    }
    let used_dir = reel::id::used_ids(&fixture("dir")).unwrap();
    for id in ["a1b2c3d4", "b2c3d4e5", "0f3a9b2c", "9e8d7c6b"] {
        assert!(used_dir.contains(id), "{id}");
    }
    // Made-up Gherkin ids count as used.
    let dir = temp_specs(&[("f.feature", "Feature: F\n  Scenario: S\n    Given x\n")]);
    assert!(reel::id::used_ids(dir.path()).unwrap().contains("00000001"));
    let mut all = used.clone();
    for _ in 0..500 {
        let id = reel::id::new_id(&all);
        assert!(reel::is_reel_id(&id));
        assert!(all.insert(id));
    }
}

/// Mutated specs never panic any front-end, and every span stays in the file.
#[test]
fn front_ends_survive_mutated_input() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let pieces = [
        "##",
        "**Acceptance:**",
        "`",
        "```",
        "\n",
        "@id:",
        "@acceptance:",
        "Scenario:",
        "Feature:",
        "{",
        "}",
        "[",
        "]",
        "\"",
        "\\u",
        ",",
        ":",
        "é",
        "😀",
        "\r\n",
        "\r",
        "\u{feff}",
        "**Depends on:**",
        "\"\"\"",
        "@depends-on:",
        "Background:",
        " ",
    ];
    for (ext, format) in [
        ("md", Format::Markdown),
        ("json", Format::Json),
        ("feature", Format::Gherkin),
    ] {
        let base =
            std::fs::read_to_string(fixture(&format!("formats/auth-refactor.{ext}"))).unwrap();
        for _ in 0..1500 {
            let mut text = base.clone();
            for _ in 0..(1 + next() % 4) {
                let mut at = (next() as usize) % (text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                if next() % 3 == 0 {
                    let mut end = (at + (next() as usize) % 40).min(text.len());
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    text.replace_range(at..end, "");
                } else {
                    text.insert_str(at, pieces[(next() as usize) % pieces.len()]);
                }
            }
            let (spec, diags) = format.parse(&text);
            let ok = |s: loopc::span::Span| s.start <= s.end && s.end <= text.len();
            for d in &diags {
                assert!(ok(d.primary.span), "{ext}: {d:?}\n{text}");
                assert!(d.secondary.iter().all(|l| ok(l.span)));
                assert!(d.code != Code::W0004);
            }
            for t in &spec.tasks {
                assert!(ok(t.id.span) && ok(t.span) && ok(t.header));
                assert!(t.depends_on.iter().all(|d| ok(d.span)));
            }
        }
    }
}

#[test]
fn the_other_reel_problems_have_their_codes_and_files() {
    let dir = temp_specs(&[
        (
            "defaults.loop",
            "agent bot { run = \"x\" }\ndefaults { agent = bot }\nbudget {\n  iterations = \n}\n",
        ),
        (
            "a.md",
            "## a1b2c3d4: A\n\nDo a.\n\n**Acceptance:** `true`\n**Acceptance:** `false`\n",
        ),
        (
            "a.json",
            "{\"tasks\": [{\"id\": \"0f3a9b2c\", \"acceptance\": \"true\", \"depends_on\": \"a.a1b2c3d4\"}]}",
        ),
    ]);
    let r = compile(&[dir.path().to_path_buf()]);
    let c = &r.compilation;
    let located: Vec<(String, String, usize)> = c
        .diagnostics
        .iter()
        .map(|d| {
            let (file, local) = c.files.locate(d.primary.span).unwrap();
            let text = &c.source[file.span.range()];
            let line = text[..local.start].matches('\n').count() + 1;
            let name = Path::new(&file.name)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (d.code.as_str().to_string(), name, line)
        })
        .collect();
    let want = [
        ("E0001", "defaults.loop", 5),
        ("E0004", "a.md", 1),
        ("E0007", "a.json", 1),
        // No description and no title: nothing to prompt with.
        ("E0008", "a.json", 1),
        // The budget did not parse: no W0003 says that nothing bounds the
        // agents (it may well have), the E0001 is the one mistake.
        ("E0003", "a.md", 6),
    ];
    let want: Vec<(String, String, usize)> = want
        .iter()
        .map(|(c, f, l)| (c.to_string(), f.to_string(), *l))
        .collect();
    let mut got = located.clone();
    got.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(got, want_sorted, "{}", c.render_plain(&c.diagnostics));

    // A spec that is not UTF-8 is E0001 at the first bad byte, in that file.
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(bad.path().join("defaults.loop"), DEFAULTS).unwrap();
    std::fs::write(
        bad.path().join("x.md"),
        b"## a1b2c3d4: A\n\nD\xffo.\n\n**Acceptance:** `true`\n",
    )
    .unwrap();
    let r = compile(&[bad.path().join("x.md")]);
    let c = &r.compilation;
    assert_eq!(codes(c), ["E0001"]);
    let (file, local) = c.files.locate(c.diagnostics[0].primary.span).unwrap();
    assert!(file.name.ends_with("x.md"));
    assert_eq!(local.start, 17);
}

/// Whole compilations of mutated spec directories: the checker and the plan
/// phase on lowered specs, and rendering through the source map, never
/// panic, and a plan exists exactly when there is no error.
#[test]
fn mutated_spec_directories_compile_and_render() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let names = ["defaults.loop", "auth.md", "billing.json", "notify.feature"];
    let originals: Vec<String> = names
        .iter()
        .map(|n| std::fs::read_to_string(fixture(&format!("dir/{n}"))).unwrap())
        .collect();
    let pieces = [
        "auth.",
        "a1b2c3d4",
        "billing.0f3a9b2c",
        ",",
        "\n",
        "`",
        "\"",
        "}",
        "@depends-on:auth.a1b2c3d4 ",
        "**Depends on:** notify.9e8d7c6b\n",
        "## ",
        "é",
        "\u{0}",
    ];
    let tmp = tempfile::tempdir().unwrap();
    // Named so: the directory's name is the plan's (a `.tmp…` name is E0009).
    let dir = tmp.path().join("specs");
    std::fs::create_dir(&dir).unwrap();
    for _ in 0..300 {
        for (n, text) in names.iter().zip(&originals) {
            std::fs::write(dir.join(n), text).unwrap();
        }
        let which = (next() as usize) % names.len();
        let mut text = originals[which].clone();
        for _ in 0..(1 + next() % 3) {
            let mut at = (next() as usize) % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            if next() % 3 == 0 {
                let mut end = (at + (next() as usize) % 30).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.replace_range(at..end, "");
            } else {
                text.insert_str(at, pieces[(next() as usize) % pieces.len()]);
            }
        }
        std::fs::write(dir.join(names[which]), &text).unwrap();
        let r = compile(std::slice::from_ref(&dir));
        let c = &r.compilation;
        assert_eq!(c.plan.is_some(), !c.has_errors(), "{text}");
        let rendered = c.render_plain(&c.diagnostics);
        for d in &c.diagnostics {
            let (file, _) = c
                .files
                .locate(d.primary.span)
                .expect("every span is in a file");
            assert!(rendered.contains(&file.name));
            let json: serde_json::Value =
                serde_json::from_str(&c.files.to_json_line(&c.source, d)).unwrap();
            assert_eq!(json["file"], file.name.as_str());
        }
        if let Some(plan) = &c.plan {
            let text = import::to_loop(&r).expect("an import of a clean plan formats");
            let again = loopc::compile("plan.loop", &text);
            let keys = |p: &loopc::plan::Plan| p.tasks.iter().map(|t| t.key).collect::<Vec<_>>();
            assert_eq!(again.plan.as_ref().map(keys), Some(keys(plan)), "{text}");
        }
    }
}

#[test]
fn a_plan_name_git_refuses_as_a_branch_is_e0009_unless_the_defaults_name_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("my specs.d");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("defaults.loop"), DEFAULTS).unwrap();
    std::fs::write(
        dir.join("a.md"),
        "## a1b2c3d4: A\n\nDo a.\n\n**Acceptance:** `true`\n",
    )
    .unwrap();
    let r = compile(std::slice::from_ref(&dir));
    assert_eq!(codes(&r.compilation), ["E0009"]);
    let (file, local) = r
        .compilation
        .files
        .locate(r.compilation.diagnostics[0].primary.span)
        .unwrap();
    assert!(file.name.ends_with("a.md") && local.start == 0);
    std::fs::write(
        dir.join("defaults.loop"),
        format!("loop \"specs\" {{}}\n{DEFAULTS}"),
    )
    .unwrap();
    let r = compile(std::slice::from_ref(&dir));
    assert!(r.compilation.diagnostics.is_empty());
    assert_eq!(r.compilation.plan.unwrap().settings.branch, "loop/specs");
}

#[test]
fn a_directory_plan_is_named_by_the_whole_directory_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("auth.v2");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("defaults.loop"), DEFAULTS).unwrap();
    std::fs::write(
        dir.join("a.md"),
        "## a1b2c3d4: A\n\nDo a.\n\n**Acceptance:** `true`\n",
    )
    .unwrap();
    let r = compile(std::slice::from_ref(&dir));
    let plan = r.compilation.plan.expect("a plan");
    assert_eq!(plan.name, "auth.v2");
    assert_eq!(plan.settings.branch, "loop/auth.v2");
}
