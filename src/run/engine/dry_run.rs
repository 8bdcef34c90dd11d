//! `loopc run --dry-run`: for every task, in topological order, whether the
//! run would replay it from the cache or run it and, for a task with an
//! older entry under another key, which part of the key changed (spec §6).
//! Reads the repository and the cache; starts nothing, writes nothing.
//!
//! The run is simulated the way the scheduler goes: hits that fast-forward
//! to their recorded commit first (following the branch, so later tasks'
//! `inputs` are read where they would start), then the other tasks in
//! topological order. A replay onto a new base is computed as the run
//! computes it (the same reproducible commit), and said to run the task's
//! checks again when its tree is not the one they passed on. Once a task
//! would run, the branch's future content is not known exactly; input
//! files that earlier tasks wrote are then not reported as changed (they
//! are outputs, not edits).

use super::cache::{self, Store};
use super::replay::{self, Planned};
use crate::plan::Key;
use crate::plan::Plan;
use crate::run::sys::git::Git;
use std::collections::{BTreeMap, HashSet};

/// Joins words as English: `a`, `a and b`, `a, b and c`.
fn join_words(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

struct Sim<'a> {
    plan: &'a Plan,
    git: &'a Git,
    store: &'a Store,
    forced: &'a [String],
    copied: &'a BTreeMap<String, String>,
    head: String,
    exact: bool,
    written: HashSet<String>,
    keys: Vec<Option<Key>>,
    lister: cache::FileLister,
    lines: Vec<Option<String>>,
}

impl Sim<'_> {
    fn key(&mut self, i: usize) -> Result<cache::RunKey, String> {
        let task = &self.plan.tasks[i];
        let files = self.lister.files_for(self.git, task, &self.head)?;
        cache::run_key(
            self.plan,
            i,
            &self.keys,
            files.as_deref().map(|v| v.as_slice()),
            self.copied,
        )
    }

    fn ready(&self, i: usize) -> bool {
        self.lines[i].is_none()
            && self.plan.tasks[i]
                .dependencies
                .iter()
                .all(|&d| self.lines[d].is_some())
    }

    fn forced(&self, i: usize) -> bool {
        self.forced.iter().any(|f| *f == self.plan.tasks[i].name)
    }

    /// Replays every ready hit that fast-forwards, as long as there is one.
    fn fast_forwards(&mut self) {
        loop {
            let mut progressed = false;
            for i in 0..self.plan.tasks.len() {
                if !self.ready(i) || self.forced(i) {
                    continue;
                }
                let Ok(rk) = self.key(i) else { continue };
                let Some(entry) = self.store.get(&rk.key) else {
                    continue;
                };
                match entry.parent.as_deref() {
                    None => {}
                    Some(p) if p == self.head => self.head = entry.commit.clone(),
                    Some(_) => continue,
                }
                self.written.extend(entry.files.iter().cloned());
                self.keys[i] = Some(rk.key);
                self.lines[i] = Some("cached".into());
                progressed = true;
            }
            if !progressed {
                return;
            }
        }
    }

    /// Decides task `i` at the current head.
    fn decide(&mut self, i: usize) -> String {
        let rk = match self.key(i) {
            Ok(rk) => rk,
            Err(e) => {
                self.exact = false;
                return format!("run (no cache key: {e})");
            }
        };
        self.keys[i] = Some(rk.key);
        let forced = self.forced(i);
        let mut why = Vec::new();
        if !forced && let Some(entry) = self.store.get(&rk.key) {
            match replay::plan(self.git, &self.plan.tasks[i], entry, &self.head) {
                Ok(Planned::Nothing) => {}
                Ok(Planned::FastForward(commit)) => self.head = commit,
                Ok(Planned::Commit { commit, gated }) => {
                    self.head = commit;
                    self.written.extend(entry.files.iter().cloned());
                    return if gated {
                        "cached (replayed onto a new base; its checks run again first)".into()
                    } else {
                        "cached (replayed onto a new base)".into()
                    };
                }
                Ok(Planned::Conflict(paths)) => {
                    why.push(format!(
                        "its cached work conflicts with the base in {}",
                        paths.join(", ")
                    ));
                }
                Err(e) => why.push(format!("its cached work cannot be replayed: {e}")),
            }
            if why.is_empty() {
                self.written.extend(entry.files.iter().cloned());
                return "cached".into();
            }
        }
        if forced {
            why.push("forced".to_string());
        }
        let latest = self.store.latest(&self.plan.name, &self.plan.tasks[i].name);
        if let Some(old) = latest
            && old.key != rk.key.to_hex()
        {
            let mut changed = cache::changes(&old.components, &rk.components);
            if !self.exact {
                changed.retain(|c| {
                    c.strip_prefix("input file ")
                        .is_none_or(|p| !self.written.contains(p))
                });
            }
            if !changed.is_empty() {
                why.push(format!("{} changed", join_words(&changed)));
            }
        }
        self.exact = false;
        if let Some(old) = latest {
            self.written.extend(old.files.iter().cloned());
        }
        if why.is_empty() {
            "run".into()
        } else {
            format!("run ({})", why.join("; "))
        }
    }
}

/// The dry run's report: one `task: cached|run [(why)]` line per task in
/// topological order, then a total line. `store` is `None` with
/// `--no-cache`; `base` is the commit the run would start from; `copied`
/// the files `loop.copy` brings and their digests (part of every key).
pub fn report(
    plan: &Plan,
    forced: &[String],
    copied: &BTreeMap<String, String>,
    git: &Git,
    store: Option<&Store>,
    base: &str,
) -> String {
    let n = plan.tasks.len();
    let lines: Vec<String> = match store {
        None => vec!["run (cache disabled)".to_string(); n],
        Some(store) => {
            let mut sim = Sim {
                plan,
                git,
                store,
                forced,
                copied,
                head: base.to_string(),
                exact: true,
                written: HashSet::new(),
                keys: vec![None; n],
                lister: cache::FileLister::default(),
                lines: vec![None; n],
            };
            loop {
                sim.fast_forwards();
                let Some(i) = (0..n).find(|&i| sim.ready(i)) else {
                    break;
                };
                let line = sim.decide(i);
                sim.lines[i] = Some(line);
            }
            sim.lines
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect()
        }
    };
    let mut out = String::new();
    let mut cached = 0;
    for (task, line) in plan.tasks.iter().zip(&lines) {
        if line.starts_with("cached") {
            cached += 1;
        }
        out.push_str(&format!("{}: {line}\n", task.name));
    }
    out.push_str(&format!(
        "dry run of plan {}: {cached} cached, {} to run; nothing was started\n",
        plan.name,
        n - cached
    ));
    out
}
