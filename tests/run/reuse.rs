//! The pool of clean worktrees: a passed attempt's worktree is reused for a
//! later attempt of the same run (moved to the attempt's name, checked out
//! on its new task branch at its base, every file git does not track
//! removed). A reused worktree holds exactly what a fresh one would; a
//! worktree that cannot be reused gives way to a fresh one; nothing of the
//! pool outlives the run, not even a `kill -9` (the next run's recovery).

use crate::harness::{SIMPLE_AGENT, Test};
use std::collections::BTreeSet;

/// What an agent's `dump` shows of its worktree when it starts: its files
/// and symbolic links, and its directories, with their permission bits and
/// owner (user and group ids), git's
/// view (status with ignored files, index flags, HEAD) and the
/// administrative directory's name and what an earlier try could leave
/// there. Written to `<bin>/seen/<task>` (outside the repository).
const DUMP: &str = r#"
seen="@BIN@/seen"; mkdir -p "$seen"; out="$seen/$LOOP_TASK"
{
  echo "== files"
  find . \( -path ./.git -o -path ./.loopc \) -prune -o \( -type f -o -type l \) -printf '%m %U:%G %p\n' | sort
  echo "== dirs"
  find . \( -path ./.git -o -path ./.loopc \) -prune -o -type d -printf '%m %U:%G %p\n' | sort
  echo "== attempt dir"
  ls -A .loopc/attempt | sort
  echo "== status"
  git status --porcelain --ignored --untracked-files=all
  echo "== flagged"
  git ls-files -v | grep -v '^H ' || true
  echo "== head"
  git symbolic-ref HEAD
  test "$(git rev-parse HEAD)" = "$LOOP_BASE" && echo at-base
  echo "== leftovers"
  admin=$(git rev-parse --absolute-git-dir)
  for f in BISECT_LOG MERGE_MSG config.worktree info; do [ -e "$admin/$f" ] && echo "$f"; done
  echo "== end"
} > "$out"
basename "$(git rev-parse --absolute-git-dir)" > "$out.admin"
echo "$LOOP_BASE" > "$out.base"
"#;

/// Writes the agent `<bin>/a.sh`: it records what it sees ([`DUMP`]),
/// runs `work` and hands off "completed".
fn dumping_agent(repo: &Test, work: &str) {
    repo.script(
        "a.sh",
        &repo.expand(&format!(
            "#!/bin/sh\ncat > /dev/null\n{DUMP}\n{work}\n\
             printf '{{\"status\":\"completed\"}}' > \"$LOOP_HANDOFF\"\n"
        )),
    );
}

/// A base with a `.gitignore`, a script, files to delete and a copied file.
fn base_repo() -> Test {
    let repo = Test::repo()
        .file(".gitignore", "ignored/\nnested/\ncache/\n*.log\n.env\n")
        .file("tool.sh", "echo tool\n")
        .file("gone.txt", "to be deleted\n")
        .file("dir/deep.txt", "deep\n");
    repo.commit("base");
    repo.write(".env", "SECRET=original\n");
    repo
}

/// What the dump of a fresh worktree at `base` says: the base's files
/// (the copied `.env` too) with their modes, its directories, every one
/// owned by the user loopc runs as, and a clean status but for loopc's
/// own directory.
fn expected_dump(repo: &Test, base: &str, branch: &str) -> String {
    let (uid, gid) = crate::harness::unprivileged_ids();
    let owner = format!("{uid}:{gid}");
    let mut files = vec![format!("644 {owner} ./.env")];
    let mut dirs: BTreeSet<String> = BTreeSet::from(["./".to_string()]);
    for line in repo.git(&["ls-tree", "-r", base]).lines() {
        let (meta, path) = line.split_once('\t').expect("ls-tree line");
        let mode = match meta.split(' ').next() {
            Some("100755") => "755",
            _ => "644",
        };
        files.push(format!("{mode} {owner} ./{path}"));
        let mut p = std::path::Path::new(path).parent();
        while let Some(d) = p.filter(|d| !d.as_os_str().is_empty()) {
            dirs.insert(format!("./{}", d.display()));
            p = d.parent();
        }
    }
    files.sort();
    let mut dirs: Vec<String> = dirs
        .into_iter()
        .map(|d| format!("755 {owner} {}", d.trim_end_matches('/')))
        .collect();
    dirs.sort();
    format!(
        "== files\n{}\n== dirs\n{}\n== attempt dir\nfeedback.md\nprogress.md\nprompt.md\ntmp\n\
         == status\n!! .env\n!! .loopc/attempt/feedback.md\n!! .loopc/attempt/progress.md\n\
         !! .loopc/attempt/prompt.md\n== flagged\n== head\nrefs/heads/{branch}\nat-base\n\
         == leftovers\n== end\n",
        files.join("\n"),
        dirs.join("\n"),
    )
}

