//! Nothing an agent or a user's git setup does touches the user's branches,
//! hangs a run or loses passed work: agents that delete `.git`, move the
//! user's refs or stash; hooks, signing and maintenance in the user's git
//! configuration; counting after the agent started; start-up checks; the
//! lock; `.loopc` symlinks; submodules and nested repositories. Real
//! repositories, real processes, scripted agents.
//!
//! Over 600 lines: it keeps issue 13's cases together, one per item, with
//! the hostile-agent loop and the view of a user's repository it compares.

use crate::harness::{SIMPLE_AGENT, Test, no_process_with};
use std::collections::BTreeMap;

/// What a user sees of their repository: every ref that is not loopc's
/// (not `refs/heads/loopc/…`, `refs/loopc/…` or the integration branch
/// `refs/heads/loop/…`), the main checkout's HEAD, its index, its working
/// tree (every tracked and untracked file that is not ignored, with its
/// contents) and the stash.
#[derive(Debug, PartialEq, Eq, Clone)]
struct UserView {
    refs: BTreeMap<String, String>,
    head: String,
    index: String,
    files: BTreeMap<String, String>,
    stash: String,
}

fn user_view(repo: &Test) -> UserView {
    let refs = repo
        .git(&["for-each-ref", "--format=%(refname) %(objectname)"])
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(r, _)| {
            !r.starts_with("refs/heads/loopc/")
                && !r.starts_with("refs/loopc/")
                && !r.starts_with("refs/heads/loop/")
        })
        .map(|(r, o)| (r.to_string(), o.to_string()))
        .collect();
    let head = std::fs::read_to_string(repo.root.join(".git/HEAD")).unwrap();
    let index = repo.git(&["ls-files", "--stage"]);
    let mut files = BTreeMap::new();
    for path in repo
        .git(&["ls-files", "--cached", "--others", "--exclude-standard"])
        .lines()
    {
        let text = std::fs::read(repo.root.join(path))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_else(|e| format!("<{e}>"));
        files.insert(path.to_string(), text);
    }
    let stash = repo.git(&["stash", "list", "--format=%H %gs"]);
    UserView {
        refs,
        head,
        index,
        files,
        stash,
    }
}

/// A user's repository with work in progress: a second branch, a tag, an
/// uncommitted edit of a tracked file, a staged file and an untracked one.
fn busy_repo() -> Test {
    let repo = Test::repo();
    repo.write("tracked.txt", "committed\n");
    repo.commit("tracked");
    repo.git(&["branch", "feature"]);
    repo.git(&["tag", "v1"]);
    repo.write("tracked.txt", "user's uncommitted edit\n");
    repo.write("staged.txt", "user's staged file\n");
    repo.git(&["add", "staged.txt"]);
    repo.write("untracked.txt", "user's untracked file\n");
    // The plan is the user's file too; keep it out of the views' way.
    repo.git(&["config", "core.excludesFile", "/dev/null"]);
    std::fs::write(
        repo.root.join(".git/info/exclude"),
        "/plan.loop\n/.loopc/\n",
    )
    .unwrap();
    repo
}

fn one_task_plan(repo: &Test, agent: &str, attempts: u32) {
    repo.script("agent.sh", agent);
    repo.plan(&format!(
        r#"
loop "s" {{ }}
budget {{ iterations = 10  failures = 10 }}
agent bot {{ run = "sh @BIN@/agent.sh" }}
task one {{ agent = bot  prompt = "x"  attempts = {attempts} }}
"#
    ));
}

// Item 1: an agent that deletes its worktree's `.git` ------------------------

#[test]
fn an_agent_deleting_dot_git_fails_and_the_users_checkout_is_untouched() {
    let repo = busy_repo();
    one_task_plan(
        &repo,
        "#!/bin/sh\ncat > /dev/null\nrm -rf .git && echo work > feature.txt\n",
        1,
    );
    let before = user_view(&repo);
    let main = repo.git(&["rev-parse", "main"]);
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 1, "{r:?}");
    assert_eq!(repo.status_of("one"), "failed");
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert!(reason.contains(".git"), "{reason}");
    assert_eq!(user_view(&repo), before);
    assert_eq!(repo.git(&["rev-parse", "main"]), main);
    assert_eq!(repo.git(&["rev-parse", "loop/s"]), main);
}

// The guard: refs that are not loopc's ---------------------------------------

