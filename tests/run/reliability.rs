//! Issue 29's cases, each a scenario in a real repository: passes that
//! could not be cached (a cache entry's text as one argument of git, over
//! the kernel's bound), attempts that inherited the user's sparse
//! checkout, an answer replayed over, read-only directories in the pool of
//! worktrees and in `loopc clean`, and the smaller ones: a file name with a
//! line break in progress.md, the reset a task waits for when its agent
//! and its fallback are both limited, a reset time already past, and task
//! branches that cannot be deleted on a run that passes. (A reused
//! worktree's modes and owner: `run_reuse`; SHA-256 and odd paths:
//! `run_odd_repos`; the language server's client: `lsp_client`.)

use crate::harness::Test;
use serde_json::Value;

/// Writes `plan.loop` with `@FIX@` replaced by the fixture agents' directory.
fn fixture_plan(repo: &Test, text: &str) {
    let fix = format!("{}/tests/fixtures/agents", env!("CARGO_MANIFEST_DIR"));
    repo.plan(&text.replace("@FIX@", &fix));
}

/// Seconds since the Unix epoch, now.
fn epoch() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

// Item 1: nothing loopc hands git is bounded by the argument list ------------

#[test]
fn a_task_reading_and_writing_twenty_thousand_files_is_cached() {
    let repo = Test::repo();
    for i in 0..20_000 {
        repo.write(&format!("data/{}/f{i}.txt", i % 100), format!("{i}\n"));
    }
    repo.commit("twenty thousand inputs");
    // The agent writes 20,000 files: the entry names every one of them,
    // and every input with its object id (megabytes of text).
    repo.script(
        "agent.sh",
        "#!/bin/sh\ncat > /dev/null\nmkdir -p out && cd out && \
         seq 1 20000 | sed 's/^/written-by-the-agent-/' | xargs touch\n",
    );
    repo.plan(
        r#"
loop "big" { }
budget { iterations = 3 }
agent bot { run = "sh @BIN@/agent.sh" }
task wide { agent = bot  prompt = "x"  inputs = ["data/**"] }
task after: wide { run = "ls out | wc -l > count.txt" }
"#,
    );
    let first = repo.loopc(&["run"]).status(0).run();
    assert!(!first.stderr.contains("warning: cache"), "{}", first.stderr);
    assert_eq!(repo.status_of("wide"), "passed");
    assert_eq!(
        repo.show("loop/big", "count.txt").as_deref(),
        Some("20000\n")
    );
    // Recorded: the next run pays nothing.
    let second = repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("wide"), "cached", "{}", second.stderr);
    assert_eq!(repo.status_of("after"), "cached");
}

// Item 2: an attempt's worktree holds the whole tree -------------------------

#[test]
fn attempts_see_the_whole_tree_of_a_sparse_checkout() {
    let repo = Test::repo()
        .file("src/lib.txt", "source\n")
        .file("docs/guide.txt", "guide\n");
    repo.commit("two directories");
    repo.git(&["sparse-checkout", "set", "src"]);
    assert!(!repo.root.join("docs").exists(), "the checkout is sparse");
    // The agent reads a file outside the user's sparse cone and writes
    // one beside it; a gate reads both.
    repo.script(
        "agent.sh",
        "#!/bin/sh\ncat > /dev/null\ncat docs/guide.txt > docs/copy.txt || exit 3\n",
    );
    repo.plan(
        r#"
loop "sparse" { }
budget { iterations = 3 }
agent bot { run = "sh @BIN@/agent.sh" }
gate whole = "test -f docs/guide.txt && test -f docs/copy.txt && test -f src/lib.txt"
task t { agent = bot  prompt = "x"  gates = [whole]  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(
        repo.show("loop/sparse", "docs/copy.txt").as_deref(),
        Some("guide\n")
    );
    // The user's checkout is as sparse as it was.
    assert!(!repo.root.join("docs").exists());
    assert_eq!(repo.git(&["sparse-checkout", "list"]), "src");
}

// Item 3: an answer is part of what its task runs with -----------------------

#[test]
fn an_answer_is_honoured_by_the_next_run_over_a_cached_pass() {
    let repo = Test::repo();
    // Without `<bin>/ask` the agent just works; with it, it asks until its
    // prompt holds an answer.
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
prompt=$(cat)
if [ ! -e "$BIN/ask" ]; then
  echo plain > db.txt
elif printf '%s' "$prompt" | grep -q '^## Answer from a human'; then
  echo sqlite > db.txt
else
  printf '{"status":"needs_human","question":"Postgres or SQLite?"}' > "$LOOP_HANDOFF"
fi
"#,
    );
    repo.plan(
        r#"
loop "ask" { }
budget { iterations = 5 }
agent bot { run = "sh @BIN@/agent.sh"  env = { BIN = "@BIN@" } }
task q { agent = bot  prompt = "Store the data." }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.show("loop/ask", "db.txt").as_deref(), Some("plain\n"));
    std::fs::write(repo.bin.join("ask"), "").unwrap();
    repo.loopc(&["run", "--force", "q"]).status(1).run();
    assert_eq!(repo.status_of("q"), "needs-human");
    repo.loopc(&["answer", "q", "Use SQLite."]).run();
    // The dry run says why q runs; the run gives q its answer instead of
    // replaying the pass made without it.
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert!(
        dry.stdout.contains("q: run (answers changed)"),
        "{}",
        dry.stdout
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("q"), "passed");
    assert_eq!(repo.show("loop/ask", "db.txt").as_deref(), Some("sqlite\n"));
    // That pass is recorded under the answer: the next run replays it.
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("q"), "cached");
}

