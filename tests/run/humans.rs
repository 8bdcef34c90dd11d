//! What a person sees and does after a run: a task whose agent asked a
//! question (`needs_human`) waits for `loopc answer`, and the run summary
//! points at a failed attempt's logs.

use crate::harness::Test;

/// An agent that asks which database to use until its prompt holds an
/// answer, then does the work. It keeps each prompt in the scripts
/// directory as `prompt.<n>`, n counting its runs.
const ASKING_AGENT: &str = r#"#!/bin/sh
n=$(ls "$BIN"/prompt.* 2>/dev/null | wc -l)
cat > "$BIN/prompt.$((n + 1))"
if grep -q '^## Answer from a human' "$BIN/prompt.$((n + 1))"; then
  echo sqlite > db.txt
  printf '{"status":"completed","summary":"used the answer"}' > "$LOOP_HANDOFF"
else
  printf '{"status":"needs_human","summary":"cannot pick a database","question":"Postgres or SQLite?\\nBoth are installed."}' > "$LOOP_HANDOFF"
fi
"#;

/// A repository whose task `a` asks a question (three attempts), `b`
/// depending on it.
fn asking() -> Test {
    let repo = Test::repo();
    repo.script("agent.sh", ASKING_AGENT);
    repo.plan(
        r#"
loop "ask" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh"  env = { BIN = "@BIN@" } }
task a { agent = bot  prompt = "Store the data."  attempts = 3 }
task b: a { run = "echo b > b.txt" }
"#,
    );
    repo
}

#[test]
fn a_question_blocks_the_task_until_a_person_answers_it() {
    let repo = asking();
    let r = repo.loopc(&["run"]).status(1).run();
    let a = repo.task("a");
    assert_eq!(a["status"], "needs-human", "{a}");
    assert_eq!(a["attempts"], 1, "a question is not retried: {a}");
    assert_eq!(a["question"], "Postgres or SQLite?\nBoth are installed.");
    assert_eq!(a["history"][0]["outcome"], "needs-human");
    assert_eq!(repo.task("b")["status"], "skipped");
    assert_eq!(repo.state()["version"], 3);
    for text in [
        "a: the agent needs a human to answer: Postgres or SQLite?",
        "    > Both are installed.",
        "answer with `loopc answer a \"…\"`",
    ] {
        assert!(r.stdout.contains(text), "{text:?} not in\n{}", r.stdout);
    }
    let status = repo.loopc(&["status"]).run();
    assert!(
        status.stdout.contains("Postgres or SQLite?") && !status.stdout.contains("answered;"),
        "{}",
        status.stdout
    );
    let json = repo.loopc(&["status", "--json"]).run();
    assert!(
        json.stdout.contains("\"status\": \"needs-human\"")
            && json
                .stdout
                .contains("\"question\": \"Postgres or SQLite?\\nBoth are installed.\""),
        "{}",
        json.stdout
    );

    // Wrong answers are refused, each saying why.
    repo.loopc(&["answer", "nope", "x"])
        .stderr_contains(
            "the last run (plan `ask`) has no task `nope`; tasks waiting for an answer: a",
        )
        .status(2)
        .run();
    repo.loopc(&["answer", "b", "x"])
        .stderr_contains("task `b` is not waiting for an answer (it is skipped)")
        .status(2)
        .run();
    repo.loopc(&["answer", "a", "  "])
        .stderr_contains("the answer to task `a` is empty")
        .status(2)
        .run();
    repo.loopc(&["answer", "a", "--file", "missing.txt"])
        .stderr_contains("cannot read the answer from missing.txt")
        .status(2)
        .run();
    // No answer at all: the usage says both ways to give one.
    repo.loopc(&["answer", "a"])
        .stderr_contains(
            "Usage: loopc answer <TASK> <TEXT>\n       loopc answer <TASK> --file <PATH>\n",
        )
        .status(2)
        .run();
    assert!(!repo.root.join(".loopc/answers/a.json").exists());

    repo.write("answer.txt", "Use SQLite.\n");
    let ok = repo.loopc(&["answer", "a", "--file", "answer.txt"]).run();
    assert!(ok.stdout.starts_with("answered task `a`"), "{}", ok.stdout);
    let status = repo.loopc(&["status"]).run();
    assert!(
        status
            .stdout
            .contains("a: answered; the next `loopc run` gives the task the answer"),
        "{}",
        status.stdout
    );
    assert!(
        !status.stdout.contains("answer with `loopc answer a"),
        "{}",
        status.stdout
    );

    // The next run gives the task its answer under its own heading, with
    // the question quoted, and starts its attempts afresh.
    repo.loopc(&["run"]).status(0).run();
    let a = repo.task("a");
    assert_eq!(a["status"], "passed", "{a}");
    assert_eq!(a["attempts"], 1, "{a}");
    assert!(a.get("question").is_none(), "{a}");
    let prompt = std::fs::read_to_string(repo.bin.join("prompt.2")).unwrap();
    let heading = prompt.find("## Answer from a human\n").expect(&prompt);
    assert!(
        prompt.find("Store the data.").unwrap() < heading,
        "{prompt}"
    );
    assert!(
        prompt
            .contains("> Postgres or SQLite?\n> Both are installed.\n\nThe answer:\nUse SQLite.\n"),
        "{prompt}"
    );
    assert!(
        !std::fs::read_to_string(repo.bin.join("prompt.1"))
            .unwrap()
            .contains("Answer from")
    );
    assert_eq!(repo.show("loop/ask", "db.txt").as_deref(), Some("sqlite\n"));
}

