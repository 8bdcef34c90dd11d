//! Text from a plan shown to a person (graph's drawings, `list`, `status`,
//! the run's lines, human diagnostics): control characters and Unicode
//! format characters (bidirectional overrides and isolates, zero-width
//! characters, the byte order mark, tags) are shown as escapes, so no
//! output can be reordered on screen or drive the terminal; JSON keeps the
//! exact text.

use crate::harness::Test;

/// A plan whose name and title hold format characters (written as escapes
/// in the file; loopc decodes them).
const PLAN: &str = r#"loop "demo\u{200B}\u{202E}exe.txt" { }
task a "\u{202E}evil\u{2066}ok\u{2069} \u{200B}zero\u{FEFF}\u{61C}\u{E0041}" { run = "echo a > a.txt" }
task b: a { run = "echo b > b.txt" }
"#;

/// The plan's name and `a`'s title as every human output shows them.
const NAME: &str = r"demo\u{200b}\u{202e}exe.txt";
const TITLE: &str = r"\u{202e}evil\u{2066}ok\u{2069} \u{200b}zero\u{feff}\u{61c}\u{e0041}";

fn graph(test: &Test, format: &str) -> String {
    test.loopc(&["graph", "plan.loop", "--format", format])
        .stderr("")
        .run()
        .stdout
}

#[test]
fn graph_text_dot_and_mermaid_escape_format_characters() {
    let test = Test::new();
    test.plan(PLAN);
    assert_eq!(
        graph(&test, "text"),
        format!(
            "{NAME}: 2 tasks in 2 layers\n\nlayer 0\n  a  command  {TITLE}\n\nlayer 1\n  b  command  ← a\n"
        )
    );
    let dot_title = TITLE.replace('\\', "\\\\");
    let dot_name = NAME.replace('\\', "\\\\");
    assert_eq!(
        graph(&test, "dot"),
        format!(
            "digraph \"{dot_name}\" {{\n  \
             graph [charset=\"UTF-8\", rankdir=TB, label=\"{dot_name}\", labelloc=t, fontname=\"Helvetica\"];\n  \
             node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\"];\n  \
             edge [color=\"#555555\"];\n  \
             \"a\" [label=\"a\\n{dot_title}\\ncommand\"];\n  \
             \"b\" [label=\"b\\ncommand\"];\n  \
             \"a\" -> \"b\";\n}}\n"
        )
    );
    assert_eq!(
        graph(&test, "mermaid"),
        format!(
            "flowchart TD\n  t0[\"a<br/>{TITLE}<br/>command\"]\n  t1[\"b<br/>command\"]\n  t0 --> t1\n"
        )
    );
}

#[test]
fn graph_svg_escapes_format_characters_and_json_keeps_them() {
    let test = Test::new();
    test.plan(PLAN);
    let svg = graph(&test, "svg");
    assert!(svg.contains(&format!("<title>{NAME}</title>\n")), "{svg}");
    assert!(
        svg.contains(&format!("<title>a: {TITLE}</title>\n")),
        "{svg}"
    );
    assert!(
        svg.contains(r#"text-anchor="middle">\u{202e}evil\u{2066}ok\u{2069} \u{200b}ze…</text>"#),
        "{svg}"
    );
    assert!(!svg.chars().any(loopc::visible::is_format), "{svg}");
    let json: serde_json::Value =
        serde_json::from_str(&graph(&test, "json")).expect("graph's JSON");
    assert_eq!(json["name"], "demo\u{200B}\u{202E}exe.txt");
    assert_eq!(
        json["tasks"][0]["title"],
        "\u{202E}evil\u{2066}ok\u{2069} \u{200B}zero\u{FEFF}\u{61C}\u{E0041}"
    );
}

#[test]
fn list_escapes_format_and_control_characters_in_titles() {
    let test = Test::new();
    test.plan(&PLAN.replace("zero", r"zero\tand\u{1b}[2J"));
    let title = TITLE.replace("zero", r"zero\tand\u{1b}[2J");
    test.loopc(&["list", "plan.loop"])
        .stdout(&format!(
            "task  status  title\na     -       {title}\nb     -\n"
        ))
        .stderr("")
        .run();
}

#[test]
fn run_lines_summary_dry_run_and_status_escape_format_characters() {
    let test = Test::repo();
    test.plan(PLAN);
    let run = test.loopc(&["run"]).run();
    assert!(
        run.stderr
            .starts_with(&format!("loopc: running plan {NAME} on loop/{NAME} (at ")),
        "{run:?}"
    );
    assert!(
        run.stdout.contains(&format!(
            "run passed: 2/2 tasks passed, 0 agent attempts, $0, integration branch loop/{NAME} at "
        )),
        "{run:?}"
    );
    test.loopc(&["run", "--dry-run"])
        .stdout(&format!(
            "a: cached\nb: cached\ndry run of plan {NAME}: 2 cached, 0 to run; nothing was started\n"
        ))
        .run();
    let status = test.loopc(&["status"]).stderr("").run().stdout;
    let first = status.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("plan {NAME} (plan.loop), started ")),
        "{status}"
    );
    assert!(!status.chars().any(loopc::visible::is_format), "{status}");
}

