//! The canonical layout of plans, for `loopc fmt` and the language server
//! (README.md; the layout is documented in `docs/fmt.md`).
//!
//! Formatting never changes what a plan means: literals are copied verbatim
//! from the source and block strings keep their decoded text, so the
//! formatted file compiles to the same plan with the same task keys (docs/cache.md).
//! Comments stay where they were. The output is a fixed point: formatting it
//! again changes nothing.
//!
//! A file the parser reports anything for (syntax errors E0001, bad literals
//! E0012, overflowing integers E0009, bare numeric task ids E0011) is not
//! formatted: its diagnostics are returned and the file is left alone.
//! Checker errors (unknown fields, references…) do not stop formatting.

mod printer;

pub use printer::MAX_WIDTH;

use crate::diagnostic::{self, Code, Diagnostic};
use crate::span::Span;
use std::io::Write;
use std::path::Path;

/// Formats the plan text `source` in the canonical layout (`docs/fmt.md`;
/// docs/language.md for what the text means, README.md for determinism).
///
/// Returns the formatted text (LF line ends, no byte-order mark, one final
/// newline; empty for a file with no items and no comments). Formatting the
/// result again returns it unchanged, and it compiles to the same plan.
///
/// # Errors
///
/// The parser's diagnostics (E0001, E0009, E0011, E0012; spans are byte
/// offsets into `source`), sorted by position, when the file has any
/// syntax-level problem: such a file is not formatted.
pub fn format_source(source: &str) -> Result<String, Vec<Diagnostic>> {
    let (file, mut diagnostics) = crate::syntax::parse(source);
    if diagnostics.is_empty()
        && let Some(span) = file.items.iter().find_map(|i| match i {
            crate::ast::Item::Error(u) => Some(u.span),
            _ => None,
        })
    {
        // The parser reports every error item; this is only a safety net.
        diagnostics.push(Diagnostic::new(
            Code::E0001,
            "this text could not be parsed",
            Span::new(span.start, span.start),
            "unreadable item",
        ));
    }
    if !diagnostics.is_empty() {
        diagnostic::sort(&mut diagnostics);
        return Err(diagnostics);
    }
    Ok(printer::print(source, &file))
}

/// What [`format_file`] did to a file that could be formatted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formatted {
    /// The file was in the canonical layout already.
    Unchanged,
    /// The file was not in the canonical layout: it was rewritten, or, when
    /// only checking, would have been.
    Changed,
}

/// Why [`format_file`] left a file alone.
#[derive(Debug)]
pub enum FmtError {
    /// The file is a REEL spec (`loopc import` converts one into a plan).
    ReelSpec,
    /// The file could not be read.
    Read(std::io::Error),
    /// The file is not UTF-8: its text decoded lossily and the E0001 at the
    /// first invalid byte (spans into that text).
    NotUtf8 {
        /// The text, invalid bytes replaced.
        source: String,
        /// The one E0001.
        diagnostics: Vec<Diagnostic>,
    },
    /// The file has syntax errors ([`format_source`]'s diagnostics).
    Syntax {
        /// The file's text.
        source: String,
        /// The parser's diagnostics, sorted by position.
        diagnostics: Vec<Diagnostic>,
    },
    /// The formatted text could not be written back.
    Write(std::io::Error),
}

/// Formats the plan file at `path` in place; with `check`, only says
/// whether it would change.
///
/// The file is replaced atomically (a reader sees the old or the new text).
///
/// # Errors
///
/// [`FmtError`]: a REEL spec, unreadable, not UTF-8, syntax errors, or the
/// file could not be written; the file is then unchanged.
pub fn format_file(path: &Path, check: bool) -> Result<Formatted, FmtError> {
    if crate::reel::is_spec(path) {
        return Err(FmtError::ReelSpec);
    }
    let bytes = crate::compile::read_file(path).map_err(FmtError::Read)?;
    let Ok(source) = std::str::from_utf8(&bytes) else {
        let c = crate::compile_bytes(&path.display().to_string(), &bytes);
        let diagnostics: Vec<Diagnostic> = c
            .diagnostics
            .into_iter()
            .filter(|d| d.code == Code::E0001)
            .take(1)
            .collect();
        return Err(FmtError::NotUtf8 {
            source: c.source,
            diagnostics,
        });
    };
    let formatted = format_source(source).map_err(|diagnostics| FmtError::Syntax {
        source: source.to_string(),
        diagnostics,
    })?;
    if formatted == source {
        return Ok(Formatted::Unchanged);
    }
    if !check {
        write_atomically(path, formatted.as_bytes()).map_err(FmtError::Write)?;
    }
    Ok(Formatted::Changed)
}

