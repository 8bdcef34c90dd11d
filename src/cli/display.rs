//! What `loopc run` shows on stderr while it runs: live bars on a terminal
//! (indicatif), else one plain line per event
//! ([`loopc::run::ui::display::plain_line`]); nothing with `-q`. The engine
//! reaches it only through the event recorder's [`Watcher`].

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use loopc::run::store::events::{Event, Watcher};
use loopc::run::ui::display::{plain_line, sanitize, sanitize_line};
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
            Ui::Plain | Ui::Silent => eline!("{text}"),
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
                    eline!("{text}");
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
            Ui::Plain => eline!("loopc: {task} attempt {attempt}: now: {text}"),
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
