//! `.loopc/progress.md`: one line per passed task, `task: title — summary;
//! files changed`, fed into later prompts (docs/running.md step 8; the engine's
//! `handoff::prompt` builds the prompt itself).

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// How many of the last progress lines an attempt is given (in its prompt
/// and `LOOP_PROGRESS_FILE`; docs/state.md `progress.md`): the whole file
/// would make every attempt of a run of many tasks cost what the run has
/// done so far, in tokens, in bytes written and in its logs.
pub const ATTEMPT_LINES: usize = 200;

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
    /// The last [`ATTEMPT_LINES`] lines of the run, each with its line
    /// break, held or written.
    tail: VecDeque<String>,
    /// How many lines of the run came before `tail`.
    earlier: usize,
}

impl Writer {
    /// A writer for the file at `path`, not opened yet.
    pub fn new(path: &Path) -> Writer {
        Writer {
            path: path.to_path_buf(),
            file: None,
            held: None,
            tail: VecDeque::new(),
            earlier: 0,
        }
    }

    /// The progress an attempt starting now is given: the run's lines so
    /// far, or its last [`ATTEMPT_LINES`] after a line saying how many came
    /// before and where they are (empty when none). Costs the lines it
    /// returns, not the run's.
    pub fn for_attempt(&self) -> String {
        let mut text = String::new();
        if self.earlier > 0 {
            let s = if self.earlier == 1 { "" } else { "s" };
            text.push_str(&format!(
                "- ({} earlier line{s} of this run's progress: \
                 $LOOP_REPO_ROOT/.loopc/progress.md has every line)\n",
                self.earlier
            ));
        }
        for line in &self.tail {
            text.push_str(line);
        }
        text
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
        if self.tail.len() == ATTEMPT_LINES {
            self.tail.pop_front();
            self.earlier += 1;
        }
        self.tail.push_back(text.clone());
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

    #[test]
    fn an_attempt_is_given_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress.md");
        let mut writer = Writer::new(&path);
        assert_eq!(writer.for_attempt(), "");
        for i in 0..ATTEMPT_LINES {
            writer.append(&format!("t{i}"), "t", None, &[]).unwrap();
        }
        // Up to the bound, the whole run, as the file holds it.
        assert_eq!(
            writer.for_attempt(),
            std::fs::read_to_string(&path).unwrap()
        );
        writer.hold();
        writer.append("late", "t", Some("held"), &[]).unwrap();
        writer.append("later", "t", None, &[]).unwrap();
        let text = writer.for_attempt();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), ATTEMPT_LINES + 1);
        assert_eq!(
            lines[0],
            "- (2 earlier lines of this run's progress: \
             $LOOP_REPO_ROOT/.loopc/progress.md has every line)"
        );
        assert_eq!(lines[1], "- t2: t — done; no files changed");
        assert_eq!(lines[ATTEMPT_LINES], "- later: t — done; no files changed");
        writer.release().unwrap();
        let file = std::fs::read_to_string(&path).unwrap();
        assert_eq!(file.lines().count(), ATTEMPT_LINES + 2);
        assert!(file.ends_with(&text[text.find("- t2:").unwrap()..]));
    }
}
