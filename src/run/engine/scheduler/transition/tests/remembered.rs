//! Failures remembered across runs and attempts over their cost cap, one
//! transition at a time.

use super::*;

/// The next run of `TWO` after `previous`, with its remembered failures,
/// and task `a` looked at under `key` (`retry`: `--retry-failed`).
fn next_run(previous: &RunState, key: &str, retry: bool) -> (RunState, Books, Vec<Action>) {
    let (p, mut state, mut books) = setup(TWO);
    carry_remembered(previous, &mut state);
    let a = index(&p, "a");
    let out = resume(&p, &mut state, &mut books, a, Some(key.into()), retry, "t0");
    (state, books, out)
}

#[test]
fn failures_are_remembered_under_the_key_and_resumed_or_not_run() {
    let p = plan(TWO);
    let fail = || failed("no", OnFail::Retry);
    let first = {
        let (mut state, books, out) = next_run(&initial(&p, "t", "b", "t0".into()), "k1", false);
        assert!(out.is_empty());
        let mut books = books;
        attempt(&p, &mut state, &mut books, "a", fail(), Cost::default());
        state
    };
    let r = first.tasks[0].remembered.clone().expect("remembered");
    assert_eq!((r.key.as_str(), r.attempts), ("k1", 1));
    assert_eq!(r.feedback.as_deref(), Some("feedback: no"));
    // A later run under the same key resumes at attempt 2, told why.
    let (mut later, mut books2, out) = next_run(&first, "k1", false);
    assert!(out.is_empty());
    assert_eq!(
        (later.tasks[0].attempts, later.tasks[0].earlier_attempts),
        (1, 1)
    );
    assert_eq!(books2.slots[0].feedback, "feedback: no");
    attempt(&p, &mut later, &mut books2, "a", fail(), Cost::default());
    assert_eq!(later.tasks[0].status, TaskStatus::Failed);
    // Out of attempts: not run, its dependent skipped.
    let reasons = finishes(&next_run(&later, "k1", false).2);
    assert_eq!(reasons[0].1, "failed");
    let why = reasons[0].2.clone().unwrap_or_default();
    assert!(
        why.starts_with("not run: ran out of attempts (2 of 2)"),
        "{why}"
    );
    // Said as `--dry-run` says it: the dependency did not run.
    let skipped = Some("dependency `a` is not run".to_string());
    assert_eq!(reasons[1], ("b".into(), "skipped".into(), skipped));
    // `--retry-failed` starts over; another key forgets; a pass forgets.
    let (mut retried, mut books4, out) = next_run(&later, "k1", true);
    assert!(out.is_empty());
    assert_eq!(retried.tasks[0].attempts, 0);
    let (other, _, out) = next_run(&later, "k2", false);
    assert!(out.is_empty() && other.tasks[0].remembered.is_none());
    attempt(
        &p,
        &mut retried,
        &mut books4,
        "a",
        passed(),
        Cost::default(),
    );
    assert!(retried.tasks[0].remembered.is_none());
}

#[test]
fn an_attempt_over_its_cap_is_recorded_so() {
    let (p, mut state, mut books) = setup(TWO);
    let cost = Cost {
        micro_usd: 5_000_000,
        over_cap: Some(crate::run::engine::budget::OverCap {
            agent: "bot".into(),
            reported: 5_000_000,
            cap: 1_000_000,
        }),
        ..Cost::default()
    };
    let actions = attempt(&p, &mut state, &mut books, "a", passed(), cost);
    assert!(state.tasks[0].history[0].over_cap);
    assert!(actions.iter().any(|a| matches!(
        a,
        Action::Emit(Event::AttemptFinished { over_cap: true, .. })
    )));
    assert_eq!(books.meter.spent.cost_micro_usd, 5_000_000);
}
