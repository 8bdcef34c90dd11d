//! Step 7's ref moves: the integration branch and the cache entry of the
//! task merged onto it move in one `git update-ref --stdin` transaction
//! (compare-and-swap on the branch), seen through a git wrapper that logs
//! every call and the transactions' input.

use crate::harness::Test;

/// A git wrapper logging each call's arguments to `git-calls.log`, and
/// the standard input of each `update-ref --stdin` after them; the PATH
/// that finds it.
fn logging_git(test: &Test) -> (String, std::path::PathBuf) {
    let log = test.bin.join("git-calls.log");
    let path = test.git_wrapper(|real| {
        format!(
            // A transaction is logged with its input in one write: a
            // call of another thread's logged meanwhile cannot split them.
            "#!/bin/sh\ncase \" $* \" in\n  *\" update-ref \"*\" --stdin \"*)\n    input=$(cat)\n    printf 'CALL %s\\n%s\\n' \"$*\" \"$input\" >> '{log}'\n    printf '%s\\n' \"$input\" | '{real}' \"$@\"; exit $? ;;\nesac\nprintf 'CALL %s\\n' \"$*\" >> '{log}'\nexec '{real}' \"$@\"\n",
            log = log.display()
        )
    });
    (path, log)
}

/// A git wrapper as [`logging_git`]'s that also makes results wait
/// together: the first transaction (the first result's fast-forward) waits
/// until `tasks` attempts have written their diff for the gates (each
/// attempt's `git diff --binary`, the last git call on its thread), so every other
/// result is waiting when the coordinating thread comes back. `batch` is
/// what it does with a transaction of two or more cache entries (a batch):
/// `run` it, or `kill -9` loopc `before` or `after` running it.
fn batching_git(test: &Test, tasks: usize, batch: &str) -> (String, std::path::PathBuf) {
    let log = test.bin.join("git-calls.log");
    let marks = test.bin.join("marks");
    std::fs::create_dir_all(&marks).expect("marks directory");
    let path = test.git_wrapper(|real| {
        format!(
            r#"#!/bin/sh
case " $* " in
  *" update-ref "*" --stdin "*) ;;
  *) printf 'CALL %s\n' "$*" >> '{log}' ;;
esac
case " $* " in
  *" diff --binary "*)
    '{real}' "$@"; rc=$?; touch '{marks}/dt-'$$; exit $rc ;;
  *" update-ref "*" --stdin "*)
    tx='{marks}/tx-'$$
    cat > "$tx"
    {{ printf 'CALL %s\n' "$*"; cat "$tx"; }} > "$tx.log"; cat "$tx.log" >> '{log}'
    if [ ! -e '{marks}/first' ]; then
      touch '{marks}/first'; i=0
      while [ "$(ls '{marks}' | grep -c '^dt-')" -lt {tasks} ] && [ $i -lt 500 ]; do
        i=$((i+1)); sleep 0.02
      done
      sleep 0.5
    fi
    if [ "$(grep -c '^update refs/loopc/cache/' "$tx")" -ge 2 ]; then
      case '{batch}' in
        before) kill -9 $PPID; exit 1 ;;
        after) '{real}' "$@" < "$tx"; kill -9 $PPID; exit 0 ;;
      esac
    fi
    exec '{real}' "$@" < "$tx" ;;
esac
exec '{real}' "$@"
"#,
            log = log.display(),
            marks = marks.display(),
        )
    });
    (path, log)
}

