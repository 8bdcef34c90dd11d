//! Diagnostics: codes, labels, and their two renderings (docs/language.md).
//!
//! Human output is codespan-reporting's; machine output is one JSON object per
//! diagnostic with LSP ranges (0-based lines, UTF-16 code-unit columns).

use crate::span::Span;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::term::termcolor::WriteColor;
use serde::Serialize;
use std::fmt;

mod clip;
mod human;
mod sources;

pub(crate) use sources::IndexedFiles;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The plan cannot be compiled.
    Error,
    /// The plan compiles; something looks wrong.
    Warning,
}

/// Every diagnostic code of docs/language.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// Syntax error: what was expected, what was found.
    E0001,
    /// Unknown field.
    E0002,
    /// Duplicate field in one block.
    E0003,
    /// Duplicate definition.
    E0004,
    /// Unknown reference to a task, agent or gate.
    E0005,
    /// Dependency cycle.
    E0006,
    /// Wrong value type.
    E0007,
    /// Missing required field.
    E0008,
    /// Value out of range.
    E0009,
    /// Conflicting fields.
    E0010,
    /// Invalid task name.
    E0011,
    /// Invalid literal.
    E0012,
    /// Agent task with no agent.
    E0013,
    /// Invalid glob in `inputs`.
    E0014,
    /// A `context` file that is not in the checkout or the commit a run
    /// starts from.
    E0015,
    /// Agent or gate defined but never used.
    W0001,
    /// Redundant dependency.
    W0002,
    /// Agent tasks but no budget bounds iterations, time or cost.
    W0003,
    /// Plan has no tasks.
    W0004,
    /// A cost budget, and an agent that may report no cost and has no cap.
    W0005,
    /// `on_fail = replan` on a task that no plan fragment adds and that
    /// does not `expand` one: no task can re-plan it.
    W0006,
    /// An agent in use whose per-attempt `cost` cap is more than the
    /// whole `cost` budget: no attempt of it can start.
    W0007,
}

impl Code {
    /// The code as printed, e.g. `"E0001"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::E0001 => "E0001",
            Code::E0002 => "E0002",
            Code::E0003 => "E0003",
            Code::E0004 => "E0004",
            Code::E0005 => "E0005",
            Code::E0006 => "E0006",
            Code::E0007 => "E0007",
            Code::E0008 => "E0008",
            Code::E0009 => "E0009",
            Code::E0010 => "E0010",
            Code::E0011 => "E0011",
            Code::E0012 => "E0012",
            Code::E0013 => "E0013",
            Code::E0014 => "E0014",
            Code::E0015 => "E0015",
            Code::W0001 => "W0001",
            Code::W0002 => "W0002",
            Code::W0003 => "W0003",
            Code::W0004 => "W0004",
            Code::W0005 => "W0005",
            Code::W0006 => "W0006",
            Code::W0007 => "W0007",
        }
    }

    /// Warnings are the `W` codes; everything else is an error.
    pub fn severity(self) -> Severity {
        if self.as_str().starts_with('W') {
            Severity::Warning
        } else {
            Severity::Error
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A message attached to a span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Byte span in the file.
    pub span: Span,
    /// What to say there (may be empty).
    pub message: String,
}

/// One diagnostic: a code, a message, a primary label, secondary labels, notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning (follows from the code unless `--deny-warnings` promotes it).
    pub severity: Severity,
    /// The docs/language.md code.
    pub code: Code,
    /// The headline.
    pub message: String,
    /// The offending text.
    pub primary: Label,
    /// Other places involved (the first definition, each edge of a cycle, …).
    pub secondary: Vec<Label>,
    /// Notes and hints printed under the snippet.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic with `code`'s severity and a primary label at `span`.
    pub fn new(
        code: Code,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: code.severity(),
            code,
            message: message.into(),
            primary: Label {
                span,
                message: label.into(),
            },
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Sorts diagnostics by position, then code, so output is deterministic.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        (a.primary.span.start, a.code, a.primary.span.end).cmp(&(
            b.primary.span.start,
            b.code,
            b.primary.span.end,
        ))
    });
}

