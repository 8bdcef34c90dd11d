//! The human format: diagnostics in codespan-reporting's format against
//! [`IndexedFiles`], at most [`HUMAN_LIMIT`] a file, long lines cut by
//! [`clip`].

use super::sources::IndexedFiles;
use super::{Diagnostic, HUMAN_LIMIT, clip, to_codespan};
use crate::span::Span;
use codespan_reporting::files;
use codespan_reporting::term;
use codespan_reporting::term::termcolor::WriteColor;

impl IndexedFiles<'_> {
    /// Writes `diagnostics` in codespan-reporting's format, at most
    /// [`HUMAN_LIMIT`] per file (by the file of the primary label) and then
    /// one line per file saying how many more there are. `place` maps a span
    /// to a file id and the byte range within that file.
    pub(crate) fn emit(
        &self,
        out: &mut dyn WriteColor,
        diagnostics: &[Diagnostic],
        place: impl Fn(Span) -> (usize, std::ops::Range<usize>),
    ) -> std::io::Result<()> {
        let config = term::Config::default();
        let mut shown = vec![0usize; self.files.len().max(1)];
        let mut hidden = vec![0usize; shown.len()];
        for d in diagnostics {
            let (file, _) = place(d.primary.span);
            let file = file.min(shown.len() - 1);
            if shown[file] == HUMAN_LIMIT {
                hidden[file] += 1;
                continue;
            }
            shown[file] += 1;
            let cs_diag = to_codespan(d, &|span| {
                let (file, range) = place(span);
                match self.files.get(file) {
                    Some((_, shown, _)) => (file, shown.at(range.start)..shown.at(range.end)),
                    None => (file, range),
                }
            });
            let written = match clip::Clipped::new(self, &cs_diag) {
                Some((clipped, cs_diag)) => {
                    term::emit_to_write_style(out, &config, &clipped, &cs_diag)
                }
                None => term::emit_to_write_style(out, &config, self, &cs_diag),
            };
            if let Err(e) = written {
                return Err(match e {
                    files::Error::Io(e) => e,
                    e => std::io::Error::other(e.to_string()),
                });
            }
        }
        for (file, &n) in hidden.iter().enumerate() {
            if n > 0 {
                let name = self.files.get(file).map_or("", |f| &f.0);
                writeln!(
                    out,
                    "note: {n} more diagnostic{} in `{name}` not shown; `loopc check --format json` lists them all",
                    if n == 1 { "" } else { "s" }
                )?;
            }
        }
        Ok(())
    }
}
