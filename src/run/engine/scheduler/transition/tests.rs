//! The scheduler's rules, one transition at a time, on compiled plans and
//! without a repository.

use super::*;
use crate::run::engine::budget::Meter;
use crate::run::engine::land::replay::Replay;
use crate::run::engine::outcome::Limited;

mod remembered;

fn plan(source: &str) -> Plan {
    let compiled = crate::compile("test.loop", source);
    assert!(
        compiled.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        compiled.diagnostics
    );
    compiled.plan.expect("the test plan compiles")
}

/// A plan, its initial state and fresh books.
fn setup(source: &str) -> (Plan, RunState, Books) {
    let p = plan(source);
    let state = initial(&p, "test.loop", "base", "t0".into());
    let books = Books::new(&p, Meter::new(p.budget.clone()));
    (p, state, books)
}

fn index(p: &Plan, name: &str) -> usize {
    p.task_index(name).expect("the task exists")
}

fn failed(reason: &str, on_fail: OnFail) -> Outcome {
    Outcome::Failed {
        reason: reason.into(),
        feedback: format!("feedback: {reason}"),
        on_fail,
    }
}

fn passed() -> Outcome {
    Outcome::Passed {
        commit: "c1".into(),
        summary: Some("did it".into()),
        files: vec!["a.txt".into()],
    }
}

/// Starts task `name` and finishes its attempt with `outcome` and `cost`.
fn attempt(
    p: &Plan,
    state: &mut RunState,
    books: &mut Books,
    name: &str,
    outcome: Outcome,
    cost: Cost,
) -> Vec<Action> {
    attempt_after(p, state, books, name, outcome, cost, false)
}

/// As [`attempt`], saying whether the agent had started.
fn attempt_after(
    p: &Plan,
    state: &mut RunState,
    books: &mut Books,
    name: &str,
    outcome: Outcome,
    cost: Cost,
    agent_started: bool,
) -> Vec<Action> {
    let i = index(p, name);
    let (n, _) = started(p, state, books, i, "t1".into());
    let f = Finished {
        cost,
        agent_started,
        ..ended(i, n, outcome)
    };
    finished(p, state, books, f)
}

/// Attempt `n` of task `i` ended with `outcome` at `t2`, 5 ms after it
/// started at `t1`, the head at `h1`: nothing else to tell.
fn ended(i: usize, n: u32, outcome: Outcome) -> Finished {
    Finished {
        task: i,
        attempt: n,
        outcome,
        cost: Cost::default(),
        elapsed_ms: Some(5),
        head: "h1".into(),
        now: "t2".into(),
        signalled: false,
        past_deadline: false,
        ended_ms: 5,
        work_end_ms: None,
        agent_started: false,
        logs: Some("logs/a/1".into()),
        worktree: Some("worktrees/a-1".into()),
        agent: None,
        fallback: None,
        resolver: None,
        already_satisfied: false,
        answerer: None,
        unreviewed: None,
    }
}