/// Writes `diagnostics` for the file `name` with contents `source` in
/// codespan-reporting's human format. Colors follow `out`.
pub fn emit_human(
    out: &mut dyn WriteColor,
    name: &str,
    source: &str,
    diagnostics: &[Diagnostic],
) -> std::io::Result<()> {
    if diagnostics.is_empty() {
        return Ok(());
    }
    let files = IndexedFiles::new(vec![(name, source)]);
    files.emit(out, diagnostics, |span| (0, clamp(span, source.len())))
}

/// How many diagnostics of one file the human format shows; the rest are
/// counted in one closing line. Each shown diagnostic quotes its source
/// line, so without a bound the output grows as diagnostics × line length.
pub const HUMAN_LIMIT: usize = 100;

/// Renders diagnostics to a plain (uncolored) string; used by tests and the LSP.
pub fn render_plain(name: &str, source: &str, diagnostics: &[Diagnostic]) -> String {
    let mut buf = codespan_reporting::term::termcolor::NoColor::new(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = emit_human(&mut buf, name, source, diagnostics);
    String::from_utf8_lossy(&buf.into_inner()).into_owned()
}

fn clamp(span: Span, len: usize) -> std::ops::Range<usize> {
    let start = span.start.min(len);
    let end = span.end.min(len).max(start);
    start..end
}

/// `d` for codespan-reporting; `place` maps a span to its file id and the
/// byte range within that file.
fn to_codespan<F>(
    d: &Diagnostic,
    place: &impl Fn(Span) -> (F, std::ops::Range<usize>),
) -> cs::Diagnostic<F> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let shown = |text: &str| crate::visible::escape(text, &['\n']).into_owned();
    let label = |style: cs::LabelStyle, l: &Label| {
        let (file, range) = place(l.span);
        cs::Label::new(style, file, range).with_message(shown(&l.message))
    };
    let mut labels = vec![label(cs::LabelStyle::Primary, &d.primary)];
    labels.extend(
        d.secondary
            .iter()
            .map(|l| label(cs::LabelStyle::Secondary, l)),
    );
    cs::Diagnostic::new(severity)
        .with_code(d.code.as_str())
        .with_message(shown(&d.message))
        .with_labels(labels)
        .with_notes(d.notes.iter().map(|n| shown(n)).collect())
}

/// Maps byte offsets to LSP positions (0-based line, UTF-16 column).
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    /// For text that is not all ASCII: the UTF-16 code units before the
    /// first character boundary at or after each [`UTF16_BLOCK`] bytes, so
    /// that a column costs at most a block's scan, not its line's (a
    /// one-line JSON spec with thousands of diagnostics was quadratic).
    /// Empty for ASCII text, whose columns are byte counts.
    utf16_blocks: Vec<usize>,
}

/// The bytes between two of [`LineIndex`]'s UTF-16 checkpoints.
const UTF16_BLOCK: usize = 1024;

/// An LSP position: 0-based line and UTF-16 code-unit column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Position {
    /// 0-based line.
    pub line: u32,
    /// 0-based column in UTF-16 code units.
    pub character: u32,
}

/// An LSP range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Range {
    /// Inclusive start.
    pub start: Position,
    /// Exclusive end.
    pub end: Position,
}

