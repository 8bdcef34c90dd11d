//! Checker stub.
use crate::{ast, diagnostic::Diagnostic};
/// Model.
#[derive(Debug, Default)]
pub struct Model;
/// Checks.
pub fn check(_f: &ast::File) -> (Model, Vec<Diagnostic>) {
    (Model, vec![])
}