#[test]
fn an_agent_moving_a_users_branch_fails_naming_it_and_the_move_is_kept() {
    let repo = busy_repo();
    one_task_plan(
        &repo,
        "#!/bin/sh\ncat > /dev/null\necho work > feature.txt\ngit commit -qam x 2>/dev/null; \
         git add feature.txt && git commit -qm work && git branch -f feature HEAD\n",
        1,
    );
    let old = repo.git(&["rev-parse", "feature"]);
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 1, "{r:?}");
    let new = repo.git(&["rev-parse", "feature"]);
    assert_ne!(
        old, new,
        "the agent's move stays: loopc never moves it back"
    );
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains(&format!(
            "`refs/heads/feature` was moved from {old} to {new}"
        )),
        "{reason}"
    );
    assert!(
        r.stdout.contains("warning: while task `one` attempt 1 ran"),
        "{r:?}"
    );
    assert!(r.stdout.contains("refs/heads/feature"), "{r:?}");
    assert_eq!(repo.state()["warnings"].as_array().unwrap().len(), 1);
    // The warning says how to put it back; the command does.
    let restore = format!("git update-ref refs/heads/feature {old} {new}");
    let warning = repo.state()["warnings"][0].as_str().unwrap().to_string();
    assert!(
        warning.ends_with(&format!(
            "loopc did not change it back (to put it back: {restore})"
        )),
        "{warning}"
    );
    repo.git(&["update-ref", "refs/heads/feature", &old, &new]);
    assert_eq!(repo.git(&["rev-parse", "feature"]), old);
    // Nothing of the attempt reached the integration branch.
    assert_eq!(
        repo.git(&["rev-parse", "loop/s"]),
        repo.git(&["rev-parse", "main"])
    );
}

// Item 3: the user's git configuration -------------------------------------

#[test]
fn the_users_hooks_and_signing_do_not_run_in_loopcs_own_git_commands() {
    let repo = Test::repo();
    let marker = repo.bin.join("hooks-ran");
    let hooks = repo.bin.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "post-checkout",
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "reference-transaction",
        "post-index-change",
    ] {
        repo.script(
            &format!("hooks/{hook}"),
            &format!("#!/bin/sh\necho {hook} >> '{}'\nexit 1\n", marker.display()),
        );
    }
    repo.git(&["config", "core.hooksPath", &hooks.to_string_lossy()]);
    repo.git(&["config", "commit.gpgSign", "true"]);
    repo.git(&["config", "gpg.program", "false"]);
    one_task_plan(&repo, SIMPLE_AGENT, 1);
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(repo.show("loop/s", "one.txt").unwrap(), "made by one\n");
    assert!(
        !marker.exists(),
        "hooks ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

/// A repository whose `*.slow` files pass through a clean filter `filter`.
fn filtered_repo(filter: &str) -> Test {
    let repo = Test::repo();
    repo.write(".gitattributes", "*.slow filter=slow\n");
    repo.commit("attributes");
    repo.git(&["config", "filter.slow.clean", filter]);
    repo.git(&["config", "filter.slow.required", "true"]);
    repo
}

const COUNTING_SLOW_AGENT: &str = r#"#!/bin/sh
cat > /dev/null
echo run >> "$(dirname "$0")/agent-runs"
echo work > work.slow
"#;

#[test]
fn a_git_command_that_hangs_is_killed_at_the_attempts_timeout_and_counted() {
    let repo = filtered_repo("sleep 30; cat");
    repo.script("agent.sh", COUNTING_SLOW_AGENT);
    repo.plan(
        r#"
loop "s" { }
budget { iterations = 1 }
agent bot { run = "sh @BIN@/agent.sh" }
task one { agent = bot  prompt = "x"  timeout = 2s }
"#,
    );
    let r = repo.loopc(&["run"]).output();
    let runs = std::fs::read_to_string(repo.bin.join("agent-runs")).unwrap_or_default();
    assert_eq!(runs.lines().count(), 1, "{r:?}");
    assert_eq!(repo.state()["spent"]["iterations"], 1, "{r:?}");
    assert_eq!(repo.task("one")["attempts"], 1, "{r:?}");
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("`git add -A` timed out after 2"),
        "{reason}"
    );
    assert_ne!(r.status, 0, "{r:?}");
}

#[test]
fn a_failing_git_command_reports_its_whole_stderr() {
    let repo = filtered_repo("echo first line >&2; echo second line >&2; exit 1");
    one_task_plan(&repo, COUNTING_SLOW_AGENT, 1);
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 1, "{r:?}");
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("first line"), "{reason}");
    assert!(reason.contains("second line"), "{reason}");
    assert!(reason.contains("fatal:"), "{reason}");
    assert_eq!(repo.state()["spent"]["iterations"], 1, "{r:?}");
}

// Item 8: the integration branch deleted during a run ----------------------

