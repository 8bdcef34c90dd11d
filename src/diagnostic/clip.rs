//! Long lines in human diagnostics: a diagnostic whose labels sit on a line
//! longer than [`LONG_LINE`] bytes (a one-line JSON spec, a minified or
//! generated plan) shows that line only around its labels, with `…` where
//! text is left out, instead of the whole line once per diagnostic.
//!
//! codespan-reporting prints whole source lines, so the diagnostic is
//! rendered against a stand-in text ([`Clipped`]) that holds only the
//! labelled lines, each cut to windows around the labels; line numbers and
//! columns are mapped back to the real file, so the header still says
//! `file:line:column` of the real text.

use super::sources::IndexedFiles;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{self, Files};
use std::ops::Range;

/// Lines longer than this many bytes are shown around their labels only.
pub(super) const LONG_LINE: usize = 400;
/// The bytes of context kept on either side of a label's ends.
const CONTEXT: usize = 60;
/// What stands for the text left out.
const ELLIPSIS: &str = "…";

/// The stand-in texts of one diagnostic's files (by file id), for
/// codespan-reporting.
pub(super) struct Clipped<'f, 'a> {
    base: &'f IndexedFiles<'a>,
    files: Vec<Option<ClippedFile>>,
}

/// One file's stand-in text: its labelled lines, in order.
struct ClippedFile {
    text: String,
    lines: Vec<ClippedLine>,
}

/// A labelled line of the real file in the stand-in text.
struct ClippedLine {
    /// The 0-based line in the real file.
    real_line: usize,
    /// Where the line starts in the real file.
    real_start: usize,
    /// Where it starts in the stand-in text.
    start: usize,
    /// Its pieces of real text: (start in the stand-in text, real range).
    pieces: Vec<(usize, Range<usize>)>,
}

impl<'f, 'a> Clipped<'f, 'a> {
    /// `diagnostic` (rendered against `base`) with its long lines cut, or
    /// `None` when none of its labelled lines is long.
    pub(super) fn new(
        base: &'f IndexedFiles<'a>,
        diagnostic: &cs::Diagnostic<usize>,
    ) -> Option<(Clipped<'f, 'a>, cs::Diagnostic<usize>)> {
        // The labels' ends, by file.
        let mut points: Vec<Vec<usize>> = vec![Vec::new(); base.files.len()];
        for label in &diagnostic.labels {
            let list = points.get_mut(label.file_id)?;
            list.extend([label.range.start, label.range.end]);
        }
        let long = points.iter().enumerate().any(|(id, ps)| {
            let Ok((_, shown, index)) = base.get(id) else {
                return false;
            };
            let text = &shown.text;
            ps.iter().any(|&p| {
                let line = index.line_of(p);
                index
                    .line_range(text, line)
                    .is_some_and(|r| r.len() > LONG_LINE)
            })
        });
        if !long {
            return None;
        }
        let files = points
            .iter()
            .enumerate()
            .map(|(id, ps)| {
                let (_, shown, index) = base.get(id).ok()?;
                (!ps.is_empty()).then(|| ClippedFile::new(&shown.text, index, ps))
            })
            .collect();
        let clipped = Clipped { base, files };
        let mut diagnostic = diagnostic.clone();
        for label in &mut diagnostic.labels {
            let file = clipped.files.get(label.file_id)?.as_ref()?;
            label.range = file.to_clipped(label.range.start)..file.to_clipped(label.range.end);
        }
        Some((clipped, diagnostic))
    }

    fn file(&self, id: usize) -> Result<&ClippedFile, files::Error> {
        self.files
            .get(id)
            .and_then(Option::as_ref)
            .ok_or(files::Error::FileMissing)
    }
}

impl ClippedFile {
    /// The lines of `text` holding `points`, each cut to windows around
    /// its points when it is longer than [`LONG_LINE`].
    fn new(text: &str, index: &super::LineIndex, points: &[usize]) -> ClippedFile {
        let mut lines: Vec<usize> = points.iter().map(|&p| index.line_of(p)).collect();
        lines.sort_unstable();
        lines.dedup();
        let mut out = ClippedFile {
            text: String::new(),
            lines: Vec::with_capacity(lines.len()),
        };
        for line in lines {
            let Some(range) = index.line_range(text, line) else {
                continue;
            };
            // The line without its line break.
            let body_end = range.start + text[range.clone()].trim_end_matches(['\n', '\r']).len();
            let body = range.start..body_end;
            let windows = if body.len() > LONG_LINE {
                let mut here: Vec<usize> = points
                    .iter()
                    .copied()
                    .filter(|p| range.contains(p) || *p == range.end)
                    .collect();
                here.sort_unstable();
                windows(text, &body, &here)
            } else {
                vec![body.clone()]
            };
            let start = out.text.len();
            let mut pieces = Vec::with_capacity(windows.len());
            let mut last = body.start;
            for w in windows {
                if w.start > last {
                    out.text.push_str(ELLIPSIS);
                }
                pieces.push((out.text.len(), w.clone()));
                out.text.push_str(&text[w.clone()]);
                last = w.end;
            }
            if last < body.end {
                out.text.push_str(ELLIPSIS);
            }
            out.text.push('\n');
            out.lines.push(ClippedLine {
                real_line: line,
                real_start: range.start,
                start,
                pieces,
            });
        }
        out
    }

