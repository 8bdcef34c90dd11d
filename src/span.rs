//! Byte spans into a source file.

use std::fmt;

/// A half-open range of **byte offsets** `start..end` into one source file.
///
/// Every AST node carries one, so that every later diagnostic can point back
/// at the text it is about (docs/language.md: "every diagnostic carries a primary span").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// Offset of the first byte.
    pub start: usize,
    /// Offset one past the last byte.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end` (byte offsets, `start <= end`).
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start,
            end: end.max(start),
        }
    }

    /// An empty span at `offset`.
    pub fn at(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// This span moved `by` bytes to the right.
    pub fn shift(self, by: usize) -> Span {
        Span::new(self.start + by, self.end + by)
    }

    /// The range form, for indexing a `&str`.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

/// The byte offset of the end of the line holding `from` in `text`: the
/// next line break (`\n`, or `\r` alone or before `\n`) at or after `from`,
/// else `text.len()`.
///
/// This is loopc's one line model, the one LSP and editors use: a line ends
/// at `\n`, `\r\n` or a lone `\r`. The lexer (comments, strings that close
/// on their line), the parser's recovery, diagnostics and the language
/// server all count lines this way.
pub fn line_end(text: &str, from: usize) -> usize {
    text.as_bytes()
        .get(from..)
        .and_then(|rest| rest.iter().position(|&b| b == b'\n' || b == b'\r'))
        .map_or(text.len(), |n| from + n)
}

/// The byte offset where the line holding `at` starts (see [`line_end`]).
pub fn line_start(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .rposition(|&b| b == b'\n' || b == b'\r')
        .map_or(0, |n| n + 1)
}

/// The byte offset where the line after the one ending at `end` starts
/// (`end` as returned by [`line_end`]): past `\n`, `\r\n` or `\r`.
pub fn next_line(text: &str, end: usize) -> usize {
    let bytes = text.as_bytes();
    match bytes.get(end) {
        Some(b'\r') if bytes.get(end + 1) == Some(&b'\n') => end + 2,
        Some(b'\r' | b'\n') => end + 1,
        _ => text.len(),
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}
