//! `loopc run --watch`, standby (docs/running.md, "Standby"): a round is
//! a `loopc run` as without the flag (its diagnostics, warnings and
//! summary), then a line on stdout for the round:
//!
//! ```text
//! round 2: passed: 1 ran (c), 2 from the cache
//! round 3: not run: plan.loop has errors; nothing was run
//! ```
//!
//! then [`loopc::run::standby::Standby`] waits for a change to what the
//! round read and the next round starts, saying why on stderr (`note:
//! round 3: plan.loop changed`). A round that could not run (a plan with
//! errors, a repository in the middle of a merge) is waited on like any.
//!
//! Exit status: 130 once Ctrl-C (SIGTERM, SIGHUP) ends it, during a round
//! or between two; 2 when no plan is found, the plan is in no repository
//! or the watcher cannot be set up.

use super::run::{Args, Round, run_plan};
use super::{exit, quiet, say, write_stdout};
use loopc::run::Outcome;
use loopc::run::standby::{Standby, Watched, Woke};
use loopc::state::TaskStatus;

/// Runs rounds of `loopc run` until Ctrl-C; returns the exit status.
pub fn run(args: &Args) -> i32 {
    let mut previous: Option<Watched> = None;
    let mut standby: Option<Standby> = None;
    let mut number = 1;
    loop {
        let mut round = Round {
            previous: previous.take(),
            standby: standby.take(),
            ..Round::default()
        };
        let result = run_plan(args, &mut round);
        if let Err(message) = &result {
            say(message);
        }
        // Nothing to wait on (no plan, or one in no repository): the error
        // said it, and no round line repeats it before exit 2.
        let can_wait = round
            .watched
            .as_ref()
            .or(round.previous.as_ref())
            .is_some_and(|w| w.root.is_some());
        if !can_wait && round.ran.is_none() {
            return exit::USAGE;
        }
        let line = round_line(number, &round, result.as_ref().err());
        // A closed stdout ends nothing: the rounds are in state.json.
        let _ = write_stdout(&line);
        if round
            .ran
            .as_ref()
            .is_some_and(|(o, _)| *o == Outcome::Interrupted)
        {
            return exit::INTERRUPTED;
        }
        standby = round.standby.take();
        // No plan found this time (deleted, say): what the last round read,
        // as it is now (the plan's absence is no change to wake on again).
        let found = round.watched.is_some();
        let Some(mut watched) = round.watched.or(round.previous) else {
            return exit::USAGE;
        };
        let Some(root) = watched.root.clone() else {
            return exit::USAGE;
        };
        let watcher = match standby.as_mut() {
            Some(w) => w,
            None => match Standby::start(&root) {
                Ok(w) => standby.insert(w),
                Err(e) => {
                    say(&e);
                    return exit::USAGE;
                }
            },
        };
        if !quiet() {
            eline!(
                "note: waiting for a change to the plan, its inputs or the base branch \
                 (Ctrl-C ends)"
            );
        }
        if !found {
            watched = watcher.as_now(watched);
        }
        number += 1;
        match watcher.wait(&watched) {
            Ok(Woke::Interrupted) => return exit::INTERRUPTED,
            Ok(Woke::Changed(what)) => {
                if !quiet() {
                    eline!("note: round {number}: {} changed", listed(&what));
                }
            }
            Err(e) => {
                say(&e);
                return exit::USAGE;
            }
        }
        previous = Some(watched);
    }
}

/// The line of round `number`: how it ended and what ran, or why it did not.
fn round_line(number: u32, round: &Round, error: Option<&String>) -> String {
    let Some((outcome, tasks)) = &round.ran else {
        let why = error
            .and_then(|e| e.lines().next())
            .unwrap_or("nothing was run");
        return format!("round {number}: not run: {why}\n");
    };
    let ran: Vec<String> = tasks
        .iter()
        .filter(|t| t.attempted)
        .map(|t| t.name.clone())
        .collect();
    let cached = tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Cached)
        .count();
    let not_passed: Vec<String> = tasks
        .iter()
        .filter(|t| !t.status.is_done())
        .map(|t| t.name.clone())
        .collect();
    let mut line = format!(
        "round {number}: {}: {} ran{}, {cached} from the cache",
        outcome_word(*outcome),
        ran.len(),
        named(&ran)
    );
    if !not_passed.is_empty() {
        line.push_str(&format!(
            ", {} did not pass{}",
            not_passed.len(),
            named(&not_passed)
        ));
    }
    line.push('\n');
    line
}

/// How a round's run ended, in a word or two.
fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::Budget => "stopped by the budget",
        Outcome::BranchMoved => "integration branch moved",
        Outcome::Interrupted => "interrupted",
        Outcome::StateNotRecorded => "state not recorded",
    }
}

/// ` (a, b, c)`: the first five names, then how many more; empty for none.
fn named(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    format!(" ({})", listed(names))
}

/// `a, b, c`, the first five, then `and N more`.
fn listed(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(5)
        .map(|n| loopc::run::ui::display::sanitize_line(n))
        .collect();
    let mut out = shown.join(", ");
    if names.len() > 5 {
        out.push_str(&format!(" and {} more", names.len() - 5));
    }
    out
}