/// A plan of `tasks` independent command tasks `t0`, `t1`, … run at once,
/// each writing `out<i>.txt` (or `shared.txt` for those `shared` names)
/// after every first attempt has started (bounded), so that they end
/// together; but for `t0`, only once the first transaction has begun
/// ([`batching_git`]'s mark): `t0` lands alone, the others wait together.
fn together_plan(test: &Test, tasks: usize, shared: &[usize]) {
    let started = test.bin.join("started");
    std::fs::create_dir_all(&started).expect("started directory");
    let first = test.bin.join("marks").join("first");
    test.script(
        "work.sh",
        &format!(
            r#"#!/bin/sh
touch '{s}/'"$LOOP_TASK-$LOOP_ATTEMPT"
i=0
if [ "$LOOP_ATTEMPT" = 1 ]; then
  while [ "$(ls '{s}' | grep -c -- '-1$')" -lt {tasks} ] && [ $i -lt 400 ]; do
    i=$((i+1)); sleep 0.02
  done
  i=0
  while [ "$LOOP_TASK" != t0 ] && [ ! -e '{first}' ] && [ $i -lt 400 ]; do
    i=$((i+1)); sleep 0.02
  done
fi
echo "$LOOP_TASK $LOOP_ATTEMPT" > "$1"
"#,
            s = started.display(),
            first = first.display()
        ),
    );
    let mut plan = format!("loop \"tx\" {{ parallel = {tasks} }}\n");
    for i in 0..tasks {
        let out = if shared.contains(&i) {
            "shared.txt".to_string()
        } else {
            format!("out{i}.txt")
        };
        plan.push_str(&format!(
            "task t{i} {{ run = \"sh @BIN@/work.sh {out}\" }}\n"
        ));
    }
    test.plan(&plan);
}

/// The transactions among the logged calls: for each, how many cache
/// entries it moved and whether it moved the integration branch.
fn transactions(calls: &[String]) -> Vec<(usize, bool)> {
    calls
        .iter()
        .filter(|c| c.contains("update-ref") && c.contains("--stdin"))
        .map(|c| {
            let entries = c
                .lines()
                .filter(|l| l.starts_with("update refs/loopc/cache/"))
                .count();
            (entries, c.contains("update refs/heads/loop/tx "))
        })
        .collect()
}

/// Every cache entry of the repository names work on the integration
/// branch: its entry commit's first parent is in the branch's history.
fn entries_on_the_branch(test: &Test) {
    let refs = test.git(&["for-each-ref", "--format=%(refname)", "refs/loopc/cache/"]);
    for r in refs
        .lines()
        .filter(|r| !r.starts_with("refs/loopc/cache/run/"))
    {
        let work = format!("{r}^1");
        assert!(
            test.git_ok(&["merge-base", "--is-ancestor", &work, "loop/tx"]),
            "{r} names work that is not on the branch"
        );
    }
}

/// The logged calls, each with the transaction input that followed it.
fn calls(log: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).expect("the wrapper's log");
    text.split("CALL ")
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_merge_moves_the_branch_and_its_cache_entry_in_one_transaction() {
    const TASKS: usize = 4;
    let test = Test::repo();
    let mut plan = String::from("loop \"tx\" { parallel = 1 }\n");
    for i in 0..TASKS {
        plan.push_str(&format!(
            "task t{i} {{ run = \"echo {i} > out{i}.txt\" }}\n"
        ));
    }
    test.plan(&plan);
    let (path, log) = logging_git(&test);
    test.loopc(&["run", "plan.loop"]).env("PATH", &path).run();
    assert_eq!(test.files_at("loop/tx").len(), TASKS + 1);
    let calls = calls(&log);
    let moves: Vec<&String> = calls.iter().filter(|c| c.contains("update-ref")).collect();
    // Each merge: one transaction, the branch checked against the head it
    // replaces, the entry with it. Before: `update-ref` of the branch,
    // then one of the entry, after `commit-tree` and `diff-tree`.
    let both: Vec<&&String> = moves
        .iter()
        .filter(|c| {
            c.contains("--stdin")
                && c.contains("update refs/heads/loop/tx ")
                && c.contains("update refs/loopc/cache/")
                && c.contains("prepare\ncommit\n")
        })
        .collect();
    assert_eq!(both.len(), TASKS, "{moves:#?}");
    for m in &both {
        let branch = m
            .lines()
            .find(|l| l.starts_with("update refs/heads/loop/tx "))
            .expect("the branch's update");
        assert_eq!(branch.split(' ').count(), 4, "no old value: {branch}");
    }
    // No entry ref moves on its own (the run entry, `refs/loopc/cache/run/`,
    // is written once at the end).
    let alone = moves
        .iter()
        .filter(|c| !c.contains("--stdin") && c.contains("refs/loopc/cache/"))
        .filter(|c| !c.contains("refs/loopc/cache/run/"))
        .count();
    assert_eq!(alone, 0, "{moves:#?}");
    // The entries are good: the rerun takes every task from the cache.
    test.loopc(&["run", "plan.loop"]).run();
    for i in 0..TASKS {
        assert_eq!(test.status_of(&format!("t{i}")), "cached");
    }
}