/// The `task_finished` events among `actions`: (task, status, reason).
fn finishes(actions: &[Action]) -> Vec<(String, String, Option<String>)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Emit(Event::TaskFinished {
                task,
                status,
                reason,
            }) => Some((task.clone(), status.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

const TWO: &str = r#"
loop "t" { }
agent bot { run = "true" }
task a { agent = bot  prompt = "x"  attempts = 2 }
task b: a { agent = bot  prompt = "y" }
task free { run = "true" }
"#;

#[test]
fn a_pass_is_recorded_merged_and_announced() {
    let (p, mut state, mut books) = setup(TWO);
    books.meter.spent.consecutive_failures = 2;
    books.streak = vec![2];
    let cost = Cost {
        micro_usd: 300,
        ..Cost::default()
    };
    let actions = attempt(&p, &mut state, &mut books, "a", passed(), cost);
    let a = &state.tasks[0];
    assert_eq!(a.status, TaskStatus::Passed);
    assert_eq!(a.attempts, 1);
    assert_eq!(a.commit.as_deref(), Some("h1"));
    assert_eq!(a.summary.as_deref(), Some("did it"));
    assert_eq!((a.cost_micro_usd, a.duration_ms), (300, 5));
    assert_eq!(a.started_at.as_deref(), Some("t1"));
    assert_eq!(a.finished_at.as_deref(), Some("t2"));
    assert_eq!(books.meter.spent.iterations, 1);
    assert_eq!(books.meter.spent.cost_micro_usd, 300);
    assert_eq!(books.meter.spent.consecutive_failures, 0);
    assert!(books.streak.is_empty());
    let kinds: Vec<&str> = actions
        .iter()
        .map(|a| match a {
            Action::Emit(Event::AttemptFinished { .. }) => "attempt_finished",
            Action::Emit(Event::TaskFinished { .. }) => "task_finished",
            Action::Emit(_) => "other event",
            Action::KeepWorktree => "keep",
            Action::Progress { .. } => "progress",
            Action::Record { .. } => "record",
            Action::RememberChecks => "remember",
            Action::RemoveWorktree => "remove",
            Action::WaitForLimit(_) => "wait",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "attempt_finished",
            "progress",
            "record",
            "remember",
            "remove",
            "task_finished"
        ]
    );
    assert!(ready(&p, &state, index(&p, "b")));
}

#[test]
fn a_failure_with_attempts_left_is_retried_with_feedback() {
    let (p, mut state, mut books) = setup(TWO);
    let actions = attempt(
        &p,
        &mut state,
        &mut books,
        "a",
        failed("tests failed", OnFail::Retry),
        Cost::default(),
    );
    let a = &state.tasks[0];
    assert_eq!(a.status, TaskStatus::Pending);
    assert_eq!(a.reason.as_deref(), Some("tests failed"));
    assert_eq!(books.slots[0].feedback, "feedback: tests failed");
    assert_eq!(books.meter.spent.consecutive_failures, 1);
    assert_eq!(actions.first(), Some(&Action::KeepWorktree));
    assert!(finishes(&actions).is_empty());
    assert_eq!(state.tasks[1].status, TaskStatus::Pending);
    // The next try is attempt 2, its first try.
    assert_eq!(started(&p, &mut state, &mut books, 0, "t3".into()), (2, 1));
    assert_eq!(state.tasks[0].started_at.as_deref(), Some("t1"));
}

#[test]
fn a_failure_on_the_last_attempt_fails_the_task_and_skips_its_dependents() {
    let (p, mut state, mut books) = setup(TWO);
    let outcome = || failed("tests failed", OnFail::Retry);
    attempt(&p, &mut state, &mut books, "a", outcome(), Cost::default());
    let actions = attempt(&p, &mut state, &mut books, "a", outcome(), Cost::default());
    assert_eq!(state.tasks[0].status, TaskStatus::Failed);
    assert_eq!(state.tasks[1].status, TaskStatus::Skipped);
    assert_eq!(state.tasks[2].status, TaskStatus::Pending);
    assert_eq!(
        finishes(&actions),
        [
            (
                "a".into(),
                "failed".into(),
                Some("out of attempts (2 of 2): tests failed".into())
            ),
            (
                "b".into(),
                "skipped".into(),
                Some("dependency `a` failed".into())
            ),
        ]
    );
    assert!(books.stop.is_none(), "independent work goes on");
    assert!(ready(&p, &state, index(&p, "free")));
}

#[test]
fn blocked_attempts_block_the_task_and_skip_its_dependents() {
    for outcome in [
        Outcome::Blocked("the handoff says blocked".into()),
        failed("review rejected", OnFail::Block),
    ] {
        let (p, mut state, mut books) = setup(TWO);
        let actions = attempt(&p, &mut state, &mut books, "a", outcome, Cost::default());
        assert_eq!(state.tasks[0].status, TaskStatus::Blocked);
        assert_eq!(state.tasks[1].status, TaskStatus::Skipped);
        assert_eq!(actions.first(), Some(&Action::KeepWorktree));
        assert_eq!(finishes(&actions).len(), 2);
    }
}

#[test]
fn a_question_for_a_person_ends_the_task_needs_human_and_skips_its_dependents() {
    let (p, mut state, mut books) = setup(TWO);
    let q = Outcome::NeedsHuman("Postgres or SQLite?\nBoth work.".into());
    let actions = attempt(&p, &mut state, &mut books, "a", q, Cost::default());
    let a = &state.tasks[0];
    assert_eq!(a.status, TaskStatus::NeedsHuman);
    assert_eq!(a.attempts, 1);
    assert_eq!(
        a.question.as_deref(),
        Some("Postgres or SQLite?\nBoth work.")
    );
    assert_eq!(
        a.reason.as_deref(),
        Some("the agent needs a human to answer: Postgres or SQLite?")
    );
    assert_eq!(a.history[0].outcome, "needs-human");
    assert_eq!(state.tasks[1].status, TaskStatus::Skipped);
    assert_eq!(
        state.tasks[1].reason.as_deref(),
        Some("dependency `a` waits for an answer (needs-human)")
    );
    assert_eq!(actions.first(), Some(&Action::KeepWorktree));
    assert!(books.stop.is_none(), "other work goes on");
}

#[test]
fn on_fail_fail_stops_the_run() {
    let (p, mut state, mut books) = setup(TWO);
    attempt(
        &p,
        &mut state,
        &mut books,
        "a",
        failed("lint", OnFail::Fail),
        Cost::default(),
    );
    assert_eq!(state.tasks[0].status, TaskStatus::Failed);
    assert_eq!(books.stop_kind(), Some(StopKind::FailedTask));
}

#[test]
fn infrastructure_failures_are_retried_uncounted_then_block() {
    let (p, mut state, mut books) = setup(TWO);
    let infra = || Outcome::Infrastructure("setup failed".into());
    for n in 1..=MAX_INFRA_RETRIES {
        attempt(&p, &mut state, &mut books, "a", infra(), Cost::default());
        assert_eq!(state.tasks[0].status, TaskStatus::Pending);
        assert_eq!(state.tasks[0].attempts, 0);
        assert_eq!(books.meter.spent.iterations, 0);
        assert_eq!(books.slots[0].infra, n);
    }
    // The retries repeat attempt 1 as its next try.
    assert_eq!(books.slots[0].last_try, (1, MAX_INFRA_RETRIES));
    let actions = attempt(&p, &mut state, &mut books, "a", infra(), Cost::default());
    assert_eq!(state.tasks[0].status, TaskStatus::Blocked);
    assert_eq!(
        state.tasks[0].reason.as_deref(),
        Some("4 infrastructure failures (3 retries), the last: setup failed")
    );
    assert_eq!(state.tasks[1].status, TaskStatus::Skipped);
    assert_eq!(books.meter.spent.consecutive_failures, 0);
    // Each infrastructure failure's worktree is kept, as a failed attempt's.
    assert!(actions.contains(&Action::KeepWorktree));
}

#[test]
fn an_unknown_cost_under_a_cost_budget_stops_the_run() {
    let source = TWO.replace("loop \"t\" { }", "loop \"t\" { }\nbudget { cost = $1 }");
    let (p, mut state, mut books) = setup(&source);
    let unknown = Cost {
        micro_usd: 0,
        unknown: true,
        unknown_agent: Some("bot".into()),
        ..Cost::default()
    };
    let actions = attempt(&p, &mut state, &mut books, "a", passed(), unknown);
    assert_eq!(
        state.tasks[0].status,
        TaskStatus::Passed,
        "the result stands"
    );
    assert!(state.tasks[0].cost_unknown);
    let (kind, reason) = books.stop.clone().expect("the run stops");
    assert_eq!(kind, StopKind::Budget);
    assert!(reason.contains("agent `bot`"), "{reason}");
    assert!(actions.iter().any(|a| matches!(
        a,
        Action::Emit(Event::AttemptFinished {
            cost_micro_usd: None,
            ..
        })
    )));
}

#[test]
fn an_unknown_cost_without_a_cost_budget_goes_on() {
    let (p, mut state, mut books) = setup(TWO);
    let unknown = Cost {
        unknown: true,
        ..Cost::default()
    };
    attempt(&p, &mut state, &mut books, "a", passed(), unknown);
    assert!(books.stop.is_none());
}

#[test]
fn the_circuit_breaker_trips_on_failures_across_tasks_not_on_one_tasks_end() {
    let source = r#"
loop "t" { }
budget { failures = 2 }
agent bot { run = "true" }
task a { agent = bot  prompt = "x"  attempts = 2 }
task b { agent = bot  prompt = "y"  attempts = 2 }
"#;
    // One task using up its attempts: the streak is its failure only.
    let (p, mut state, mut books) = setup(source);
    let outcome = || failed("no", OnFail::Retry);
    attempt(&p, &mut state, &mut books, "a", outcome(), Cost::default());
    attempt(&p, &mut state, &mut books, "a", outcome(), Cost::default());
    assert_eq!(state.tasks[0].status, TaskStatus::Failed);
    assert_eq!(books.meter.spent.consecutive_failures, 2);
    assert_eq!(books.meter.exhausted(true), None);
    // One more failure, of another task, trips it.
    attempt(&p, &mut state, &mut books, "b", outcome(), Cost::default());
    let why = books.meter.exhausted(true).expect("the breaker trips");
    assert!(
        why.starts_with("circuit breaker: 3 failed attempts"),
        "{why}"
    );

    // Failures of two tasks in a row trip it while both are retrying.
    let (p, mut state, mut books) = setup(source);
    attempt(&p, &mut state, &mut books, "a", outcome(), Cost::default());
    attempt(&p, &mut state, &mut books, "b", outcome(), Cost::default());
    assert!(books.meter.exhausted(true).is_some());
    // A pass resets it.
    attempt(&p, &mut state, &mut books, "a", passed(), Cost::default());
    assert_eq!(books.meter.exhausted(true), None);
}

#[test]
fn interrupted_attempts_count_only_when_the_time_budget_stopped_them() {
    let (p, mut state, mut books) = setup(TWO);
    let (n, _) = started(&p, &mut state, &mut books, 0, "t1".into());
    let by = |signalled, past_deadline| Finished {
        task: 0,
        attempt: n,
        outcome: Outcome::Interrupted,
        cost: Cost::default(),
        elapsed_ms: None,
        head: "h".into(),
        now: "t2".into(),
        signalled,
        past_deadline,
        ended_ms: 5,
        work_end_ms: None,
        agent_started: false,
        logs: None,
        worktree: None,
        agent: None,
        fallback: None,
        resolver: None,
        answerer: None,
        unreviewed: None,
        already_satisfied: false,
    };
    let mut ctrl_c = (state.clone(), Books::new(&p, Meter::new(p.budget.clone())));
    ctrl_c.1.meter.spent.iterations = 1;
    finished(&p, &mut ctrl_c.0, &mut ctrl_c.1, by(true, true));
    assert_eq!(ctrl_c.0.tasks[0].status, TaskStatus::Interrupted);
    assert_eq!(ctrl_c.0.tasks[0].attempts, 0);
    assert_eq!(ctrl_c.1.meter.spent.iterations, 0);
    assert_eq!(ctrl_c.0.tasks[1].status, TaskStatus::Pending);

    finished(&p, &mut state, &mut books, by(false, true));
    assert_eq!(state.tasks[0].attempts, 1);
    assert_eq!(
        state.tasks[0].reason.as_deref(),
        Some("the attempt was stopped by the `time` budget")
    );
}

#[test]
fn a_replay_caches_the_task_or_misses() {
    let (p, mut state, mut books) = setup(TWO);
    let replay = |result| Replayed {
        task: 0,
        key: "k".into(),
        result,
        summary: Some("from the cache".into()),
        files: vec![],
        cost: Cost::default(),
        elapsed_ms: 1,
        ended_ms: 1,
        by_deadline: false,
        now: "t1".into(),
    };
    let miss = replayed(
        &p,
        &mut state,
        &mut books,
        replay(Replay::Miss("conflict".into())),
    );
    assert_eq!(state.tasks[0].status, TaskStatus::Pending);
    assert!(matches!(miss[..], [Action::Emit(Event::CacheMiss { .. })]));
    let done = Replay::Done {
        commit: "c9".into(),
        how: "fast_forward",
    };
    let actions = replayed(&p, &mut state, &mut books, replay(done));
    let a = &state.tasks[0];
    assert_eq!(a.status, TaskStatus::Cached);
    assert_eq!(a.commit.as_deref(), Some("c9"));
    assert_eq!(a.cache_key.as_deref(), Some("k"));
    assert_eq!(a.attempts, 0);
    assert!(actions.contains(&Action::RememberChecks));
    assert_eq!(finishes(&actions), [("a".into(), "cached".into(), None)]);
    replayed(&p, &mut state, &mut books, replay(Replay::Stopped));
    assert_eq!(books.stop_kind(), Some(StopKind::Interrupted));
}

#[test]
fn weightier_stops_win() {
    let (_, _, mut books) = setup(TWO);
    books.set_stop(StopKind::FailedTask, "f".into());
    books.set_stop(StopKind::Budget, "b".into());
    books.set_stop(StopKind::FailedTask, "f2".into());
    assert_eq!(books.stop, Some((StopKind::Budget, "b".into())));
    books.set_stop(StopKind::BranchMoved, "m".into());
    books.set_stop(StopKind::Interrupted, "i".into());
    assert_eq!(books.stop_kind(), Some(StopKind::BranchMoved));
}

#[test]
fn an_infrastructure_failure_after_the_agent_started_is_a_failed_attempt() {
    let (p, mut state, mut books) = setup(TWO);
    let infra = || Outcome::Infrastructure("cannot commit".into());
    let actions = attempt_after(
        &p,
        &mut state,
        &mut books,
        "a",
        infra(),
        Cost::default(),
        true,
    );
    // Counted: the attempt stays spent, the streak grows, and the next
    // attempt is told why.
    assert_eq!(state.tasks[0].status, TaskStatus::Pending);
    assert_eq!(state.tasks[0].attempts, 1);
    assert_eq!(books.slots[0].infra, 0);
    assert_eq!(books.meter.spent.consecutive_failures, 1);
    assert!(
        books.slots[0]
            .feedback
            .contains("after its agent ran: cannot commit")
    );
    assert!(actions.contains(&Action::KeepWorktree));
    assert_eq!(state.tasks[0].history.len(), 1);
    assert_eq!(state.tasks[0].history[0].outcome, "failed");
    assert_eq!(state.tasks[0].history[0].logs.as_deref(), Some("logs/a/1"));
    // Before the agent started it is still retried for free.
    attempt_after(
        &p,
        &mut state,
        &mut books,
        "a",
        infra(),
        Cost::default(),
        false,
    );
    assert_eq!(state.tasks[0].attempts, 1);
    assert_eq!(books.slots[0].infra, 1);
    assert_eq!(state.tasks[0].history[1].outcome, "infrastructure");
}

#[test]
fn a_limited_attempt_is_not_counted_and_waits() {
    let (p, mut state, mut books) = setup(TWO);
    let limit = Limited {
        agent: "bot".into(),
        resets_at: Some(1_000),
        message: "usage limit reached".into(),
    };
    let actions = attempt_after(
        &p,
        &mut state,
        &mut books,
        "a",
        Outcome::Limited(limit.clone()),
        Cost::default(),
        true,
    );
    assert_eq!(state.tasks[0].attempts, 0);
    assert_eq!(books.meter.spent.iterations, 0);
    assert_eq!(books.meter.spent.consecutive_failures, 0);
    assert!(!actions.contains(&Action::KeepWorktree));
    let tail = &actions[actions.len() - 2..];
    assert_eq!(
        tail,
        [Action::RemoveWorktree, Action::WaitForLimit(limit)].as_slice()
    );
    assert_eq!(state.tasks[0].history[0].outcome, "limited");
    assert_eq!(
        state.tasks[0].history[0].reason.as_deref(),
        Some("agent `bot` hit a usage limit: usage limit reached")
    );
}

#[test]
fn the_budget_reached_first_is_the_reason_whenever_it_is_noticed() {
    let (_, _, mut books) = setup(TWO);
    books.set_budget_stop(1500, "cost".into());
    books.set_budget_stop(1000, "time".into());
    books.set_budget_stop(1200, "iterations".into());
    books.set_budget_stop(1000, "time again".into());
    assert_eq!(books.stop, Some((StopKind::Budget, "time".into())));
    books.set_stop(StopKind::FailedTask, "f".into());
    assert_eq!(books.stop, Some((StopKind::Budget, "time".into())));
    books.set_stop(StopKind::Interrupted, "i".into());
    books.set_budget_stop(0, "earlier".into());
    assert_eq!(books.stop_kind(), Some(StopKind::Interrupted));
}

#[test]
fn a_resolvers_run_is_one_more_iteration_and_in_the_attempts_history() {
    let (p, mut state, mut books) =
        setup("agent a { run = \"x\" }\ntask t { agent = a  prompt = \"p\" }\n");
    let i = index(&p, "t");
    let record = state::ResolverRecord {
        agent: "a".into(),
        conflicts: vec!["f.txt".into()],
        resolved: true,
        logs: "logs/t/1/resolver".into(),
        started: true,
        ..state::ResolverRecord::default()
    };
    let finish = |signalled: bool, state: &mut RunState, books: &mut Books| {
        let (n, _) = started(&p, state, books, i, "t1".into());
        finished(
            &p,
            state,
            books,
            Finished {
                task: i,
                attempt: n,
                outcome: if signalled {
                    Outcome::Interrupted
                } else {
                    passed()
                },
                cost: Cost::default(),
                elapsed_ms: Some(5),
                head: "h1".into(),
                now: "t2".into(),
                signalled,
                past_deadline: false,
                ended_ms: 5,
                work_end_ms: None,
                agent_started: true,
                logs: Some("logs/t/1".into()),
                worktree: None,
                agent: None,
                fallback: None,
                resolver: Some(record.clone()),
                answerer: None,
                unreviewed: None,
                already_satisfied: false,
            },
        )
    };
    let mut cut = (state.clone(), Books::new(&p, Meter::new(p.budget.clone())));
    finish(false, &mut state, &mut books);
    assert_eq!(
        books.meter.spent.iterations, 2,
        "the attempt and its resolver"
    );
    assert_eq!(state.tasks[i].attempts, 1, "not one of the task's attempts");
    assert_eq!(state.tasks[i].history[0].resolver.as_ref(), Some(&record));
    // Cut off by Ctrl-C: neither the attempt nor its resolver counts.
    finish(true, &mut cut.0, &mut cut.1);
    assert_eq!(cut.1.meter.spent.iterations, 0);
}

#[test]
fn an_already_satisfied_task_is_done_without_counting_an_attempt() {
    let (p, mut state, mut books) = setup(TWO);
    let (n, _) = started(&p, &mut state, &mut books, 0, "t1".into());
    let satisfied = Outcome::Passed {
        commit: "base".into(),
        summary: Some("already satisfied".into()),
        files: Vec::new(),
    };
    let f = Finished {
        already_satisfied: true,
        ..ended(0, n, satisfied)
    };
    let actions = finished(&p, &mut state, &mut books, f);
    let a = &state.tasks[0];
    assert_eq!(a.status, TaskStatus::AlreadySatisfied);
    assert_eq!((a.attempts, books.meter.spent.iterations), (0, 0));
    assert_eq!(a.history[0].outcome, "already_satisfied");
    assert!(actions.iter().any(|a| matches!(a, Action::Record { .. })));
    let done = finishes(&actions);
    assert_eq!(
        done,
        [("a".to_string(), "already_satisfied".to_string(), None)]
    );
    assert!(ready(&p, &state, index(&p, "b")));
}
