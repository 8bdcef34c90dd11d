//! `context` lists (docs/language.md "Context every agent reads"): the
//! files whose content every prompt of a task carries. Each entry is a
//! path of a file relative to the repository's top (E0009 otherwise, E0007
//! for a value that is not a string); whether the file is there is the
//! question of [`missing`], which the command layer asks of the checkout
//! (`loopc check`) or of the commit a run starts from (`loopc run`).

use super::{Checker, Fields};
use crate::ast::ValueKind;
use crate::diagnostic::{Code, Diagnostic};
use crate::model::PathPattern;

impl Checker {
    /// The valid paths of the list field `context` with their spans.
    pub(super) fn context_paths(&mut self, f: &Fields<'_>) -> Vec<PathPattern> {
        let mut out: Vec<PathPattern> = Vec::new();
        let Some(items) = self.list(f, "context", "a list of file paths") else {
            return out;
        };
        for v in items {
            match &v.kind {
                ValueKind::String(s) | ValueKind::BlockString(s) => match path_problem(s) {
                    Some(why) => self.push(
                        Diagnostic::new(
                            Code::E0009,
                            format!("`{s}` is not a file path in `context`"),
                            v.span,
                            why,
                        )
                        .with_note(
                            "`context` lists files relative to the repository root, \
                             e.g. `[\"DESIGN.md\", \"AGENTS.md\"]`",
                        ),
                    ),
                    None if out.iter().any(|p| p.pattern == **s) => {}
                    None => out.push(PathPattern {
                        pattern: s.to_string(),
                        span: v.span,
                    }),
                },
                ValueKind::Invalid => {}
                other => self.push(Diagnostic::new(
                    Code::E0007,
                    format!("`context` lists file paths, found {}", other.describe()),
                    v.span,
                    "expected a string",
                )),
            }
        }
        out
    }
}

/// Why `path` is not a repository-relative file path, if it is not.
fn path_problem(path: &str) -> Option<&'static str> {
    if path.trim().is_empty() {
        Some("the path is empty")
    } else if path.starts_with('/') {
        Some("the path is absolute")
    } else if path.contains('\\') {
        Some("paths use `/`")
    } else if path.contains('\0') {
        Some("the path holds a NUL character")
    } else if path.ends_with('/') {
        Some("a directory: name the files")
    } else if path
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        Some("write the path without empty, `.` or `..` steps")
    } else {
        None
    }
}

/// What a `context` path names where it was looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A file: its content goes in the prompt.
    File,
    /// A directory: E0015, name the files.
    Directory,
    /// Nothing: E0015.
    Missing,
}

/// E0015 for each of `files` (every `context` path a plan names, with
/// where: [`crate::Compilation::context`]) that `found` says is not a
/// file there; `place` says where it was looked for (`"in the checkout
/// /repo"`, `"in the commit attempts start from (3f2a9c1d0e)"`).
pub fn missing(
    files: &[PathPattern],
    found: &mut dyn FnMut(&str) -> Found,
    place: &str,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in files {
        let (what, label) = match found(&f.pattern) {
            Found::File => continue,
            Found::Directory => ("a directory", "a directory: name the files"),
            Found::Missing => ("not", "no such file"),
        };
        out.push(
            Diagnostic::new(
                Code::E0015,
                format!("context file `{}` is {what} {place}", f.pattern),
                f.span,
                label,
            )
            .with_note(
                "every prompt of a task with this `context` carries the file's content: add and commit \
                 the file, or remove it from `context`",
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::path_problem;

    #[test]
    fn context_paths_are_relative_file_paths() {
        for ok in ["DESIGN.md", "docs/a b.md", ".github/AGENTS.md"] {
            assert_eq!(path_problem(ok), None, "{ok}");
        }
        for bad in ["", "/etc/passwd", "../x", "a//b", "./a", "docs/", "a\\b"] {
            assert!(path_problem(bad).is_some(), "{bad}");
        }
    }
}
