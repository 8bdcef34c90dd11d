//! Value readers: one field's value as the type the field takes, reporting
//! type errors (E0007), ranges (E0009) and duplicate or unknown fields of a
//! block (E0002, E0003). A field that is absent or invalid reads as `None`.

use super::names::suggest;
use super::{Checker, Fields, MAX_FIELDS};
use crate::ast::{Block, Field, Value, ValueKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::model::Ref;
use crate::span::Span;
use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

impl Checker {
    /// Reports duplicate (E0003) and unknown (E0002) fields of a block.
    pub(super) fn fields<'a>(
        &mut self,
        block: &'a Block,
        what: &str,
        allowed: &'static [&'static str],
    ) -> Fields<'a> {
        let mut found: [Option<&Field>; MAX_FIELDS] = [None; MAX_FIELDS];
        let mut had_unknown = false;
        for f in &block.fields {
            let name = f.name.text.as_str();
            let Some(at) = allowed.iter().position(|a| *a == name) else {
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
                const DEPENDENCY_WORDS: &[&str] = &[
                    "after",
                    "dependencies",
                    "depends",
                    "depends_on",
                    "deps",
                    "needs",
                    "requires",
                ];
                if allowed.contains(&"prompt") && DEPENDENCY_WORDS.contains(&name) {
                    d = d.with_note(
                        "dependencies go in the task header, as in make: `task NAME: DEP1 DEP2 { … }`",
                    );
                }
                self.push(d);
                had_unknown = true;
                let values = match &f.value.kind {
                    ValueKind::List(items) => items.as_slice(),
                    _ => std::slice::from_ref(&f.value),
                };
                for v in values {
                    if let ValueKind::Name(n) = &v.kind {
                        self.seen.named_by_unknown.insert(n.clone());
                    }
                }
                continue;
            };
            if let Some(prev) = found[at] {
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
            found[at] = Some(f);
        }
        Fields {
            allowed,
            found,
            had_unknown,
        }
    }

    pub(super) fn type_error(&mut self, f: &Field, expected: &str) {
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
                || expected.contains("money")
                || (expected.contains("true") && matches!(&**s, "true" | "false")))
        {
            d = d.with_note(format!("write the value without quotes: `{s}`"));
        }
        self.push(d);
    }

    /// Reports a NUL character in a value that reaches a process through its
    /// arguments or environment, where it cannot be represented (E0009).
    pub(super) fn no_nul(&mut self, what: &str, text: &str, span: Span) -> bool {
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

    /// Reports a value that is empty or only whitespace (E0009): every
    /// string field is a command, a prompt, a branch or a path, and an
    /// empty one would run nothing, ask nothing, or name nothing, and
    /// still pass. The value is kept, so no knock-on "missing" error follows.
    pub(super) fn not_blank(&mut self, what: &str, text: &str, span: Span) {
        if !text.trim().is_empty() {
            return;
        }
        self.push(
            Diagnostic::new(
                Code::E0009,
                format!("{what} is empty"),
                span,
                "an empty value does nothing",
            )
            .with_note("write the command, prompt or name, or remove the field"),
        );
    }

    pub(super) fn string(&mut self, fields: &Fields<'_>, name: &str) -> Option<String> {
        self.text(fields, name).map(|s| s.to_string())
    }

    /// [`Checker::string`] sharing the tree's text instead of copying it
    /// (a task's `prompt` and `run`, the largest strings of a plan).
    pub(super) fn text(&mut self, fields: &Fields<'_>, name: &str) -> Option<Arc<str>> {
        let f = fields.get(name)?;
        match &f.value.kind {
            ValueKind::String(s) | ValueKind::BlockString(s) => {
                // A prompt goes to stdin, where NUL is just a byte. The
                // field's quoted name is only formatted for a diagnostic.
                if name != "prompt"
                    && s.contains('\0')
                    && !self.no_nul(&format!("`{name}`"), s, f.value.span)
                {
                    return None;
                }
                if s.trim().is_empty() {
                    self.not_blank(&format!("`{name}`"), s, f.value.span);
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

    pub(super) fn positive_int(&mut self, fields: &Fields<'_>, name: &str) -> Option<u32> {
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

    /// A count that may be zero (`replans = 0`: never).
    pub(super) fn count(&mut self, fields: &Fields<'_>, name: &str) -> Option<u32> {
        let f = fields.get(name)?;
        match &f.value.kind {
            ValueKind::Integer(n) => Some(*n),
            ValueKind::Invalid => None,
            _ => {
                self.type_error(f, "an integer");
                None
            }
        }
    }

    pub(super) fn duration(&mut self, fields: &Fields<'_>, name: &str) -> Option<Duration> {
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

    pub(super) fn money(&mut self, fields: &Fields<'_>, name: &str) -> Option<u64> {
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

    /// A `true` or `false` field (`verify`); anything else is E0007.
    pub(super) fn boolean(&mut self, fields: &Fields<'_>, name: &str) -> Option<bool> {
        let f = fields.get(name)?;
        match &f.value.kind {
            ValueKind::Bool(b) => Some(*b),
            ValueKind::Invalid => None,
            _ => {
                self.type_error(f, "`true` or `false`");
                None
            }
        }
    }

    pub(super) fn reference(&mut self, fields: &Fields<'_>, name: &str, what: &str) -> Option<Ref> {
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

    pub(super) fn word(
        &mut self,
        fields: &Fields<'_>,
        name: &str,
        words: &[&str],
    ) -> Option<(String, Span)> {
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

    pub(super) fn list<'a>(
        &mut self,
        fields: &Fields<'a>,
        name: &str,
        expected: &str,
    ) -> Option<&'a [Value]> {
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

    pub(super) fn gate_list(&mut self, fields: &Fields<'_>) -> Option<Vec<Ref>> {
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

    pub(super) fn env(&mut self, fields: &Fields<'_>) -> BTreeMap<String, String> {
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
                        out.insert(e.key.text.clone(), s.to_string());
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
}