#[test]
fn deleting_the_integration_branch_stops_the_run_and_counts_every_agent_run() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
echo run >> "$(dirname "$0")/agent-runs"
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
if [ "$LOOP_TASK" = b ]; then git update-ref -d refs/heads/loop/s; fi
"#,
    );
    repo.plan(
        r#"
loop "s" { }
budget { iterations = 20 }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
task b: a { agent = bot  prompt = "x" }
task c: b { agent = bot  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 2, "{r:?}");
    assert!(
        r.stderr.contains("`loop/s` was deleted") || r.stdout.contains("`loop/s` was deleted"),
        "{r:?}"
    );
    let runs = std::fs::read_to_string(repo.bin.join("agent-runs")).unwrap_or_default();
    assert_eq!(runs.lines().count(), 2, "{r:?}");
    assert_eq!(repo.state()["spent"]["iterations"], 2, "{r:?}");
    assert_ne!(repo.status_of("c"), "passed");
}

// Item 6: start-up checks before anything moves -----------------------------

const TWO_TASKS: &str = r#"
loop "s" { }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
task b: a { agent = bot  prompt = "y" }
"#;

/// A repository after one passed run of two tasks: `loop/s` is 2 commits
/// past `main`.
fn after_one_run() -> Test {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(TWO_TASKS);
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(repo.git(&["rev-list", "--count", "main..loop/s"]), "2");
    repo
}

#[test]
fn a_run_that_cannot_start_changes_nothing() {
    type Spoil = fn(&std::path::Path);
    let cases: [(&str, Spoil); 4] = [
        ("earlier-logs is a file", |d| {
            std::fs::write(d.join("earlier-logs"), "x").unwrap()
        }),
        ("events.jsonl is a directory", |d| {
            std::fs::remove_file(d.join("events.jsonl")).unwrap();
            std::fs::create_dir(d.join("events.jsonl")).unwrap();
        }),
        ("progress.md is a directory", |d| {
            std::fs::remove_file(d.join("progress.md")).unwrap();
            std::fs::create_dir(d.join("progress.md")).unwrap();
        }),
        ("state.json.tmp is a directory", |d| {
            std::fs::create_dir(d.join("state.json.tmp")).unwrap()
        }),
    ];
    for (what, spoil) in cases {
        let repo = after_one_run();
        let head = repo.git(&["rev-parse", "loop/s"]);
        let state = std::fs::read_to_string(repo.root.join(".loopc/state.json")).unwrap();
        spoil(&repo.root.join(".loopc"));
        let r = repo.loopc(&["run", "--force", "a", "plan.loop"]).output();
        assert_eq!(r.status, 2, "{what}: {r:?}");
        assert_eq!(repo.git(&["rev-parse", "loop/s"]), head, "{what}");
        let after = std::fs::read_to_string(repo.root.join(".loopc/state.json")).unwrap();
        assert_eq!(after, state, "{what}");
    }
}

#[test]
fn a_run_that_cannot_record_its_state_says_so_in_its_exit_status() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
# A state save in flight may hold state.json.tmp as a file for a moment:
# try again until the directory stands in its way.
tmp="$LOOP_WORKTREE/../../state.json.tmp"
n=0
until [ -d "$tmp" ] || [ $n -ge 400 ]; do mkdir "$tmp" 2>/dev/null || sleep 0.05; n=$((n+1)); done
echo x > x.txt
"#,
    );
    one_task_plan(
        &repo,
        &std::fs::read_to_string(repo.bin.join("agent.sh")).unwrap(),
        1,
    );
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 2, "{r:?}");
    assert_eq!(r.stderr.matches("error: cannot write").count(), 1, "{r:?}");
    assert!(r.stderr.contains("could not be recorded"), "{r:?}");
}

// Item 9: the integration branch is recorded as loopc's only when created ----

#[test]
fn an_integration_branch_that_cannot_be_created_is_not_recorded_as_loopcs() {
    let repo = Test::repo();
    repo.git(&["branch", "loop"]);
    one_task_plan(&repo, SIMPLE_AGENT, 1);
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 2, "{r:?}");
    assert!(r.stderr.contains("loop/s"), "{r:?}");
    let ledger = std::fs::read_to_string(repo.root.join(".loopc/branches")).unwrap_or_default();
    assert!(!ledger.lines().any(|l| l == "loop/s"), "{ledger}");
}

// Item 5: `.loopc` symlinks and directories loopc did not make ---------------