/// The task branch of the first attempt of `task` in the first run.
fn branch_of(task: &str) -> String {
    format!("loopc/reuse/{task}/r1-a1")
}

fn read(repo: &Test, rel: &str) -> String {
    std::fs::read_to_string(repo.bin.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// No worktree but the main checkout, no task branch, no leftover
/// directory under `.loopc/worktrees/`.
fn nothing_left(repo: &Test) {
    assert!(
        repo.extra_worktrees().is_empty(),
        "{:?}",
        repo.extra_worktrees()
    );
    assert_eq!(repo.git(&["branch", "--list", "loopc/*"]), "");
    let left: Vec<_> = std::fs::read_dir(repo.root.join(".loopc/worktrees"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_reused_worktree_holds_exactly_what_a_fresh_one_would() {
    let repo = base_repo();
    // `a` deletes a file, makes the script executable and leaves, beside
    // its commit, ignored files, a nested repository, an edited copy of
    // `.env` and a file in its administrative directory; `x` leaves an
    // ignored file too. Both leave modes no checkout writes: a tracked
    // file and a tracked directory read-only, a file open to all, and
    // read-only ignored directories (as Go's module cache is). `b` comes
    // after both, in one of their worktrees, and writes to the file they
    // made read-only. The run is not root's: as root every mode is
    // writable, and a reused worktree that kept them would look fine.
    dumping_agent(
        &repo,
        r#"case $LOOP_TASK in
  a|x)
    chmod 444 README; chmod 555 dir; chmod 666 tool.sh
    mkdir -p cache/mod/m@v1 && echo module > cache/mod/m@v1/go.mod
    chmod 444 cache/mod/m@v1/go.mod && chmod 555 cache/mod/m@v1 cache/mod cache ;;
esac
case $LOOP_TASK in
  a)
    rm gone.txt; chmod +x tool.sh; echo a > a.txt
    mkdir -p ignored/deep && echo junk > ignored/deep/junk && echo log > run.log
    mkdir nested && (cd nested && git init -q && git -c user.name=n -c user.email=n@e commit -q --allow-empty -m n)
    echo SECRET=changed > .env
    echo leftover > "$(git rev-parse --absolute-git-dir)/BISECT_LOG"
    mkdir -p empty/dir ;;
  x)
    echo x > x.txt; echo junk > x.log ;;
  b)
    echo b > b.txt; echo more >> README ;;
esac"#,
    );
    repo.plan(
        r#"
loop "reuse" { parallel = 2  copy = [".env"] }
agent bot { run = "sh @BIN@/a.sh" }
defaults { agent = bot }
task a { prompt = "a" }
task x { prompt = "x" }
task b: a x { prompt = "b" }
"#,
    );
    repo.loopc(&["run"]).unprivileged().status(0).run();
    for t in ["a", "x", "b"] {
        assert_eq!(repo.status_of(t), "passed", "{t}");
        assert_eq!(repo.task(t)["history"].as_array().unwrap().len(), 1, "{t}");
    }

    // `b` ran in a worktree git made for `a` or `x`: its administrative
    // directory keeps the name git gave it then.
    let admin = read(&repo, "seen/b.admin");
    assert!(
        ["a.r1-a1", "x.r1-a1"].contains(&admin.trim()),
        "b's worktree was not reused: {admin}"
    );
    let base = read(&repo, "seen/b.base");
    let want = expected_dump(&repo, base.trim(), &branch_of("b"));
    assert_eq!(read(&repo, "seen/b"), want);
    // The base `b` started from has `a`'s and `x`'s work.
    let files = repo.files_at(base.trim());
    assert!(files.contains(&"a.txt".to_string()) && files.contains(&"x.txt".to_string()));
    assert!(!files.contains(&"gone.txt".to_string()));
    // And `a`, in a fresh worktree, saw what `b` saw, but for its base.
    let a_base = read(&repo, "seen/a.base");
    assert_eq!(
        read(&repo, "seen/a"),
        expected_dump(&repo, a_base.trim(), &branch_of("a"))
    );
    assert!(repo.files_at("loop/reuse").contains(&"b.txt".to_string()));
    nothing_left(&repo);
}

#[test]
fn a_worktree_that_cannot_be_reused_gives_way_to_a_fresh_one() {
    let repo = base_repo();
    // `a` hides a deleted file and a changed mode from git's index
    // (`assume-unchanged`): reused, that index would hide them from `b`.
    dumping_agent(
        &repo,
        r#"if [ "$LOOP_TASK" = a ]; then
  git update-index --assume-unchanged gone.txt tool.sh
  rm gone.txt; chmod +x tool.sh
fi
echo "$LOOP_TASK" > "$LOOP_TASK.txt""#,
    );
    repo.plan(
        r#"
loop "reuse" { copy = [".env"] }
agent bot { run = "sh @BIN@/a.sh" }
defaults { agent = bot }
task a { prompt = "a" }
task b: a { prompt = "b" }
"#,
    );
    repo.loopc(&["run"]).unprivileged().status(0).run();
    assert_eq!(repo.status_of("b"), "passed");
    assert_eq!(read(&repo, "seen/b.admin").trim(), "b.r1-a1");
    let base = read(&repo, "seen/b.base");
    assert_eq!(
        read(&repo, "seen/b"),
        expected_dump(&repo, base.trim(), &branch_of("b"))
    );
    // What `a` hid is not in its commit: the base still has both as they were.
    assert_eq!(
        repo.show("loop/reuse", "gone.txt").as_deref(),
        Some("to be deleted\n")
    );
    nothing_left(&repo);
}

/// A plan whose task `a` passes at once while `slow` waits (bounded) as
/// long as `<bin>/hold` exists: `a`'s worktree waits in the pool, no
/// other task being ready. Returns the path of `hold`.
fn pool_while_slow(repo: &Test) -> std::path::PathBuf {
    let hold = repo.bin.join("hold");
    std::fs::write(&hold, "").unwrap();
    repo.script(
        "agent.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
if [ "$LOOP_TASK" = slow ]; then
  i=0; while [ -e "{hold}" ] && [ $i -lt 600 ]; do i=$((i+1)); sleep 0.1; done
fi
echo "$LOOP_TASK" > "$LOOP_TASK.txt"
printf '{{"status":"completed"}}' > "$LOOP_HANDOFF"
"#,
            hold = hold.display()
        ),
    );
    repo.plan(
        r#"
loop "reuse" { parallel = 2 }
agent bot { run = "sh @BIN@/agent.sh" }
defaults { agent = bot }
task a { prompt = "a" }
task slow { prompt = "slow" }
"#,
    );
    hold
}

