//! The checked model: what a plan file defines, with every value decoded
//! and every name resolved as far as it goes (docs/language.md).
//!
//! The checker (`check`) produces a [`Model`] from the syntax tree; the plan
//! phase (`plan`) turns it into a plan; the language server reads it for
//! hovers. It holds no behaviour beyond the plan-file words of its enums and
//! the field tables, so both phases can depend on it without depending on
//! each other.

use crate::ast::TaskName;
use crate::span::Span;
use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::Duration;

/// A reference by name (to an agent or a gate) with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ref {
    /// The referenced name.
    pub name: String,
    /// The span of the reference.
    pub span: Span,
}

/// The checked content of a file: every definition with its values decoded.
///
/// Fields that were missing or invalid are `None`/empty; their diagnostics
/// were reported. The plan phase only builds a plan from a model
/// without errors, but computes graph diagnostics on any model.
#[derive(Clone, Debug, Default)]
pub struct Model {
    /// `loop` settings.
    pub settings: LoopDef,
    /// `budget` values, and the span of the `budget` item if there was one.
    pub budget: BudgetDef,
    /// `defaults` values.
    pub defaults: DefaultsDef,
    /// Agents, first definition of each name only.
    pub agents: Vec<AgentDef>,
    /// Gates, first definition of each name only.
    pub gates: Vec<GateDef>,
    /// Executors, first definition of each name only.
    pub executors: Vec<ExecutorDef>,
    /// Tasks in source order, first definition of each name only.
    pub tasks: Vec<TaskDef>,
    /// `tasks` by name, built by the checker as it reads them; whoever
    /// changes `tasks` keeps it in step.
    pub task_index: TaskIndex,
    /// For each of `tasks`, the positions in `tasks` of its dependencies
    /// that name a task, with the span of each reference, in source order:
    /// resolved once, by the checker's reference checks, for the plan's
    /// graph.
    pub dependency_positions: Vec<Vec<(usize, Span)>>,
}