#[test]
fn a_dot_loopc_that_is_a_file_is_named_by_every_command() {
    let repo = Test::repo();
    std::fs::write(repo.root.join(".loopc"), "mine\n").unwrap();
    one_task_plan(&repo, SIMPLE_AGENT, 1);
    for args in [&["run"][..], &["status"][..], &["answer", "one", "x"][..]] {
        let r = repo.loopc(args).output();
        assert_eq!(r.status, 2, "{args:?}: {r:?}");
        assert!(
            r.stderr
                .contains(".loopc is not a directory; loopc keeps its state there"),
            "{args:?}: {r:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(repo.root.join(".loopc")).unwrap(),
        "mine\n"
    );
}

#[test]
fn a_symlinked_dot_loopc_is_refused_by_run_clean_and_report() {
    let repo = Test::repo();
    let elsewhere = repo.bin.join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("earlier-logs")).unwrap();
    std::fs::create_dir_all(elsewhere.join("worktrees/a-1")).unwrap();
    std::fs::write(elsewhere.join("earlier-logs/mine.txt"), "user's\n").unwrap();
    std::fs::write(elsewhere.join("worktrees/a-1/mine.txt"), "user's\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.root.join(".loopc")).unwrap();
    one_task_plan(&repo, SIMPLE_AGENT, 1);
    for args in [&["run"][..], &["clean"][..], &["report"][..]] {
        let r = repo.loopc(args).output();
        assert_eq!(r.status, 2, "{args:?}: {r:?}");
        assert!(r.stderr.contains("is a symbolic link"), "{r:?}");
        assert!(r.stderr.contains(".loopc"), "{r:?}");
    }
    let mut left: Vec<String> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["earlier-logs", "worktrees"]);
    assert!(elsewhere.join("earlier-logs/mine.txt").exists());
    assert!(elsewhere.join("worktrees/a-1/mine.txt").exists());
    assert!(repo.git(&["branch", "--list", "loop/s"]).is_empty());
}

#[test]
fn clean_and_run_delete_only_worktrees_loopc_made() {
    let repo = Test::repo();
    one_task_plan(&repo, "#!/bin/sh\ncat > /dev/null\nexit 1\n", 1);
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 1, "{r:?}");
    // A kept worktree of loopc's, and two plain directories that are not
    // worktrees, one with a name like loopc's.
    let wt = repo.root.join(".loopc/worktrees");
    assert!(wt.join("one.r1-a1").is_dir());
    // Names like loopc's: today's (`<task>.r<run>-a<attempt>`) and an
    // earlier version's (`<task>-<n>`).
    for d in ["mine", "one-7", "one.r1-a7"] {
        std::fs::create_dir_all(wt.join(d)).unwrap();
        std::fs::write(wt.join(d).join("notes.txt"), "user's\n").unwrap();
    }
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 1, "{r:?}");
    assert!(wt.join("one-7/notes.txt").exists(), "{r:?}");
    assert!(wt.join("one.r1-a7/notes.txt").exists(), "{r:?}");
    let r = repo.loopc(&["clean"]).output();
    assert_eq!(r.status, 0, "{r:?}");
    assert!(!wt.join("one.r1-a1").exists(), "{r:?}");
    assert!(wt.join("mine/notes.txt").exists(), "{r:?}");
    assert!(wt.join("one-7/notes.txt").exists(), "{r:?}");
    assert!(wt.join("one.r1-a7/notes.txt").exists(), "{r:?}");
    assert!(r.stderr.contains("not a worktree loopc made"), "{r:?}");
}

// Item 7: one lock per repository --------------------------------------------

#[test]
fn a_run_from_a_second_checkout_of_the_repository_is_refused() {
    let repo = Test::repo();
    let started = repo.bin.join("started");
    let release = repo.bin.join("release");
    repo.script(
        "agent.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\ntouch '{}'\nwhile [ ! -e '{}' ]; do sleep 0.05; done\n\
             echo x > x.txt\n",
            started.display(),
            release.display()
        ),
    );
    repo.plan(
        r#"
loop "s" { }
agent bot { run = "sh @BIN@/agent.sh" }
task one { agent = bot  prompt = "x" }
"#,
    );
    let other = repo.bin.join("other");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        &other.to_string_lossy(),
        "-b",
        "other",
    ]);
    std::fs::copy(repo.root.join("plan.loop"), other.join("plan.loop")).unwrap();
    let mut first = repo.loopc(&["run"]).spawn();
    assert!(
        repo.wait_for(4000, || started.exists()),
        "{}",
        repo.spawned_stderr()
    );
    let second = repo.loopc(&["run"]).current_dir(&other).output();
    std::fs::write(&release, "").unwrap();
    let code = first.wait().unwrap().code();
    assert_eq!(code, Some(0), "{}", repo.spawned_stderr());
    assert_eq!(second.status, 2, "{second:?}");
    assert!(
        second.stderr.contains(&format!(
            "another loopc run (pid {}, started 20",
            first.id()
        )),
        "{second:?}"
    );
    assert!(
        second
            .stderr
            .contains(&format!("in {}", repo.root.display())),
        "{second:?}"
    );
    assert!(second.stderr.contains("loopc-lock"), "{second:?}");
    // The refused run started nothing in its checkout.
    assert!(!other.join(".loopc/state.json").exists());
}