/// Waits until `a` passed (state.json is saved after its merge); its
/// worktree, pooled, is there. Returns its path.
fn pooled_a(repo: &Test) -> std::path::PathBuf {
    let pooled = repo.root.join(".loopc/worktrees/a.r1-a1");
    let seen = repo.wait_for(6000, || {
        std::fs::read_to_string(repo.root.join(".loopc/state.json"))
            .is_ok_and(|s| s.contains("\"passed\""))
    });
    assert!(seen, "a did not pass");
    assert!(pooled.join(".git").is_file(), "a's worktree is not pooled");
    pooled
}

#[test]
fn after_kill_9_the_next_run_removes_a_pooled_worktree() {
    let repo = base_repo();
    let hold = pool_while_slow(&repo);
    let mut child = repo.loopc(&["run"]).spawn();
    let pooled = pooled_a(&repo);
    child.kill().unwrap();
    let _ = child.wait();
    std::fs::remove_file(&hold).unwrap();

    let r = repo.loopc(&["run"]).status(0).run();
    assert!(
        r.stderr.contains("stale worktree") || r.stdout.contains("stale worktree"),
        "{r:?}"
    );
    assert!(!pooled.exists());
    // `a` passed in the killed run: the cache has it.
    assert_eq!(repo.status_of("a"), "cached");
    assert_eq!(repo.status_of("slow"), "passed");
    nothing_left(&repo);
}

