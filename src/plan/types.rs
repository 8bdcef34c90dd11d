//! The plan's types: tasks with every default resolved, shared agents and
//! gates, settings and budget (docs/language.md "Resolution", docs/plan-json.md).

use super::digest::{Key, KeyParts};
use super::stages::Pipeline;
use crate::model::{OnFail, OutputFormat};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Default per-attempt timeout and gate timeout (docs/language.md): 30 minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default attempts per task (docs/language.md).
pub const DEFAULT_ATTEMPTS: u32 = 3;
/// Default of a producing task's `replans` (docs/language.md
/// "Re-planning"): how many times its fragment may be re-planned.
pub const DEFAULT_REPLANS: u32 = 2;
/// Default of `loop.expand_depth` (docs/language.md): how deep plan
/// fragments may nest.
pub const DEFAULT_EXPAND_DEPTH: u32 = 3;
/// Default consecutive failed attempts that stop a run (docs/language.md `budget.failures`).
pub const DEFAULT_FAILURES: u32 = 3;
pub use crate::model::DEFAULT_ITERATIONS;

/// Per task that had some, the names of the gates `loopc run --skip-gate`
/// took off it ([`Plan::skip_gates`]), in plan order.
pub type SkippedGates = Vec<(String, Vec<String>)>;

/// A validated, compiled plan.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The loop's name: `loop "name"`, else the plan file's stem.
    pub name: String,
    /// Settings of the `loop` item, defaults applied.
    pub settings: Settings,
    /// The run's budget, defaults applied.
    pub budget: Budget,
    /// Tasks in topological order (dependencies before dependents; ties in
    /// source order). `tasks[i]` is node `NodeIndex::new(i)` of [`Plan::graph`].
    pub tasks: Vec<Task>,
    /// One node per task (weight: index into `tasks`), an edge from each
    /// dependency to its dependent.
    pub graph: DiGraph<usize, ()>,
    /// For a REEL spec tree: which spec of which stage holds which tasks
    /// (`docs/reel.md`, "Spec trees"); `None` for any other plan.
    pub pipeline: Option<Pipeline>,
}

impl Plan {
    /// The index of the task called `name`.
    pub fn task_index(&self, name: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.name == name)
    }

    /// Takes the gates named in `names` off every task (`loopc run
    /// --skip-gate`, docs/cache.md): they run nowhere in this run, and
    /// results are recorded as not checked by them. Returns, per task that
    /// had one of them, its name and the names taken off, in plan order.
    pub fn skip_gates(&mut self, names: &[String]) -> SkippedGates {
        let mut out = Vec::new();
        if names.is_empty() {
            return out;
        }
        for t in &mut self.tasks {
            let skipped: Vec<String> = t
                .gates
                .iter()
                .filter(|g| names.contains(&g.name))
                .map(|g| g.name.clone())
                .collect();
            if !skipped.is_empty() {
                t.gates.retain(|g| !names.contains(&g.name));
                out.push((t.name.clone(), skipped));
            }
        }
        out
    }

    /// Sets `verify` on every task (`loopc run --verify`, docs/running.md
    /// "Already satisfied: `verify`").
    pub fn verify_all(&mut self) {
        for t in &mut self.tasks {
            t.verify = true;
        }
    }

    /// Indices of the tasks that depend directly on task `index`, ascending.
    pub fn dependents(&self, index: usize) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .graph
            .neighbors_directed(NodeIndex::new(index), petgraph::Direction::Outgoing)
            .map(|n| n.index())
            .collect();
        out.sort_unstable();
        out
    }
}

/// The `loop` item's settings (docs/language.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Branch to start from; `None` means the branch checked out.
    pub base: Option<String>,
    /// Integration branch; default `loop/<name>`.
    pub branch: String,
    /// Tasks at once (≥ 1); the CLI's `-j` overrides it.
    pub parallel: u32,
    /// Command run in every new worktree before the agent.
    pub setup: Option<String>,
    /// Globs of files in the main checkout copied into every new worktree
    /// (their content is part of every task's cache key).
    pub copy: Vec<crate::model::PathPattern>,
    /// Globs of files in the main checkout symlinked into every new worktree.
    pub link: Vec<crate::model::PathPattern>,
    /// Command run once when the run ends, the run's state as JSON on stdin.
    pub notify: Option<String>,
    /// How deep plan fragments may nest (≥ 1): a task of a fragment at this
    /// depth may not expand (`loop.expand_depth`, default 3).
    pub expand_depth: u32,
    /// `loop.stages`: the stages of a REEL spec tree a run works (`None`:
    /// not given; the default is [`crate::origin::DEFAULT_STAGES`]).
    pub stages: Option<Vec<String>>,
    /// The executor that launches `setup` (none without `setup`):
    /// `loop.executor`, else `defaults.executor`, else none (run directly).
    pub setup_executor: Option<Arc<Executor>>,
}