// Item 9: smaller ones -------------------------------------------------------

#[test]
fn check_refuses_every_branch_name_git_or_the_file_system_refuses() {
    let long = "x".repeat(300);
    for branch in ["HEAD", long.as_str()] {
        let repo = Test::repo();
        repo.plan(&format!(
            "loop \"s\" {{ branch = \"{branch}\" }}\ntask a {{ run = \"true\" }}\n"
        ));
        let r = repo.loopc(&["check", "plan.loop"]).output();
        assert_ne!(r.status, 0, "{branch}: {r:?}");
        assert!(
            r.stderr.contains("E0009") || r.stdout.contains("E0009"),
            "{branch}: {r:?}"
        );
    }
}

#[test]
fn a_titles_control_characters_do_not_reach_loopcs_commit_subjects() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "s" { }
agent bot { run = "sh @BIN@/agent.sh" }
task one "bell\u{7} and \u{1b}]0;osc\u{7} title" { agent = bot  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 0, "{r:?}");
    let subject = repo.git(&["log", "-1", "--format=%s", "loop/s"]);
    assert!(!subject.chars().any(char::is_control), "{subject:?}");
    assert_eq!(subject, "loop(one): bell and ]0;osc title");
}

// Item 2: work that cannot survive the worktree ------------------------------

/// A repository with a submodule `sub` (its own repository has two commits;
/// the superproject points at the first), initialised in the main checkout.
fn repo_with_submodule() -> (Test, String) {
    let repo = Test::repo();
    let sub = repo.bin.join("subrepo");
    std::fs::create_dir_all(&sub).unwrap();
    let git_sub = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&sub)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git_sub(&["init", "-q", "-b", "main"]);
    std::fs::write(sub.join("lib.txt"), "one\n").unwrap();
    git_sub(&["add", "-A"]);
    git_sub(&[
        "-c",
        "user.name=T",
        "-c",
        "user.email=t@e",
        "commit",
        "-qm",
        "one",
    ]);
    let first = git_sub(&["rev-parse", "HEAD"]);
    std::fs::write(sub.join("lib.txt"), "two\n").unwrap();
    git_sub(&[
        "-c",
        "user.name=T",
        "-c",
        "user.email=t@e",
        "commit",
        "-qam",
        "two",
    ]);
    let second = git_sub(&["rev-parse", "HEAD"]);
    git_sub(&["checkout", "-q", &first]);
    repo.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        &sub.to_string_lossy(),
        "sub",
    ]);
    repo.commit("submodule");
    (repo, second)
}

fn submodule_plan(repo: &Test, agent: &str) {
    repo.script("agent.sh", agent);
    repo.plan(
        r#"
loop "s" { setup = "git -c protocol.file.allow=always submodule -q update --init" }
budget { iterations = 10  failures = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
task one { agent = bot  prompt = "x"  attempts = 1 }
"#,
    );
}

#[test]
fn a_submodule_commit_made_only_in_the_worktree_fails_the_attempt() {
    let (repo, _) = repo_with_submodule();
    submodule_plan(
        &repo,
        "#!/bin/sh\ncat > /dev/null\ncd sub && echo local > local.txt && git add local.txt && \
         git -c user.name=A -c user.email=a@e commit -qm local\n",
    );
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 1, "{r:?}");
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("the submodule `sub` points at commit"),
        "{reason}"
    );
    assert_eq!(
        repo.git(&["rev-parse", "loop/s"]),
        repo.git(&["rev-parse", "main"])
    );
}

#[test]
fn a_submodule_moved_to_a_commit_its_repository_has_passes() {
    let (repo, second) = repo_with_submodule();
    submodule_plan(
        &repo,
        &format!("#!/bin/sh\ncat > /dev/null\ncd sub && git checkout -q {second}\n"),
    );
    // The main checkout's copy of the submodule has every commit.
    let modules = repo.root.join(".git/modules/sub");
    let out = std::process::Command::new("git")
        .args([
            "--git-dir",
            &modules.to_string_lossy(),
            "fetch",
            "-q",
            "origin",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 0, "{r:?}");
    let link = repo.git(&["ls-tree", "loop/s", "sub"]);
    assert!(link.contains(&second), "{link}");
}

#[test]
fn a_nested_repository_the_agent_made_fails_the_attempt() {
    let repo = Test::repo();
    one_task_plan(
        &repo,
        "#!/bin/sh\ncat > /dev/null\nmkdir nested && cd nested && git init -q && echo x > f && \
         git add f && git -c user.name=A -c user.email=a@e commit -qm x\n",
        1,
    );
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 1, "{r:?}");
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("`nested` is a git repository of its own"),
        "{reason}"
    );
    assert_eq!(
        repo.git(&["rev-parse", "loop/s"]),
        repo.git(&["rev-parse", "main"])
    );
}

