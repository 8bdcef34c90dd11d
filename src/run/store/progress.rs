//! `.loopc/progress.md`: one line per passed task, `task: title — summary;
//! files changed`, fed into later prompts (docs/running.md step 8; the engine's
//! `handoff::prompt` builds the prompt itself).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `.loopc/progress.md` open for appending through a run: opened at the
/// first line and kept open, so that a run of many passed (or replayed)
/// tasks makes one `open`, not one a task. Only the scheduler thread writes
/// the file during a run; the run truncates it before (`run::execute`).
#[derive(Debug)]
pub struct Writer {
    path: PathBuf,
    file: Option<File>,
    /// Lines held back by [`Writer::hold`].
    held: Option<String>,
}

impl Writer {
    /// A writer for the file at `path`, not opened yet.
    pub fn new(path: &Path) -> Writer {
        Writer {
            path: path.to_path_buf(),
            file: None,
            held: None,
        }
    }

    /// Holds the lines that follow in memory until [`Writer::release`]
    /// writes them at once (an unchanged rerun appends a line a task).
    pub fn hold(&mut self) {
        self.held.get_or_insert_with(String::new);
    }

    /// Writes the lines held since [`Writer::hold`]; the lines after are
    /// written as they come.
    ///
    /// Errors: as [`Writer::append`]'s.
    pub fn release(&mut self) -> Result<(), String> {
        match self.held.take() {
            Some(lines) if !lines.is_empty() => self.write(&lines),
            _ => Ok(()),
        }
    }

    /// Appends the line for a passed task ([`line`]) in one write.
    ///
    /// Errors: the file cannot be opened or written (the next line opens
    /// it again).
    pub fn append(
        &mut self,
        task: &str,
        title: &str,
        summary: Option<&str>,
        files: &[String],
    ) -> Result<(), String> {
        let text = line(task, title, summary, files);
        match &mut self.held {
            // Held lines are few a task: bounded by the plan.
            Some(held) => {
                held.push_str(&text);
                Ok(())
            }
            None => self.write(&text),
        }
    }

    /// Writes `text` in one write, opening the file first if need be.
    fn write(&mut self, text: &str) -> Result<(), String> {
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.path)
                    .map_err(|e| format!("cannot open {}: {e}", self.path.display()))?,
            ),
        };
        file.write_all(text.as_bytes()).map_err(|e| {
            self.file = None;
            format!("cannot write {}: {e}", self.path.display())
        })
    }
}

/// The line for a passed task, with its line break: `- task: title —
/// summary; files` (`done` when there is no summary, `no files changed`
/// when `files` is empty).
pub fn line(task: &str, title: &str, summary: Option<&str>, files: &[String]) -> String {
    let summary = summary
        .map(one_line)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "done".to_string());
    let title = one_line(title);
    // A file's name may hold a line break (or any control character):
    // shown as its escape, as loopc shows text to people, so the line
    // stays one line.
    let files = if files.is_empty() {
        "no files changed".to_string()
    } else {
        files
            .iter()
            .map(|f| crate::visible::escape(f, &[]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("- {task}: {title} — {summary}; {files}\n")
}

/// `text` on one line: line breaks and other control characters become
/// spaces, runs of whitespace one space, and the ends are trimmed, so that a
/// multi-line title or summary cannot split a progress line (or a commit
/// subject: titles go into loopc's commit messages this way, so that no
/// terminal escape reaches `git log`).
pub fn one_line(text: &str) -> String {
    text.chars()
        // Bidirectional overrides too: a title could reorder what a
        // person reads in `git log` or a later agent reads in progress.md.
        .map(|c| {
            if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
                ' '
            } else {
                c
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The progress so far (empty when none).
pub fn read(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_are_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress.md");
        let mut writer = Writer::new(&path);
        writer
            .append(
                "d",
                "multi\nline\r\ttitle\u{1b}[31m \u{202e}desrever",
                Some("did\nit\u{7}"),
                &["f.txt".to_string(), "two\nlines.txt".to_string()],
            )
            .unwrap();
        // The file stays open: the next line follows the first; held
        // lines come at the release.
        writer.hold();
        writer.append("e", "t", None, &[]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
        writer.release().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "- d: multi line title [31m desrever — did it; f.txt, two\\nlines.txt\n\
             - e: t — done; no files changed\n"
        );
    }
}