// Item 4 and item 9's `clean`: read-only directories -------------------------

/// A repository whose agent leaves read-only directories in its worktree
/// (as Go's module cache is: 0555 directories, 0444 files), ignored by git.
fn read_only_repo(agent_tail: &str) -> Test {
    let repo = Test::repo().file(".gitignore", "gocache/\n");
    repo.commit("ignore the module cache");
    repo.script(
        "agent.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\nmkdir -p gocache/mod/m@v1 && echo module > \
             gocache/mod/m@v1/go.mod\nchmod 444 gocache/mod/m@v1/go.mod\nchmod 555 \
             gocache/mod/m@v1 gocache/mod gocache\necho \"$LOOP_TASK\" > \"$LOOP_TASK.txt\"\n\
             {agent_tail}\n"
        ),
    );
    repo
}

/// The directories under `.loopc/worktrees/`.
fn worktree_dirs(repo: &Test) -> Vec<String> {
    std::fs::read_dir(repo.root.join(".loopc/worktrees"))
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn read_only_directories_break_neither_the_pool_nor_clean() {
    // The run is not root's: root may empty any directory.
    let repo = read_only_repo(r#"[ "$LOOP_TASK" = c ] && exit 1; exit 0"#);
    repo.plan(
        r#"
loop "ro" { }
budget { iterations = 9  failures = 9 }
agent bot { run = "sh @BIN@/agent.sh" }
defaults { agent = bot }
task a { prompt = "a" }
task b: a { prompt = "b" }
task c: b { prompt = "c"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).unprivileged().status(1).run();
    // `b` reused `a`'s worktree, read-only directories and all, at once.
    for t in ["a", "b"] {
        let task = repo.task(t);
        assert_eq!(task["status"], "passed", "{task}");
        assert_eq!(task["history"].as_array().unwrap().len(), 1, "{task}");
    }
    assert!(repo.finished_attempts("infrastructure").is_empty());
    // Only the failed attempt's worktree is kept.
    assert_eq!(worktree_dirs(&repo), ["c.r1-a1"]);
    assert_eq!(repo.extra_worktrees().len(), 1);
    repo.loopc(&["clean"])
        .unprivileged()
        .stdout("removed 1 worktree, 1 task branch and the logs\n")
        .run();
    assert!(worktree_dirs(&repo).is_empty());
    assert!(repo.extra_worktrees().is_empty());
}

#[test]
fn clean_says_it_removed_a_leftover_git_no_longer_knows() {
    let repo = read_only_repo("exit 1");
    repo.plan(
        r#"
loop "ro" { }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "a"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).unprivileged().status(1).run();
    // What an earlier `git worktree remove` that could not empty the
    // read-only directories leaves: git's entry gone, the files there.
    std::fs::remove_dir_all(repo.root.join(".git/worktrees/a.r1-a1")).unwrap();
    assert!(repo.extra_worktrees().is_empty());
    assert_eq!(worktree_dirs(&repo), ["a.r1-a1"]);
    repo.loopc(&["clean"])
        .unprivileged()
        .stdout("removed 1 worktree, 1 task branch and the logs\n")
        .run();
    assert!(worktree_dirs(&repo).is_empty());
}

// Item 9: the smaller ones ----------------------------------------------------

#[test]
fn a_file_name_with_a_line_break_keeps_progress_one_line_a_task() {
    let repo = Test::repo();
    repo.plan(
        r#"
loop "nl" { }
task a "Odd names" { run = "printf x > 'two\nlines.txt'; echo y > plain.txt" }
task b: a { run = "cp \"$LOOP_PROGRESS_FILE\" seen.md" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let progress = std::fs::read_to_string(repo.root.join(".loopc/progress.md")).unwrap();
    let lines: Vec<&str> = progress.lines().collect();
    assert_eq!(lines.len(), 2, "{progress}");
    assert_eq!(
        lines[0], "- a: Odd names — done; plain.txt, two\\nlines.txt",
        "{progress}"
    );
    // What the next task read is that one line.
    assert_eq!(
        repo.show("loop/nl", "seen.md").as_deref(),
        Some(format!("{}\n", lines[0]).as_str())
    );
}

#[test]
fn with_an_agent_and_its_fallback_limited_the_task_waits_for_the_earlier_reset() {
    let repo = Test::repo();
    let now = epoch();
    // `claude` resets in an hour, its fallback `backup` in three: the
    // task waits for `claude` (here over the `wait` budget: the run stops
    // saying which reset it would wait for).
    fixture_plan(
        &repo,
        &format!(
            r#"
loop "fb" {{ }}
budget {{ iterations = 5  wait = 1m }}
agent claude {{
  run = "sh @FIX@/claude -p --output-format json"
  output = claude-json
  fallback = backup
  env = {{ FIXTURE_MODE = "rate_limited"  FIXTURE_RESETS_AT = "{soon}" }}
}}
agent backup {{
  run = "sh @FIX@/claude -p --output-format json"
  output = claude-json
  env = {{ FIXTURE_MODE = "rate_limited"  FIXTURE_RESETS_AT = "{late}" }}
}}
task t {{ agent = claude  prompt = "x" }}
"#,
            soon = now + 3600,
            late = now + 3 * 3600
        ),
    );
    repo.loopc(&["run"]).status(3).run();
    let t = repo.task("t");
    assert_eq!(t["waiting_for"], "claude", "{t}");
    let waits: Vec<Value> = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "waiting")
        .collect();
    let last = waits.last().unwrap();
    assert_eq!(last["agent"], "claude", "{waits:?}");
    // Over the `wait` budget, it is not waited in this run.
    assert_eq!(last["wait_ms"], 0, "{last}");
    // The wait left for the next run is `claude`'s hour, not `backup`'s
    // three: it ends at claude's reset time.
    let minute = |at: u64| {
        let out = std::process::Command::new("date")
            .args(["-u", "-d", &format!("@{at}"), "+%Y-%m-%dT%H:%M:%S"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let until = t["waiting_until"].as_str().unwrap();
    assert!(until.starts_with(&minute(now + 3600)), "{until} {t}");
}

#[test]
fn a_reset_time_already_past_is_said_so() {
    let repo = Test::repo();
    fixture_plan(
        &repo,
        &format!(
            r#"
loop "past" {{ }}
budget {{ iterations = 5  wait = 1s }}
agent claude {{
  run = "sh @FIX@/claude -p --output-format json"
  output = claude-json
  env = {{ FIXTURE_MODE = "rate_limited"  FIXTURE_RESETS_AT = "{past}" }}
}}
task t {{ agent = claude  prompt = "x" }}
"#,
            past = epoch() - 600
        ),
    );
    repo.loopc(&["run"]).status(3).run();
    let state = repo.state();
    let reason = state["stop_reason"].as_str().unwrap();
    assert!(reason.contains("its reset time "), "{reason}");
    assert!(reason.contains(" has passed; trying again at "), "{reason}");
    assert!(!reason.contains("no reset time given"), "{reason}");
}

#[test]
fn task_branches_that_cannot_be_deleted_are_a_warning_on_a_run_that_passes() {
    let repo = Test::repo();
    // A git that refuses to delete branches (as one whose refs are locked
    // or read-only would).
    let path = repo.git_wrapper(|real| {
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -D ] && {{ echo 'error: cannot lock ref' \
             >&2; exit 1; }}; done\nexec {real} \"$@\"\n"
        )
    });
    repo.plan(
        r#"
loop "keep" { }
task a { run = "echo a > a.txt" }
"#,
    );
    let r = repo.loopc(&["run"]).env("PATH", &path).status(0).run();
    assert!(
        r.stderr
            .contains("warning: cannot delete the task branch(es) `loopc/keep/a/r1-a1`"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.lines().any(|l| l.starts_with("error:")),
        "{}",
        r.stderr
    );
}