/// A nested repository with no commit cannot even be staged: the attempt
/// fails naming it (not an infrastructure failure with git's raw text).
#[test]
fn a_nested_repository_without_a_commit_fails_the_attempt_naming_it() {
    let repo = Test::repo();
    one_task_plan(
        &repo,
        "#!/bin/sh
cat > /dev/null
echo y > top.txt
mkdir sub2 && git -C sub2 init -q
",
        1,
    );
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 1, "{r:?}");
    assert_eq!(repo.status_of("one"), "failed", "{r:?}");
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert_eq!(
        reason,
        "out of attempts (1 of 1): `sub2` is a git repository with no commit inside the \
         worktree: git cannot add it"
    );
}

// The hostile agents ----------------------------------------------------------

/// One hostile agent: what it does (shell, in its worktree), whether the task
/// still passes, and the user's refs it changes itself (which loopc can only
/// detect: the attempt fails naming them, the summary warns, and they keep
/// the agent's values).
struct Hostile {
    name: &'static str,
    script: &'static str,
    passes: bool,
    changes: &'static [&'static str],
}

#[test]
fn no_hostile_agent_touches_the_users_branches_head_index_files_or_stash() {
    let root = r#"root="$(cd "$(git rev-parse --git-common-dir)/.." && pwd)""#;
    let cases = [
        Hostile {
            name: "deletes .git",
            script: "rm -rf .git && echo work > work.txt",
            passes: false,
            changes: &[],
        },
        Hostile {
            name: "checks out main",
            script: "git checkout -q main 2>/dev/null; echo work > work.txt",
            passes: true,
            changes: &[],
        },
        Hostile {
            name: "switches to a new branch",
            script: "git switch -q -c x && echo work > work.txt",
            passes: false,
            changes: &["refs/heads/x"],
        },
        Hostile {
            name: "resets below its base",
            script: "git reset -q --hard HEAD~1 && echo work > work.txt",
            passes: false,
            changes: &[],
        },
        Hostile {
            name: "amends its base",
            script: "echo work > work.txt && git add work.txt && git commit -q --amend -m amended",
            passes: false,
            changes: &[],
        },
        Hostile {
            name: "forces main",
            script: "echo work > work.txt && git add work.txt && git commit -qm work && \
                     git branch -f main HEAD 2>/dev/null; true",
            passes: true,
            changes: &[],
        },
        Hostile {
            name: "update-ref main",
            script: "echo work > work.txt && git add work.txt && git commit -qm work && \
                     git update-ref refs/heads/main HEAD",
            passes: false,
            changes: &["refs/heads/main"],
        },
        Hostile {
            name: "pushes to main",
            script: "echo work > work.txt && git add work.txt && git commit -qm work && \
                     git push -q . HEAD:main 2>/dev/null; true",
            passes: true,
            changes: &[],
        },
        Hostile {
            name: "stashes",
            script: "echo work > work.txt && echo more >> README && git stash -q && \
                     echo work > work.txt",
            passes: false,
            changes: &["refs/stash"],
        },
        Hostile {
            name: "removes its own worktree",
            script: "echo work > work.txt && wt=\"$PWD\" && cd / && \
                     git -C \"$wt\" worktree remove --force \"$wt\"",
            passes: false,
            changes: &[],
        },
        Hostile {
            name: "makes everything read-only",
            script: "echo work > work.txt && chmod -R a-w .",
            passes: true,
            changes: &[],
        },
        Hostile {
            name: "overwrites state.json",
            script: "echo work > work.txt && echo garbage > \"$LOOP_WORKTREE/../../state.json\"",
            passes: true,
            changes: &[],
        },
        Hostile {
            name: "edits the plan in the main checkout",
            script: "",
            passes: true,
            changes: &[],
        },
        Hostile {
            name: "links outside the worktree",
            script: "echo work > work.txt && ln -s \"$(dirname \"$0\")/precious\" link && \
                     ln -s / root-link",
            passes: true,
            changes: &[],
        },
    ];
    for case in &cases {
        let repo = busy_repo();
        std::fs::write(repo.bin.join("precious"), "keep me\n").unwrap();
        let script = if case.name == "edits the plan in the main checkout" {
            format!("{root} && echo '# edited' >> \"$root/plan.loop\" && echo work > work.txt")
        } else {
            case.script.to_string()
        };
        one_task_plan(&repo, &format!("#!/bin/sh\ncat > /dev/null\n{script}\n"), 1);
        let before = user_view(&repo);
        let base = repo.git(&["rev-parse", "main"]);
        let r = repo.loopc(&["run"]).output();
        let what = case.name;
        let after = user_view(&repo);
        // Whatever the agent did, loopc ran to its end and recorded it.
        assert_eq!(r.status, if case.passes { 0 } else { 1 }, "{what}: {r:?}");
        let status = repo.status_of("one");
        assert_eq!(
            status,
            if case.passes { "passed" } else { "failed" },
            "{what}: {r:?}"
        );
        // The user's HEAD, index, working tree: as they were.
        assert_eq!(after.head, before.head, "{what}");
        assert_eq!(after.index, before.index, "{what}");
        assert_eq!(after.files, before.files, "{what}");
        // Their refs: as they were, but for those the agent changed itself,
        // which keep the agent's values and are named in the failure.
        let changed: Vec<&str> = before
            .refs
            .keys()
            .chain(after.refs.keys())
            .filter(|k| before.refs.get(*k) != after.refs.get(*k))
            .map(String::as_str)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(changed, case.changes, "{what}: {r:?}");
        if case.changes.contains(&"refs/stash") {
            assert_ne!(after.stash, before.stash, "{what}");
        } else {
            assert_eq!(after.stash, before.stash, "{what}");
        }
        if !case.changes.is_empty() {
            let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
            assert!(
                reason.contains("refs that are not loopc's changed"),
                "{what}: {reason}"
            );
            assert!(
                r.stdout.contains("warning: while task `one`"),
                "{what}: {r:?}"
            );
            for name in case.changes {
                let shown = if *name == "refs/stash" {
                    "the stash"
                } else {
                    name
                };
                assert!(reason.contains(shown), "{what}: {reason}");
            }
        }
        // The integration branch holds the work only if it passed.
        let integration = repo.git(&["rev-parse", "loop/s"]);
        if case.passes {
            assert_eq!(repo.show("loop/s", "work.txt").unwrap(), "work\n", "{what}");
            assert!(
                repo.git_ok(&["merge-base", "--is-ancestor", &base, &integration]),
                "{what}"
            );
        } else {
            assert_eq!(integration, base, "{what}");
        }
        assert_eq!(
            std::fs::read_to_string(repo.bin.join("precious")).unwrap(),
            "keep me\n",
            "{what}"
        );
        // state.json is loopc's, whatever the agent wrote there.
        assert_eq!(
            repo.state()["status"],
            if case.passes { "passed" } else { "failed" }
        );
        // Make the tree deletable again (the read-only agent).
        let _ = std::process::Command::new("chmod")
            .args(["-R", "u+w"])
            .arg(repo.root.join(".loopc"))
            .status();
    }
}