/// A resolved executor: how loopc launches a command. A command `CMD` run
/// through it becomes `RUN sh -c 'CMD'` (see [`Executor::wrap`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executor {
    /// The executor's name.
    pub name: String,
    /// The launcher prefix (`bwrap … --`, `srun …`); a shell string, with
    /// the `LOOP_*` variables set when it is expanded.
    pub run: String,
}

impl Executor {
    /// The shell string that runs `command` through `executor`, if any:
    /// `RUN sh -c 'COMMAND'`, `COMMAND` single-quoted so that it reaches
    /// the launcher as one argument, never re-split or expanded by the
    /// outer shell. Without an executor, `command` itself.
    pub fn wrap(executor: Option<&Executor>, command: &str) -> String {
        match executor {
            None => command.to_string(),
            Some(e) => format!("{} sh -c {}", e.run.trim_end(), shell_quote(command)),
        }
    }
}

/// `text` as one single-quoted POSIX shell word (`'` becomes `'\''`).
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The run's budget (docs/language.md `budget`). `None` means unbounded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// Agent attempts across the whole run.
    pub iterations: Option<u32>,
    /// Wall clock for the whole run.
    pub time: Option<Duration>,
    /// Sum of what agents report, in micro-dollars.
    pub cost: Option<u64>,
    /// Consecutive failed attempts that stop the run (circuit breaker).
    pub failures: u32,
    /// The most time the run may spend waiting for agents' usage or rate
    /// limits to reset, in all.
    pub wait: Option<Duration>,
}

/// One task with every default resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// The task's name (valid as a git branch component and a directory name).
    pub name: String,
    /// The title, if one was written.
    pub title: Option<String>,
    /// Agent task or command task.
    pub kind: TaskKind,
    /// The task's own acceptance check, run before its gates.
    pub accept: Option<String>,
    /// Gates in order: the task's `gates`, else `defaults.gates`, else none
    /// (shared with the other tasks using them).
    pub gates: Vec<Arc<Gate>>,
    /// Attempts allowed (≥ 1).
    pub attempts: u32,
    /// Per-attempt timeout: task, else defaults, else the agent's, else 30m.
    pub timeout: Duration,
    /// Glob patterns relative to the repository root: `defaults.inputs`,
    /// then the task's own (each once).
    pub inputs: Vec<String>,
    /// `context`: files relative to the repository root whose content at
    /// the attempt's starting commit each prompt carries, before the task's
    /// text: `defaults.context`, then the task's own (each once). Part of
    /// the run-time key, as `inputs` are.
    pub context: Vec<String>,
    /// `changes = optional`: an attempt that changes nothing may pass.
    pub changes_optional: bool,
    /// `verify`: the task's, else `defaults.verify`, else false (`loopc
    /// run --verify` sets it on every task): its `accept` runs on its
    /// starting commit before any agent, and a pass there passes the task
    /// with no change ("already satisfied"). Not part of the cache key.
    pub verify: bool,
    /// Globs of paths the task's attempts may not change: `loop.protect`,
    /// then `defaults.protect`, then the task's own `protect` (each once).
    pub protect: Vec<String>,
    /// `may_change`: globs of protected paths this task may change.
    pub may_change: Vec<String>,
    /// `expands`: the plan fragment the task writes (a path relative to
    /// the repository's top), spliced into the plan when it passes.
    pub expands: Option<String>,
    /// For a task a plan fragment added ([`crate::expand`]): the task that
    /// wrote the fragment. `None` for the plan's own tasks.
    pub expanded_from: Option<String>,
    /// For a task with `expands`: whether the plan was grown by its
    /// fragment ([`crate::expand`]), even one that added no task.
    pub expanded: bool,
    /// Environment: agent, then defaults, then task (later wins).
    pub env: BTreeMap<String, String>,
    /// The executor of the task's own commands (a command task's `run`,
    /// `accept`): `defaults.executor`. An agent task's agent runs through
    /// the agent's executor ([`Agent::executor`]); see [`Task::work_executor`].
    pub executor: Option<Arc<Executor>>,
    /// Environment of the defaults, then the task, without the agent's: a
    /// fallback agent's environment is merged under it.
    pub own_env: BTreeMap<String, String>,
    /// The agent that resolves a conflict of this task's merge onto the
    /// integration branch: the task's `resolver`, else `defaults.resolver`,
    /// else `loop.resolver`, else none (a conflict fails the attempt).
    /// Not part of the cache key ([`super::key`]).
    pub resolver: Option<Arc<Agent>>,
    /// The task's own `on_fail` (`retry` or `replan`), when written: what
    /// happens once its attempts are spent. A fragment's task without one
    /// takes its producer's (docs/language.md "Re-planning").
    pub on_fail: Option<OnFail>,
    /// `replans`: for a task with `expands`, how many times its fragment
    /// may be re-planned in a run ([`DEFAULT_REPLANS`]).
    pub replans: u32,
    /// The agent a `needs_human` question of this task goes to first: the
    /// task's `answerer`, else `defaults.answerer`, else `loop.answerer`,
    /// else none (docs/language.md "Answers without a person"). Not part
    /// of the cache key: the answer it gives is.
    pub answerer: Option<Arc<Agent>>,
    /// Indices (into [`Plan::tasks`]) of direct dependencies, ascending.
    pub dependencies: Vec<usize>,
    /// The definition key (docs/cache.md without the `inputs` part).
    pub key: Key,
    /// Digests of the key's components, so a changed key can say what changed.
    pub key_parts: KeyParts,
    /// The task's layer: 0 without dependencies, else one more than its
    /// deepest dependency.
    pub layer: usize,
}

