//! `loopc check`, `graph`, `import` and `id` on REEL specs, end to end
//! through the binary (docs/reel.md).

use crate::harness::Test;

const DEFAULTS: &str =
    "budget { iterations = 10 }\nagent bot { run = \"sh agent.sh\" }\ndefaults { agent = bot }\n";

const SPEC_MD: &str = "# Auth

## a1b2c3d4: Extract session manager

Move session handling into a module of its own.

**Acceptance:** `pytest -q tests/test_session.py`

## b2c3d4e5: Add token refresh

Refresh expired tokens transparently.

**Depends on:** a1b2c3d4
**Acceptance:** `pytest -q tests/test_refresh.py`
";

#[test]
fn check_accepts_a_spec_with_defaults_beside_it() {
    Test::new()
        .file("specs/defaults.loop", DEFAULTS)
        .file("specs/auth.md", SPEC_MD)
        .loopc(&["-q", "check", "specs/auth.md"])
        .stdout("")
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn check_reports_a_bad_dependency_at_its_line_in_the_spec() {
    Test::new()
        .file("specs/defaults.loop", DEFAULTS)
        .file(
            "specs/auth.md",
            SPEC_MD.replace("**Depends on:** a1b2c3d4", "**Depends on:** a1b2c3d5"),
        )
        .loopc(&["check", "specs/auth.md"])
        .stderr(
            "error[E0005]: unknown task `a1b2c3d5`
   ┌─ specs/auth.md:13:17
   │
13 │ **Depends on:** a1b2c3d5
   │                 ^^^^^^^^ did you mean `a1b2c3d4`?

error: 1 plan checked: 1 error, 0 warnings
",
        )
        .status(1)
        .run();
}

#[test]
fn check_takes_defaults_from_the_option() {
    Test::new()
        .file("elsewhere/agent.loop", DEFAULTS)
        .file("auth.md", SPEC_MD)
        .loopc(&[
            "-q",
            "check",
            "--defaults",
            "elsewhere/agent.loop",
            "auth.md",
        ])
        .stderr("")
        .status(0)
        .run();
    // Without it there is no agent: each task says where one comes from.
    let out = Test::new()
        .file("auth.md", SPEC_MD)
        .loopc(&["check", "auth.md"])
        .stderr_contains("error[E0013]: agent task `a1b2c3d4` has no agent")
        .stderr_contains("`defaults.loop` beside them or from `--defaults FILE.loop`")
        .status(1)
        .run();
    assert!(out.stderr.contains("auth.md:3:4"), "{}", out.stderr);
    // A missing defaults file is an I/O error.
    Test::new()
        .file("auth.md", SPEC_MD)
        .loopc(&["check", "--defaults", "nope.loop", "auth.md"])
        .stderr_contains("error: cannot read `nope.loop`")
        .status(2)
        .run();
}

#[test]
fn check_json_names_the_file_of_each_diagnostic() {
    let out = Test::new()
        .file("specs/defaults.loop", DEFAULTS)
        .file("specs/auth.md", SPEC_MD)
        .file(
            "specs/billing.json",
            "{\"tasks\": [\n  {\"id\": \"0f3a9b2c\", \"description\": \"Bill.\", \"acceptance\": \"true\",\n   \"depends_on\": [\"auth.a1b2c3d5\"]}\n]}\n",
        )
        .loopc(&["check", "--format", "json", "specs"])
        .status(1)
        .run();
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{}", out.stdout);
    assert_eq!(lines[0]["code"], "E0005");
    assert_eq!(lines[0]["file"], "specs/billing.json");
    assert_eq!(lines[0]["range"]["start"]["line"], 2);
    assert_eq!(lines[0]["range"]["start"]["character"], 18);
    assert_eq!(lines[0]["labels"][0]["file"], "specs/billing.json");
}

#[test]
fn graph_draws_a_spec_directory() {
    Test::new()
        .file("specs/defaults.loop", DEFAULTS)
        .file("specs/auth.md", SPEC_MD)
        .file(
            "specs/billing.feature",
            "Feature: Billing\n\n  @id:0f3a9b2c @depends-on:auth.a1b2c3d4\n  @acceptance:pytest -q tests/test_billing.py\n  Scenario: Bill per session\n    Given a session\n    Then it is billed\n",
        )
        .loopc(&["graph", "specs"])
        .stdout(
            "specs: 3 tasks in 2 layers

layer 0
  auth.a1b2c3d4     bot  Extract session manager

layer 1
  auth.b2c3d4e5     bot  Add token refresh  ← auth.a1b2c3d4
  billing.0f3a9b2c  bot  Bill per session  ← auth.a1b2c3d4
",
        )
        .status(0)
        .run();
}

#[test]
fn import_writes_a_plan_that_graphs_the_same() {
    let spec = Test::new()
        .file("defaults.loop", DEFAULTS)
        .file("auth.md", SPEC_MD)
        .loopc(&["graph", "--format", "json", "auth.md"])
        .run();
    let test = Test::new()
        .file("defaults.loop", DEFAULTS)
        .file("auth.md", SPEC_MD);
    test.loopc(&["import", "auth.md", "-o", "plan.loop"])
        .stdout("")
        .stderr("")
        .run();
    let plan = std::fs::read_to_string(test.root.join("plan.loop")).unwrap();
    assert!(
        plan.starts_with("# Imported from auth.md by `loopc import`.\n"),
        "{plan}"
    );
    assert!(
        plan.contains("task \"b2c3d4e5\" \"Add token refresh\": \"a1b2c3d4\" {"),
        "{plan}"
    );
    // The written plan checks clean, is formatted, and is the same plan.
    test.loopc(&["check", "plan.loop"]).run();
    test.loopc(&["fmt", "--check", "plan.loop"]).run();
    test.loopc(&["graph", "--format", "json", "plan.loop"])
        .stdout(&spec.stdout)
        .run();
    // An existing file is not overwritten without --force.
    std::fs::write(test.root.join("plan.loop"), "# mine\n").unwrap();
    test.loopc(&["import", "auth.md", "-o", "plan.loop"])
        .stderr("error: `plan.loop` exists; nothing imported (pass --force to overwrite it)\n")
        .status(2)
        .run();
    assert_eq!(
        std::fs::read_to_string(test.root.join("plan.loop")).unwrap(),
        "# mine\n"
    );
    test.loopc(&["import", "auth.md", "-o", "plan.loop", "--force"])
        .run();
    assert_eq!(
        std::fs::read_to_string(test.root.join("plan.loop")).unwrap(),
        plan
    );
    // Without -o the plan goes to stdout.
    let stdout = Test::new()
        .file("defaults.loop", DEFAULTS)
        .file("auth.md", SPEC_MD)
        .loopc(&["import", "auth.md"])
        .run();
    assert_eq!(stdout.stdout, plan);
}

#[test]
fn import_refuses_a_spec_with_errors() {
    let test = Test::new()
        .file("defaults.loop", DEFAULTS)
        .file("auth.json", "{\"tasks\": [{\"id\": \"a1b2c3d4\"}]}");
    test.loopc(&["import", "auth.json", "-o", "plan.loop"])
        .stderr_contains("error[E0008]: task `a1b2c3d4` has no acceptance command")
        .stderr_contains("error: `auth.json` has errors; nothing imported")
        .status(1)
        .run();
    assert!(!test.root.join("plan.loop").exists());
}

#[test]
fn id_prints_an_unused_reel_id() {
    let test = Test::new()
        .file("specs/auth.md", SPEC_MD)
        .file("specs/notes.txt", "not a spec");
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..21 {
        let text = test.loopc(&["id", "specs"]).run().stdout;
        let id = text.strip_suffix('\n').expect("one line");
        assert!(loopc::reel::is_reel_id(id), "{id:?}");
        assert!(!["a1b2c3d4", "b2c3d4e5"].contains(&id));
        seen.insert(id.to_string());
    }
    assert!(seen.len() > 1, "ids are random: {seen:?}");
    Test::new()
        .loopc(&["id", "missing-dir"])
        .stderr_contains("error: cannot read the specs in `missing-dir`")
        .status(2)
        .run();
}

#[test]
fn id_avoids_every_id_in_the_directory() {
    // A directory that uses all but one id of a small space cannot be
    // faked, so check the rule instead: ids in use, and ids only named as
    // dependencies, are all "used".
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.md"), SPEC_MD).unwrap();
    std::fs::write(
        dir.path().join("b.json"),
        "{\"tasks\": [{\"id\": \"0f3a9b2c\", \"depends_on\": [\"a.c0ffee00\"]}]}",
    )
    .unwrap();
    let used = loopc::reel::id::used_ids(dir.path()).unwrap();
    let want: std::collections::BTreeSet<String> = ["a1b2c3d4", "b2c3d4e5", "0f3a9b2c", "c0ffee00"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(used, want);
}

/// `text` with each `\n` made `end`.
fn with_line_ends(text: &str, end: &str) -> String {
    text.replace('\n', end)
}

#[test]
fn a_spec_reads_the_same_whatever_its_line_ends() {
    // The same spec in each format, with LF, CRLF and lone-CR line ends
    // (a line ends at each, as in `.loop` files and editors): the same
    // tasks, the same dependencies, the same prompts.
    let specs = [
        ("auth.md", SPEC_MD.to_string()),
        (
            "auth.feature",
            "Feature: Auth\n\n  @id:a1b2c3d4\n  @acceptance:pytest -q tests/test_session.py\n  Scenario: Extract session manager\n    Given the session handling in the routes\n    Then it moves into a module of its own\n\n  @id:b2c3d4e5 @depends-on:a1b2c3d4\n  @acceptance:pytest -q tests/test_refresh.py\n  Scenario: Add token refresh\n    Given an expired token\n    Then it is refreshed\n".to_string(),
        ),
        (
            "auth.json",
            "{\n  \"tasks\": [\n    {\"id\": \"a1b2c3d4\", \"title\": \"Extract session manager\",\n     \"description\": \"Move it.\\nAll of it.\", \"acceptance\": \"true\"},\n    {\"id\": \"b2c3d4e5\", \"description\": \"Refresh.\",\n     \"acceptance\": \"true\", \"depends_on\": [\"a1b2c3d4\"]}\n  ]\n}\n".to_string(),
        ),
    ];
    for (name, lf) in &specs {
        let import = |text: &str| {
            Test::new()
                .file("defaults.loop", DEFAULTS)
                .file(name, text)
                .loopc(&["import", name])
                .stderr("")
                .run()
                .stdout
        };
        let expected = import(lf);
        assert!(
            expected.contains("\": \"a1b2c3d4\" {"),
            "{name}: the dependency is read:\n{expected}"
        );
        assert_eq!(expected.matches("\ntask \"").count(), 2, "{expected}");
        for end in ["\r\n", "\r"] {
            assert_eq!(
                import(&with_line_ends(lf, end)),
                expected,
                "{name} with {end:?} line ends"
            );
        }
    }
}

#[test]
fn a_lone_cr_spec_has_its_diagnostics_at_the_lines_an_editor_shows() {
    // A Markdown spec saved with lone CRs: its task is read and its unknown
    // dependency is E0005 at line 9, column 17, as with LF.
    let lf = "# X\n\n## a1b2c3d4: First\n\nDo it.\n\n**Acceptance:** `true`\n\n**Depends on:** a1b2c3d5\n";
    let human = "error[E0005]: unknown task `a1b2c3d5`
  ┌─ cr.md:9:17
  │
9 │ **Depends on:** a1b2c3d5
  │                 ^^^^^^^^ no task is called `a1b2c3d5`
  │
  = this plan defines no other task

error: 1 plan checked: 1 error, 0 warnings
";
    let json = "{\"file\":\"cr.md\",\"severity\":\"error\",\"code\":\"E0005\",\"message\":\"unknown task `a1b2c3d5`\",\"range\":{\"start\":{\"line\":8,\"character\":16},\"end\":{\"line\":8,\"character\":24}},\"labels\":[{\"file\":\"cr.md\",\"range\":{\"start\":{\"line\":8,\"character\":16},\"end\":{\"line\":8,\"character\":24}},\"message\":\"no task is called `a1b2c3d5`\",\"primary\":true}],\"notes\":[\"this plan defines no other task\"]}\n";
    for end in ["\n", "\r\n", "\r"] {
        let test = Test::new()
            .file("defaults.loop", DEFAULTS)
            .file("cr.md", with_line_ends(lf, end));
        test.loopc(&["check", "cr.md"])
            .stdout("")
            .stderr(human)
            .status(1)
            .run();
        test.loopc(&["check", "--format", "json", "cr.md"])
            .stdout(json)
            .status(1)
            .run();
    }
    // The same in the other formats: the line and column of the unknown id.
    for (name, lf, line, character) in [
        (
            "cr.feature",
            "Feature: X\n\n  @id:a1b2c3d4 @acceptance:true\n  Scenario: First\n    Given it\n\n  @id:b2c3d4e5\n  @depends-on:a1b2c3d5\n  @acceptance:true\n  Scenario: Second\n",
            7,
            14,
        ),
        (
            "cr.json",
            "{\"tasks\": [\n  {\"id\": \"a1b2c3d4\", \"description\": \"x\", \"acceptance\": \"true\"},\n  {\"id\": \"b2c3d4e5\", \"description\": \"y\", \"acceptance\": \"true\",\n   \"depends_on\": [\"a1b2c3d5\"]}\n]}\n",
            3,
            18,
        ),
    ] {
        let mut outputs = Vec::new();
        for end in ["\n", "\r\n", "\r"] {
            let out = Test::new()
                .file("defaults.loop", DEFAULTS)
                .file(name, with_line_ends(lf, end))
                .loopc(&["check", "--format", "json", name])
                .status(1)
                .run();
            let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
            assert_eq!(v["code"], "E0005", "{name} {end:?}: {v}");
            assert_eq!(v["range"]["start"]["line"], line, "{name} {end:?}: {v}");
            assert_eq!(
                v["range"]["start"]["character"], character,
                "{name} {end:?}: {v}"
            );
            outputs.push(out.stdout);
        }
        assert!(outputs.iter().all(|o| *o == outputs[0]), "{outputs:?}");
    }
}

/// W0004 for an empty Markdown spec checked alone.
const EMPTY_ALONE: &str = "warning[W0004]: the plan has no tasks
  ┌─ specs/empty.md:1:1
  │
1 │ # nothing here
  │ ^ no task in this spec
  │
  = a REEL task is a `## <id>: <title>` heading, a JSON `tasks` entry or a Gherkin `Scenario:`

ok: 0 tasks, 1 warning
";

/// W0004 for the spec `file` of a directory, whose first line is `line`.
fn empty_in_dir(file: &str, line: &str) -> String {
    format!(
        "warning[W0004]: this spec has no tasks
  ┌─ specs/{file}:1:1
  │
1 │ {line}
  │ ^ no task in this spec
  │
  = a REEL task is a `## <id>: <title>` heading, a JSON `tasks` entry or a Gherkin `Scenario:`
  = in a directory every `.md`, `.markdown`, `.json` and `.feature` file is a spec, except `README*` files

"
    )
}

/// `CODE FILE` of each diagnostic of `check --format json` output.
fn codes_and_files(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let field = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            format!("{} {}", field("code"), field("file"))
        })
        .collect()
}