    /// The stand-in offset of the real offset `at` (a label's end: inside
    /// one of the pieces, or at its line's end).
    fn to_clipped(&self, at: usize) -> usize {
        for line in &self.lines {
            for (start, real) in &line.pieces {
                if real.contains(&at) || real.end == at {
                    return start + (at - real.start);
                }
            }
        }
        // A line break (a label's end past its line's text): the end of
        // the stand-in line before the next.
        let next = self.lines.partition_point(|l| l.real_start <= at);
        self.lines
            .get(next)
            .map_or(self.text.len(), |l| l.start.saturating_sub(1))
    }

    /// Stand-in line `index`.
    ///
    /// Errors: there is no such line.
    fn get(&self, index: usize) -> Result<&ClippedLine, files::Error> {
        self.lines.get(index).ok_or(files::Error::LineTooLarge {
            given: index,
            max: self.lines.len().saturating_sub(1),
        })
    }

    /// The stand-in line holding stand-in offset `at`.
    fn line(&self, at: usize) -> usize {
        self.lines
            .partition_point(|l| l.start <= at)
            .saturating_sub(1)
    }

    /// The real offset of stand-in offset `at` on line `line`.
    fn to_real(&self, line: &ClippedLine, at: usize) -> usize {
        let mut real = line.real_start;
        for (start, range) in &line.pieces {
            if at < *start {
                break;
            }
            real = range.start + (at - start).min(range.len());
        }
        real
    }
}

/// Windows of `body` (a line's text range in `text`) around the sorted
/// `points`, [`CONTEXT`] bytes either side, merged where they touch and cut
/// at character boundaries.
fn windows(text: &str, body: &Range<usize>, points: &[usize]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for &p in points {
        let mut start = p.saturating_sub(CONTEXT).max(body.start);
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        start = escape_start(text, start).max(body.start);
        let mut end = (p + CONTEXT).min(body.end);
        while !text.is_char_boundary(end) {
            end += 1;
        }
        if escape_start(text, end) < end {
            end = text[end..]
                .find('}')
                .map_or(body.end, |n| end + n + 1)
                .min(body.end);
        }
        match out.last_mut() {
            Some(last) if start <= last.end => last.end = last.end.max(end),
            _ => out.push(start..end),
        }
    }
    out
}

/// The start of the escape (`\u{202e}`: how hidden characters are shown)
/// that `at` falls inside in `text`, else `at`: a window never begins or
/// ends in the middle of one.
fn escape_start(text: &str, at: usize) -> usize {
    // The longest escape, `\u{10ffff}`, is 10 bytes.
    let from = at.saturating_sub(10);
    let before = &text.as_bytes()[from..at];
    match before.iter().rposition(|&b| b == b'\\') {
        Some(i)
            if text.as_bytes()[from + i..].starts_with(b"\\u{") && !before[i..].contains(&b'}') =>
        {
            from + i
        }
        _ => at,
    }
}

impl<'f, 'a> Files<'f> for Clipped<'f, 'a> {
    type FileId = usize;
    type Name = &'f str;
    type Source = &'f str;

    fn name(&'f self, id: usize) -> Result<&'f str, files::Error> {
        Ok(&self.base.get(id)?.0)
    }

    fn source(&'f self, id: usize) -> Result<&'f str, files::Error> {
        Ok(&self.file(id)?.text)
    }

    fn line_index(&'f self, id: usize, byte_index: usize) -> Result<usize, files::Error> {
        Ok(self.file(id)?.line(byte_index))
    }

    fn line_number(&'f self, id: usize, line_index: usize) -> Result<usize, files::Error> {
        let file = self.file(id)?;
        let line = file.get(line_index)?;
        Ok(line.real_line + 1)
    }

    /// The column the real file gives the same byte (in the text as
    /// shown; see [`IndexedFiles`]).
    fn column_number(
        &'f self,
        id: usize,
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, files::Error> {
        let file = self.file(id)?;
        let line = file.get(line_index)?;
        let real = file.to_real(line, byte_index);
        self.base.column_number(id, line.real_line, real)
    }

    fn line_range(&'f self, id: usize, line_index: usize) -> Result<Range<usize>, files::Error> {
        let file = self.file(id)?;
        let start = file.get(line_index)?.start;
        let end = file
            .lines
            .get(line_index + 1)
            .map_or(file.text.len(), |l| l.start);
        Ok(start..end)
    }
}
