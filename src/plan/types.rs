//! The plan's types: tasks with every default resolved, shared agents and
//! gates, settings and budget (spec §3 "Resolution", §7 `graph --format json`).

use super::key::{Key, KeyParts};
use crate::model::{OnFail, OutputFormat};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Default per-attempt timeout and gate timeout (spec §3): 30 minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default attempts per task (spec §3).
pub const DEFAULT_ATTEMPTS: u32 = 3;
/// Default consecutive failed attempts that stop a run (spec §3 `budget.failures`).
pub const DEFAULT_FAILURES: u32 = 3;

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
}

impl Plan {
    /// The index of the task called `name`.
    pub fn task_index(&self, name: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.name == name)
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

/// The `loop` item's settings (spec §3).
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
}

/// The run's budget (spec §3 `budget`). `None` means unbounded.
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
    /// Glob patterns relative to the repository root.
    pub inputs: Vec<String>,
    /// Environment: agent, then defaults, then task (later wins).
    pub env: BTreeMap<String, String>,
    /// Environment of the defaults, then the task, without the agent's: a
    /// fallback agent's environment is merged under it.
    pub own_env: BTreeMap<String, String>,
    /// Indices (into [`Plan::tasks`]) of direct dependencies, ascending.
    pub dependencies: Vec<usize>,
    /// The definition key (spec §6 without the `inputs` part).
    pub key: Key,
    /// Digests of the key's components, so a changed key can say what changed.
    pub key_parts: KeyParts,
    /// The task's layer: 0 without dependencies, else one more than its
    /// deepest dependency.
    pub layer: usize,
}

/// What does a task's work.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskKind {
    /// A fresh agent session given `prompt` on stdin.
    Agent {
        /// The task's prompt.
        prompt: String,
        /// The resolved agent (shared with the other tasks using it).
        agent: Arc<Agent>,
    },
    /// A plain shell command (`sh -c run`).
    Command {
        /// The command.
        run: String,
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
    /// Per-attempt cost cap in micro-dollars (exported as `LOOP_COST_CAP_USD`).
    pub cost: Option<u64>,
    /// The agent's own environment.
    pub env: BTreeMap<String, String>,
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
