//! `.loopc/progress.md`: one line per passed task, `task: title — summary;
//! files changed`, fed into later prompts (spec §5 step 8), and the prompt
//! an agent is given (task prompt, progress, feedback, handoff instructions).

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
    let files = if files.is_empty() {
        "no files changed".to_string()
    } else {
        files.join(", ")
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
/// multi-line title or summary cannot split a progress line.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
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

/// The prompt given to an agent: the task's prompt, then the progress of
/// passed tasks, then the previous attempt's feedback, then the handoff
/// instructions.
pub fn prompt(task_prompt: &str, progress: &str, feedback: &str) -> String {
    let mut out = task_prompt.trim_end().to_string();
    out.push_str("\n\n");
    if !progress.trim().is_empty() {
        out.push_str("## Progress so far (tasks already done)\n");
        out.push_str(progress.trim_end());
        out.push_str("\n\n");
    }
    if !feedback.trim().is_empty() {
        out.push_str("## Feedback from the previous attempt\n");
        out.push_str(feedback.trim_end());
        out.push_str("\n\n");
    }
    out.push_str(&crate::run::engine::handoff::instructions(false));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_order() {
        let p = prompt("Do X.", "- a: A — did a; f.py\n", "tests failed");
        let i_task = p.find("Do X.").unwrap();
        let i_prog = p.find("- a: A").unwrap();
        let i_fb = p.find("tests failed").unwrap();
        let i_hand = p.find("LOOP_HANDOFF").unwrap();
        assert!(i_task < i_prog && i_prog < i_fb && i_fb < i_hand);
        assert!(!prompt("Do X.", "", "").contains("Feedback"));
    }

    #[test]
    fn progress_lines_are_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress.md");
        append(
            &path,
            "d",
            "multi\nline\r\ttitle\u{1b}[31m",
            Some("did\nit\u{7}"),
            &["f.txt".to_string()],
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "- d: multi line title [31m — did it; f.txt\n");
    }
}
