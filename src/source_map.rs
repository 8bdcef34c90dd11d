//! Several source files behind one byte buffer, so that a plan made of more
//! than one file (a REEL spec and its `defaults.loop`, a directory of specs)
//! keeps plain byte [`Span`]s everywhere and still reports each diagnostic in
//! the file and at the line it is about (docs/language.md: "every diagnostic carries a
//! primary span (file, line, column)").
//!
//! The buffer is the files' texts in order, each followed by one `\n`
//! separator that belongs to no file, so that an empty span at the end of one
//! file is never taken for the start of the next. A map of one file starting
//! at offset 0 is exactly the single-file case of [`crate::diagnostic`].

use crate::diagnostic::{
    self, Diagnostic, IndexedFiles, JsonDiagnostic, JsonLabel, LineIndex, Range,
};
use crate::span::Span;
use codespan_reporting::term::termcolor::WriteColor;

/// One file of a [`SourceMap`]: its name and where its text sits in the buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedFile {
    /// The file name as shown in diagnostics.
    pub name: String,
    /// Byte offsets of the file's text in the buffer (`start..end`).
    pub span: Span,
}

/// The files behind a compilation's source buffer, in buffer order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    files: Vec<MappedFile>,
}

impl SourceMap {
    /// The map of a single file `name` whose text is the whole buffer of
    /// `len` bytes.
    pub fn single(name: &str, len: usize) -> SourceMap {
        SourceMap {
            files: vec![MappedFile {
                name: name.to_string(),
                span: Span::new(0, len),
            }],
        }
    }

    /// Appends the file `name` with contents `text` to `buffer` (after a `\n`
    /// separator when the buffer already holds a file) and records it.
    /// Returns the byte offset at which `text` starts in `buffer`.
    pub fn push(&mut self, buffer: &mut String, name: &str, text: &str) -> usize {
        if !self.files.is_empty() {
            buffer.push('\n');
        }
        let start = buffer.len();
        buffer.push_str(text);
        self.files.push(MappedFile {
            name: name.to_string(),
            span: Span::new(start, buffer.len()),
        });
        start
    }

    /// The files in buffer order.
    pub fn files(&self) -> &[MappedFile] {
        &self.files
    }

    /// The index of the file that holds byte `offset` (an offset in a
    /// separator belongs to the file before it; offsets past the end to the
    /// last file). `None` only for an empty map.
    pub fn file_of(&self, offset: usize) -> Option<usize> {
        let after = self.files.partition_point(|f| f.span.start <= offset);
        after
            .checked_sub(1)
            .or(if self.files.is_empty() { None } else { Some(0) })
    }

    /// The file holding `span.start` and `span` relative to that file's
    /// text, clamped to it.
    pub fn locate(&self, span: Span) -> Option<(&MappedFile, Span)> {
        let file = &self.files[self.file_of(span.start)?];
        let clamp = |o: usize| o.clamp(file.span.start, file.span.end) - file.span.start;
        Some((file, Span::new(clamp(span.start), clamp(span.end))))
    }

    /// Writes `diagnostics` in codespan-reporting's human format, each label
    /// in its own file. `source` is the whole buffer; colors follow `out`.
    ///
    /// Errors: those of `out`.
    pub fn emit_human(
        &self,
        out: &mut dyn WriteColor,
        source: &str,
        diagnostics: &[Diagnostic],
    ) -> std::io::Result<()> {
        if diagnostics.is_empty() {
            // Nothing to show: no line index to build (a large plan's
            // lines are many).
            return Ok(());
        }
        if let [only] = self.files.as_slice()
            && only.span.start == 0
        {
            let text = source.get(only.span.range()).unwrap_or(source);
            return diagnostic::emit_human(out, &only.name, text, diagnostics);
        }
        let files = IndexedFiles::new(
            self.files
                .iter()
                .map(|f| (f.name.as_str(), source.get(f.span.range()).unwrap_or("")))
                .collect(),
        );
        files.emit(out, diagnostics, |span| match self.file_of(span.start) {
            Some(i) => (i, self.locate(span).map_or(span, |(_, s)| s).range()),
            None => (0, span.range()),
        })
    }

