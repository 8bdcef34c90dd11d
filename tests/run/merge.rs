//! Step 7: merges into the integration branch. Conflicts are failed
//! attempts with the paths as feedback; two tasks that pass alone but
//! break the tests together never leave a failing commit at the head.

use crate::harness::Test;

/// Agents `a` and `b` wait (bounded) for each other, so both start from
/// the same integration head and the second to finish must merge.
fn sync_prelude(repo: &Test) -> String {
    let sync = repo.bin.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    format!(
        r#"#!/bin/sh
cat > /dev/null
touch "{s}/$LOOP_TASK-$LOOP_ATTEMPT"
i=0
if [ "$LOOP_ATTEMPT" = 1 ]; then
  while [ ! -e "{s}/a-1" ] || [ ! -e "{s}/b-1" ]; do
    i=$((i+1)); [ $i -gt 400 ] && break
    sleep 0.02
  done
fi
"#,
        s = sync.display()
    )
}

#[test]
fn conflict_is_a_failed_attempt_with_paths_as_feedback() {
    let repo = Test::repo();
    repo.write("shared.txt", "original\n");
    repo.commit("shared file");
    let mut body = sync_prelude(&repo);
    body.push_str(
        r#"
if [ -s "$LOOP_FEEDBACK_FILE" ]; then
  # Redo the change on top of the other task's work.
  cat shared.txt > tmp && echo "edit by $LOOP_TASK" >> tmp && mv tmp shared.txt
else
  echo "edit by $LOOP_TASK" > shared.txt
fi
"#,
    );
    repo.script("editor.sh", &body);
    repo.plan(
        r#"
loop "conf" { parallel = 2 }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/editor.sh" }
defaults { agent = bot }
task a { prompt = "edit" }
task b { prompt = "edit" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let events = repo.events();
    let conflict = events
        .iter()
        .find(|e| e["event"] == "attempt_finished" && e["outcome"] == "failed")
        .expect("one attempt failed on the conflict");
    assert!(
        conflict["reason"]
            .as_str()
            .unwrap()
            .contains("merge conflict in shared.txt"),
        "{conflict}"
    );
    let loser = conflict["task"].as_str().unwrap();
    let winner = if loser == "a" { "b" } else { "a" };
    let fb = std::fs::read_to_string(repo.root.join(format!(".loopc/logs/{loser}/2/feedback.md")))
        .unwrap();
    assert!(fb.contains("shared.txt"), "{fb}");
    assert_eq!(repo.task(loser)["attempts"], 2);
    assert_eq!(
        repo.show("loop/conf", "shared.txt").unwrap(),
        format!("edit by {winner}\nedit by {loser}\n")
    );
}

#[test]
fn a_task_out_of_attempts_on_a_conflict_gets_one_more_on_the_rerun() {
    // attempts = 1: the loser's only attempt conflicts. Not its own failure
    // under its key: the rerun, from a head with the winner's work, gives
    // it one more attempt (not "ran out of attempts with this key").
    let repo = Test::repo();
    repo.write("shared.txt", "original\n");
    repo.commit("shared file");
    let mut body = sync_prelude(&repo);
    body.push_str(
        "cat shared.txt > tmp && echo \"edit by $LOOP_TASK\" >> tmp && mv tmp shared.txt\n",
    );
    repo.script("editor.sh", &body);
    repo.plan(
        r#"
loop "conf" { parallel = 2 }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/editor.sh" }
defaults { agent = bot  attempts = 1 }
task a { prompt = "edit" }
task b { prompt = "edit" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let loser = if repo.status_of("a") == "failed" {
        "a"
    } else {
        "b"
    };
    assert!(
        repo.task(loser)["reason"]
            .as_str()
            .unwrap()
            .ends_with(": merge conflict in shared.txt"),
        "{}",
        repo.state()
    );
    let dry = repo.loopc(&["run", "--dry-run"]).run().stdout;
    assert!(
        dry.contains(&format!(
            "{loser}: run (its last attempt's merge conflicted with work merged meanwhile: one \
             more attempt, from the new head (1 of 1 spent with this key))"
        )),
        "{dry}"
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of(loser), "passed");
    assert_eq!(repo.task(loser)["attempts"], 1);
}

#[test]
fn integration_branch_never_points_at_a_failing_commit() {
    let repo = Test::repo();
    // The project's "test suite": a.txt and b.txt must not both say "v1".
    repo.write(
        "check.sh",
        "#!/bin/sh\nif [ \"$(cat a.txt 2>/dev/null)\" = v1 ] && [ \"$(cat b.txt 2>/dev/null)\" = v1 ]; then\n  echo 'a.txt and b.txt are incompatible'; exit 1\nfi\n",
    );
    repo.commit("tests");
    let mut body = sync_prelude(&repo);
    body.push_str(
        r#"
if [ -s "$LOOP_FEEDBACK_FILE" ]; then echo v2 > "$LOOP_TASK.txt"; else echo v1 > "$LOOP_TASK.txt"; fi
"#,
    );
    repo.script("writer.sh", &body);
    repo.plan(
        r#"
loop "inv" { parallel = 2 }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/writer.sh" }
gate tests = "sh check.sh"
defaults { agent = bot  gates = [tests] }
task a { prompt = "a" }
task b { prompt = "b" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    // Each task passed its gates alone at attempt 1; the second to merge
    // failed the gates on the merge result and needed attempt 2.
    let failed = repo.finished_attempts("failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0]["reason"]
            .as_str()
            .unwrap()
            .contains("after merging with the integration branch"),
        "{failed:?}"
    );
    // Every commit the integration branch ever pointed at passes the tests.
    let heads: Vec<String> = repo
        .events()
        .iter()
        .filter(|e| e["event"] == "merged")
        .map(|e| e["commit"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(heads.len(), 2);
    for h in &heads {
        let a = repo.show(h, "a.txt");
        let b = repo.show(h, "b.txt");
        assert!(
            !(a.as_deref() == Some("v1\n") && b.as_deref() == Some("v1\n")),
            "head {h} fails the tests"
        );
    }
    // The branch's reflog shows only those heads (plus its creation).
    let reflog = repo.git(&["reflog", "--format=%H", "refs/heads/loop/inv"]);
    let base = repo.git(&["rev-parse", "main"]);
    for line in reflog.lines() {
        assert!(
            heads.contains(&line.to_string()) || line == base,
            "unexpected head {line}"
        );
    }
}

#[test]
fn integration_branch_moved_by_someone_else_is_adopted() {
    let repo = Test::repo();
    let marker = repo.bin.join("moved");
    repo.script(
        "mover.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
if [ ! -e "{m}" ]; then
  touch "{m}"
  # Someone else commits onto the integration branch meanwhile.
  blob=$(echo outside | git hash-object -w --stdin)
  tree=$(printf '100644 blob %s\toutside.txt\n' "$blob" | git mktree)
  c=$(git commit-tree "$tree" -p "$LOOP_BASE" -m "outside work")
  git update-ref refs/heads/loop/mv "$c" "$LOOP_BASE"
fi
echo mine > "$LOOP_TASK.txt"
"#,
            m = marker.display()
        ),
    );
    repo.plan(
        r#"
loop "mv" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/mover.sh" }
task a { agent = bot  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).status(0).run();
    let files = repo.files_at("loop/mv");
    assert!(files.contains(&"outside.txt".to_string()), "{files:?}");
    assert!(files.contains(&"a.txt".to_string()), "{files:?}");
    // The attempt's work is merged onto the adopted commit: no attempt is
    // charged for someone else's commit, and the person is told that the
    // next run rebuilds the branch without it.
    assert_eq!(repo.task("a")["attempts"], 1, "{r:?}");
    let warned =
        "the integration branch `loop/mv` was moved forward by someone else during the run";
    assert!(r.stdout.contains(warned), "{r:?}");
    assert!(repo.state()["warnings"].to_string().contains(warned));
    assert!(r.stdout.contains("(git merge "), "{r:?}");
}