impl Task {
    /// Whether the task's run-time key reads files of the base commit
    /// (`inputs` or `context`).
    pub fn reads_files(&self) -> bool {
        !self.inputs.is_empty() || !self.context.is_empty()
    }

    /// The executor that launches the task's work: the agent's for an agent
    /// task, the task's own for a command task.
    pub fn work_executor(&self) -> Option<&Arc<Executor>> {
        match &self.kind {
            TaskKind::Agent { agent, .. } => agent.executor.as_ref(),
            TaskKind::Command { .. } => self.executor.as_ref(),
        }
    }
}

/// What does a task's work.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskKind {
    /// A fresh agent session given `prompt` on stdin.
    Agent {
        /// The task's prompt.
        prompt: Arc<str>,
        /// The resolved agent (shared with the other tasks using it).
        agent: Arc<Agent>,
    },
    /// A plain shell command (`sh -c run`).
    Command {
        /// The command.
        run: Arc<str>,
    },
}

/// A resolved agent definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Agent {
    /// The agent's name.
    pub name: String,
    /// The shell command that starts it.
    pub run: String,
    /// How its stdout is read.
    pub output: OutputFormat,
    /// The agent's own per-attempt timeout, if set.
    pub timeout: Option<Duration>,
    /// `idle`: an attempt (or agent gate) whose agent prints nothing for
    /// this long is stopped as stalled.
    pub idle: Option<Duration>,
    /// Per-attempt cost cap in micro-dollars (exported as `LOOP_COST_CAP_USD`).
    pub cost: Option<u64>,
    /// The agent's own environment.
    pub env: BTreeMap<String, String>,
    /// The executor that launches it: its own `executor`, else
    /// `defaults.executor`, else none.
    pub executor: Option<Arc<Executor>>,
    /// Who takes an attempt while this agent is usage or rate limited, in
    /// turn: its `fallback`, that agent's `fallback`, and so on (each
    /// without fallbacks of its own; empty when it names none).
    pub fallbacks: Vec<Arc<Agent>>,
}

/// A resolved gate.
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    /// The gate's name.
    pub name: String,
    /// Command or agent-judged.
    pub kind: GateKind,
    /// Timeout of one gate run (default 30m).
    pub timeout: Duration,
    /// What a rejection does.
    pub on_fail: OnFail,
    /// What a change of tracked files by a command gate does (an agent
    /// gate's changes are always discarded, its verdict standing).
    pub on_change: crate::model::OnChange,
    /// `recheck`: whether an agent gate runs again on merge results and
    /// replays (a command gate always does).
    pub recheck: crate::model::Recheck,
    /// The digest of what the gate judges with (docs/cache.md, "Gates and
    /// their verdicts"): its command or agent and prompt, its executor's
    /// `run`, a command gate's `on_change = ignore`; not its name, timeout,
    /// `on_fail` or `recheck`. Verdicts are recorded under it.
    pub key: super::digest::Key,
    /// The executor that launches it: its own `executor`, else (agent
    /// gates) the agent's, else `defaults.executor`, else none.
    pub executor: Option<Arc<Executor>>,
}

/// What a gate runs.
#[derive(Clone, Debug, PartialEq)]
pub enum GateKind {
    /// Passes on exit status 0.
    Command {
        /// The command (`sh -c`).
        run: String,
    },
    /// An agent run read-only on the diff; passes on a `completed` handoff.
    Agent {
        /// The resolved agent (shared).
        agent: Arc<Agent>,
        /// The review prompt.
        prompt: String,
    },
}