#[test]
fn results_that_wait_together_land_in_one_transaction() {
    const TASKS: usize = 4;
    let test = Test::repo();
    together_plan(&test, TASKS, &[]);
    let (path, log) = batching_git(&test, TASKS, "run");
    test.loopc(&["run", "plan.loop"]).env("PATH", &path).run();
    // The first result fast-forwards alone; the three waiting behind it
    // are merged in one pass: one transaction, the branch and three
    // entries (one at a time, before: three).
    let calls = calls(&log);
    let tx: Vec<&String> = calls.iter().filter(|c| c.contains("--stdin")).collect();
    assert_eq!(
        transactions(&calls),
        vec![(1, true), (TASKS - 1, true)],
        "{tx:#?}"
    );
    assert_eq!(test.files_at("loop/tx").len(), TASKS + 1);
    // Each task's merge is a commit of its own on the branch, its
    // `merged` event and its recorded commit naming it, in order.
    let merged: Vec<serde_json::Value> = test
        .events()
        .into_iter()
        .filter(|e| e["event"] == "merged")
        .collect();
    assert_eq!(merged.len(), TASKS);
    let hows: Vec<&str> = merged.iter().map(|e| e["how"].as_str().unwrap()).collect();
    assert_eq!(hows, ["fast_forward", "merge", "merge", "merge"]);
    let chain = test.git(&["rev-list", "--first-parent", "loop/tx"]);
    let chain: Vec<&str> = chain.lines().collect();
    for (k, e) in merged.iter().enumerate() {
        let commit = e["commit"].as_str().unwrap();
        assert_eq!(chain[TASKS - 1 - k], commit, "the branch's history");
        let task = e["task"].as_str().unwrap();
        assert_eq!(test.task(task)["commit"], commit);
    }
    entries_on_the_branch(&test);
    test.loopc(&["run", "plan.loop"]).run();
    for i in 0..TASKS {
        assert_eq!(test.status_of(&format!("t{i}")), "cached");
    }
}

#[test]
fn a_result_that_conflicts_in_a_batch_leaves_the_others_landed() {
    const TASKS: usize = 4;
    let test = Test::repo();
    together_plan(&test, TASKS, &[1, 2]);
    let (path, log) = batching_git(&test, TASKS, "run");
    test.loopc(&["run", "plan.loop"]).env("PATH", &path).run();
    // Of the three waiting, the second to write `shared.txt` conflicts
    // with the first: left out, the two others land with one move; its
    // next attempt starts from the new head and lands alone.
    assert_eq!(
        transactions(&calls(&log)),
        vec![(1, true), (2, true), (1, true)]
    );
    let failed = test.finished_attempts("failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("merge conflict in shared.txt")),
        "{failed:?}"
    );
    for i in 0..TASKS {
        assert_eq!(test.status_of(&format!("t{i}")), "passed");
    }
    entries_on_the_branch(&test);
    let files = test.files_at("loop/tx");
    assert!(files.contains(&"shared.txt".to_string()), "{files:?}");
}

