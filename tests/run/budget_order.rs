//! The budget a stop names is the limit reached first, whatever order the
//! scheduler notices them in: here the coordinator is held up (it runs a
//! slow check of a cache replay) while the `time` budget runs out and an
//! agent without a cost cap is killed by it.

use crate::harness::Test;

#[test]
fn the_time_budget_is_named_when_the_coordinator_is_held_up() {
    let repo = Test::repo();
    let first = r#"
loop "bo" { }
gate g = "test ! -e @BIN@/slow || sleep 30"
task b { run = "echo b > b.txt"  gates = [g] }
"#;
    repo.plan(first);
    repo.loopc(&["run"]).status(0).run();
    // The base moves: b's replay runs its gate again, now slow.
    repo.write("unrelated.txt", "x\n");
    repo.commit("unrelated work");
    repo.write("../bin/slow", "");
    repo.plan(&format!(
        "{first}budget {{ time = 1s  cost = $1 }}\n\
         agent bot {{ run = \"sleep 30\" }}\n\
         task a {{ agent = bot  prompt = \"x\" }}\n"
    ));
    // `a` comes first in topological order: it starts, then the replay of
    // `b` holds the coordinator until the deadline stops its gate.
    let text = std::fs::read_to_string(repo.root.join("plan.loop")).unwrap();
    let (head, tail) = text.split_at(text.find("task b").unwrap());
    let (b, rest) = tail.split_at(tail.find("budget").unwrap());
    repo.write("plan.loop", format!("{head}{rest}{b}"));
    let r = repo.loopc(&["run"]).status(3).run();
    let reason = repo.state()["stop_reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(reason.starts_with("budget `time` spent"), "{reason}\n{r:?}");
}