/// Replaces the file at `path` (following symlinks) with `contents`: writes a
/// temporary file beside it, flushes it to disk, copies the permissions, and
/// renames it over the original, so a reader sees the old or the new file,
/// never a partial one.
///
/// Errors: the directory is not writable, the disk is full, the rename fails.
fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let target = std::fs::canonicalize(path)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plan.loop".to_string());
    let permissions = std::fs::metadata(&target)?.permissions();
    let mut attempt = 0u32;
    let (tmp_path, mut tmp) = loop {
        let candidate = dir.join(format!(
            ".{file_name}.loopc-fmt.{}.{attempt}",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => break (candidate, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        tmp.write_all(contents)?;
        tmp.sync_all()?;
        drop(tmp);
        std::fs::set_permissions(&tmp_path, permissions)?;
        std::fs::rename(&tmp_path, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp_path);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::format_source;

    fn fmt(s: &str) -> String {
        match format_source(s) {
            Ok(f) => f,
            Err(d) => panic!("not formatted: {d:?}"),
        }
    }

    #[test]
    fn aligns_fields_and_separates_items() {
        let out = fmt("agent a {run=\"x\" timeout=1m}\ntask t {prompt=\"p\" agent=a}");
        assert_eq!(
            out,
            "agent a {\n  run     = \"x\"\n  timeout = 1m\n}\n\ntask t {\n  prompt = \"p\"\n  agent  = a\n}\n"
        );
    }

    #[test]
    fn keeps_adjacent_short_gates_together() {
        let out = fmt("gate a = \"x\"\ngate b = \"y\"\n\n\ngate c = \"z\"\n");
        assert_eq!(out, "gate a = \"x\"\ngate b = \"y\"\n\ngate c = \"z\"\n");
    }

    #[test]
    fn reindents_block_strings() {
        let out =
            fmt("task t {\nprompt = \"\"\"\n        a\n          b\n\n        c\n   \"\"\"\n}");
        assert_eq!(
            out,
            "task t {\n  prompt = \"\"\"\n      a\n        b\n\n      c\n      \"\"\"\n}\n"
        );
    }

    #[test]
    fn comments_stay() {
        let src = "# head\n\ntask t { # open\n  # own\n  run = \"x\" # trail\n  # end\n} # after\n# tail\n";
        let out = fmt(src);
        assert_eq!(
            out,
            "# head\n\ntask t { # open\n  # own\n  run = \"x\" # trail\n  # end\n} # after\n# tail\n"
        );
    }

    #[test]
    fn long_lists_break_and_short_ones_join() {
        let long: Vec<String> = (0..12).map(|i| format!("\"src/module{i}/**\"")).collect();
        let src = format!(
            "task t {{ run = \"x\" inputs = [{}] gates = [\n a,\n b,\n] }}",
            long.join(",")
        );
        let out = fmt(&src);
        assert!(out.contains("  gates  = [a, b]\n"), "{out}");
        assert!(
            out.contains("  inputs = [\n    \"src/module0/**\",\n"),
            "{out}"
        );
        assert!(out.contains("    \"src/module11/**\",\n  ]\n"), "{out}");
    }

    #[test]
    fn refuses_syntax_errors() {
        let Err(d) = format_source("task t { prompt = }") else {
            panic!("formatted a broken file")
        };
        assert_eq!(d[0].code, crate::diagnostic::Code::E0001);
    }

    #[test]
    fn empty_and_comment_only_files() {
        assert_eq!(fmt(""), "");
        assert_eq!(fmt("\n\n"), "");
        assert_eq!(fmt("  # only\n\n\n# two  \n"), "# only\n\n# two\n");
    }
}
