//! The checker: syntax tree → [`Model`] and diagnostics (docs/language.md).
//!
//! It resolves names and validates every block: unknown and duplicate fields
//! (E0002, E0003), duplicate definitions (E0004), unknown references (E0005),
//! value types (E0007), required and conflicting fields (E0008, E0010), ranges
//! (E0009), task names (E0011), agents of agent tasks (E0013), globs (E0014) and
//! the warnings W0001, W0003 and W0004. Graph checks (E0006, W0002) happen in
//! the plan phase. The model keeps going after errors so that every error of a
//! file is reported in one run.
//!
//! - `values`: reading one field's value (types, ranges, NUL characters);
//! - `items`: each item's fields and its own rules (W0006, `on_fail = replan`
//!   with no producer); `output`: an agent's
//!   `output` (a reader's word, or the map of the declarative reader);
//! - `file`: duplicate definitions and everything that needs the whole file;
//! - `warnings`: the warnings about the plan as a whole (W0003, W0004, W0005);
//! - [`names`]: the rules for task, branch and glob names and the "did you
//!   mean" suggestion, shared with the plan phase and the REEL front-end.

pub mod context;
mod file;
mod items;
pub mod names;
mod output;
mod values;
mod warnings;

use crate::ast::{self, Field};
use crate::diagnostic::Diagnostic;
use crate::model::Model;
use crate::origin::Origin;
use crate::span::Span;
use foldhash::HashMap;

/// Checks a syntax tree whose items came from `origin`.
pub fn check(file: &ast::File, origin: &Origin) -> (Model, Vec<Diagnostic>) {
    let tasks = file
        .items
        .iter()
        .filter(|i| matches!(i, ast::Item::Task(_)))
        .count();
    let mut c = Checker::new(Detail::Full, tasks);
    c.items(&file.items);
    c.finish(origin)
}

/// How much of each definition the checker keeps in the [`Model`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Everything: the model a plan is built from.
    Full,
    /// What later diagnostics read (names, references, dependencies, spans,
    /// the kind of a task's work), not the texts they do not: prompts and
    /// commands (an empty text of the same kind), titles, `accept`,
    /// `inputs`, `env`. Every value is still checked and every diagnostic
    /// reported; for `loopc check`, whose model is dropped unplanned.
    Diagnostics,
}

/// The checker, fed the items of a file in source order, in as many runs as
/// the caller likes (a large file's tree can be dropped run by run), then
/// [`Checker::finish`]ed for everything that needs all definitions.
pub struct Checker {
    model: Model,
    diagnostics: Vec<Diagnostic>,
    detail: Detail,
    /// The text of every prompt and command under [`Detail::Diagnostics`].
    empty: std::sync::Arc<str>,
    seen: Seen,
}

/// What the checker remembers of the items it was fed, for the rules that
/// look across items.
#[derive(Default)]
struct Seen {
    /// The first `loop`, `budget` and `defaults` keyword.
    first_loop: Option<Span>,
    first_budget: Option<Span>,
    first_defaults: Option<Span>,
    /// The first definition of each agent, gate and executor name.
    agents: HashMap<String, Span>,
    gates: HashMap<String, Span>,
    executors: HashMap<String, Span>,
    /// Where the first item starts (W0004 points there).
    first_item: Option<usize>,
    /// Whether an item could not be parsed ([`ast::Item::Error`]).
    unreadable: bool,
    /// What the items that could not be parsed define, by their headers:
    /// references to these are not unknown, and a `budget` or `defaults`
    /// among them may have set what seems missing.
    unparsed: Unparsed,
    /// The bare names in the values of unknown fields (`gate = [t]`, E0002):
    /// the field was meant to use them, so they are not unused (W0001).
    named_by_unknown: foldhash::HashSet<String>,
    /// Whether a `task` item was read.
    any_task: bool,
}

impl Checker {
    /// A checker for a file of about `tasks` tasks (room is made for them;
    /// a wrong guess costs only memory); `detail` says what the model keeps.
    pub fn new(detail: Detail, tasks: usize) -> Checker {
        let mut model = Model::default();
        model.tasks.reserve_exact(tasks);
        model.task_index = crate::model::TaskIndex::with_capacity(tasks);
        Checker {
            model,
            diagnostics: Vec::new(),
            detail,
            empty: std::sync::Arc::from(""),
            seen: Seen::default(),
        }
    }

    /// The model and every diagnostic, once all items were fed: the rules
    /// that need every definition run here; `origin` says where the items
    /// came from (some messages depend on it).
    pub fn finish(mut self, origin: &Origin) -> (Model, Vec<Diagnostic>) {
        self.references(origin);
        if self.model.tasks.capacity() > self.model.tasks.len() + self.model.tasks.len() / 8 {
            self.model.tasks.shrink_to_fit();
        }
        (self.model, self.diagnostics)
    }
}

/// The names and blocks that items which could not be parsed define
/// ([`ast::Unparsed`]).
#[derive(Default)]
struct Unparsed {
    tasks: foldhash::HashSet<String>,
    agents: Vec<String>,
    gates: Vec<String>,
    executors: Vec<String>,
    /// Item keywords of the unparsed items (`budget`, `defaults`, …).
    keywords: Vec<&'static str>,
}

impl Unparsed {
    fn add(&mut self, item: &ast::Unparsed) {
        let Some(keyword) = item.keyword else { return };
        self.keywords.push(keyword);
        let Some(name) = item.name.clone() else {
            return;
        };
        match keyword {
            "task" => {
                self.tasks.insert(name);
            }
            "agent" => self.agents.push(name),
            "gate" => self.gates.push(name),
            "executor" => self.executors.push(name),
            _ => {}
        }
    }

    /// Whether a `keyword` item could not be parsed.
    fn has(&self, keyword: &str) -> bool {
        self.keywords.contains(&keyword)
    }
}

/// The fields of one block after duplicate and unknown fields were reported.
struct Fields<'a> {
    /// The names the block takes (one of [`crate::model::fields`]).
    allowed: &'static [&'static str],
    /// The first field of each allowed name, by its position in `allowed`
    /// (a block takes at most [`MAX_FIELDS`]; no table to allocate).
    found: [Option<&'a Field>; MAX_FIELDS],
    /// Whether the block had an unknown field: then a "missing" field may just
    /// be misspelled, and E0008 would only repeat E0002.
    had_unknown: bool,
}

impl<'a> Fields<'a> {
    fn get(&self, name: &str) -> Option<&'a Field> {
        let at = self.allowed.iter().position(|a| *a == name)?;
        self.found[at]
    }
}

/// The most fields a block takes: room to grow, checked below against every
/// block's table so a new field can never index past it.
const MAX_FIELDS: usize = 32;

const _: () = {
    use crate::model::fields::*;
    let tables: [&[&str]; 8] = [LOOP, BUDGET, AGENT, OUTPUT, EXECUTOR, GATE, DEFAULTS, TASK];
    let mut i = 0;
    while i < tables.len() {
        assert!(
            tables[i].len() <= MAX_FIELDS,
            "a block takes more fields than MAX_FIELDS"
        );
        i += 1;
    }
};

impl Checker {
    fn push(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }
}

/// The task an E0005 `d` says is unknown (`unknown task `x``), for the
/// phases that add to it what they know (a REEL spec not read, a plan
/// fragment's bare names); `None` for any other diagnostic.
pub fn unknown_task(d: &crate::diagnostic::Diagnostic) -> Option<&str> {
    if d.code != crate::diagnostic::Code::E0005 {
        return None;
    }
    d.message
        .strip_prefix("unknown task `")
        .and_then(|m| m.strip_suffix('`'))
}