#[test]
fn the_summary_names_a_failed_attempts_log_directory() {
    let repo = Test::repo();
    repo.plan(
        r#"
loop "fl" { }
task a { run = "echo broken >&2; exit 1"  attempts = 1 }
"#,
    );
    let r = repo.loopc(&["run"]).status(1).run();
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("    logs: "))
        .unwrap_or_else(|| panic!("no logs line in\n{}", r.stdout));
    let dir = std::path::PathBuf::from(line.trim_start_matches("    logs: "));
    assert!(dir.ends_with(".loopc/logs/a/1"), "{line}");
    assert!(dir.join("command.log").is_file(), "{line}");
}

/// A rerun before anyone answers asks no agent again (the answer is part
/// of the task's key, so nothing changed): the task is `needs-human` again
/// with its question; `--retry-failed` asks again, and an answer runs it.
#[test]
fn a_rerun_without_an_answer_does_not_pay_for_the_question_again() {
    let repo = asking();
    let prompts = |repo: &Test| {
        std::fs::read_dir(&repo.bin)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("prompt.")
            })
            .count()
    };
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(prompts(&repo), 1);
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert!(
        dry.stdout.starts_with(
            "a: not run: its question is not answered yet (Postgres or SQLite?\\nBoth are \
             installed.); answer it with `loopc answer a \"…\"`, or --retry-failed to ask again\n"
        ),
        "{dry:?}"
    );
    let r = repo.loopc(&["run"]).status(1).run();
    assert_eq!(prompts(&repo), 1, "the agent was asked again: {r:?}");
    let a = repo.task("a");
    assert_eq!(a["status"], "needs-human", "{a}");
    assert_eq!(a["question"], "Postgres or SQLite?\nBoth are installed.");
    assert!(
        a["reason"]
            .as_str()
            .unwrap()
            .contains("asked in an earlier run; no agent ran"),
        "{a}"
    );
    assert!(
        r.stdout.contains("answer with `loopc answer a \"…\"`"),
        "{}",
        r.stdout
    );
    assert_eq!(repo.task("b")["status"], "skipped");
    // Asked again on request.
    repo.loopc(&["run", "--retry-failed", "a"]).status(1).run();
    assert_eq!(prompts(&repo), 2);
    // Answered: it runs, with the answer.
    repo.loopc(&["answer", "a", "SQLite."]).status(0).run();
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(prompts(&repo), 3);
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.status_of("b"), "passed");
}
