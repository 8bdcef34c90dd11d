//! The checker: syntax tree → [`Model`] and diagnostics (spec §3, §4).
//!
//! It resolves names and validates every block: unknown and duplicate fields
//! (E0002, E0003), duplicate definitions (E0004), unknown references (E0005),
//! value types (E0007), required and conflicting fields (E0008, E0010), ranges
//! (E0009), task names (E0011), agents of agent tasks (E0013), globs (E0014) and
//! the warnings W0001, W0003 and W0004. Graph checks (E0006, W0002) happen in
//! [`crate::plan`]. The model keeps going after errors so that every error of a
//! file is reported in one run.

use crate::ast::{self, Block, Field, GateBody, Item, TaskName, Value, ValueKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::origin::{DEFAULTS_FILE, Origin};
use crate::plan::{OnFail, OutputFormat};
use crate::span::Span;
use std::collections::{BTreeMap, HashMap};
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
/// were reported. The plan phase only builds a [`crate::plan::Plan`] from a
/// model without errors, but computes graph diagnostics on any model.
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
    /// Tasks in source order, first definition of each name only.
    pub tasks: Vec<TaskDef>,
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
    /// The `agent` reference, even when the gate is invalid (for E0005, W0001).
    pub agent_ref: Option<Ref>,
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
    /// `prompt`: an agent task.
    Prompt(String),
    /// `run`: a command task.
    Run(String),
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
    /// `env`.
    pub env: BTreeMap<String, String>,
    /// The whole item.
    pub span: Span,
}

/// Fields each block takes, for E0002 and for completion in the editor.
pub mod fields {
    /// `loop { … }`
    pub const LOOP: &[&str] = &["base", "branch", "parallel", "setup"];
    /// `budget { … }`
    pub const BUDGET: &[&str] = &["iterations", "time", "cost", "failures"];
    /// `agent NAME { … }`
    pub const AGENT: &[&str] = &["run", "output", "timeout", "cost", "env"];
    /// `gate NAME { … }`
    pub const GATE: &[&str] = &["run", "agent", "prompt", "timeout", "on_fail"];
    /// `defaults { … }`
    pub const DEFAULTS: &[&str] = &["agent", "gates", "attempts", "timeout", "env"];
    /// `task NAME { … }`
    pub const TASK: &[&str] = &[
        "prompt", "run", "agent", "accept", "gates", "attempts", "timeout", "inputs", "env",
    ];
}

/// Checks a syntax tree whose items came from `origin`.
pub fn check(file: &ast::File, origin: &Origin) -> (Model, Vec<Diagnostic>) {
    let mut c = Checker::default();
    c.items(file);
    c.references(file, origin);
    (c.model, c.diagnostics)
}

/// The closest of `candidates` to `name`, if one is close enough to suggest.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|(d, c)| *d <= limit.max(c.chars().count() / 3) && *d > 0)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
        .or(None)
}

/// Whether `name` is a valid task name (spec §2; E0011), and if not, why.
pub fn task_name_problem(name: &str) -> Option<&'static str> {
    let valid_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-';
    match name.chars().next() {
        None => return Some("a task name cannot be empty"),
        Some(c) if !(c.is_ascii_alphanumeric() || c == '_') => {
            return Some("a task name must start with a letter, a digit or `_`");
        }
        _ => {}
    }
    if name.len() > 64 {
        return Some("a task name is at most 64 characters long");
    }
    if !name.chars().all(valid_char) {
        return Some("a task name may contain only letters, digits, `_`, `.` and `-`");
    }
    if name.contains("..") {
        return Some("a task name cannot contain `..`");
    }
    if name.ends_with('.') || name.ends_with(".lock") {
        return Some("a task name cannot end with `.` or `.lock` (git refuses such branch names)");
    }
    None
}

#[derive(Default)]
struct Checker {
    model: Model,
    diagnostics: Vec<Diagnostic>,
}

/// The fields of one block after duplicate and unknown fields were reported.
struct Fields<'a> {
    map: HashMap<&'a str, &'a Field>,
    /// Whether the block had an unknown field: then a "missing" field may just
    /// be misspelled, and E0008 would only repeat E0002.
    had_unknown: bool,
}

impl<'a> Fields<'a> {
    fn get(&self, name: &str) -> Option<&'a Field> {
        self.map.get(name).copied()
    }
}