#[test]
fn a_child_that_drops_its_environment_and_session_does_not_survive_the_attempt() {
    let repo = Test::repo();
    let marker = format!("escaped-sleeper-{}", std::process::id());
    let sleeper = repo.marked_sleep(&marker);
    one_task_plan(
        &repo,
        &format!(
            "#!/bin/sh\ncat > /dev/null\nenv -i setsid '{sleeper}' 1000 > /dev/null 2>&1 < /dev/null &\n\
             echo work > work.txt\n"
        ),
        1,
    );
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 0, "{r:?}");
    assert!(no_process_with(&marker), "{marker} survived");
}

#[test]
fn a_kept_worktree_whose_agent_switched_branches_is_still_loopcs() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        "#!/bin/sh\ncat > /dev/null\ngit switch -q -c elsewhere && echo work > work.txt\n",
    );
    repo.plan(
        r#"
loop "sw" { }
budget { iterations = 3 }
agent bot { run = "sh @BIN@/agent.sh" }
task t { agent = bot  prompt = "x"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let kept = repo.root.join(".loopc/worktrees/t.r1-a1");
    assert!(kept.exists());
    // A rerun keeps it (a failed attempt's worktree stays until `clean`)
    // and does not take it for the user's.
    repo.script("agent.sh", SIMPLE_AGENT);
    let r = repo.loopc(&["run", "--retry-failed"]).status(0).run();
    assert!(!r.stderr.contains("not made by loopc"), "{r:?}");
    assert!(kept.exists(), "{r:?}");
    // `loopc clean` removes it like any worktree loopc made.
    let c = repo.loopc(&["clean"]).run();
    assert!(!c.stderr.contains("not made by loopc"), "{c:?}");
    assert!(!kept.exists(), "{c:?}");
}

// A commit the person makes in their own checkout while an attempt runs ----

/// Runs a one-task plan whose agent waits (between `started` and
/// `release`) while `during` changes the repository from outside; returns
/// the run's output.
fn run_while(repo: &Test, during: impl FnOnce(&Test)) -> (i32, String) {
    let sync = repo.bin.join("started");
    let release = repo.bin.join("release");
    one_task_plan(
        repo,
        &format!(
            "#!/bin/sh\ncat >/dev/null\ntouch {s}\ni=0\nwhile [ ! -e {r} ] && [ $i -lt 1000 ]; do i=$((i+1)); sleep 0.02; done\necho work > work.txt\n",
            s = sync.display(),
            r = release.display()
        ),
        1,
    );
    let mut child = repo.loopc(&["run"]).spawn();
    assert!(
        repo.wait_for(4000, || sync.exists()),
        "the agent never started"
    );
    during(repo);
    std::fs::write(&release, "").unwrap();
    let status = child.wait().unwrap().code().unwrap_or(-1);
    let out = std::fs::read_to_string(repo.bin.join("loopc.out")).unwrap_or_default();
    (status, out + &repo.spawned_stderr())
}

#[test]
fn a_commit_in_the_persons_checkout_during_an_attempt_fails_no_attempt() {
    let repo = Test::repo();
    std::fs::write(
        repo.root.join(".git/info/exclude"),
        "/plan.loop\n/.loopc/\n",
    )
    .unwrap();
    let (status, out) = run_while(&repo, |repo| {
        repo.write("mine.txt", "my own work\n");
        repo.commit("my work during the run");
    });
    assert_eq!(status, 0, "{out}");
    assert_eq!(repo.status_of("one"), "passed");
    assert_eq!(repo.task("one")["attempts"], 1);
    let warnings = repo.state()["warnings"].to_string();
    assert!(
        warnings.contains("`main` (checked out at ")
            && warnings.contains("taken as your own commit"),
        "{warnings}"
    );
    assert!(
        out.contains("taken as your own commit, it failed no attempt"),
        "{out}"
    );
}

#[test]
fn the_persons_branch_moved_from_elsewhere_during_an_attempt_still_fails_it() {
    // `git update-ref` leaves the checkout's index at the old commit: not a
    // commit made there, so the attempt that ran meanwhile is charged.
    let repo = Test::repo();
    std::fs::write(
        repo.root.join(".git/info/exclude"),
        "/plan.loop\n/.loopc/\n",
    )
    .unwrap();
    repo.git(&["branch", "side"]);
    repo.git(&["checkout", "-q", "side"]);
    repo.write("side.txt", "side\n");
    repo.commit("side work");
    repo.git(&["checkout", "-q", "main"]);
    let (status, out) = run_while(&repo, |repo| {
        repo.git(&["update-ref", "refs/heads/main", "side"]);
    });
    assert_eq!(status, 1, "{out}");
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("refs that are not loopc's changed"),
        "{reason}"
    );
    assert!(reason.contains("refs/heads/main"), "{reason}");
}

