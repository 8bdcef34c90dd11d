//! The checked model: what a plan file defines, with every value decoded
//! and every name resolved as far as it goes (docs/language.md).
//!
//! The checker (`check`) produces a [`Model`] from the syntax tree; the plan
//! phase (`plan`) turns it into a plan; the language server reads it for
//! hovers. It holds no behaviour beyond the plan-file words of its enums and
//! the field tables, so both phases can depend on it without depending on
//! each other.

mod on_fail;
use crate::ast::TaskName;
use crate::span::Span;
pub use on_fail::OnFail;
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
    /// `answerer`: the agent a `needs_human` question goes to first.
    pub answerer: Option<Ref>,
}

/// A glob pattern of a `copy` or `link` list, or a path of a `context`
/// list, with where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPattern {
    /// The glob, relative to the repository root.
    pub pattern: String,
    /// The string literal in the plan.
    pub span: Span,
}

/// Agent attempts a run may start when no budget bounds `iterations`,
/// `time` or `cost`: REEL's default of 20 iterations (docs/language.md
/// `budget`; W0003 says so).
pub const DEFAULT_ITERATIONS: u32 = 20;

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
    /// `answerer`: the agent a `needs_human` question goes to first.
    pub answerer: Option<Ref>,
    /// `context`: files every task's prompt carries (valid paths).
    pub context: Vec<PathPattern>,
    /// `inputs` (valid globs): files part of every task's cache key.
    pub inputs: Vec<String>,
    /// `verify`: whether tasks that set none run their `accept` on their
    /// starting commit before any agent (docs/running.md, "Already
    /// satisfied: `verify`").
    pub verify: Option<bool>,
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
    /// `idle`: how long the agent may print nothing before its attempt is
    /// stopped as stalled.
    pub idle: Option<Duration>,
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
    /// `recheck`: whether an agent gate runs again on its task's merge.
    pub recheck: Recheck,
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
    /// `on_fail` (`retry` or `replan`): what spent attempts lead to.
    pub on_fail: Option<OnFail>,
    /// `replans`: how many times the task's fragment may be re-planned.
    pub replans: Option<u32>,
    /// `answerer`: the agent a `needs_human` question goes to first.
    pub answerer: Option<Ref>,
    /// `context` (valid paths): files the task's prompt carries, after
    /// those of `defaults.context`.
    pub context: Vec<PathPattern>,
    /// `verify`: run `accept` on the task's starting commit first; a pass
    /// there passes the task with no agent and no change.
    pub verify: Option<bool>,
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
        "answerer",
    ];
    /// `budget { … }`
    pub const BUDGET: &[&str] = &["iterations", "time", "cost", "failures", "wait"];
    /// `agent NAME { … }`
    pub const AGENT: &[&str] = &[
        "run", "output", "timeout", "idle", "cost", "env", "fallback", "executor",
    ];
    /// `output = { … }`: where a JSON agent's output says what
    /// ([`super::OutputFields`]).
    pub const OUTPUT: &[&str] = &[
        "summary",
        "cost",
        "error",
        "limit",
        "session",
        "input_tokens",
        "output_tokens",
        "activity",
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
        "recheck",
        "executor",
    ];
    /// `defaults { … }`
    pub const DEFAULTS: &[&str] = &[
        "agent", "gates", "attempts", "timeout", "env", "executor", "resolver", "protect",
        "verify", "context", "inputs", "answerer",
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
        "context",
        "verify",
        "on_fail",
        "replans",
        "answerer",
    ];
}

/// The words a task's `changes` field takes: `required` (the default: an
/// attempt that changes nothing fails) and `optional`.
pub const CHANGES_WORDS: &[&str] = &["required", "optional"];

/// How agent output is read (docs/language.md `agent.output`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OutputFormat {
    /// Free text; only the handoff file is read.
    Text,
    /// Claude Code's `--output-format json` result on stdout (cost, summary).
    ClaudeJson,
    /// `codex exec --json` events on stdout (summary, tokens, failed turns).
    CodexJson,
    /// Gemini CLI's `-o json` object or `-o stream-json` events.
    GeminiJson,
    /// `opencode run --format json` events.
    OpencodeJson,
    /// Cursor's `cursor-agent -p --output-format stream-json` (or `json`).
    CursorJson,
    /// Amp's `--stream-json` (Claude Code's message shapes).
    AmpJson,
    /// GitHub Copilot CLI's `--output-format json` events.
    CopilotJson,
    /// Factory's `droid exec --output-format json` (or `debug`).
    DroidJson,
    /// `output = { … }`: the plan says where the output's facts are.
    Fields(std::sync::Arc<OutputFields>),
}

impl OutputFormat {
    /// The words plan files use, in the order messages list them.
    pub const WORDS: &[&str] = &[
        "text",
        "claude-json",
        "codex-json",
        "gemini-json",
        "opencode-json",
        "cursor-json",
        "amp-json",
        "copilot-json",
        "droid-json",
    ];