#[test]
fn every_spec_without_tasks_is_w0004_in_a_directory_too() {
    let test = Test::new()
        .file("specs/defaults.loop", DEFAULTS)
        .file("specs/auth.md", SPEC_MD)
        .file("specs/empty.md", "# nothing here\n")
        .file("specs/later.feature", "Feature: later\n")
        // A README is documentation, not a spec: no warning.
        .file("specs/README.md", "# About these specs\n");
    test.loopc(&["check", "specs"])
        .stdout("")
        .stderr(&format!(
            "{}{}ok: 2 tasks, 2 warnings\n",
            empty_in_dir("empty.md", "# nothing here"),
            empty_in_dir("later.feature", "Feature: later"),
        ))
        .status(0)
        .run();
    // Checked alone, the empty spec is the whole plan: as before.
    test.loopc(&["check", "specs/empty.md"])
        .stdout("")
        .stderr(EMPTY_ALONE)
        .status(0)
        .run();
    // In JSON, each names its file.
    let out = test
        .loopc(&["check", "--format", "json", "specs"])
        .status(0)
        .run();
    assert_eq!(
        codes_and_files(&out.stdout),
        ["W0004 specs/empty.md", "W0004 specs/later.feature"]
    );
}

#[test]
fn a_directory_of_empty_specs_says_the_plan_has_no_tasks_then_names_each_other_spec() {
    Test::new()
        .file("specs/defaults.loop", DEFAULTS)
        .file("specs/empty.md", "# nothing here\n")
        .file("specs/later.json", "{\"tasks\": []}\n")
        .loopc(&["check", "specs"])
        .stdout("")
        .stderr(&format!(
            "{}\n{}ok: 0 tasks, 2 warnings\n",
            EMPTY_ALONE
                .strip_suffix("\nok: 0 tasks, 1 warning\n")
                .unwrap(),
            empty_in_dir("later.json", "{\"tasks\": []}"),
        ))
        .status(0)
        .run();
}

