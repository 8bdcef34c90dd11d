//! `loopc run --dry-run`: for every task, in topological order, whether the
//! run would replay it from the cache or run it and, for a task with an
//! older entry under another key, which part of the key changed.
//! Reads the repository and the cache; starts nothing and moves no ref
//! (git objects only: replays and a spec tree's moves are computed as the
//! run computes them, the same reproducible commits).
//!
//! The run is simulated the way the scheduler goes: hits that fast-forward
//! to their recorded commit first (following the branch, so later tasks'
//! `inputs` are read where they would start), then the other tasks in
//! topological order. A replay onto a new base is computed as the run
//! computes it (the same reproducible commit), and said to run the task's
//! checks again when its tree is not the one they passed on and it has
//! checks (else the checks of tasks merged before it, if any). Once a task
//! would run, the branch's future content is not known exactly; input
//! files that earlier tasks wrote are then not reported as changed (they
//! are outputs, not edits).

mod memory;
mod words;
use crate::plan::Plan;
use crate::run::engine::cache::{self, NoKey, Produced, Store};
use crate::run::engine::expand::Growth;
use crate::run::engine::land::replay::{self, Planned};
use crate::run::sys::git::Git;
pub use memory::Memory;
use memory::NOT_RUN;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use words::{
    cache_disabled, changed_words, held_back, input_file, join_words, spec_lines,
    unknown_fragments, with_skipped, with_verify,
};

struct Sim<'a> {
    plan: &'a Plan,
    git: &'a Git,
    store: &'a Store,
    forced: HashSet<&'a str>,
    around: &'a cache::Surroundings,
    head: String,
    exact: bool,
    written: HashSet<String>,
    /// Per decided task: what its merged work would produce, when known
    /// (replayed); `None` for a task that would run.
    results: Vec<Option<Arc<Produced>>>,
    lister: cache::FileLister,
    lines: Vec<Option<String>>,
    /// How many of each task's dependencies (as listed) are not decided yet.
    pending: Vec<usize>,
    /// Each task's dependents, once per listing.
    dependents: Vec<Vec<usize>>,
    /// Undecided tasks whose dependencies are all decided.
    ready: BTreeSet<usize>,
    /// Ready tasks to look up in the cache (again).
    unchecked: BTreeSet<usize>,
    /// Ready tasks that were no hit at this head but may be at any other
    /// one (`inputs` read at the head, or no key).
    head_bound: Vec<usize>,
    /// Ready tasks whose entry was recorded on another parent, by parent.
    on_parent: HashMap<String, Vec<usize>>,
    /// Tasks with `expands` whose recorded plan fragment does not check:
    /// by name, why (their entry is not used, as in the run).
    rejected: &'a HashMap<String, String>,
    /// Tasks with `expands` that would be replayed, in the order decided,
    /// each with the commit its recorded fragment is read from.
    replayed: Vec<(usize, String)>,
    /// Whether a task replayed so far has command checks (the run checks
    /// later merges and replays with them too).
    replayed_checks: bool,
    /// Per decided task: whether it, or a task it depends on (directly or
    /// not), would run and has command checks: they are merged before it.
    ran_checks: Vec<bool>,
    /// The failures earlier runs left, and `--retry-failed`.
    memory: Memory<'a>,
    /// Per spec of a REEL spec tree's pipeline: whether its move was
    /// decided (made on the simulated branch, or not to be made).
    moved: Vec<bool>,
}

/// Whether `task` has command checks: those the run checks later merges
/// with.
fn has_command_checks(task: &crate::plan::Task) -> bool {
    crate::run::engine::attempt::gate::checks_of(task)
        .iter()
        .any(|c| !crate::run::engine::attempt::gate::is_agent(c))
}

/// Why a ready task was not replayed by a fast-forward.
enum Miss {
    /// Never at any head (no entry for a key that does not depend on it).
    Final,
    /// Perhaps once the head is this commit (its entry's parent).
    Parent(String),
    /// Perhaps at another head.
    AtThisHead,
}