/// Tasks by name: the position in [`Model::tasks`] of each name's (first)
/// definition.
///
/// One table of 4-byte positions hashed by the tasks' own names, built once
/// by the checker (which needs it for E0004) and read by the reference
/// checks and the plan's graph: a large plan hashes its names once and
/// holds no second copy of them.
#[derive(Clone, Default)]
pub struct TaskIndex {
    table: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl TaskIndex {
    /// An empty index with room for `tasks` names.
    pub fn with_capacity(tasks: usize) -> TaskIndex {
        TaskIndex {
            table: hashbrown::HashTable::with_capacity(tasks),
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// The position in `tasks` of the task called `name`.
    pub fn get(&self, tasks: &[TaskDef], name: &str) -> Option<usize> {
        self.find(tasks, name, self.hash(name))
    }

    /// `name`'s hash, for [`TaskIndex::find`] and [`TaskIndex::insert_new`].
    pub fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    /// [`TaskIndex::get`] with `name`'s [`TaskIndex::hash`] computed.
    pub fn find(&self, tasks: &[TaskDef], name: &str, hash: u64) -> Option<usize> {
        let found = self
            .table
            .find(hash, |&i| tasks[i as usize].name.text == name)?;
        Some(*found as usize)
    }

    /// Records the last of `tasks`, whose name hashes to `hash` and which
    /// [`TaskIndex::find`] did not find.
    pub fn insert_new(&mut self, tasks: &[TaskDef], hash: u64) {
        let Some(last) = tasks.len().checked_sub(1) else {
            return;
        };
        let hasher = &self.hasher;
        // Positions fit in u32: four billion tasks would not fit in memory.
        self.table.insert_unique(hash, last as u32, |&i| {
            hasher.hash_one(tasks[i as usize].name.text.as_str())
        });
    }

    /// How many names are recorded.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no name is recorded.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

impl std::fmt::Debug for TaskIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TaskIndex({} names)", self.table.len())
    }
}

/// The `loop` item.
#[derive(Clone, Debug, Default)]
pub struct LoopDef {
    /// `loop "name"`.
    pub name: Option<String>,
    /// `base`.
    pub base: Option<String>,
    /// `branch`.
    pub branch: Option<String>,
    /// `parallel` (≥ 1).
    pub parallel: Option<u32>,
    /// `setup`.
    pub setup: Option<String>,
    /// `copy`: files of the main checkout copied into every new worktree.
    pub copy: Vec<PathPattern>,
    /// `link`: files of the main checkout symlinked into every new worktree.
    pub link: Vec<PathPattern>,
    /// `notify`: a command run once when the run ends.
    pub notify: Option<String>,
    /// `executor`: how `setup` is launched.
    pub executor: Option<Ref>,
    /// `expand_depth` (≥ 1): how deep plan fragments may nest.
    pub expand_depth: Option<u32>,
    /// `resolver`: the agent that resolves merge conflicts of tasks that
    /// name none (and of `defaults`, when it names none).
    pub resolver: Option<Ref>,
    /// `stages`: the stage directories of a REEL spec tree that `loopc
    /// run` works (each one of [`crate::origin::STAGES`]); `None` when not
    /// given.
    pub stages: Option<Vec<String>>,
    /// `protect`: globs of paths no task's attempt may change.
    pub protect: Vec<String>,
}

/// A glob pattern of a `copy` or `link` list, with where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPattern {
    /// The glob, relative to the repository root.
    pub pattern: String,
    /// The string literal in the plan.
    pub span: Span,
}

/// The `budget` item.
#[derive(Clone, Debug, Default)]
pub struct BudgetDef {
    /// Where the `budget` keyword is, if the item exists.
    pub span: Option<Span>,
    /// `iterations` (≥ 1).
    pub iterations: Option<u32>,
    /// `time` (> 0).
    pub time: Option<Duration>,
    /// `cost` in micro-dollars (> 0).
    pub cost: Option<u64>,
    /// `failures` (≥ 1).
    pub failures: Option<u32>,
    /// `wait` (> 0): the most time spent waiting for agents' usage limits.
    pub wait: Option<Duration>,
    /// Whether `iterations`, `time` or `cost` was written (even if invalid,
    /// so W0003 does not contradict the error about it).
    pub bounds_written: bool,
}

/// The `defaults` item.
#[derive(Clone, Debug, Default)]
pub struct DefaultsDef {
    /// `agent`.
    pub agent: Option<Ref>,
    /// `gates`.
    pub gates: Option<Vec<Ref>>,
    /// `attempts` (≥ 1).
    pub attempts: Option<u32>,
    /// `timeout` (> 0).
    pub timeout: Option<Duration>,
    /// `env`.
    pub env: BTreeMap<String, String>,
    /// `executor`: how commands without their own executor are launched.
    pub executor: Option<Ref>,
    /// `resolver`: the agent that resolves merge conflicts of tasks that
    /// name none.
    pub resolver: Option<Ref>,
    /// `protect`: globs of paths no task's attempt may change.
    pub protect: Vec<String>,
}

/// An `executor` item: how loopc launches a command.
#[derive(Clone, Debug)]
pub struct ExecutorDef {
    /// The executor's name and its span.
    pub name: Ref,
    /// `run` (required): the launcher prefix.
    pub run: Option<String>,
}

/// An `agent` item.
#[derive(Clone, Debug)]
pub struct AgentDef {
    /// The agent's name and its span.
    pub name: Ref,
    /// `run` (required).
    pub run: Option<String>,
    /// `output`.
    pub output: OutputFormat,
    /// `timeout`.
    pub timeout: Option<Duration>,
    /// `cost` cap in micro-dollars.
    pub cost: Option<u64>,
    /// `env`.
    pub env: BTreeMap<String, String>,
    /// `executor`.
    pub executor: Option<Ref>,
    /// `fallback`: the agent that takes an attempt while this one is
    /// usage or rate limited.
    pub fallback: Option<Ref>,
}

/// A `gate` item.
#[derive(Clone, Debug)]
pub struct GateDef {
    /// The gate's name and its span.
    pub name: Ref,
    /// What it runs.
    pub kind: GateDefKind,
    /// `timeout`.
    pub timeout: Option<Duration>,
    /// `on_fail`.
    pub on_fail: OnFail,
    /// `on_change`: what a change of tracked files by the gate does.
    pub on_change: OnChange,
    /// The `agent` reference, even when the gate is invalid (for E0005, W0001).
    pub agent_ref: Option<Ref>,
    /// `executor` (long form only).
    pub executor: Option<Ref>,
}

/// What a gate runs, before resolution.
#[derive(Clone, Debug)]
pub enum GateDefKind {
    /// `run = "…"` or the short form.
    Command(String),
    /// `agent = NAME` with `prompt`.
    Agent {
        /// The agent reference.
        agent: Ref,
        /// The prompt.
        prompt: String,
    },
    /// Invalid; reported.
    Invalid,
}

/// A task's work before resolution.
#[derive(Clone, Debug, PartialEq)]
pub enum Work {
    /// `prompt`: an agent task (the syntax tree's text, shared).
    Prompt(Arc<str>),
    /// `run`: a command task (shared as the prompt is).
    Run(Arc<str>),
    /// Missing or conflicting; reported.
    Invalid,
}

/// A `task` item.
#[derive(Clone, Debug)]
pub struct TaskDef {
    /// The task's name as written.
    pub name: TaskName,
    /// The title.
    pub title: Option<String>,
    /// Dependencies as written (unknown ones were reported).
    pub dependencies: Vec<TaskName>,
    /// Prompt or run.
    pub work: Work,
    /// `agent`.
    pub agent: Option<Ref>,
    /// `accept`.
    pub accept: Option<String>,
    /// `gates`.
    pub gates: Option<Vec<Ref>>,
    /// `attempts`.
    pub attempts: Option<u32>,
    /// `timeout`.
    pub timeout: Option<Duration>,
    /// `inputs` (valid globs).
    pub inputs: Vec<String>,
    /// `changes = optional`: an attempt may change nothing.
    pub changes_optional: bool,
    /// `expands`: the plan fragment the task writes (a valid path).
    pub expands: Option<String>,
    /// `env`.
    pub env: BTreeMap<String, String>,
    /// `resolver`: the agent that resolves a conflict of this task's merge.
    pub resolver: Option<Ref>,
    /// `protect` (valid globs): paths the task's attempts may not change.
    pub protect: Vec<String>,
    /// `may_change` (valid globs): protected paths the task may change.
    pub may_change: Vec<String>,
    /// The whole item.
    pub span: Span,
}

/// Fields each block takes, for E0002 and for completion in the editor.
pub mod fields {
    /// `loop { … }`
    pub const LOOP: &[&str] = &[
        "base",
        "branch",
        "parallel",
        "setup",
        "copy",
        "link",
        "notify",
        "executor",
        "expand_depth",
        "resolver",
        "stages",
        "protect",
    ];
    /// `budget { … }`
    pub const BUDGET: &[&str] = &["iterations", "time", "cost", "failures", "wait"];
    /// `agent NAME { … }`
    pub const AGENT: &[&str] = &[
        "run", "output", "timeout", "cost", "env", "fallback", "executor",
    ];
    /// `executor NAME { … }`
    pub const EXECUTOR: &[&str] = &["run"];
    /// `gate NAME { … }`
    pub const GATE: &[&str] = &[
        "run",
        "agent",
        "prompt",
        "timeout",
        "on_fail",
        "on_change",
        "executor",
    ];
    /// `defaults { … }`
    pub const DEFAULTS: &[&str] = &[
        "agent", "gates", "attempts", "timeout", "env", "executor", "resolver", "protect",
    ];
    /// `task NAME { … }`
    pub const TASK: &[&str] = &[
        "prompt",
        "run",
        "agent",
        "accept",
        "gates",
        "attempts",
        "timeout",
        "inputs",
        "changes",
        "env",
        "expands",
        "resolver",
        "protect",
        "may_change",
    ];
}

/// The words a task's `changes` field takes: `required` (the default: an
/// attempt that changes nothing fails) and `optional`.
pub const CHANGES_WORDS: &[&str] = &["required", "optional"];

/// How agent output is read (docs/language.md `agent.output`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutputFormat {
    /// Free text; only the handoff file is read.
    Text,
    /// Claude Code's `--output-format json` result on stdout (cost, summary).
    ClaudeJson,
    /// `codex exec --json` events on stdout (summary, tokens, failed turns).
    CodexJson,
}