impl Checker {
    fn push(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    fn items(&mut self, file: &ast::File) {
        let mut first_loop: Option<Span> = None;
        let mut first_budget: Option<Span> = None;
        let mut first_defaults: Option<Span> = None;
        let mut agent_spans: HashMap<String, Span> = HashMap::new();
        let mut gate_spans: HashMap<String, Span> = HashMap::new();
        let mut task_spans: HashMap<String, Span> = HashMap::new();

        for item in &file.items {
            match item {
                Item::Loop(l) => {
                    if self.single("loop", l.block.keyword, &mut first_loop) {
                        self.loop_item(l);
                    }
                }
                Item::Budget(b) => {
                    if self.single("budget", b.keyword, &mut first_budget) {
                        self.budget(b);
                    }
                }
                Item::Defaults(b) => {
                    if self.single("defaults", b.keyword, &mut first_defaults) {
                        self.defaults(b);
                    }
                }
                Item::Agent(a) => {
                    if self.unique("agent", &a.name.text, a.name.span, &mut agent_spans) {
                        self.agent(a);
                    }
                }
                Item::Gate(g) => {
                    if self.unique("gate", &g.name.text, g.name.span, &mut gate_spans) {
                        self.gate(g);
                    }
                }
                Item::Task(t) => {
                    if let Some(why) = task_name_problem(&t.name.text) {
                        // Bare ids starting with a digit were reported by the parser.
                        if t.name.quoted || !t.name.text.starts_with(|c: char| c.is_ascii_digit()) {
                            self.push(Diagnostic::new(
                                Code::E0011,
                                format!("invalid task name `{}`", t.name.text),
                                t.name.span,
                                why,
                            ).with_note("a task name becomes a git branch and a directory name: it must match [A-Za-z0-9_][A-Za-z0-9_.-]{0,63} and contain no `..`"));
                        }
                    }
                    if self.unique("task", &t.name.text, t.name.span, &mut task_spans) {
                        self.task(t);
                    }
                }
                Item::Error(_) => {}
            }
        }
    }

    /// Reports a second `loop`/`budget`/`defaults`; true for the first one.
    fn single(&mut self, what: &str, keyword: Span, first: &mut Option<Span>) -> bool {
        match first {
            Some(prev) => {
                self.push(
                    Diagnostic::new(
                        Code::E0004,
                        format!("a plan has at most one `{what}` block"),
                        keyword,
                        format!("second `{what}` block"),
                    )
                    .with_label(*prev, format!("first `{what}` block here"))
                    .with_note(format!("merge the fields into the first `{what}` block")),
                );
                false
            }
            None => {
                *first = Some(keyword);
                true
            }
        }
    }

    /// Reports a second definition of `name`; true for the first one.
    fn unique(
        &mut self,
        what: &str,
        name: &str,
        span: Span,
        seen: &mut HashMap<String, Span>,
    ) -> bool {
        if let Some(prev) = seen.get(name) {
            self.push(
                Diagnostic::new(
                    Code::E0004,
                    format!("{what} `{name}` is defined twice"),
                    span,
                    format!("second definition of `{name}`"),
                )
                .with_label(*prev, "first defined here")
                .with_note(format!("rename one of them; {what} names must be unique")),
            );
            return false;
        }
        seen.insert(name.to_string(), span);
        true
    }

    /// Reports duplicate (E0003) and unknown (E0002) fields of a block.
    fn fields<'a>(&mut self, block: &'a Block, what: &str, allowed: &[&str]) -> Fields<'a> {
        let mut map: HashMap<&str, &Field> = HashMap::new();
        let mut had_unknown = false;
        for f in &block.fields {
            let name = f.name.text.as_str();
            if !allowed.contains(&name) {
                let mut d = Diagnostic::new(
                    Code::E0002,
                    format!("unknown field `{name}` in {what}"),
                    f.name.span,
                    "unknown field",
                );
                if let Some(s) = suggest(name, allowed.iter().copied()) {
                    d.primary.message = format!("did you mean `{s}`?");
                }
                d = d.with_note(format!("{what} takes: {}", allowed.join(", ")));
                self.push(d);
                had_unknown = true;
                continue;
            }
            if let Some(prev) = map.get(name) {
                self.push(
                    Diagnostic::new(
                        Code::E0003,
                        format!("field `{name}` is set twice in {what}"),
                        f.name.span,
                        "second value",
                    )
                    .with_label(prev.name.span, "first set here")
                    .with_note("remove one of them"),
                );
                continue;
            }
            map.insert(name, f);
        }
        Fields { map, had_unknown }
    }

    fn type_error(&mut self, f: &Field, expected: &str) {
        let found = f.value.kind.describe();
        let mut d = Diagnostic::new(
            Code::E0007,
            format!("`{}` expects {expected}, found {found}", f.name.text),
            f.value.span,
            format!("expected {expected}"),
        );
        if let ValueKind::String(s) = &f.value.kind
            && (expected.contains("duration")
                || expected.contains("integer")
                || expected.contains("money"))
        {
            d = d.with_note(format!("write the value without quotes: `{s}`"));
        }
        self.push(d);
    }

    /// Reports a NUL character in a value that reaches a process through its
    /// arguments or environment, where it cannot be represented (E0009).
    fn no_nul(&mut self, what: &str, text: &str, span: Span) -> bool {
        if !text.contains('\0') {
            return true;
        }
        self.push(
            Diagnostic::new(
                Code::E0009,
                format!("{what} contains a NUL character"),
                span,
                "`\\0` cannot be passed to a command",
            )
            .with_note("commands, titles and environment values reach processes as C strings, which end at NUL"),
        );
        false
    }

    fn string(&mut self, fields: &Fields<'_>, name: &str) -> Option<String> {
        let f = fields.get(name)?;
        match &f.value.kind {
            ValueKind::String(s) | ValueKind::BlockString(s) => {
                // A prompt goes to stdin, where NUL is just a byte.
                if name != "prompt" && !self.no_nul(&format!("`{name}`"), s, f.value.span) {
                    return None;
                }
                Some(s.clone())
            }
            ValueKind::Invalid => None,
            _ => {
                self.type_error(f, "a string");
                None
            }
        }
    }

    fn positive_int(&mut self, fields: &Fields<'_>, name: &str) -> Option<u32> {
        let f = fields.get(name)?;
        match &f.value.kind {
            ValueKind::Integer(0) => {
                self.push(Diagnostic::new(
                    Code::E0009,
                    format!("`{name}` must be at least 1"),
                    f.value.span,
                    "out of range",
                ));
                None
            }
            ValueKind::Integer(n) => Some(*n),
            ValueKind::Invalid => None,
            _ => {
                self.type_error(f, "an integer");
                None
            }
        }
    }

    fn duration(&mut self, fields: &Fields<'_>, name: &str) -> Option<Duration> {
        let f = fields.get(name)?;
        match &f.value.kind {
            ValueKind::Duration(d) if d.is_zero() => {
                self.push(Diagnostic::new(
                    Code::E0009,
                    format!("`{name}` must be longer than zero"),
                    f.value.span,
                    "zero duration",
                ));
                None
            }
            ValueKind::Duration(d) => Some(*d),
            ValueKind::Integer(n) => {
                self.push(
                    Diagnostic::new(
                        Code::E0007,
                        format!("`{name}` expects a duration, found an integer"),
                        f.value.span,
                        "expected a duration",
                    )
                    .with_note(format!("add a unit: `{n}s`, `{n}m` or `{n}h`")),
                );
                None
            }
            ValueKind::Invalid => None,
            _ => {
                self.type_error(f, "a duration (e.g. `20m`)");
                None
            }
        }
    }

    fn money(&mut self, fields: &Fields<'_>, name: &str) -> Option<u64> {
        let f = fields.get(name)?;
        match &f.value.kind {
            ValueKind::Money(0) => {
                self.push(Diagnostic::new(
                    Code::E0009,
                    format!("`{name}` must be more than $0"),
                    f.value.span,
                    "out of range",
                ));
                None
            }
            ValueKind::Money(m) => Some(*m),
            ValueKind::Invalid => None,
            _ => {
                self.type_error(f, "a money amount (e.g. `$1.50`)");
                None
            }
        }
    }

    fn reference(&mut self, fields: &Fields<'_>, name: &str, what: &str) -> Option<Ref> {
        let f = fields.get(name)?;
        match &f.value.kind {
            ValueKind::Name(n) => Some(Ref {
                name: n.clone(),
                span: f.value.span,
            }),
            ValueKind::Invalid => None,
            _ => {
                self.type_error(f, &format!("the name of {what}"));
                None
            }
        }
    }

    fn word(&mut self, fields: &Fields<'_>, name: &str, words: &[&str]) -> Option<(String, Span)> {
        let f = fields.get(name)?;
        let quoted = words
            .iter()
            .map(|w| format!("`{w}`"))
            .collect::<Vec<_>>()
            .join(" or ");
        match &f.value.kind {
            ValueKind::Name(n) if words.contains(&n.as_str()) => Some((n.clone(), f.value.span)),
            ValueKind::Name(n) => {
                let mut d = Diagnostic::new(
                    Code::E0007,
                    format!("`{name}` expects {quoted}, found `{n}`"),
                    f.value.span,
                    format!("expected {quoted}"),
                );
                if let Some(s) = suggest(n, words.iter().copied()) {
                    d = d.with_note(format!("did you mean `{s}`?"));
                }
                self.push(d);
                None
            }
            ValueKind::Invalid => None,
            _ => {
                self.type_error(f, &quoted);
                None
            }
        }
    }

    fn list<'a>(&mut self, fields: &Fields<'a>, name: &str, expected: &str) -> Option<&'a [Value]> {
        let f = fields.get(name)?;
        match &f.value.kind {
            ValueKind::List(items) => Some(items),
            ValueKind::Invalid => None,
            _ => {
                self.type_error(f, expected);
                None
            }
        }
    }

    fn gate_list(&mut self, fields: &Fields<'_>) -> Option<Vec<Ref>> {
        let items = self.list(fields, "gates", "a list of gate names (e.g. `[tests]`)")?;
        let mut out = Vec::new();
        for v in items {
            match &v.kind {
                ValueKind::Name(n) => out.push(Ref {
                    name: n.clone(),
                    span: v.span,
                }),
                ValueKind::Invalid => {}
                other => self.push(Diagnostic::new(
                    Code::E0007,
                    format!("`gates` lists gate names, found {}", other.describe()),
                    v.span,
                    "expected a gate name",
                )),
            }
        }
        Some(out)
    }

    fn env(&mut self, fields: &Fields<'_>) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(f) = fields.get("env") else {
            return out;
        };
        let entries = match &f.value.kind {
            ValueKind::Map(entries) => entries,
            ValueKind::Invalid => return out,
            _ => {
                self.type_error(f, "a map (e.g. `{ KEY = \"value\" }`)");
                return out;
            }
        };
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for e in entries {
            if let Some(prev) = seen.get(e.key.text.as_str()) {
                self.push(
                    Diagnostic::new(
                        Code::E0003,
                        format!("key `{}` is set twice in `env`", e.key.text),
                        e.key.span,
                        "second value",
                    )
                    .with_label(*prev, "first set here"),
                );
                continue;
            }
            seen.insert(&e.key.text, e.key.span);
            match &e.value.kind {
                ValueKind::String(s) | ValueKind::BlockString(s) => {
                    if self.no_nul(
                        &format!("environment value `{}`", e.key.text),
                        s,
                        e.value.span,
                    ) {
                        out.insert(e.key.text.clone(), s.clone());
                    }
                }
                ValueKind::Invalid => {}
                other => self.push(Diagnostic::new(
                    Code::E0007,
                    format!(
                        "environment values are strings, found {} for `{}`",
                        other.describe(),
                        e.key.text
                    ),
                    e.value.span,
                    "expected a string",
                )),
            }
        }
        out
    }

    fn loop_item(&mut self, l: &ast::LoopItem) {
        let f = self.fields(&l.block, "`loop`", fields::LOOP);
        self.model.settings = LoopDef {
            name: l.name.as_ref().map(|n| n.text.clone()),
            base: self.string(&f, "base"),
            branch: self.string(&f, "branch"),
            parallel: self.positive_int(&f, "parallel"),
            setup: self.string(&f, "setup"),
        };
        // The integration branch must be a name git accepts, or the run fails
        // late; check the explicit one, or the default made from the name.
        if let Some(field) = f.get("branch")
            && let Some(branch) = &self.model.settings.branch
            && (branch == "loopc" || branch.starts_with("loopc/"))
        {
            self.push(
                Diagnostic::new(
                    Code::E0009,
                    format!("`{branch}` is inside loopc's own branch namespace"),
                    field.value.span,
                    "task branches live under `loopc/`",
                )
                .with_note("choose another integration branch, e.g. `loop/…`"),
            );
        } else if let Some(field) = f.get("branch")
            && let Some(branch) = &self.model.settings.branch
            && let Some(why) = branch_problem(branch)
        {
            self.push(
                Diagnostic::new(
                    Code::E0009,
                    format!("`{branch}` is not a valid git branch name"),
                    field.value.span,
                    why,
                )
                .with_note("see `git check-ref-format --branch`"),
            );
        } else if f.get("branch").is_none()
            && let Some(name) = &l.name
            && let Some(why) = branch_problem(&format!("loop/{}", name.text))
        {
            self.push(
                Diagnostic::new(
                    Code::E0009,
                    format!(
                        "the loop name `{}` does not make a valid branch name `loop/{}`",
                        name.text, name.text
                    ),
                    name.span,
                    why,
                )
                .with_note("set `branch = \"loop/…\"` explicitly, or use a name without spaces or special characters"),
            );
        }
    }

    fn budget(&mut self, b: &Block) {
        let f = self.fields(b, "`budget`", fields::BUDGET);
        self.model.budget = BudgetDef {
            span: Some(b.keyword),
            iterations: self.positive_int(&f, "iterations"),
            time: self.duration(&f, "time"),
            cost: self.money(&f, "cost"),
            failures: self.positive_int(&f, "failures"),
            bounds_written: ["iterations", "time", "cost"]
                .iter()
                .any(|n| f.get(n).is_some()),
        };
    }

    fn defaults(&mut self, b: &Block) {
        let f = self.fields(b, "`defaults`", fields::DEFAULTS);
        self.model.defaults = DefaultsDef {
            agent: self.reference(&f, "agent", "an agent"),
            gates: self.gate_list(&f),
            attempts: self.positive_int(&f, "attempts"),
            timeout: self.duration(&f, "timeout"),
            env: self.env(&f),
        };
    }

    fn agent(&mut self, a: &ast::AgentItem) {
        let f = self.fields(&a.block, &format!("agent `{}`", a.name.text), fields::AGENT);
        let run = self.string(&f, "run");
        if f.get("run").is_none() && !f.had_unknown {
            self.push(
                Diagnostic::new(
                    Code::E0008,
                    format!("agent `{}` has no `run` field", a.name.text),
                    a.name.span,
                    "missing `run`",
                )
                .with_label(a.block.body, "this block needs `run = \"…\"`")
                .with_note(
                    "`run` is the shell command that starts the agent, e.g. `run = \"claude -p\"`",
                ),
            );
        }
        let output = match self.word(&f, "output", &["text", "claude-json"]) {
            Some((w, _)) if w == "claude-json" => OutputFormat::ClaudeJson,
            _ => OutputFormat::Text,
        };
        let def = AgentDef {
            name: Ref {
                name: a.name.text.clone(),
                span: a.name.span,
            },
            run,
            output,
            timeout: self.duration(&f, "timeout"),
            cost: self.money(&f, "cost"),
            env: self.env(&f),
        };
        self.model.agents.push(def);
    }

    fn gate(&mut self, g: &ast::GateItem) {
        let name = Ref {
            name: g.name.text.clone(),
            span: g.name.span,
        };
        match &g.body {
            GateBody::Short(v) => {
                let kind = match &v.kind {
                    ValueKind::String(s) | ValueKind::BlockString(s) => {
                        GateDefKind::Command(s.clone())
                    }
                    ValueKind::Invalid => GateDefKind::Invalid,
                    other => {
                        self.push(
                            Diagnostic::new(
                                Code::E0007,
                                format!("gate `{}` expects a command string, found {}", g.name.text, other.describe()),
                                v.span,
                                "expected a string",
                            )
                            .with_note("the short form is `gate NAME = \"command\"`; use `gate NAME { … }` for more"),
                        );
                        GateDefKind::Invalid
                    }
                };
                self.model.gates.push(GateDef {
                    name,
                    kind,
                    timeout: None,
                    on_fail: OnFail::Retry,
                    agent_ref: None,
                });
            }
            GateBody::Long(b) => {
                let f = self.fields(b, &format!("gate `{}`", g.name.text), fields::GATE);
                let run = self.string(&f, "run");
                let agent = self.reference(&f, "agent", "an agent");
                let agent_ref = agent.clone();
                let prompt = self.string(&f, "prompt");
                let kind = match (f.get("run"), f.get("agent")) {
                    (Some(r), Some(a)) => {
                        let (first, second) = if r.span.start < a.span.start {
                            (r, a)
                        } else {
                            (a, r)
                        };
                        self.push(
                            Diagnostic::new(
                                Code::E0010,
                                format!("gate `{}` has both `run` and `agent`", g.name.text),
                                second.name.span,
                                "conflicts with the other field",
                            )
                            .with_label(first.name.span, "first set here")
                            .with_note("a gate is either a command (`run`) or agent-judged (`agent` + `prompt`)"),
                        );
                        GateDefKind::Invalid
                    }
                    (Some(_), None) => {
                        if let Some(p) = f.get("prompt") {
                            self.push(
                                Diagnostic::new(
                                    Code::E0010,
                                    format!(
                                        "gate `{}` has a `prompt` but runs a command",
                                        g.name.text
                                    ),
                                    p.name.span,
                                    "`prompt` is only used with `agent`",
                                )
                                .with_label(
                                    f.get("run").map_or(b.body, |r| r.name.span),
                                    "this gate is a command",
                                ),
                            );
                        }
                        run.map_or(GateDefKind::Invalid, GateDefKind::Command)
                    }
                    (None, Some(_)) => match (agent, prompt) {
                        (Some(agent), Some(prompt)) => GateDefKind::Agent { agent, prompt },
                        (_, None) if f.get("prompt").is_none() => {
                            self.push(
                                Diagnostic::new(
                                    Code::E0008,
                                    format!("agent-judged gate `{}` has no `prompt`", g.name.text),
                                    g.name.span,
                                    "missing `prompt`",
                                )
                                .with_label(b.body, "add `prompt = \"…\"` here")
                                .with_note("an agent gate needs a prompt that says what to review"),
                            );
                            GateDefKind::Invalid
                        }
                        _ => GateDefKind::Invalid,
                    },
                    (None, None) if f.had_unknown => GateDefKind::Invalid,
                    (None, None) => {
                        self.push(
                            Diagnostic::new(
                                Code::E0008,
                                format!("gate `{}` has neither `run` nor `agent`", g.name.text),
                                g.name.span,
                                "missing `run` or `agent`",
                            )
                            .with_label(b.body, "add `run = \"…\"` or `agent = …` with `prompt`"),
                        );
                        GateDefKind::Invalid
                    }
                };
                let on_fail = match self.word(&f, "on_fail", &["retry", "block", "fail"]) {
                    Some((w, _)) if w == "block" => OnFail::Block,
                    Some((w, _)) if w == "fail" => OnFail::Fail,
                    _ => OnFail::Retry,
                };
                let timeout = self.duration(&f, "timeout");
                self.model.gates.push(GateDef {
                    name,
                    kind,
                    timeout,
                    on_fail,
                    agent_ref,
                });
            }
        }
    }

    fn task(&mut self, t: &ast::TaskItem) {
        let what = format!("task `{}`", t.name.text);
        let f = self.fields(&t.block, &what, fields::TASK);
        let prompt = self.string(&f, "prompt");
        let run = self.string(&f, "run");
        let agent = self.reference(&f, "agent", "an agent");
        let work = match (f.get("prompt"), f.get("run")) {
            (Some(p), Some(r)) => {
                let (first, second) = if p.span.start < r.span.start {
                    (p, r)
                } else {
                    (r, p)
                };
                self.push(
                    Diagnostic::new(
                        Code::E0010,
                        format!("{what} has both `prompt` and `run`"),
                        second.name.span,
                        "conflicts with the other field",
                    )
                    .with_label(first.name.span, "first set here")
                    .with_note("an agent task has a `prompt`; a command task has `run`; not both"),
                );
                Work::Invalid
            }
            (Some(_), None) => prompt.map_or(Work::Invalid, Work::Prompt),
            (None, Some(r)) => {
                if let Some(a) = f.get("agent") {
                    self.push(
                        Diagnostic::new(
                            Code::E0010,
                            format!("{what} is a command task but sets `agent`"),
                            a.name.span,
                            "a command task runs no agent",
                        )
                        .with_label(r.name.span, "this makes it a command task")
                        .with_note("remove `agent`, or replace `run` with a `prompt`"),
                    );
                }
                run.map_or(Work::Invalid, Work::Run)
            }
            (None, None) if f.had_unknown => Work::Invalid,
            (None, None) => {
                self.push(
                    Diagnostic::new(
                        Code::E0008,
                        format!("{what} has neither `prompt` nor `run`"),
                        t.name.span,
                        "missing `prompt` or `run`",
                    )
                    .with_label(
                        t.block.body,
                        "add `prompt = \"…\"` (agent task) or `run = \"…\"` (command task)",
                    ),
                );
                Work::Invalid
            }
        };
        let mut inputs = Vec::new();
        if let Some(items) = self.list(&f, "inputs", "a list of glob strings") {
            for v in items {
                match &v.kind {
                    ValueKind::String(s) | ValueKind::BlockString(s) => {
                        if let Some(why) = glob_problem(s) {
                            self.push(
                                Diagnostic::new(
                                    Code::E0014,
                                    format!("invalid glob `{s}` in `inputs`"),
                                    v.span,
                                    why,
                                )
                                .with_note("inputs are globs relative to the repository root, e.g. `src/**/*.rs`"),
                            );
                        } else {
                            inputs.push(s.clone());
                        }
                    }
                    ValueKind::Invalid => {}
                    other => self.push(Diagnostic::new(
                        Code::E0007,
                        format!("`inputs` lists glob strings, found {}", other.describe()),
                        v.span,
                        "expected a string",
                    )),
                }
            }
        }
        if let Some(title) = &t.title {
            self.no_nul("the title", &title.text, title.span);
        }
        let def = TaskDef {
            name: t.name.clone(),
            title: t.title.as_ref().map(|s| s.text.clone()),
            dependencies: t.dependencies.clone(),
            work,
            agent,
            accept: self.string(&f, "accept"),
            gates: self.gate_list(&f),
            attempts: self.positive_int(&f, "attempts"),
            timeout: self.duration(&f, "timeout"),
            inputs,
            env: self.env(&f),
            span: t.span,
        };
        self.model.tasks.push(def);
    }

    /// E0005, E0013, W0001, W0003, W0004: everything that needs all definitions.
    fn references(&mut self, file: &ast::File, origin: &Origin) {
        let agent_names: Vec<String> = self
            .model
            .agents
            .iter()
            .map(|a| a.name.name.clone())
            .collect();
        let gate_names: Vec<String> = self
            .model
            .gates
            .iter()
            .map(|g| g.name.name.clone())
            .collect();
        let task_names: Vec<String> = self
            .model
            .tasks
            .iter()
            .map(|t| t.name.text.clone())
            .collect();
        let mut used_agents: Vec<String> = Vec::new();
        let mut used_gates: Vec<String> = Vec::new();

        let mut agent_refs: Vec<Ref> = Vec::new();
        let mut gate_refs: Vec<Ref> = Vec::new();
        agent_refs.extend(self.model.defaults.agent.clone());
        gate_refs.extend(self.model.defaults.gates.clone().unwrap_or_default());
        for g in &self.model.gates {
            agent_refs.extend(g.agent_ref.clone());
        }
        for t in &self.model.tasks {
            agent_refs.extend(t.agent.clone());
            gate_refs.extend(t.gates.clone().unwrap_or_default());
        }
        for r in agent_refs {
            used_agents.push(r.name.clone());
            if !agent_names.contains(&r.name) {
                self.unknown("agent", &r.name, r.span, &agent_names);
            }
        }
        for r in gate_refs {
            used_gates.push(r.name.clone());
            if !gate_names.contains(&r.name) {
                self.unknown("gate", &r.name, r.span, &gate_names);
            }
        }
        let deps: Vec<(String, TaskName)> = self
            .model
            .tasks
            .iter()
            .flat_map(|t| {
                t.dependencies
                    .iter()
                    .map(|d| (t.name.text.clone(), d.clone()))
            })
            .collect();
        let known_tasks: std::collections::HashSet<&str> =
            task_names.iter().map(String::as_str).collect();
        for (owner, d) in deps {
            if known_tasks.contains(d.text.as_str()) {
                continue;
            }
            if let Some(why) = task_name_problem(&d.text) {
                // Bare ids starting with a digit were reported by the parser.
                if d.quoted || !d.text.starts_with(|c: char| c.is_ascii_digit()) {
                    self.push(Diagnostic::new(
                        Code::E0011,
                        format!(
                            "invalid task name `{}` in the dependencies of `{owner}`",
                            d.text
                        ),
                        d.span,
                        why,
                    ));
                }
                continue;
            }
            // Never suggest that a task depend on itself.
            let others: Vec<String> = task_names
                .iter()
                .filter(|n| **n != owner)
                .cloned()
                .collect();
            self.unknown("task", &d.text, d.span, &others);
        }

        // E0013: agent tasks need an agent.
        let default_agent = self.model.defaults.agent.is_some();
        let missing: Vec<(String, Span)> = self
            .model
            .tasks
            .iter()
            .filter(|t| matches!(t.work, Work::Prompt(_)) && t.agent.is_none() && !default_agent)
            .map(|t| (t.name.text.clone(), t.name.span))
            .collect();
        for (name, span) in missing {
            let mut d = Diagnostic::new(
                Code::E0013,
                format!("agent task `{name}` has no agent"),
                span,
                "no `agent` field and no `defaults.agent`",
            );
            d = match (origin, agent_names.first()) {
                (Origin::Specs { defaults: false, .. }, _) => d.with_note(format!(
                    "REEL specs take their agent from a `{DEFAULTS_FILE}` beside them or from `--defaults FILE.loop`, e.g. `agent claude {{ run = \"claude -p\" }}  defaults {{ agent = claude }}`"
                )),
                (_, Some(a)) => d.with_note(format!("add `agent = {a}` to the task or to a `defaults` block")),
                (_, None) => d.with_note("define an agent (`agent claude { run = \"claude -p\" }`) and set `agent = claude` in `defaults`"),
            };
            self.push(d);
        }

        // W0001: unused agents and gates. A file with an unreadable item may
        // use them there, so the warning would be a guess.
        let unreadable = file.items.iter().any(|i| matches!(i, Item::Error(_)));
        let unused: Vec<(String, Span, &str)> = self
            .model
            .agents
            .iter()
            .filter(|a| !used_agents.contains(&a.name.name))
            .map(|a| (a.name.name.clone(), a.name.span, "agent"))
            .chain(
                self.model
                    .gates
                    .iter()
                    .filter(|g| !used_gates.contains(&g.name.name))
                    .map(|g| (g.name.name.clone(), g.name.span, "gate")),
            )
            .collect();
        for (name, span, what) in unused.into_iter().filter(|_| !unreadable) {
            let hint = if what == "agent" {
                format!("use it with `agent = {name}` in a task or in `defaults`, or remove it")
            } else {
                format!("list it in a task's or the defaults' `gates = [{name}]`, or remove it")
            };
            self.push(
                Diagnostic::new(
                    Code::W0001,
                    format!("{what} `{name}` is defined but never used"),
                    span,
                    "never used",
                )
                .with_note(hint),
            );
        }

        // W0003: agent tasks with no budget bounding iterations, time or cost.
        let first_agent_task = self
            .model
            .tasks
            .iter()
            .find(|t| matches!(t.work, Work::Prompt(_)))
            .map(|t| t.name.span);
        let b = &self.model.budget;
        if let Some(task_span) = first_agent_task
            && !b.bounds_written
            && b.iterations.is_none()
            && b.time.is_none()
            && b.cost.is_none()
        {
            let (span, label) = match b.span {
                Some(s) => (s, "this budget bounds neither iterations, time nor cost"),
                None => (task_span, "agent task without a budget"),
            };
            self.push(
                Diagnostic::new(
                    Code::W0003,
                    "the plan runs agents but no budget bounds iterations, time or cost",
                    span,
                    label,
                )
                .with_note("add e.g. `budget { iterations = 20  time = 2h  cost = $20 }`"),
            );
        }

        // W0004: no tasks.
        // A file whose items could not all be parsed may well declare tasks.
        let unreadable = file.items.iter().any(|i| matches!(i, Item::Error(_)));
        if self.model.tasks.is_empty()
            && !unreadable
            && !file.items.iter().any(|i| matches!(i, Item::Task(_)))
        {
            let span = file
                .items
                .first()
                .map_or(Span::at(0), |i| Span::new(i.span().start, i.span().start));
            match origin {
                // What could not be read may well declare tasks.
                Origin::Specs {
                    unreadable: true, ..
                } => {}
                Origin::Specs {
                    first_spec: Some(at),
                    ..
                } => self.push(
                    Diagnostic::new(Code::W0004, "the plan has no tasks", Span::at(*at), "no task in this spec")
                        .with_note("a REEL task is a `## <id>: <title>` heading, a JSON `tasks` entry or a Gherkin `Scenario:`"),
                ),
                _ => self.push(
                    Diagnostic::new(Code::W0004, "the plan has no tasks", span, "no `task` in this file")
                        .with_note("declare work with `task NAME { prompt = \"…\" }` or `task NAME { run = \"…\" }`"),
                ),
            }
        }
    }

    fn unknown(&mut self, what: &str, name: &str, span: Span, known: &[String]) {
        let mut d = Diagnostic::new(
            Code::E0005,
            format!("unknown {what} `{name}`"),
            span,
            format!("no {what} is called `{name}`"),
        );
        if let Some(s) = suggest(name, known.iter().map(String::as_str)) {
            d.primary.message = format!("did you mean `{s}`?");
        } else if known.is_empty() && what == "task" {
            d = d.with_note("this plan defines no other task");
        } else if known.is_empty() {
            d = d.with_note(format!("this plan defines no {what}s"));
        } else {
            let mut list: Vec<&str> = known.iter().map(String::as_str).collect();
            list.sort_unstable();
            let more = list.len().saturating_sub(8);
            list.truncate(8);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            d = d.with_note(format!("known {what}s: {}{tail}", list.join(", ")));
        }
        self.push(d);
    }
}