#[test]
fn a_spec_that_cannot_be_read_gets_its_error_and_no_w0004() {
    // A level-2 heading without an id is E0001: the spec's tasks could not
    // be read, so "no tasks" is not said on top; the empty spec beside it
    // still gets its W0004.
    let out = Test::new()
        .file("specs/defaults.loop", DEFAULTS)
        .file("specs/auth.md", SPEC_MD)
        .file("specs/bad.md", "## Overview\n")
        .file("specs/empty.md", "# nothing here\n")
        .loopc(&["check", "--format", "json", "specs"])
        .status(1)
        .run();
    assert_eq!(
        codes_and_files(&out.stdout),
        ["E0001 specs/bad.md", "W0004 specs/empty.md"]
    );
}

#[test]
fn import_refuses_a_plan_given_as_a_spec_and_quiet_keeps_only_errors() {
    let test = Test::new()
        .file("defaults.loop", DEFAULTS)
        .file("auth.md", SPEC_MD)
        .file("other.loop", "task x { run = \"true\" }\n");
    test.loopc(&["import", "auth.md", "other.loop"])
        .stderr(
            "error: `other.loop` is a .loop plan, not a REEL spec; `loopc import` converts \
                 specs (.md, .json, .feature): name a defaults plan with --defaults\n",
        )
        .status(2)
        .run();
    // Defaults without a budget: W0003, which `-q` leaves out.
    let test = Test::new()
        .file(
            "defaults.loop",
            "agent a { run = \"x\" }\ndefaults { agent = a }\n",
        )
        .file("auth.md", SPEC_MD);
    let loud = test.loopc(&["import", "auth.md"]).status(0).run();
    assert!(loud.stderr.contains("warning[W0003]"), "{loud:?}");
    // A spec cannot hold the budget: the note says where it goes.
    assert!(
        loud.stderr.contains(
            "a spec holds no budget: add e.g. `budget { iterations = 20  time = 2h  cost = $20 }` \
             to its defaults plan (`defaults.loop` beside the specs, or the `--defaults` file)"
        ),
        "{loud:?}"
    );
    test.loopc(&["-q", "import", "auth.md"])
        .status(0)
        .stderr("")
        .run();
}

