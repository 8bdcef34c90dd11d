//! Answers to the questions of tasks that need one (`loopc answer`, or a
//! task's `answerer` agent): `.loopc/answers/<task>.json`, format version 2
//! (docs/state.md),
//! every answer given to the task in order. `loopc run` puts them all in
//! the task's prompt, in every later run too; removing the file forgets them.

use super::layout::Layout;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The answers file format this loopc writes and reads.
pub const ANSWERS_VERSION: u32 = 2;

/// One question a task's agent asked and the answer a person (or the
/// task's answerer agent) gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The question, as the task's handoff asked it.
    pub question: String,
    /// The person's answer.
    pub answer: String,
    /// When it was given (RFC 3339).
    pub answered_at: String,
    /// The agent that answered in a person's place (`answerer`, version
    /// 2); absent for a person's answer (and in version-1 files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// The document of one task's answers file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answers {
    /// Format version ([`ANSWERS_VERSION`]).
    pub version: u32,
    /// Every answer given to the task, oldest first.
    pub answers: Vec<Answer>,
}

/// The answers file of `task`.
pub fn path(layout: &Layout, task: &str) -> PathBuf {
    layout.answers.join(format!("{task}.json"))
}

/// The answers given to `task` (none when it has no file).
///
/// Errors: the file cannot be read or is not an answers document of a
/// version this loopc reads (the message names the file).
pub fn load(layout: &Layout, task: &str) -> Result<Vec<Answer>, String> {
    let p = path(layout, task);
    let bytes = match std::fs::read(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", p.display())),
    };
    let doc: Answers = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "{} is not a loopc answers file ({e}); remove it and answer again",
            p.display()
        )
    })?;
    if doc.version > ANSWERS_VERSION {
        return Err(format!(
            "{} was written by a newer loopc (answers format version {}); use that loopc",
            p.display(),
            doc.version
        ));
    }
    Ok(doc.answers)
}

/// Adds `answer` to `task`'s answers (written atomically). Returns the file.
///
/// Errors: the existing file cannot be read, or the new one written.
pub fn add(layout: &Layout, task: &str, answer: Answer) -> Result<PathBuf, String> {
    let mut answers = load(layout, task)?;
    answers.push(answer);
    let doc = Answers {
        version: ANSWERS_VERSION,
        answers,
    };
    let p = path(layout, task);
    std::fs::create_dir_all(&layout.answers)
        .map_err(|e| format!("cannot create {}: {e}", layout.answers.display()))?;
    let text =
        serde_json::to_string_pretty(&doc).map_err(|e| format!("cannot encode answers: {e}"))?;
    let tmp = p.with_extension("json.tmp");
    std::fs::write(&tmp, format!("{text}\n"))
        .and_then(|()| std::fs::rename(&tmp, &p))
        .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    Ok(p)
}

/// Per task with answers: the blake3 digest (hex) of the prompt section
/// that gives them ([`prompt_section`]), part of the task's cache key, so
/// that a run after `loopc answer` runs the task with its answer instead
/// of replaying a pass made without it.
///
/// Errors: the answers directory or a task's file cannot be read (the
/// message names it and what to do).
pub fn digests(layout: &Layout) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let entries = match std::fs::read_dir(&layout.answers) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(format!("cannot read {}: {e}", layout.answers.display())),
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(task) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
            continue;
        };
        if let Some(digest) = digest(layout, task)? {
            out.insert(task.to_string(), digest);
        }
    }
    Ok(out)
}

/// The digest [`digests`] keeps for `task`: `None` when it has no answers.
///
/// Errors: its answers file cannot be read ([`load`]).
pub fn digest(layout: &Layout, task: &str) -> Result<Option<String>, String> {
    let answers = load(layout, task)?;
    Ok((!answers.is_empty()).then(|| {
        let section = prompt_section(&answers);
        blake3::hash(section.as_bytes()).to_hex().to_string()
    }))
}

/// The prompt section that gives an agent its task's answers: under the
/// heading `## Answer from a human` (`## Answer from agent `NAME``, for
/// an answerer's), each question quoted, then its answer; empty without
/// answers.
pub fn prompt_section(answers: &[Answer]) -> String {
    let mut out = String::new();
    for a in answers {
        match &a.by {
            Some(agent) => out.push_str(&format!("## Answer from agent `{agent}`\n")),
            None => out.push_str("## Answer from a human\n"),
        }
        out.push_str("An earlier attempt of this task asked:\n");
        for line in a.question.trim().lines() {
            out.push_str("> ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("\nThe answer:\n");
        out.push_str(a.answer.trim_end());
        out.push_str("\n\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip_and_quote_the_question() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        assert!(load(&layout, "a").unwrap().is_empty());
        let a = Answer {
            question: "Which database?\nPostgres or SQLite?".into(),
            answer: "SQLite.".into(),
            answered_at: "2026-01-01T00:00:00.000Z".into(),
            by: None,
        };
        add(&layout, "a", a.clone()).unwrap();
        assert_eq!(load(&layout, "a").unwrap(), vec![a.clone()]);
        let s = prompt_section(&[a]);
        assert_eq!(
            s,
            "## Answer from a human\nAn earlier attempt of this task asked:\n\
             > Which database?\n> Postgres or SQLite?\n\nThe answer:\nSQLite.\n\n"
        );
        std::fs::write(path(&layout, "a"), "{").unwrap();
        assert!(
            load(&layout, "a")
                .unwrap_err()
                .contains("not a loopc answers file")
        );
    }
}