    /// The format a plan-file word names.
    pub fn from_word(word: &str) -> Option<OutputFormat> {
        Some(match word {
            "text" => OutputFormat::Text,
            "claude-json" => OutputFormat::ClaudeJson,
            "codex-json" => OutputFormat::CodexJson,
            "gemini-json" => OutputFormat::GeminiJson,
            "opencode-json" => OutputFormat::OpencodeJson,
            "cursor-json" => OutputFormat::CursorJson,
            "amp-json" => OutputFormat::AmpJson,
            "copilot-json" => OutputFormat::CopilotJson,
            "droid-json" => OutputFormat::DroidJson,
            _ => return None,
        })
    }

    /// The word used in plan files (`fields` for `output = { … }`).
    pub fn as_str(&self) -> &'static str {
        match self {
            OutputFormat::Text => "text",
            OutputFormat::ClaudeJson => "claude-json",
            OutputFormat::CodexJson => "codex-json",
            OutputFormat::GeminiJson => "gemini-json",
            OutputFormat::OpencodeJson => "opencode-json",
            OutputFormat::CursorJson => "cursor-json",
            OutputFormat::AmpJson => "amp-json",
            OutputFormat::CopilotJson => "copilot-json",
            OutputFormat::DroidJson => "droid-json",
            OutputFormat::Fields(_) => "fields",
        }
    }

    /// What the cache key says of it: the word, and for `output = { … }`
    /// every path it names.
    pub fn key_text(&self) -> String {
        match self {
            OutputFormat::Fields(f) => {
                let paths: Vec<String> =
                    f.named().map(|(k, p)| format!("{k}={}", p.text)).collect();
                format!("fields {{{}}}", paths.join(" "))
            }
            other => other.as_str().to_string(),
        }
    }

    /// Whether loopc reads a cost from this output (Claude Code, OpenCode,
    /// and `output = { cost = … }`).
    pub fn reads_cost(&self) -> bool {
        match self {
            OutputFormat::ClaudeJson | OutputFormat::OpencodeJson => true,
            OutputFormat::Fields(f) => f.cost.is_some(),
            _ => false,
        }
    }
}

/// `output = { KEY = "PATH" … }`: where in each JSON message of an agent's
/// output (one object, an array of them, or one a line) its facts are
/// ([`crate::jsonpath`]). A key not set is not read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct OutputFields {
    /// The summary (text; the last one found).
    pub summary: Option<crate::jsonpath::JsonPath>,
    /// The cost in US dollars (a number; the last one found).
    pub cost: Option<crate::jsonpath::JsonPath>,
    /// An error: text (or `true`) found here fails the attempt.
    pub error: Option<crate::jsonpath::JsonPath>,
    /// A usage limit: text found here sets the attempt aside until it resets.
    pub limit: Option<crate::jsonpath::JsonPath>,
    /// The session id.
    pub session: Option<crate::jsonpath::JsonPath>,
    /// Input tokens (the last count found).
    pub input_tokens: Option<crate::jsonpath::JsonPath>,
    /// Output tokens (the last count found).
    pub output_tokens: Option<crate::jsonpath::JsonPath>,
    /// What the agent is doing now, for the terminal line.
    pub activity: Option<crate::jsonpath::JsonPath>,
}

impl OutputFields {
    /// The slot of key `key` (one of [`fields::OUTPUT`]).
    pub fn slot(&mut self, key: &str) -> Option<&mut Option<crate::jsonpath::JsonPath>> {
        Some(match key {
            "summary" => &mut self.summary,
            "cost" => &mut self.cost,
            "error" => &mut self.error,
            "limit" => &mut self.limit,
            "session" => &mut self.session,
            "input_tokens" => &mut self.input_tokens,
            "output_tokens" => &mut self.output_tokens,
            "activity" => &mut self.activity,
            _ => return None,
        })
    }

    /// The keys that are set, with their paths, in [`fields::OUTPUT`] order.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, &crate::jsonpath::JsonPath)> {
        [
            ("summary", &self.summary),
            ("cost", &self.cost),
            ("error", &self.error),
            ("limit", &self.limit),
            ("session", &self.session),
            ("input_tokens", &self.input_tokens),
            ("output_tokens", &self.output_tokens),
            ("activity", &self.activity),
        ]
        .into_iter()
        .filter_map(|(k, p)| p.as_ref().map(|p| (k, p)))
    }
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

/// When an agent gate judges a task's work (`recheck`, docs/cache.md
/// "Gates and their verdicts"): once, on the attempt's change (`attempt`,
/// the default), or also again on the merge result of a merge that is not
/// a fast-forward and on a replay onto a new base (`merge`). Command gates
/// always run again on those.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Recheck {
    /// The verdict on the attempt's change carries over (default).
    #[default]
    Attempt,
    /// The gate runs again on merge results and replays.
    Merge,
}

impl Recheck {
    /// The words plan files use, in the order messages list them.
    pub const WORDS: &[&str] = &["attempt", "merge"];

    /// The behaviour a plan-file word names.
    pub fn from_word(word: &str) -> Option<Recheck> {
        match word {
            "attempt" => Some(Recheck::Attempt),
            "merge" => Some(Recheck::Merge),
            _ => None,
        }
    }

    /// The word used in plan files.
    pub fn as_str(self) -> &'static str {
        match self {
            Recheck::Attempt => "attempt",
            Recheck::Merge => "merge",
        }
    }
}