#[test]
fn defaults_misused_are_usage_errors_that_say_how() {
    let test = Test::new()
        .file("specs/auth.md", SPEC_MD)
        .file("plan.loop", "task x { run = \"true\" }\n")
        .file("d.loop", DEFAULTS);
    test.loopc(&["check", "specs", "--defaults", "specs/auth.md"])
        .stderr(
            "error: `specs/auth.md`: --defaults names the defaults plan, a .loop file (its \
             agents, gates, defaults, budget and loop); specs are given as the plan\n",
        )
        .status(2)
        .run();
    test.loopc(&["check", "plan.loop", "--defaults", "d.loop"])
        .stderr(
            "error: `plan.loop`: --defaults applies to REEL specs (.md, .json, .feature or a \
             directory of them), not to a .loop plan\n",
        )
        .status(2)
        .run();
}

/// A REEL defaults plan holds no task of its own: checked alone it gets
/// no W0004, and a command run among the specs takes the directory as the
/// plan, not the defaults file.
#[test]
fn a_defaults_plan_beside_specs_is_theirs() {
    let test = Test::new()
        .file("specs/defaults.loop", DEFAULTS)
        .file("specs/auth.md", SPEC_MD)
        .file("alone/defaults.loop", DEFAULTS);
    test.loopc(&["check", "specs/defaults.loop"])
        .stderr("ok: 0 tasks, 0 warnings\n")
        .run();
    // Not beside specs: a plan like any, and one without tasks.
    test.loopc(&["check", "alone/defaults.loop"])
        .stderr_contains("warning[W0004]: the plan has no tasks")
        .run();
    let list = test
        .loopc(&["list"])
        .current_dir(test.root.join("specs"))
        .run();
    assert!(list.stdout.contains("auth.a1b2c3d4"), "{list:?}");
}

/// A spec checked alone whose task depends on another spec's: the E0005
/// says to read them together.
#[test]
fn a_dependency_on_a_spec_not_read_says_to_check_them_together() {
    let test = Test::new()
        .file("specs/defaults.loop", DEFAULTS)
        .file("specs/auth.md", SPEC_MD)
        .file(
            "specs/ui.md",
            "# UI\n\n## 0000000a: Login page\n\nBuild it.\n\n**Depends on:** auth.a1b2c3d4\n\n\
             **Acceptance:** `true`\n",
        );
    test.loopc(&["check", "specs/ui.md"])
        .stderr_contains("error[E0005]: unknown task `auth.a1b2c3d4`")
        .stderr_contains(
            "= `auth.a1b2c3d4` is a task of the spec `auth`, which was not read with this one: \
             check (or import) the specs together, e.g. their directory: `loopc check specs`",
        )
        .status(1)
        .run();
    test.loopc(&["check", "specs"]).status(0).run();
}
