//! What a person watching a run sees on stderr: on a terminal, one live line
//! per running task (name, attempt, phase, elapsed time) drawn by indicatif;
//! otherwise one plain line per event. The summary table is printed at the
//! end by [`super::summary`].

use crate::run::store::events::{Event, Watcher};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

/// The live display or the plain event lines.
pub enum Ui {
    /// indicatif bars on a terminal.
    Live {
        /// The bars' container.
        multi: MultiProgress,
        /// One bar per running task.
        bars: Mutex<HashMap<String, ProgressBar>>,
    },
    /// One line per event on stderr.
    Plain,
    /// No progress and no warnings (`-q`); errors still print.
    Silent,
}

/// How a run shows its progress on stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Progress {
    /// Live bars on a terminal, one line per event otherwise.
    #[default]
    Auto,
    /// One line per event, even on a terminal (`-v`).
    Lines,
    /// None (`-q`).
    Off,
}

impl Ui {
    /// The display for `progress`: with `Auto`, live bars when stderr is a
    /// terminal, else plain lines.
    pub fn for_progress(progress: Progress) -> Ui {
        match progress {
            Progress::Auto => Ui::detect(),
            Progress::Lines => Ui::Plain,
            Progress::Off => Ui::Silent,
        }
    }

    /// Live bars when stderr is a terminal, else plain lines.
    pub fn detect() -> Ui {
        if std::io::stderr().is_terminal() {
            Ui::Live {
                multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
                bars: Mutex::new(HashMap::new()),
            }
        } else {
            Ui::Plain
        }
    }
}

impl Watcher for Ui {
    /// Prints one line above the live bars (or plainly).
    fn line(&self, text: &str) {
        let text = sanitize(text);
        match self {
            Ui::Live { multi, .. } => {
                let _ = multi.println(text);
            }
            Ui::Plain | Ui::Silent => stderr_line(&text),
        }
    }

    fn warn(&self, text: &str) {
        if !matches!(self, Ui::Silent) {
            self.line(&format!("warning: {text}"));
        }
    }

    /// Updates the display for `event`.
    fn on_event(&self, event: &Event) {
        match self {
            Ui::Silent => {}
            Ui::Plain => {
                if let Some(text) = plain_line(event) {
                    stderr_line(&text);
                }
            }
            Ui::Live { multi, bars } => {
                let Ok(mut bars) = bars.lock() else { return };
                match event {
                    Event::AttemptStarted { task, attempt, .. } => {
                        let style = ProgressStyle::with_template(
                            "{spinner} {prefix:.bold} [{elapsed}] {wide_msg}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_spinner());
                        let bar = multi.add(ProgressBar::new_spinner().with_style(style));
                        bar.set_prefix(format!("{task} #{attempt}"));
                        bar.set_message("starting");
                        bar.enable_steady_tick(Duration::from_millis(120));
                        if let Some(old) = bars.insert(task.clone(), bar) {
                            old.finish_and_clear();
                        }
                    }
                    Event::Phase {
                        task, phase, gate, ..
                    } => {
                        if let Some(bar) = bars.get(task) {
                            bar.set_message(match gate {
                                Some(g) => format!("{phase} {g}"),
                                None => phase.clone(),
                            });
                        }
                    }
                    Event::AttemptFinished { task, .. } => {
                        if let Some(bar) = bars.remove(task) {
                            bar.finish_and_clear();
                            multi.remove(&bar);
                        }
                        if let Some(text) = plain_line(event) {
                            let _ = multi.println(text);
                        }
                    }
                    _ => {
                        if let Some(text) = plain_line(event) {
                            let _ = multi.println(text);
                        }
                    }
                }
            }
        }
    }

    /// Shows what a running attempt does: on its live line (cut to the
    /// terminal's width), else as a plain line.
    fn activity(&self, task: &str, attempt: u32, text: &str) {
        // One line, at most 200 characters (the live line is cut to the
        // terminal's width besides).
        let line = text.lines().next().unwrap_or("").trim();
        let mut text = sanitize_line(&line.chars().take(200).collect::<String>());
        if line.chars().count() > 200 {
            text.push('…');
        }
        match self {
            Ui::Plain => stderr_line(&format!("loopc: {task} attempt {attempt}: now: {text}")),
            Ui::Live { bars, .. } => {
                let Ok(bars) = bars.lock() else { return };
                if let Some(bar) = bars.get(task) {
                    bar.set_message(text);
                }
            }
            Ui::Silent => {}
        }
    }

    /// Removes any bars left (before the summary is printed).
    fn finish(&self) {
        if let Ui::Live { multi, bars } = self {
            if let Ok(mut bars) = bars.lock() {
                for (_, bar) in bars.drain() {
                    bar.finish_and_clear();
                }
            }
            let _ = multi.clear();
        }
    }
}

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// Writes one line to stderr (the display's lines, and the run's notes and
/// warnings before and after it), control and format characters other
/// than `\n` and `\t` as escapes ([`sanitize`]); a closed or full stderr
/// never stops a run.
pub fn stderr_line(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", sanitize(text));
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
fn plain_line(event: &Event) -> Option<String> {
    Some(sanitize_line(&match event {
        Event::RunStarted {
            plan,
            branch,
            head,
            parallel,
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
            ..
        } => match reason {
            Some(r) => format!("loopc: {task} attempt {attempt}: {outcome}: {r}"),
            None => format!("loopc: {task} attempt {attempt}: {outcome}"),
        },
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
            tasks.join(", ")
        ),
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
        } => match reason {
            Some(r) => format!("loopc: {task}: {status}: {r}"),
            None => format!("loopc: {task}: {status}"),
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
