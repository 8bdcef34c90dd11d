//! Source files for codespan-reporting, indexed once and shown as a person
//! may safely read them; the human format ([`super::human`]) and its long
//! line cutter ([`super::clip`]) both render against them.

use super::LineIndex;
use codespan_reporting::files;
use std::borrow::Cow;

/// Source files for codespan-reporting, each with a [`LineIndex`], so that
/// human output counts lines exactly as the JSON form and the language
/// server do (`\n`, `\r\n` and a lone `\r` end a line) and each file's
/// lines are indexed once.
///
/// File names and the quoted source lines are shown as [`crate::visible`]
/// shows text: hidden characters (other than line ends and tabs in lines) as escapes
/// (`\u{202e}`, `\u{1b}`), so a snippet can neither drive the terminal nor
/// be reordered on screen; labels point into the text as shown.
pub(crate) struct IndexedFiles<'a> {
    pub(super) files: Vec<(Cow<'a, str>, Shown<'a>, LineIndex)>,
}

/// A file's text as human diagnostics quote it, and how far each escape
/// moved the bytes after it.
pub(super) struct Shown<'a> {
    original: &'a str,
    pub(super) text: Cow<'a, str>,
    /// Per escaped character, in order: the original offset just after it
    /// and how many bytes longer the text as shown is from there on.
    shifts: Vec<(usize, usize)>,
}

impl<'a> Shown<'a> {
    fn new(text: &'a str) -> Self {
        const KEEP: [char; 3] = ['\n', '\r', '\t'];
        let shown = crate::visible::escape(text, &KEEP);
        let mut shifts = Vec::new();
        if let Cow::Owned(_) = shown {
            let mut extra = 0;
            for (at, c) in text.char_indices() {
                if crate::visible::is_hidden(c) && !KEEP.contains(&c) {
                    extra += c.escape_default().count() - c.len_utf8();
                    shifts.push((at + c.len_utf8(), extra));
                }
            }
        }
        Shown {
            original: text,
            text: shown,
            shifts,
        }
    }

    /// Original byte `offset` in the text as shown.
    pub(super) fn at(&self, offset: usize) -> usize {
        match self.shifts.partition_point(|&(end, _)| end <= offset) {
            0 => offset,
            n => offset + self.shifts[n - 1].1,
        }
    }

    /// Byte `offset` of the text as shown in the original (labels start and
    /// end at characters, never inside an escape).
    fn original_at(&self, offset: usize) -> usize {
        match self
            .shifts
            .partition_point(|&(end, extra)| end + extra <= offset)
        {
            0 => offset,
            n => offset - self.shifts[n - 1].1,
        }
    }
}

impl<'a> IndexedFiles<'a> {
    /// Indexes `(name, text)` pairs; file ids are their positions.
    pub(crate) fn new(files: Vec<(&'a str, &'a str)>) -> Self {
        IndexedFiles {
            files: files
                .into_iter()
                .map(|(name, text)| {
                    let shown = Shown::new(text);
                    let index = LineIndex::new(&shown.text);
                    (crate::visible::escape(name, &[]), shown, index)
                })
                .collect(),
        }
    }

    pub(super) fn get(
        &self,
        id: usize,
    ) -> Result<&(Cow<'a, str>, Shown<'a>, LineIndex), files::Error> {
        self.files.get(id).ok_or(files::Error::FileMissing)
    }
}

impl<'a> files::Files<'a> for IndexedFiles<'a> {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, files::Error> {
        Ok(&self.get(id)?.0)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, files::Error> {
        Ok(&self.get(id)?.1.text)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, files::Error> {
        Ok(self.get(id)?.2.line_of(byte_index))
    }

    /// The 1-based column of `byte_index` (in the text as shown) counted in
    /// characters of the original line, as an editor counts it.
    fn column_number(
        &'a self,
        id: usize,
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, files::Error> {
        let start = self.line_range(id, line_index)?.start;
        let shown = &self.get(id)?.1;
        let (from, to) = (shown.original_at(start), shown.original_at(byte_index));
        Ok(shown
            .original
            .get(from..to.max(from))
            .map_or(0, |s| s.chars().count())
            + 1)
    }

    fn line_range(
        &'a self,
        id: usize,
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, files::Error> {
        let (_, shown, index) = self.get(id)?;
        index
            .line_range(&shown.text, line_index)
            .ok_or(files::Error::LineTooLarge {
                given: line_index,
                max: index.line_count() - 1,
            })
    }
}