impl LineIndex {
    /// Indexes the line starts of `source`. Lines end at `\n`, `\r\n` or a
    /// lone `\r`, as in LSP (see [`crate::span::line_end`]).
    pub fn new(source: &str) -> Self {
        let bytes = source.as_bytes();
        let mut line_starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                line_starts.push(i + 1);
            }
        }
        let mut utf16_blocks = Vec::new();
        if !source.is_ascii() {
            utf16_blocks.reserve_exact(source.len() / UTF16_BLOCK + 1);
            let mut units = 0;
            for (i, c) in source.char_indices() {
                while utf16_blocks.len() * UTF16_BLOCK <= i {
                    utf16_blocks.push(units);
                }
                units += c.len_utf16();
            }
            while utf16_blocks.len() * UTF16_BLOCK <= source.len() {
                utf16_blocks.push(units);
            }
        }
        LineIndex {
            line_starts,
            utf16_blocks,
        }
    }

    /// The UTF-16 code units of `source[..offset]` (`offset` a character
    /// boundary of the indexed `source`).
    fn utf16_before(&self, source: &str, offset: usize) -> usize {
        let block = offset / UTF16_BLOCK;
        let Some(&units) = self.utf16_blocks.get(block) else {
            return offset; // ASCII: one unit a byte
        };
        let mut at = block * UTF16_BLOCK;
        while !source.is_char_boundary(at) {
            at += 1;
        }
        units
            + source[at..offset]
                .chars()
                .map(char::len_utf16)
                .sum::<usize>()
    }

    /// The number of lines (at least 1).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The 0-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset) - 1
    }

    /// The byte range of line `line`, its line break included; `None` past
    /// the last line.
    pub fn line_range(&self, source: &str, line: usize) -> Option<std::ops::Range<usize>> {
        let start = *self.line_starts.get(line)?;
        let end = self
            .line_starts
            .get(line + 1)
            .copied()
            .unwrap_or(source.len());
        Some(start..end)
    }

    /// The position of byte `offset` in `source` (clamped to the text; an
    /// offset inside a multi-byte character counts from its start).
    pub fn position(&self, source: &str, offset: usize) -> Position {
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let character = self.utf16_before(source, offset) - self.utf16_before(source, start);
        Position {
            line: line as u32,
            character: character as u32,
        }
    }

    /// The byte offset of an LSP position (clamped to the line's end).
    pub fn offset(&self, source: &str, position: Position) -> usize {
        let Some(&start) = self.line_starts.get(position.line as usize) else {
            return source.len();
        };
        let end = self
            .line_starts
            .get(position.line as usize + 1)
            .copied()
            .unwrap_or(source.len());
        let mut units = 0u32;
        for (i, c) in source[start..end].char_indices() {
            if units >= position.character || c == '\n' || c == '\r' {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }

    /// The LSP range of a byte span.
    pub fn range(&self, source: &str, span: Span) -> Range {
        Range {
            start: self.position(source, span.start),
            end: self.position(source, span.end),
        }
    }
}

/// One label of the JSON form; `file` only when a plan spans several files.
#[derive(Serialize)]
pub(crate) struct JsonLabel<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<&'a str>,
    pub range: Range,
    pub message: &'a str,
    pub primary: bool,
}

/// The JSON form of one diagnostic (docs/language.md), shared with [`crate::source_map`].
#[derive(Serialize)]
pub(crate) struct JsonDiagnostic<'a> {
    pub file: &'a str,
    pub severity: Severity,
    pub code: &'static str,
    pub message: &'a str,
    pub range: Range,
    pub labels: Vec<JsonLabel<'a>>,
    pub notes: &'a [String],
}

