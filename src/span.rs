//! Byte spans into a source file.

use std::fmt;

/// A half-open range of **byte offsets** `start..end` into one source file.
///
/// Every AST node carries one, so that every later diagnostic can point back
/// at the text it is about (spec §4: "every diagnostic carries a primary span").
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

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}
