//! Answers without a person (`answerer`): a task's `needs_human` question
//! goes to an agent first; its answer is recorded as `loopc answer`
//! records one and the task goes on in the same run; a declined question
//! goes to a person; a person's later answer overrides the agent's.

use crate::harness::Test;

/// An agent that drafts `notes.txt` and changes `README`, then asks which
/// database to use until its prompt holds an answer; then it writes the
/// answer's database to `db.txt`. Each prompt is kept in the scripts
/// directory as `prompt.<n>`.
const ASKING_AGENT: &str = r#"#!/bin/sh
n=$(ls "$BIN"/prompt.* 2>/dev/null | wc -l)
p="$BIN/prompt.$((n + 1))"
cat > "$p"
if grep -q '^## Answer from' "$p"; then
  grep -o 'SQLite\|Postgres' "$p" | tail -n 1 > db.txt
  printf '{"status":"completed","summary":"used the answer"}' > "$LOOP_HANDOFF"
else
  echo draft > notes.txt
  echo changed >> README
  printf '{"status":"needs_human","summary":"cannot pick","question":"Postgres or SQLite?"}' > "$LOOP_HANDOFF"
fi
"#;

/// The answerer: keeps its prompt as `answerer.prompt` and prints
/// `$ANSWER`.
const ANSWERER: &str = r#"#!/bin/sh
cat > "$BIN/answerer.prompt"
printf '%s\n' "$ANSWER"
"#;

fn plan(repo: &Test, answer: &str) {
    plan_with(repo, answer, "");
}

/// [`plan`], with `defaults` set to `defaults` (a block's inside).
fn plan_with(repo: &Test, answer: &str, defaults: &str) {
    repo.script("agent.sh", ASKING_AGENT);
    repo.script("pm.sh", ANSWERER);
    repo.write("README", "hello\n");
    repo.commit("a readme");
    repo.plan(&format!(
        r#"loop "ask" {{ answerer = pm }}
defaults {{ {defaults} }}
budget {{ iterations = 10 }}
agent bot {{ run = "sh @BIN@/agent.sh" env = {{ BIN = "@BIN@" }} }}
agent pm {{ run = "sh @BIN@/pm.sh" env = {{ BIN = "@BIN@" ANSWER = "{answer}" }} }}
task a {{ agent = bot prompt = "Store the data." attempts = 1 }}
task b: a {{ run = "cat db.txt > b.txt" }}
"#
    ));
}

#[test]
fn the_answerer_answers_and_the_task_goes_on_in_the_same_run() {
    let repo = Test::repo();
    plan(&repo, "Use SQLite.");
    let out = repo.loopc(&["run"]).status(0).run();
    let a = repo.task("a");
    assert_eq!(a["status"], "passed", "{out:?}");
    // The attempt that asked does not count against `attempts = 1`.
    assert_eq!(a["attempts"], 2);
    assert_eq!(a["history"][0]["outcome"], "needs-human");
    assert_eq!(a["answered_by"], "pm");
    assert_eq!(repo.show("loop/ask", "db.txt").unwrap(), "SQLite\n");
    assert_eq!(repo.status_of("b"), "passed");

    // The answerer saw the task's prompt, the question and the diff.
    let asked = std::fs::read_to_string(repo.bin.join("answerer.prompt")).unwrap();
    for text in [
        "## The task's prompt\nStore the data.",
        "## The question\n> Postgres or SQLite?",
        "+changed",
        "new file, not yet added: notes.txt",
    ] {
        assert!(asked.contains(text), "{text:?} not in\n{asked}");
    }
    // The next attempt's prompt has the answer, marked as the agent's.
    let prompt = std::fs::read_to_string(repo.bin.join("prompt.2")).unwrap();
    assert!(
        prompt.contains("## Answer from agent `pm`\nAn earlier attempt of this task asked:\n> Postgres or SQLite?\n\nThe answer:\nUse SQLite.\n"),
        "{prompt}"
    );
    // Recorded as `loopc answer` records one, with `by`.
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.root.join(".loopc/answers/a.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(file["version"], 2);
    assert_eq!(file["answers"][0]["question"], "Postgres or SQLite?");
    assert_eq!(file["answers"][0]["answer"], "Use SQLite.");
    assert_eq!(file["answers"][0]["by"], "pm");
    let ev = repo
        .events()
        .into_iter()
        .find(|e| e["event"] == "answered")
        .expect("an answered event");
    assert_eq!((&ev["task"], &ev["by"]), (&"a".into(), &"pm".into()));
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("loopc: a: agent `pm` answered its question; the task goes on"),
        "{all}"
    );
    let marked =
        "answered by agent `pm`: a's question (a person overrides it with `loopc answer a \"…\"`)";
    assert!(out.stdout.contains(marked), "{}", out.stdout);
    let status = repo.loopc(&["status"]).status(0).run();
    assert!(status.stdout.contains(marked), "{}", status.stdout);
    // The attempt that asked keeps its worktree (as a question's is), and
    // the summary says what it is.
    assert_eq!(repo.extra_worktrees().len(), 1);
    assert!(
        out.stdout
            .contains("kept: 1 worktree of failed or blocked attempts, questions and"),
        "{}",
        out.stdout
    );

    // The pass was keyed with the agent's answer: a rerun replays it.
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("a"), "cached");

    // A person overrides it: the next run does the task with both answers,
    // the person's last.
    repo.loopc(&["answer", "a", "Postgres, please."])
        .status(0)
        .run();
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.root.join(".loopc/answers/a.json")).unwrap(),
    )
    .unwrap();
    assert!(file["answers"][1]["by"].is_null(), "{file}");
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.show("loop/ask", "db.txt").unwrap(), "Postgres\n");
    let prompt = std::fs::read_to_string(repo.bin.join("prompt.3")).unwrap();
    assert!(prompt.contains("## Answer from a human\n"), "{prompt}");
}