impl OutputFormat {
    /// The words plan files use, in the order messages list them.
    pub const WORDS: &[&str] = &["text", "claude-json", "codex-json"];

    /// The format a plan-file word names.
    pub fn from_word(word: &str) -> Option<OutputFormat> {
        match word {
            "text" => Some(OutputFormat::Text),
            "claude-json" => Some(OutputFormat::ClaudeJson),
            "codex-json" => Some(OutputFormat::CodexJson),
            _ => None,
        }
    }

    /// The word used in plan files.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Text => "text",
            OutputFormat::ClaudeJson => "claude-json",
            OutputFormat::CodexJson => "codex-json",
        }
    }
}

/// What a gate does when it rejects (docs/language.md `on_fail`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnFail {
    /// Next attempt from a fresh worktree (default).
    Retry,
    /// The task is blocked.
    Block,
    /// The run stops.
    Fail,
}

/// What a command gate that changed tracked files does (`on_change`):
/// its changes are discarded either way (docs/running.md, "Checks an agent
/// cannot game").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OnChange {
    /// The attempt fails (default).
    #[default]
    Fail,
    /// The change is reported and discarded; the gate's verdict stands.
    Ignore,
}

impl OnChange {
    /// The words plan files use, in the order messages list them.
    pub const WORDS: &[&str] = &["fail", "ignore"];

    /// The behaviour a plan-file word names.
    pub fn from_word(word: &str) -> Option<OnChange> {
        match word {
            "fail" => Some(OnChange::Fail),
            "ignore" => Some(OnChange::Ignore),
            _ => None,
        }
    }

    /// The word used in plan files.
    pub fn as_str(self) -> &'static str {
        match self {
            OnChange::Fail => "fail",
            OnChange::Ignore => "ignore",
        }
    }
}

impl OnFail {
    /// The words plan files use, in the order messages list them.
    pub const WORDS: &[&str] = &["retry", "block", "fail"];

    /// The behaviour a plan-file word names.
    pub fn from_word(word: &str) -> Option<OnFail> {
        match word {
            "retry" => Some(OnFail::Retry),
            "block" => Some(OnFail::Block),
            "fail" => Some(OnFail::Fail),
            _ => None,
        }
    }

    /// The word used in plan files.
    pub fn as_str(self) -> &'static str {
        match self {
            OnFail::Retry => "retry",
            OnFail::Block => "block",
            OnFail::Fail => "fail",
        }
    }
}