#[test]
fn ctrl_c_leaves_nothing_of_the_pool() {
    let repo = base_repo();
    let hold = pool_while_slow(&repo);
    let mut child = repo.loopc(&["run"]).spawn();
    let pooled = pooled_a(&repo);
    crate::harness::signal(child.id(), libc::SIGINT);
    let status = child.wait().unwrap();
    std::fs::remove_file(&hold).unwrap();
    assert_eq!(status.code(), Some(130));
    // The pooled worktree and git's entry for it are gone; the
    // interrupted attempt's worktree is the next run's to remove.
    assert!(!pooled.exists());
    let listed = repo.extra_worktrees();
    assert!(listed.iter().all(|w| !w.ends_with("a.r1-a1")), "{listed:?}");
    repo.loopc(&["run"]).status(0).run();
    nothing_left(&repo);
}

#[test]
fn many_tasks_through_few_worktrees_all_land() {
    let repo = Test::repo();
    let record = "basename \"$(git rev-parse --absolute-git-dir)\" >> @BIN@/admins\n";
    repo.script("agent.sh", &repo.expand(&format!("{SIMPLE_AGENT}{record}")));
    let n = 40;
    let mut plan = String::from(
        "loop \"reuse\" { parallel = 8 }\nbudget { iterations = 100 }\n\
         agent bot { run = \"sh @BIN@/agent.sh\" }\n\
         defaults { agent = bot  attempts = 1 }\n",
    );
    for i in 0..n {
        plan.push_str(&format!("task t{i:02} {{ prompt = \"x\" }}\n"));
    }
    repo.plan(&plan);
    repo.loopc(&["run"]).status(0).run();
    let files = repo.files_at("loop/reuse");
    for i in 0..n {
        assert!(
            files.contains(&format!("t{i:02}.txt")),
            "t{i:02} did not land"
        );
    }
    // Fewer worktrees were made than attempts ran: the rest were reused.
    let admins: BTreeSet<String> = read(&repo, "admins").lines().map(str::to_string).collect();
    assert_eq!(read(&repo, "admins").lines().count(), n);
    assert!(admins.len() < n, "every attempt had a fresh worktree");
    nothing_left(&repo);
}

/// The logs of a try share the files of its work directory where they can
/// (links, not copies): a later try in the same worktree writes new files
/// and never through the old ones, so every try's logs keep their own.
#[test]
fn a_reused_worktree_leaves_the_earlier_tries_logs_as_they_were() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    let mut plan = String::from(
        "loop \"logs\" { parallel = 1 }\nagent bot { run = \"sh @BIN@/agent.sh\" }\n\
         defaults { agent = bot  attempts = 1 }\n",
    );
    for i in 0..4 {
        plan.push_str(&format!(
            "task t{i} {{ prompt = \"the prompt of t{i}\" }}\n"
        ));
    }
    repo.plan(&repo.expand(&plan));
    repo.loopc(&["run"]).status(0).run();
    for i in 0..4 {
        let log = repo.root.join(format!(".loopc/logs/t{i}/1"));
        let prompt = std::fs::read_to_string(log.join("prompt.md")).unwrap();
        assert!(
            prompt.starts_with(&format!("the prompt of t{i}")),
            "t{i}: {prompt}"
        );
        let diff = std::fs::read_to_string(log.join("diff.patch")).unwrap();
        assert!(diff.contains(&format!("t{i}.txt")), "t{i}: {diff}");
        let handoff = std::fs::read_to_string(log.join("handoff.json")).unwrap();
        assert!(handoff.contains("completed"), "t{i}: {handoff}");
    }
}