#[test]
fn the_answerers_prompt_starts_with_the_tasks_context_files() {
    let repo = Test::repo();
    repo.write("DESIGN.md", "# Design\nSQLite for anything local.\n");
    repo.commit("design");
    plan_with(&repo, "Use SQLite.", r#"context = ["DESIGN.md"]"#);
    repo.loopc(&["run"]).status(0).run();
    let asked = std::fs::read_to_string(repo.bin.join("answerer.prompt")).unwrap();
    assert!(
        asked.starts_with(
            "## Context: DESIGN.md\n# Design\nSQLite for anything local.\n\n\
             ## A question for you to answer\n"
        ),
        "{asked}"
    );
}

#[test]
fn a_declined_question_goes_to_a_person() {
    for declined in ["DECLINE", ""] {
        let repo = Test::repo();
        plan(&repo, declined);
        let out = repo.loopc(&["run"]).status(1).run();
        let a = repo.task("a");
        assert_eq!(a["status"], "needs-human", "{declined:?}: {out:?}");
        assert!(a["answered_by"].is_null());
        assert_eq!(repo.status_of("b"), "skipped");
        assert!(!repo.root.join(".loopc/answers/a.json").exists());
        assert!(repo.events().iter().all(|e| e["event"] != "answered"));
        assert!(
            out.stdout.contains("answer with `loopc answer a \"…\"`"),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn an_unknown_answerer_is_e0005() {
    let repo = Test::repo();
    repo.plan(
        r#"agent bot { run = "true" }
defaults { answerer = pmm }
task a { agent = bot prompt = "p" answerer = bott }
"#,
    );
    let out = repo.loopc(&["check"]).status(1).run();
    assert!(
        out.stderr.contains("error[E0005]: unknown agent `pmm`"),
        "{out:?}"
    );
    assert!(
        out.stderr.contains("error[E0005]: unknown agent `bott`"),
        "{out:?}"
    );
    assert!(out.stderr.contains("did you mean `bot`?"), "{out:?}");
}

/// A run the budget stops after the answerer answered: the attempt that
/// asked did not fail, and the summary does not say it did.
#[test]
fn a_run_stopped_after_an_answer_does_not_call_the_attempt_failed() {
    let repo = Test::repo();
    plan(&repo, "Use SQLite.");
    let plan = std::fs::read_to_string(repo.root.join("plan.loop")).unwrap();
    repo.plan(
        &plan
            .replace("iterations = 10", "iterations = 2")
            .replace("attempts = 1", "attempts = 2"),
    );
    let out = repo.loopc(&["run"]).status(3).run();
    assert!(
        out.stdout.contains(
            "  a: stopped after 1 attempt (the run stopped before the next attempt): agent `pm` \
             answered its question"
        ),
        "{out:?}"
    );
}

/// An answerer that fails leaves the question to a person, and its log
/// says why in its own last words.
#[test]
fn a_failing_answerers_log_keeps_its_last_words() {
    let repo = Test::repo();
    plan(&repo, "unused");
    repo.script(
        "pm.sh",
        "#!/bin/sh\ncat > /dev/null\necho 'oops: no model' >&2\nexit 3\n",
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("a"), "needs-human");
    let log = std::fs::read_to_string(repo.root.join(".loopc/logs/a/1/answerer.log")).unwrap();
    assert_eq!(log, "the answerer exit status 3: oops: no model\n");
}