impl<'a> Sim<'a> {
    fn key(&mut self, i: usize) -> Result<cache::RunKey, NoKey> {
        let task = &self.plan.tasks[i];
        let files = self
            .lister
            .files_for(self.git, task, &self.head)
            .map_err(NoKey::Other)?;
        cache::run_key(
            self.plan,
            i,
            &self.results,
            files.as_deref().map(|v| v.as_slice()),
            self.around,
        )
    }

    fn forced(&self, i: usize) -> bool {
        self.forced.contains(self.plan.tasks[i].name.as_str())
    }

    /// Records task `i`'s line; its dependents whose dependencies are now
    /// all decided become ready.
    fn settle(&mut self, i: usize, line: String) {
        let task = &self.plan.tasks[i];
        let checks = has_command_checks(task);
        self.replayed_checks |= checks && line.starts_with("cached");
        self.ran_checks[i] = (checks && line.starts_with("run"))
            || task.dependencies.iter().any(|&d| self.ran_checks[d]);
        self.lines[i] = Some(line);
        self.ready.remove(&i);
        self.unchecked.remove(&i);
        self.advance_specs();
        for k in 0..self.dependents[i].len() {
            let d = self.dependents[i][k];
            self.pending[d] -= 1;
            if self.pending[d] == 0 {
                self.ready.insert(d);
                if !self.forced(d) {
                    self.unchecked.insert(d);
                }
            }
        }
    }

    /// A REEL spec tree's specs whose every task is decided: each moves to
    /// its next stage with one commit on the branch, as the run makes it
    /// (the same reproducible commit, [`crate::run::engine::land::advance::move_commit`])
    /// when every task of it would be replayed; one with a task that runs
    /// moves onto a head no one knows yet (the simulation is not exact
    /// from there on anyway).
    fn advance_specs(&mut self) {
        let Some(pipeline) = &self.plan.pipeline else {
            return;
        };
        for (k, spec) in pipeline.specs.iter().enumerate() {
            if self.moved.get(k).copied().unwrap_or(true) {
                continue;
            }
            let lines: Vec<Option<&str>> = spec
                .tasks
                .iter()
                .map(|&t| self.lines[t].as_deref())
                .collect();
            if lines.iter().any(Option::is_none) {
                continue;
            }
            self.moved[k] = true;
            if !lines.iter().flatten().all(|l| l.starts_with("cached")) {
                continue;
            }
            let index = std::env::temp_dir().join(format!(
                "loopc-dry-run-{}-advance.index",
                std::process::id()
            ));
            let moved =
                crate::run::engine::land::advance::move_commit(self.git, spec, &self.head, &index);
            if let Ok(commit) = moved {
                self.head_moved(commit);
            }
        }
    }

    /// The simulated branch is at `commit` now: tasks passed over at the
    /// old head are looked at again.
    fn head_moved(&mut self, commit: String) {
        self.head = commit;
        let waiting = self.on_parent.remove(&self.head).unwrap_or_default();
        for k in self.head_bound.drain(..).chain(waiting) {
            if self.lines[k].is_none() {
                self.unchecked.insert(k);
            }
        }
    }

