//! `.loopc/progress.md`: one line per passed task, `task: title — summary;
//! files changed`, fed into later prompts (docs/running.md step 8; the engine's
//! `handoff::prompt` builds the prompt itself).

use std::io::Write;
use std::path::Path;

/// Appends the line for a passed task.
///
/// Errors: the file cannot be written.
pub fn append(
    path: &Path,
    task: &str,
    title: &str,
    summary: Option<&str>,
    files: &[String],
) -> Result<(), String> {
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
    let line = format!("- {task}: {title} — {summary}; {files}\n");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    f.write_all(line.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
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
        append(
            &path,
            "d",
            "multi\nline\r\ttitle\u{1b}[31m \u{202e}desrever",
            Some("did\nit\u{7}"),
            &["f.txt".to_string(), "two\nlines.txt".to_string()],
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "- d: multi line title [31m desrever — did it; f.txt, two\\nlines.txt\n"
        );
    }
}