#[test]
fn human_diagnostics_escape_quoted_source_lines_and_messages() {
    // Raw (not escaped) format and control characters in the file itself,
    // and in its name.
    let test = Test::new().file(
        "r\u{202E}aw.loop",
        "task a \"\u{202E}RTL\" { run = \"true\" nope = 1 }\n\
         task \"b\u{202E}c\" { run = \"x\u{1b}[31m\" }\n",
    );
    test.loopc(&["check", "r\u{202E}aw.loop"])
        .status(1)
        .stdout("")
        .stderr(
            "error[E0002]: unknown field `nope` in task `a`\n  \
             ┌─ r\\u{202e}aw.loop:1:30\n  \
             │\n\
             1 │ task a \"\\u{202e}RTL\" { run = \"true\" nope = 1 }\n  \
             │                                     ^^^^ unknown field\n  \
             │\n  \
             = task `a` takes: prompt, run, agent, accept, gates, attempts, timeout, inputs, changes, env, expands, resolver, protect, may_change, context, verify, on_fail, replans, answerer\n\
             \n\
             error[E0011]: invalid task name `b\\u{202e}c`\n  \
             ┌─ r\\u{202e}aw.loop:2:6\n  \
             │\n\
             2 │ task \"b\\u{202e}c\" { run = \"x\\u{1b}[31m\" }\n  \
             │      ^^^^^^^^^^^^ a task name may contain only ASCII letters, digits, `_`, `.` and `-`\n  \
             │\n  \
             = a task name becomes a git branch and a directory name: it must match [A-Za-z0-9_][A-Za-z0-9_.-]{0,63} and contain no `..`; the title may hold any text: `task cafe \"Café au lait\" { … }`\n\
             \n\
             error: 1 plan checked: 2 errors, 0 warnings\n",
        )
        .run();
}

#[test]
fn command_line_errors_escape_format_characters_in_file_names() {
    let test = Test::new();
    test.loopc(&["check", "evil\u{202E}txt.loop"])
        .status(2)
        .stdout("")
        .stderr(
            "error: cannot read `evil\\u{202e}txt.loop`: No such file or directory (os error 2)\n",
        )
        .run();
}

/// A committed file's name is text from outside the plan: `--dry-run`
/// names a changed input file with its control and format characters
/// escaped, as the warning about uncommitted files does.
#[test]
fn dry_run_escapes_the_names_of_changed_input_files() {
    let test = Test::repo();
    test.plan(
        "budget { iterations = 5 }\ntask t { run = \"echo x >> out.txt\"  inputs = [\"src/*\"] }\n",
    );
    let name = "src/\u{1b}[2Jred\u{202E}txt.in";
    std::fs::create_dir_all(test.root.join("src")).unwrap();
    std::fs::write(test.root.join(name), "1\n").unwrap();
    test.commit("input");
    test.loopc(&["run"]).status(0).run();
    std::fs::write(test.root.join(name), "2\n").unwrap();
    test.commit("change");
    test.loopc(&["run", "--dry-run"])
        .stdout(
            "t: run (input file src/\\u{1b}[2Jred\\u{202e}txt.in changed)\n\
             dry run of plan plan: 0 cached, 1 to run; nothing was started\n",
        )
        .run();
}