    /// Whether task `i`'s recorded plan fragment does not check (its
    /// entry is not used).
    fn fragment_rejected(&self, i: usize) -> Option<&'a str> {
        self.rejected
            .get(&self.plan.tasks[i].name)
            .map(String::as_str)
    }

    /// Notes that task `i`, replayed from `entry`, splices its recorded
    /// plan fragment (if it expands).
    fn splices(&mut self, i: usize, entry: &cache::Entry) {
        if self.plan.tasks[i].expands.is_some() {
            let at = entry.fragment_commit.as_ref().unwrap_or(&entry.commit);
            self.replayed.push((i, at.clone()));
        }
    }

    /// Replays ready task `i` if its entry fast-forwards from the head.
    fn fast_forward(&mut self, i: usize) -> Result<(), Miss> {
        if self.fragment_rejected(i).is_some() {
            return Err(Miss::Final);
        }
        let rk = match self.key(i) {
            Ok(rk) => rk,
            Err(NoKey::Dependency(_)) => return Err(Miss::Final),
            Err(NoKey::Other(_)) => return Err(Miss::AtThisHead),
        };
        let Some(entry) = self.store.get(&rk.key) else {
            return Err(if !self.plan.tasks[i].reads_files() {
                Miss::Final
            } else {
                Miss::AtThisHead
            });
        };
        // Gates that have not judged the result run first: decided in
        // order, as the run does.
        if !entry.unchecked(&self.plan.tasks[i]).is_empty() {
            return Err(Miss::Final);
        }
        match entry.parent.as_deref() {
            None => {}
            Some(p) if p == self.head => self.head_moved(entry.commit.clone()),
            Some(p) if !self.plan.tasks[i].reads_files() => {
                return Err(Miss::Parent(p.to_string()));
            }
            Some(_) => return Err(Miss::AtThisHead),
        }
        self.written.extend(entry.files.iter().cloned());
        self.results[i] = Some(Arc::new(entry.produced.clone()));
        self.splices(i, entry);
        self.settle(i, "cached".into());
        Ok(())
    }

    /// Replays every ready hit that fast-forwards, as long as there is one:
    /// passes over the ready tasks in source order, each pass taking those
    /// that became ready or whose head changed since they were looked at.
    fn fast_forwards(&mut self) {
        loop {
            let mut progressed = false;
            let mut from = 0;
            while let Some(&i) = self.unchecked.range(from..).next() {
                from = i + 1;
                self.unchecked.remove(&i);
                match self.fast_forward(i) {
                    Ok(()) => progressed = true,
                    Err(Miss::AtThisHead) => self.head_bound.push(i),
                    Err(Miss::Parent(p)) => self.on_parent.entry(p).or_default().push(i),
                    Err(Miss::Final) => {}
                }
            }
            if !progressed {
                return;
            }
        }
    }

    /// Decides task `i` at the current head.
    fn decide(&mut self, i: usize) -> String {
        let forced = self.forced(i);
        let task = &self.plan.tasks[i];
        if let Some(&d) = task.dependencies.iter().find(|&&d| {
            self.lines[d]
                .as_deref()
                .is_some_and(|l| l.starts_with(NOT_RUN) || l.starts_with("skipped"))
        }) {
            return format!(
                "skipped: dependency `{}` is not run",
                self.plan.tasks[d].name
            );
        }
        let rk = match self.key(i) {
            Ok(rk) => rk,
            Err(NoKey::Dependency(d)) => {
                self.exact = false;
                return self.after_dependency(i, &d, forced);
            }
            Err(e) => {
                self.exact = false;
                return format!("run (no cache key: {e})");
            }
        };
        let mut why = Vec::new();
        if let Some(reason) = self.fragment_rejected(i) {
            why.push(format!("cache entry not used: {reason}"));
        } else if !forced && let Some(entry) = self.store.get(&rk.key) {
            match self.replay(i, entry) {
                // A gate that has not judged the cached result runs on it
                // first; if it rejects it, what the task's failures under
                // its key say decides, as in the run.
                Ok(line) if !entry.unchecked(&self.plan.tasks[i]).is_empty() => {
                    let task = &self.plan.tasks[i];
                    let key = crate::run::engine::remember::remembered_key(task, &rk.key.to_hex());
                    return match memory::decide(self.memory, task, false, &key) {
                        Err(not_run) => format!("{line}, and if it is rejected: {not_run}"),
                        Ok(_) => line,
                    };
                }
                Ok(line) => return line,
                Err(e) => why.push(e),
            }
        }
        if forced {
            why.push("forced".to_string());
        }
        let key =
            crate::run::engine::remember::remembered_key(&self.plan.tasks[i], &rk.key.to_hex());
        match memory::decide(self.memory, &self.plan.tasks[i], self.forced(i), &key) {
            Err(line) => return line,
            Ok(Some(resumes)) => why.push(resumes),
            Ok(None) => {}
        }
        let latest = self.store.latest(&self.plan.name, &self.plan.tasks[i].name);
        if let Some(old) = latest
            && old.key != rk.key.to_hex()
        {
            let mut changed = cache::changes(&old.components, &rk.components);
            if !self.exact {
                changed.retain(|c| input_file(c).is_none_or(|p| !self.written.contains(p)));
            }
            if !changed.is_empty() {
                why.push(changed_words(&changed));
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

    /// The line of task `i`, whose dependency `dep` would run first: its
    /// key is made of what `dep` produces (early cutoff), known only then.
    fn after_dependency(&mut self, i: usize, dep: &str, forced: bool) -> String {
        let task = &self.plan.tasks[i];
        let Some(old) = self.store.latest(&self.plan.name, &task.name) else {
            return if forced { "run (forced)" } else { "run" }.into();
        };
        let mut why = Vec::new();
        if forced {
            why.push("forced".to_string());
        }
        // Its own changes besides the definition (input, context and
        // copied files, answers) make it run whatever `dep` produces; an
        // input file a task before it writes may be what `dep` writes.
        let files = self.lister.files_for(self.git, task, &self.head);
        let changed = match files {
            Ok(files) => cache::changes_but_dependencies(
                self.plan,
                i,
                &old.components,
                files.as_deref().map(|v| v.as_slice()),
                self.around,
            )
            .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        let changed = match changed {
            Ok(mut changed) => {
                changed.retain(|c| input_file(c).is_none_or(|p| !self.written.contains(p)));
                changed
            }
            Err(e) => return format!("run (no cache key: {e})"),
        };
        self.written.extend(old.files.iter().cloned());
        if !changed.is_empty() {
            why.push(changed_words(&changed));
        }
        if !why.is_empty() {
            return format!("run ({})", why.join("; "));
        }
        format!(
            "run (dependency `{dep}` runs first; replayed from the cache instead if it \
             produces the same files as before)"
        )
    }

    /// Replays hit `entry` of ready task `i` at the head, as the run
    /// would: its line, or why the entry cannot be used.
    fn replay(&mut self, i: usize, entry: &'a cache::Entry) -> Result<String, String> {
        let task = &self.plan.tasks[i];
        if let Some((g, _)) = entry.recorded_rejection(task) {
            return Err(replay::recorded_rejection_words(&g.name));
        }
        let head = self.head.clone();
        let gated = match replay::plan(self.git, task, entry, &head) {
            Ok(Planned::Nothing) => replay::nothing_rechecked(entry, &head),
            Ok(Planned::FastForward(commit)) => {
                self.head = commit;
                None
            }
            Ok(Planned::Commit { commit, gated }) => {
                self.head = commit;
                Some(gated)
            }
            Ok(Planned::Conflict(paths)) => {
                return Err(format!(
                    "its cached work conflicts with the base in {}",
                    paths.join(", ")
                ));
            }
            Err(e) => return Err(format!("its cached work cannot be replayed: {e}")),
        };
        let produced = match gated {
            None => Ok(entry.produced.clone()),
            Some(_) => cache::produced(self.git, &head, &self.head),
        };
        self.results[i] = produced.ok().map(Arc::new);
        self.written.extend(entry.files.iter().cloned());
        self.splices(i, entry);
        let earlier = self.replayed_checks || task.dependencies.iter().any(|&d| self.ran_checks[d]);
        Ok(replay_line(task, entry, gated, earlier))
    }
}

/// The line of `task`, replayed from `entry` (`gated`: whether onto a new
/// base and with a tree its checks did not pass on, as [`replay::plan`]
/// says; `None`: a fast-forward or nothing to apply); `earlier`: tasks
/// merged before it have command checks. Names each rule that decides
/// what runs: gates that have not judged the cached result run on it;
/// on a new tree, the checks that run again and the agent gates whose
/// verdict carries over.
fn replay_line(
    task: &crate::plan::Task,
    entry: &cache::Entry,
    gated: Option<bool>,
    earlier: bool,
) -> String {
    use crate::run::engine::attempt::gate;
    let mut notes = Vec::new();
    if gated.is_some() {
        notes.push("replayed onto a new base".to_string());
    }
    let quoted = |names: Vec<&str>| -> String {
        let q: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        join_words(&q)
    };
    if gated == Some(true) {
        let own = !gate::rechecks_of(task).is_empty();
        match (own, earlier) {
            (true, _) => notes.push("its checks run again first".into()),
            (false, true) => {
                notes.push("the checks of tasks merged before it run on it first".into())
            }
            _ => {}
        }
        let kept: Vec<&str> = gate::checks_of(task)
            .iter()
            .filter(|c| !c.recheck)
            .filter_map(|c| task.gates.iter().find(|g| g.name == c.label))
            .filter(|g| entry.gates.contains_key(&g.key.to_hex()))
            .map(|g| g.name.as_str())
            .collect();
        if !kept.is_empty() {
            let (gates, verdicts) = if kept.len() == 1 {
                ("gate", "its verdict carries")
            } else {
                ("gates", "their verdicts carry")
            };
            notes.push(format!(
                "agent {gates} {} not run again: {verdicts} over",
                quoted(kept)
            ));
        }
    }
    let unchecked: Vec<&str> = entry
        .unchecked(task)
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    if !unchecked.is_empty() {
        let (gates, run) = if unchecked.len() == 1 {
            ("gate", "runs")
        } else {
            ("gates", "run")
        };
        notes.push(format!(
            "{gates} {} {run} on its cached result first",
            quoted(unchecked)
        ));
    }
    if notes.is_empty() {
        "cached".into()
    } else {
        format!("cached ({})", notes.join("; "))
    }
}

/// The dry run's report: one `task: cached|run [(why)]` line per task in
/// topological order (with the gates `--skip-gate` took off it, `skip`;
/// `given_skipped` says which of the plan's tasks had them), then a total
/// line. `store` is `None` with
/// `--no-cache`; `base` is the commit the run would start from; `around`
/// the files `loop.copy` brings and the tasks' answers (part of the keys);
/// `growth` compiles plan fragments as the run does.
///
/// The plan grows as the run's would: a task with `expands` that would be
/// replayed has its recorded fragment judged with the plan as grown so
/// far, in the order the run would replay them; one that checks is spliced
/// in (and the run simulated again on the grown plan), one that does not
/// makes its task run (`cache entry not used: …`), as in the run.
#[allow(clippy::too_many_arguments)]
pub fn report(
    plan: &Plan,
    (forced, skip, given_skipped): (&[String], &[String], &crate::plan::SkippedGates),
    memory: Memory<'_>,
    around: &cache::Surroundings,
    git: &Git,
    store: Option<&Store>,
    base: &str,
    mut growth: Growth,
) -> String {
    let mut skipped: HashMap<String, Vec<String>> = given_skipped.iter().cloned().collect();
    let mut grown = plan.clone();
    let mut rejected = HashMap::new();
    let mut judged = HashSet::new();
    let lines = loop {
        let (lines, replayed) = simulate(
            &grown,
            (forced, memory),
            around,
            git,
            store,
            base,
            &rejected,
        );
        let next = replayed
            .into_iter()
            .find(|(i, _)| !judged.contains(&grown.tasks[*i].name));
        let Some((i, commit)) = next else {
            break lines;
        };
        let name = grown.tasks[i].name.clone();
        judged.insert(name.clone());
        match growth.judge(git, &grown, i, &commit, None) {
            Some(Ok(accepted)) => {
                grown = growth.splice(&grown, accepted).0;
                skipped.extend(grown.skip_gates(skip));
            }
            Some(Err(why)) => {
                rejected.insert(name, why.reason);
            }
            None => {}
        }
    };
    let plan = &grown;
    let mut lines = lines;

    unknown_fragments(plan, &mut lines);
    let dead = held_back(plan, &mut lines);
    let now = crate::run::engine::agent::limits::now_epoch();
    for (task, line) in plan.tasks.iter().zip(lines.iter_mut()) {
        *line = memory::with_wait(memory, &task.name, std::mem::take(line), now);
    }
    let mut out = String::new();
    let mut cached = 0;
    for (task, line) in plan.tasks.iter().zip(&lines) {
        if line.starts_with("cached") {
            cached += 1;
        }
        // A line names files (inputs, copied files, conflicts) and quotes
        // errors: shown with hidden characters escaped, as every line is.
        let line = with_verify(task, &with_skipped(task, line, &skipped));
        let line = crate::visible::escape(&line, &[]);
        out.push_str(&format!("{}: {line}\n", task.name));
    }
    spec_lines(plan, &dead, &mut out);
    let held = dead.iter().filter(|&&d| d).count();
    // Out of attempts under their key, and the tasks that depend on them.
    let not_run = lines
        .iter()
        .zip(&dead)
        .filter(|(l, d)| !**d && (l.starts_with(NOT_RUN) || l.starts_with("skipped")))
        .count();
    out.push_str(&format!(
        "dry run of plan {}: {cached} cached, {} to run{}{}; nothing was started\n",
        crate::visible::escape(&plan.name, &[]),
        plan.tasks.len() - cached - held - not_run,
        if held > 0 {
            format!(", {held} held back")
        } else {
            String::new()
        },
        if not_run > 0 {
            format!(", {not_run} not run")
        } else {
            String::new()
        }
    ));
    out
}

/// One simulation of the run of `plan` (see [`report`]): each task's line,
/// and the tasks with `expands` that would be replayed, in order, with the
/// commit of each one's recorded fragment.
fn simulate(
    plan: &Plan,
    (forced, memory): (&[String], Memory<'_>),
    around: &cache::Surroundings,
    git: &Git,
    store: Option<&Store>,
    base: &str,
    rejected: &HashMap<String, String>,
) -> (Vec<String>, Vec<(usize, String)>) {
    let n = plan.tasks.len();
    // `--no-cache`: nothing is replayed, but failures remembered under a
    // task's key still keep it from running, as in the run.
    let empty;
    let (store, disabled) = match store {
        Some(store) => (store, false),
        None => {
            empty = Store::default();
            (&empty, true)
        }
    };
    let mut dependents = vec![Vec::new(); n];
    let mut pending = vec![0; n];
    for (i, t) in plan.tasks.iter().enumerate() {
        pending[i] = t.dependencies.len();
        for &d in &t.dependencies {
            dependents[d].push(i);
        }
    }
    let ready: BTreeSet<usize> = (0..n).filter(|&i| pending[i] == 0).collect();
    let mut sim = Sim {
        plan,
        git,
        store,
        forced: forced.iter().map(String::as_str).collect(),
        around,
        head: base.to_string(),
        exact: true,
        written: HashSet::new(),
        results: vec![None; n],
        lister: cache::FileLister::default(),
        lines: vec![None; n],
        pending,
        dependents,
        unchecked: BTreeSet::new(),
        head_bound: Vec::new(),
        on_parent: HashMap::new(),
        ready,
        rejected,
        replayed: Vec::new(),
        replayed_checks: false,
        ran_checks: vec![false; n],
        memory,
        moved: vec![false; plan.pipeline.as_ref().map_or(0, |p| p.specs.len())],
    };
    sim.unchecked = sim
        .ready
        .iter()
        .copied()
        .filter(|&i| !sim.forced(i))
        .collect();
    // In the order the scheduler goes: fast-forwarding hits first, then the
    // first ready task in source order.
    loop {
        sim.fast_forwards();
        let Some(&i) = sim.ready.first() else {
            break;
        };
        let line = sim.decide(i);
        sim.settle(i, line);
    }
    let lines = sim
        .lines
        .into_iter()
        .map(Option::unwrap_or_default)
        .map(|line| if disabled { cache_disabled(line) } else { line })
        .collect();
    (lines, sim.replayed)
}