/// One diagnostic as the single-line JSON object of docs/language.md (no newline).
///
/// Fields: `file`, `severity` (`"error"`/`"warning"`), `code`, `message`,
/// `range` (the primary span), `labels` (every label, each
/// `{"range","message","primary"}`), `notes` (strings).
pub fn to_json_line(file: &str, source: &str, index: &LineIndex, d: &Diagnostic) -> String {
    let mut labels = vec![JsonLabel {
        file: None,
        range: index.range(source, d.primary.span),
        message: &d.primary.message,
        primary: true,
    }];
    for l in &d.secondary {
        labels.push(JsonLabel {
            file: None,
            range: index.range(source, l.span),
            message: &l.message,
            primary: false,
        });
    }
    let json = JsonDiagnostic {
        file,
        severity: d.severity,
        code: d.code.as_str(),
        message: &d.message,
        range: index.range(source, d.primary.span),
        labels,
        notes: &d.notes,
    };
    serde_json::to_string(&json).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_shown_around_its_labels() {
        let x = "x".repeat(300);
        let y = "y".repeat(300);
        let source = format!("short\n{x}BAD{y} é\nlast\n");
        let at = 6 + 300;
        let d = Diagnostic::new(Code::E0001, "bad", Span::new(at, at + 3), "here")
            .with_label(Span::new(0, 5), "and here");
        let shown = format!("…{}BAD{}…", &x[..60], &y[..60]);
        assert_eq!(
            render_plain("plan.loop", &source, &[d]),
            format!(
                "error[E0001]: bad\n  ┌─ plan.loop:2:301\n  │\n1 │ short\n  │ ----- and here\n2 │ {shown}\n  │{pad}^^^ here\n\n",
                pad = " ".repeat(62)
            )
        );
    }

    #[test]
    fn a_cut_long_line_never_splits_an_escape() {
        for pad in 0..10 {
            let source = format!("{}{}BAD\n", "x".repeat(pad), "\u{202e}".repeat(300));
            let at = source.find("BAD").unwrap();
            let d = Diagnostic::new(Code::E0001, "bad", Span::new(at, at + 3), "here");
            let out = render_plain("plan.loop", &source, &[d]);
            let line = out.lines().find(|l| l.starts_with("1 │ ")).unwrap();
            assert!(line.starts_with("1 │ …\\u{202e}"), "{pad}: {line}");
            assert!(line.ends_with("\\u{202e}BAD"), "{pad}: {line}");
        }
    }

    #[test]
    fn utf16_columns_of_long_lines_count_from_their_line() {
        let text = format!("é\n{}😀x", "é".repeat(3000));
        let index = LineIndex::new(&text);
        let x = text.len() - 1;
        assert_eq!(index.position(&text, x).character, 3000 + 2);
        assert_eq!(index.position(&text, 3 + 2 * 1500).character, 1500);
        assert_eq!(index.position(&text, 2).character, 1);
    }

    #[test]
    fn lf_crlf_and_a_lone_cr_each_end_one_line() {
        let text = "a\nb\r\nc\rd";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        for (offset, line, character) in [(0, 0, 0), (2, 1, 0), (3, 1, 1), (5, 2, 0), (7, 3, 0)] {
            let p = index.position(text, offset);
            assert_eq!((p.line, p.character), (line, character), "offset {offset}");
            assert_eq!(index.offset(text, p), offset);
        }
        // A column past the end of a line stops before its line break.
        assert_eq!(
            index.offset(
                text,
                Position {
                    line: 2,
                    character: 9
                }
            ),
            6
        );
        assert_eq!(
            index.offset(
                text,
                Position {
                    line: 1,
                    character: 9
                }
            ),
            3
        );
        assert_eq!(crate::span::line_end(text, 5), 6);
        assert_eq!(crate::span::line_start(text, 7), 7);
        assert_eq!(crate::span::next_line(text, 3), 5);
    }

    #[test]
    fn utf16_columns_count_surrogate_pairs() {
        let src = "a = \"😀é\" x\nb";
        let idx = LineIndex::new(src);
        let x = src.find(" x").unwrap() + 1;
        assert_eq!(
            idx.position(src, x),
            Position {
                line: 0,
                character: 10
            }
        );
        assert_eq!(
            idx.offset(
                src,
                Position {
                    line: 0,
                    character: 10
                }
            ),
            x
        );
        let b = src.len() - 1;
        assert_eq!(
            idx.position(src, b),
            Position {
                line: 1,
                character: 0
            }
        );
    }
}
