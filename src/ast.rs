//! The syntax tree of a `.loop` file (docs/language.md).
//!
//! The parser ([`crate::syntax`]) never fails: what it cannot read becomes an
//! [`Item::Error`] plus a diagnostic, so that the checker and the editor always
//! have a tree. Every node keeps its byte [`Span`]. Literal values are already
//! decoded here (escapes, durations, money); a literal that could not be decoded
//! is a [`ValueKind::Invalid`] whose diagnostic was already reported.

use crate::span::Span;
use std::sync::Arc;
use std::time::Duration;

/// A whole plan file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct File {
    /// The items in source order, including [`Item::Error`] for unreadable ones.
    pub items: Vec<Item>,
    /// Every `#` comment, in source order (byte spans including the `#`).
    pub comments: Vec<Span>,
}

/// One top-level item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `loop ["name"] { … }`
    Loop(LoopItem),
    /// `budget { … }`
    Budget(Block),
    /// `defaults { … }`
    Defaults(Block),
    /// `agent NAME { … }`
    Agent(AgentItem),
    /// `executor NAME { … }` (same shape as an agent: a name and a block)
    Executor(AgentItem),
    /// `gate NAME = value` or `gate NAME { … }`
    Gate(GateItem),
    /// `task NAME [TITLE] [: DEP…] { … }`
    Task(TaskItem),
    /// Text that could not be parsed as an item; its E0001 was already reported.
    Error(Unparsed),
}

/// An item that could not be parsed, and what its header says it defines:
/// references to that name are not reported as unknown (its E0001 is the
/// one mistake), nor is a missing `budget` or `defaults` it may have set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unparsed {
    /// The text of the item (to the next line that starts an item).
    pub span: Span,
    /// The item keyword it starts with (`task`, `agent`, …), if any.
    pub keyword: Option<&'static str>,
    /// The name its header gives (`task a`, `agent claude`), if one could
    /// be read: for a task, the bare or simply quoted name.
    pub name: Option<String>,
    /// Where that name is (inside the quotes of a quoted task name).
    pub name_span: Option<Span>,
}

impl From<Span> for Unparsed {
    fn from(span: Span) -> Unparsed {
        Unparsed {
            span,
            ..Unparsed::default()
        }
    }
}

impl Item {
    /// The span of the whole item.
    pub fn span(&self) -> Span {
        match self {
            Item::Loop(i) => i.span,
            Item::Budget(b) | Item::Defaults(b) => b.span,
            Item::Agent(i) | Item::Executor(i) => i.span,
            Item::Gate(i) => i.span,
            Item::Task(i) => i.span,
            Item::Error(u) => u.span,
        }
    }
}

/// A name as written: `[A-Za-z_][A-Za-z0-9_-]*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name's text.
    pub text: String,
    /// Where it was written.
    pub span: Span,
}

/// A task name or dependency, written as a bare name or as a string literal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskName {
    /// The decoded name.
    pub text: String,
    /// Where it was written (including quotes when quoted).
    pub span: Span,
    /// Whether it was written as a string literal.
    pub quoted: bool,
}

/// A `{ field* }` body with the span of its keyword and braces.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The span of the whole item this block belongs to (keyword to `}`).
    pub span: Span,
    /// The span of the item keyword (`budget`, `task`, …).
    pub keyword: Span,
    /// The span from `{` to `}` inclusive.
    pub body: Span,
    /// The fields in source order (duplicates kept; the checker reports them).
    pub fields: Vec<Field>,
}

/// `name = value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The field name.
    pub name: Ident,
    /// The value.
    pub value: Value,
    /// From the name to the end of the value.
    pub span: Span,
}

/// A value with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    /// What the value is.
    pub kind: ValueKind,
    /// Where it was written.
    pub span: Span,
}

/// Decoded literal values (docs/language.md).
#[derive(Clone, Debug, PartialEq)]
pub enum ValueKind {
    /// A `"…"` string with its escapes decoded. Shared (`Arc`): the checked
    /// model holds the same text (a prompt, a command) without a copy.
    String(Arc<str>),
    /// A `"""` block string, dedented as docs/language.md says (shared as
    /// [`ValueKind::String`] is).
    BlockString(Arc<str>),
    /// An integer (underscores removed; fits in u32).
    Integer(u32),
    /// A duration such as `1h30m`.
    Duration(Duration),
    /// Money in integer micro-dollars (`$0.50` is 500_000).
    Money(u64),
    /// `true` or `false`.
    Bool(bool),
    /// A bare name: a reference (`agent = claude`) or an enumerated word (`on_fail = retry`).
    Name(String),
    /// `[ v, … ]`
    List(Vec<Value>),
    /// `{ KEY = value … }`
    Map(Vec<MapEntry>),
    /// A literal that could not be decoded; its diagnostic was already reported.
    Invalid,
}

impl ValueKind {
    /// A short description for "expected X, found Y" messages.
    pub fn describe(&self) -> &'static str {
        match self {
            ValueKind::String(_) => "a string",
            ValueKind::BlockString(_) => "a block string",
            ValueKind::Integer(_) => "an integer",
            ValueKind::Duration(_) => "a duration",
            ValueKind::Money(_) => "a money amount",
            ValueKind::Bool(_) => "a boolean",
            ValueKind::Name(_) => "a name",
            ValueKind::List(_) => "a list",
            ValueKind::Map(_) => "a map",
            ValueKind::Invalid => "an invalid literal",
        }
    }
}

/// One `KEY = value` entry of a map.
#[derive(Clone, Debug, PartialEq)]
pub struct MapEntry {
    /// The key.
    pub key: Ident,
    /// The value (the checker requires a string).
    pub value: Value,
}

/// A string literal (plain or block) with its decoded text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrLit {
    /// The decoded text.
    pub text: String,
    /// Where it was written, including quotes.
    pub span: Span,
}

/// `loop ["name"] { … }`
#[derive(Clone, Debug, PartialEq)]
pub struct LoopItem {
    /// The optional name.
    pub name: Option<StrLit>,
    /// The body.
    pub block: Block,
    /// The whole item.
    pub span: Span,
}

/// `agent NAME { … }` or `executor NAME { … }`: a named block.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentItem {
    /// The agent's (or executor's) name.
    pub name: Ident,
    /// The body.
    pub block: Block,
    /// The whole item.
    pub span: Span,
}

/// `gate NAME = value` or `gate NAME { … }`
#[derive(Clone, Debug, PartialEq)]
pub struct GateItem {
    /// The gate's name.
    pub name: Ident,
    /// Short or long form.
    pub body: GateBody,
    /// The whole item.
    pub span: Span,
    /// The span of the `gate` keyword.
    pub keyword: Span,
}

/// The two forms of a gate.
#[derive(Clone, Debug, PartialEq)]
pub enum GateBody {
    /// `gate tests = "pytest -q"`: a shell command (the checker requires a string).
    Short(Value),
    /// `gate review { … }`
    Long(Block),
}

/// `task NAME [TITLE] [":" DEP …] { … }`
#[derive(Clone, Debug, PartialEq)]
pub struct TaskItem {
    /// The task's name.
    pub name: TaskName,
    /// The optional title string.
    pub title: Option<StrLit>,
    /// Dependencies in source order.
    pub dependencies: Vec<TaskName>,
    /// The body.
    pub block: Block,
    /// The whole item.
    pub span: Span,
}