    /// [`SourceMap::emit_human`] into a plain (uncolored) string.
    pub fn render_plain(&self, source: &str, diagnostics: &[Diagnostic]) -> String {
        let mut buf = codespan_reporting::term::termcolor::NoColor::new(Vec::new());
        // Writing to a Vec cannot fail.
        let _ = self.emit_human(&mut buf, source, diagnostics);
        String::from_utf8_lossy(&buf.into_inner()).into_owned()
    }

    /// One diagnostic as the single-line JSON object of docs/language.md: `file` is
    /// the file of the primary span and every range is relative to its own
    /// file. With more than one file, each label also carries its `file`.
    ///
    /// For many diagnostics use [`SourceMap::to_json_lines`], which indexes
    /// each file's lines once.
    pub fn to_json_line(&self, source: &str, d: &Diagnostic) -> String {
        self.to_json_lines(source, std::slice::from_ref(d))
            .pop()
            .unwrap_or_default()
    }

    /// [`SourceMap::to_json_line`] for each of `diagnostics`, in order.
    pub fn to_json_lines(&self, source: &str, diagnostics: &[Diagnostic]) -> Vec<String> {
        if diagnostics.is_empty() {
            return Vec::new();
        }
        let indexes: Vec<LineIndex> = self
            .files
            .iter()
            .map(|f| LineIndex::new(source.get(f.span.range()).unwrap_or("")))
            .collect();
        diagnostics
            .iter()
            .map(|d| self.json_line(source, d, &indexes))
            .collect()
    }

    fn json_line(&self, source: &str, d: &Diagnostic, indexes: &[LineIndex]) -> String {
        let Some((file, _)) = self.locate(d.primary.span) else {
            return String::new();
        };
        if let [only] = self.files.as_slice()
            && only.span.start == 0
            && let [index] = indexes
        {
            let text = source.get(only.span.range()).unwrap_or(source);
            return diagnostic::to_json_line(&only.name, text, index, d);
        }
        let range = |span: Span| -> (&str, Range) {
            match (self.locate(span), self.file_of(span.start)) {
                (Some((f, local)), Some(i)) if i < indexes.len() => {
                    let text = source.get(f.span.range()).unwrap_or("");
                    (f.name.as_str(), indexes[i].range(text, local))
                }
                _ => ("", LineIndex::new("").range("", Span::at(0))),
            }
        };
        let mut labels = Vec::with_capacity(1 + d.secondary.len());
        let (_, primary_range) = range(d.primary.span);
        labels.push(JsonLabel {
            file: Some(file.name.as_str()),
            range: primary_range,
            message: &d.primary.message,
            primary: true,
        });
        for l in &d.secondary {
            let (name, r) = range(l.span);
            labels.push(JsonLabel {
                file: Some(name),
                range: r,
                message: &l.message,
                primary: false,
            });
        }
        let json = JsonDiagnostic {
            file: &file.name,
            severity: d.severity,
            code: d.code.as_str(),
            message: &d.message,
            range: primary_range,
            labels,
            notes: &d.notes,
        };
        serde_json::to_string(&json).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;

    #[test]
    fn spans_are_located_in_their_own_file() {
        let mut buf = String::new();
        let mut map = SourceMap::default();
        let a = map.push(&mut buf, "a.loop", "one\ntwo");
        let b = map.push(&mut buf, "b.md", "x\ny\nz");
        assert_eq!((a, b), (0, 8));
        // The end of `a` (an empty span at its EOF) stays in `a`.
        let (f, s) = map.locate(Span::at(7)).unwrap();
        assert_eq!((f.name.as_str(), s), ("a.loop", Span::at(7)));
        let (f, s) = map.locate(Span::new(b + 2, b + 3)).unwrap();
        assert_eq!((f.name.as_str(), s), ("b.md", Span::new(2, 3)));
        let d = Diagnostic::new(Code::E0005, "m", Span::new(b + 4, b + 5), "here")
            .with_label(Span::new(4, 7), "there");
        let text = map.render_plain(&buf, std::slice::from_ref(&d));
        assert!(text.contains("b.md:3:1"), "{text}");
        assert!(text.contains("a.loop:2:1"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&map.to_json_line(&buf, &d)).unwrap();
        assert_eq!(json["file"], "b.md");
        assert_eq!(json["range"]["start"]["line"], 2);
        assert_eq!(json["labels"][1]["file"], "a.loop");
        assert_eq!(json["labels"][1]["range"]["start"]["line"], 1);
    }
}