/// Why `name` is not a branch name git accepts (the rules of
/// `git check-ref-format --branch`), if it is not.
pub fn branch_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("a branch name cannot be empty");
    }
    if name.starts_with('-') {
        return Some("a branch name cannot start with `-`");
    }
    if name
        .chars()
        .any(|c| c.is_ascii_control() || " ~^:?*[\\".contains(c))
    {
        return Some("spaces, control characters and `~ ^ : ? * [ \\` are not allowed");
    }
    if name.contains("..") || name.contains("//") || name.contains("@{") || name == "@" {
        return Some("`..`, `//` and `@{` are not allowed");
    }
    if name.ends_with('/') || name.ends_with('.') {
        return Some("a branch name cannot end with `/` or `.`");
    }
    if name
        .split('/')
        .any(|c| c.starts_with('.') || c.ends_with(".lock"))
    {
        return Some("no component may start with `.` or end with `.lock`");
    }
    None
}

/// Why `pattern` is not a usable `inputs` glob (E0014), if it is not.
pub fn glob_problem(pattern: &str) -> Option<String> {
    if pattern.is_empty() {
        return Some("empty pattern".to_string());
    }
    if pattern.starts_with('/') {
        return Some("must be relative to the repository root".to_string());
    }
    if pattern.split('/').any(|c| c == "..") {
        return Some("cannot leave the repository (`..`)".to_string());
    }
    // A plain path has nothing for the glob parser to reject.
    if !pattern.contains(['*', '?', '[', ']', '{', '}', '\\']) {
        return None;
    }
    match globset::Glob::new(pattern) {
        Ok(_) => None,
        Err(e) => Some(e.kind().to_string()),
    }
}
