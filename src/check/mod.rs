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
//! - `items`: each item's fields and its own rules;
//! - `file`: duplicate definitions and everything that needs the whole file;
//! - [`names`]: the rules for task, branch and glob names and the "did you
//!   mean" suggestion, shared with the plan phase and the REEL front-end.

mod file;
mod items;
pub mod names;
mod values;

use crate::ast::{self, Field};
use crate::diagnostic::Diagnostic;
use crate::model::Model;
use crate::origin::Origin;
use foldhash::HashMap;

/// Checks a syntax tree whose items came from `origin`.
pub fn check(file: &ast::File, origin: &Origin) -> (Model, Vec<Diagnostic>) {
    let mut c = Checker::default();
    c.items(file);
    c.references(file, origin);
    (c.model, c.diagnostics)
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
}
