//! Which run a report is of, and where its facts are: the last run's
//! `state.json`, an earlier run's copy of it kept with its logs
//! (`earlier-logs/<run>/+state.json`), or, for an earlier run that left no
//! copy, its events alone ([`super::synth`]); and its events and logs.

use super::events::{self, RunEvents};
use crate::run::store::layout::{self, Layout};
use crate::state::RunState;
use std::path::{Path, PathBuf};

/// One run's recorded facts.
#[derive(Debug, Clone)]
pub struct Found {
    /// Its state document.
    pub state: RunState,
    /// Its events.
    pub events: RunEvents,
    /// Where `state` came from: `state`, `saved state` or `events`.
    pub source: &'static str,
    /// Whether it is the last run.
    pub last: bool,
    /// Where its logs are now: `.loopc/logs/` for the last run,
    /// `.loopc/earlier-logs/<run>/` for an earlier one.
    pub logs_root: PathBuf,
}

/// The facts of run `run` (`None`: the last one) recorded in `layout`.
///
/// Errors: there is no run recorded (say how to start one), no run `run`
/// (say which there are), or the state or event log cannot be read.
pub fn find(layout: &Layout, run: Option<u32>) -> Result<Found, String> {
    let runs = events::read(&layout.events)?;
    let state = if layout.state.exists() {
        match crate::run::store::state::load(&layout.state) {
            Ok(s) => Some(s),
            // An earlier run's report needs no readable last state.
            Err(_) if run.is_some() => None,
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    let is_last = |n: u32| state.as_ref().is_some_and(|s| s.run == Some(n));
    match run {
        None => last(layout, state, runs),
        Some(n) if is_last(n) => last(layout, state, runs),
        Some(n) => earlier(layout, n, runs, state.as_ref()),
    }
}

/// The last run: its state, with the events of the run it names.
fn last(
    layout: &Layout,
    state: Option<RunState>,
    mut runs: Vec<RunEvents>,
) -> Result<Found, String> {
    let events = match state.as_ref().and_then(|s| s.run) {
        Some(n) => match runs.iter().rposition(|r| r.run == Some(n)) {
            Some(i) => runs.swap_remove(i),
            None => RunEvents::default(),
        },
        None => runs.pop().unwrap_or_default(),
    };
    let (state, source) = match state {
        Some(s) => (s, "state"),
        None if events.started().is_some() => (super::synth::state(&events), "events"),
        None => {
            return Err(format!(
                "no run recorded here ({} does not exist); start one with `loopc run`",
                layout.state.display()
            ));
        }
    };
    Ok(Found {
        state,
        events,
        source,
        last: true,
        logs_root: layout.logs.clone(),
    })
}

/// Earlier run `n`: its saved state, else what its events say.
fn earlier(
    layout: &Layout,
    n: u32,
    mut runs: Vec<RunEvents>,
    last: Option<&RunState>,
) -> Result<Found, String> {
    let logs_root = layout.earlier_logs.join(n.to_string());
    let saved = logs_root.join(layout::EARLIER_STATE);
    let at = runs.iter().rposition(|r| r.run == Some(n));
    let state = if saved.is_file() {
        Some(crate::run::store::state::load(&saved)?)
    } else {
        None
    };
    if at.is_none() && state.is_none() {
        let mut known: Vec<u32> = runs.iter().filter_map(|r| r.run).collect();
        known.extend(last.and_then(|s| s.run));
        known.sort_unstable();
        known.dedup();
        let which = match known.as_slice() {
            [] => "none is numbered".to_string(),
            [one] => format!("the only one is run {one}"),
            more => format!(
                "they are runs {}",
                more.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        return Err(format!(
            "no run {n} is recorded in {} ({which}); `loopc report` without `--run` reports the last one",
            layout.dir.display()
        ));
    }
    let events = at.map(|i| runs.swap_remove(i)).unwrap_or_default();
    let (state, source) = match state {
        Some(s) => (s, "saved state"),
        None => (super::synth::state(&events), "events"),
    };
    Ok(Found {
        state,
        events,
        source,
        last: false,
        logs_root,
    })
}

impl Found {
    /// Where the log directory `recorded` (as state and events name it,
    /// under `.loopc/logs/` when the run was going on) is now.
    pub fn log_dir(&self, layout: &Layout, recorded: &str) -> PathBuf {
        let path = Path::new(recorded);
        match path.strip_prefix(&layout.logs) {
            Ok(rest) => self.logs_root.join(rest),
            Err(_) => path.to_path_buf(),
        }
    }
}