/// `kill -9` of loopc as its batch's transaction starts (`when` =
/// `before`) or just after it ran (`after`); the rerun ends as an
/// uninterrupted run, every cache entry naming work on the branch.
fn killed_in_a_batch(when: &str) {
    const TASKS: usize = 4;
    let test = Test::repo();
    together_plan(&test, TASKS, &[]);
    let (path, log) = batching_git(&test, TASKS, when);
    let out = test
        .loopc(&["run", "plan.loop"])
        .env("PATH", &path)
        .output();
    assert_ne!(out.status, 0, "{out:?}");
    assert_eq!(
        transactions(&calls(&log)),
        vec![(1, true), (TASKS - 1, true)],
        "the batch was reached"
    );
    // Before: the branch holds the first task's work alone; after: all.
    let expected = if when == "before" { 2 } else { TASKS + 1 };
    assert_eq!(test.files_at("loop/tx").len(), expected);
    entries_on_the_branch(&test);
    test.wait_for(2000, || !test.has_processes_inside());
    test.loopc(&["run", "plan.loop"]).status(0).run();
    assert_eq!(test.files_at("loop/tx").len(), TASKS + 1);
    entries_on_the_branch(&test);
}

#[test]
fn kill_9_as_a_batch_moves_leaves_nothing_of_it() {
    killed_in_a_batch("before");
}

#[test]
fn kill_9_after_a_batch_moved_keeps_all_of_it() {
    killed_in_a_batch("after");
}

/// A merge of loopc's own commit of an attempt's changes names the
/// attempt's base as the merge base (`git merge-tree --merge-base`), so
/// git need not search history for it; a commit the task made itself is
/// merged with the merge base git finds. Both merges land every file.
#[test]
fn a_merge_names_the_base_of_loopcs_own_commit() {
    let test = Test::repo();
    // `first` lands at once (a fast-forward); `ours` and `theirs` wait
    // for it, so each is merged onto a head it did not start from.
    test.script(
        "after_first.sh",
        "#!/bin/sh\ni=0\nwhile [ \"$(git rev-parse loop/tx)\" = \"$LOOP_BASE\" ] && [ $i -lt 500 ]; do\n  i=$((i+1)); sleep 0.02\ndone\n",
    );
    let wait = test.bin.join("after_first.sh");
    test.plan(&format!(
        "loop \"tx\" {{ parallel = 3 }}\n\
         task first {{ run = \"echo 1 > first.txt\" }}\n\
         task ours {{ run = \"sh {w} && echo 2 > ours.txt\" }}\n\
         task theirs {{ run = \"sh {w} && echo 3 > theirs.txt && git add theirs.txt && \
         git -c user.name=t -c user.email=t@t commit -q -m by-theirs\" }}\n",
        w = wait.display()
    ));
    let (path, log) = logging_git(&test);
    test.loopc(&["run", "plan.loop"]).env("PATH", &path).run();
    let mut files = test.files_at("loop/tx");
    files.sort();
    assert!(
        ["first.txt", "ours.txt", "theirs.txt"]
            .iter()
            .all(|f| files.iter().any(|g| g == f)),
        "{files:?}"
    );
    let merges: Vec<String> = calls(&log)
        .into_iter()
        .filter(|c| c.contains(" merge-tree "))
        .collect();
    assert_eq!(merges.len(), 2, "{merges:#?}");
    for m in &merges {
        let theirs = m.split_whitespace().last().expect("the merged commit");
        let subject = test.git(&["log", "-1", "--format=%s", theirs]);
        let base = test.git(&["rev-parse", &format!("{theirs}^")]);
        if subject.trim() == "by-theirs" {
            assert!(!m.contains("--merge-base"), "{m}");
        } else {
            assert!(subject.starts_with("loop(ours)"), "{subject}");
            assert!(m.contains(&format!("--merge-base={}", base.trim())), "{m}");
        }
    }
}
