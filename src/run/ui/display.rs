//! The words a person watching a run reads: the plain one-line form of
//! each event ([`plain_line`]) and text made safe to print ([`sanitize`]).
//! The command line prints them (live bars on a terminal, else these lines);
//! the summary table at the end is [`super::summary`].

use crate::run::store::events::Event;

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// `text` made safe to print to a person: hidden characters (control and
/// format characters, see [`crate::visible`]) other than `\n` and `\t` are
/// shown as escapes (`\u{1b}`, `\u{202e}`). JSON output keeps the exact
/// text instead.
pub fn sanitize(text: &str) -> String {
    crate::visible::escape(text, &['\n', '\t']).into_owned()
}

/// Like [`sanitize`], for text that must stay on one line: line breaks
/// and tabs are escaped too.
pub fn sanitize_line(text: &str) -> String {
    crate::visible::escape(text, &[]).into_owned()
}

/// A merge's `how` (events.jsonl's word) as shown to a person:
/// `fast_forward` is `fast-forward`; the others are shown as they are.
fn how_words(how: &str) -> String {
    how.replace('_', "-")
}

/// The plain one-line form of an event.
pub fn plain_line(event: &Event) -> Option<String> {
    Some(sanitize_line(&match event {
        Event::RunStarted {
            plan,
            branch,
            head,
            parallel,
            ..
        } => format!(
            "loopc: running plan {plan} on {branch} (at {}), {parallel} at a time",
            short(head)
        ),
        Event::AttemptStarted {
            task,
            attempt,
            retry: Some(r),
            ..
        } => format!("loopc: {task} attempt {attempt} (retry {r}): started"),
        Event::AttemptStarted { task, attempt, .. } => {
            format!("loopc: {task} attempt {attempt}: started")
        }
        Event::Phase {
            task,
            attempt,
            phase,
            gate,
        } if *attempt == 0 && phase.starts_with("advance") => match gate {
            // Attempt 0: checks of a spec's move to its next stage.
            Some(g) => format!("loopc: {task}: checking its spec's move: {g}"),
            None => format!("loopc: {task}: moving its spec to the next stage"),
        },
        Event::Phase {
            task,
            attempt,
            phase,
            gate,
        } if *attempt == 0 => match gate {
            // Attempt 0: checks of a replay from the cache.
            Some(g) => format!("loopc: {task} replay: {phase} {g}"),
            None => format!("loopc: {task}: {phase}"),
        },
        Event::Phase {
            task,
            attempt,
            phase,
            gate,
        } => match gate {
            Some(g) => format!("loopc: {task} attempt {attempt}: {phase} {g}"),
            None => format!("loopc: {task} attempt {attempt}: {phase}"),
        },
        Event::AttemptFinished {
            task,
            attempt,
            outcome,
            reason,
            over_cap,
            cost_micro_usd,
            ..
        } => {
            let over = match (over_cap, cost_micro_usd) {
                (false, _) => String::new(),
                (true, Some(c)) => format!(
                    " (over its cost cap: cost {}, counted in full)",
                    crate::run::time::dollars(*c)
                ),
                (true, None) => " (over its cost cap)".to_string(),
            };
            let outcome = crate::state::shown_word(outcome);
            match reason {
                Some(r) => format!("loopc: {task} attempt {attempt}: {outcome}{over}: {r}"),
                None => format!("loopc: {task} attempt {attempt}: {outcome}{over}"),
            }
        }
        Event::Waiting { task, reason, .. } => format!("loopc: {task}: {reason}"),
        Event::Merged { task, commit, how } if how == "none" => format!(
            "loopc: {task}: no changes to merge; the integration branch stays at {}",
            short(commit)
        ),
        Event::Merged { task, commit, how } => {
            format!(
                "loopc: {task}: merged ({}) at {}",
                how_words(how),
                short(commit)
            )
        }
        Event::ResolverFinished {
            task,
            attempt,
            record,
        } => match &record.reason {
            None => format!(
                "loopc: {task} attempt {attempt}: resolver {} resolved the conflict in {}",
                record.agent,
                record.conflicts.join(", ")
            ),
            Some(r) => format!(
                "loopc: {task} attempt {attempt}: resolver {} did not resolve the conflict: {r}",
                record.agent
            ),
        },
        Event::GateChanged {
            task,
            attempt,
            gate,
            paths,
            fails,
        } => format!(
            "loopc: {task} attempt {attempt}: `{gate}` changed {}; discarded{}",
            paths.join(", "),
            if *fails { "" } else { " (its verdict stands)" }
        ),
        Event::Cached {
            task, commit, how, ..
        } if how == "none" => format!(
            "loopc: {task}: replayed from the cache (no changes to apply) at {}",
            short(commit)
        ),
        Event::Cached {
            task, commit, how, ..
        } => format!(
            "loopc: {task}: replayed from the cache ({}) at {}",
            how_words(how),
            short(commit)
        ),
        Event::CacheMiss { task, reason, .. } => {
            format!("loopc: {task}: cache entry not used: {reason}")
        }
        Event::Expanded {
            task,
            fragment,
            tasks,
        } => format!(
            "loopc: {task}: plan fragment {fragment} added {} task(s): {}",
            tasks.len(),
            crate::visible::some_of(tasks, 20)
        ),
        Event::Replanned {
            task,
            failed,
            replan,
            replans,
            reason,
        } => format!(
            "loopc: {task}: re-planning ({replan} of {replans}): `{failed}` failed: {}",
            reason.lines().next().unwrap_or_default()
        ),
        Event::Answered { task, by, .. } => {
            format!("loopc: {task}: agent `{by}` answered its question; the task goes on")
        }
        Event::SpecAdvanced {
            spec,
            from,
            to,
            commit,
        } => format!(
            "loopc: {spec}: every task passed; moved from {from}/ to {to}/ at {}",
            short(commit)
        ),
        Event::SpecStayed {
            spec,
            stage,
            reason,
        } => format!("loopc: {spec}: stays in {stage}/: {reason}"),
        Event::TaskFinished {
            task,
            status,
            reason,
        } => match (crate::state::shown_word(status), reason) {
            (status, Some(r)) => format!("loopc: {task}: {status}: {r}"),
            (status, None) => format!("loopc: {task}: {status}"),
        },
        Event::RunFinished { status, reason, .. } => match reason {
            Some(r) => format!("loopc: run {status}: {r}"),
            None => format!("loopc: run {status}"),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::{sanitize, sanitize_line};

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(sanitize("a\u{1b}[2Jb\n\tc"), "a\\u{1b}[2Jb\n\tc");
        assert_eq!(sanitize_line("a\nb\u{7}"), "a\\nb\\u{7}");
        assert_eq!(sanitize("\u{202e}x"), "\\u{202e}x");
        assert_eq!(sanitize_line("a\u{200b}\u{61c}"), "a\\u{200b}\\u{61c}");
        assert_eq!(sanitize("plain — ünïcode"), "plain — ünïcode");
    }
}