// loopc never writes through a link an agent left in its work directory ---

#[test]
fn loopc_writes_no_file_through_a_link_the_agent_left_in_its_work_directory() {
    for how in ["file", "dir"] {
        let repo = Test::repo();
        let outside = repo.bin.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim"), "precious\n").unwrap();
        let plant = match how {
            // diff.patch and a gate's prompt as links to a file outside.
            "file" => format!(
                "ln -s {v} \"$A/diff.patch\"; ln -s {v} \"$A/gate-review.prompt.md\"",
                v = outside.join("victim").display()
            ),
            // The whole work directory as a link to a directory outside.
            _ => format!(
                "cp \"$A\"/* {o}/ 2>/dev/null; rm -rf \"$A\"; ln -s {o} \"$A\"",
                o = outside.display()
            ),
        };
        repo.script(
            "agent.sh",
            &format!(
                "#!/bin/sh\ncat > /dev/null\nA=$(dirname \"$LOOP_PROMPT_FILE\")\necho work > work.txt\n\
                 printf '{{\"status\":\"completed\",\"summary\":\"ok\"}}' > \"$LOOP_HANDOFF\"\n{plant}\n"
            ),
        );
        repo.script(
            "reviewer.sh",
            "#!/bin/sh\ncat > /dev/null\nprintf '{\"status\":\"completed\",\"summary\":\"fine\"}' > \"$LOOP_HANDOFF\"\n",
        );
        repo.plan(
            r#"
loop "s" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent reviewer { run = "sh @BIN@/reviewer.sh" }
gate review { agent = reviewer  prompt = "Review." }
task one { agent = bot  prompt = "x"  gates = [review] }
"#,
        );
        let r = repo.loopc(&["run"]).output();
        assert_eq!(
            std::fs::read_to_string(outside.join("victim")).unwrap(),
            "precious\n",
            "{how}: {r:?}"
        );
        let mut left: Vec<String> = std::fs::read_dir(&outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert!(
            !left.iter().any(|f| f == "diff.patch" || f == "tmp"),
            "{how}: {left:?}"
        );
        // The handoff was written before the links: the attempt still passes.
        if how == "file" {
            assert_eq!(r.status, 0, "{how}: {r:?}");
        }
    }
}
