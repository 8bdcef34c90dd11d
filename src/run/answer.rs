//! `loopc answer TASK TEXT`: records a person's answer to the question of a
//! task the last run left `needs-human` ([`super::store::answers`]). The
//! next `loopc run` gives the task the answer in its prompt and starts its
//! attempts afresh. Takes no lock: it writes only the task's answers file,
//! which a run reads when it starts an attempt.

use super::store::answers::{self, Answer};
use super::store::layout::Layout;
use super::sys::git::Git;
use crate::state::TaskStatus;
use std::path::{Path, PathBuf};

/// What was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// The question answered.
    pub question: String,
    /// The answers file written.
    pub file: PathBuf,
}

/// Records `text` as the answer to the question of `task` in the
/// repository containing `cwd`.
///
/// Errors (one line each): not in a repository or no readable state; no
/// task `task` in the last run (naming the tasks that wait for an
/// answer); the task is not waiting for one (naming its status) and its
/// last answer is not an answerer agent's (a person may override that:
/// docs/running.md); the answers file cannot be read; an empty
/// answer; the answers file cannot be written.
pub fn answer(cwd: &Path, task: &str, text: &str) -> Result<Answered, String> {
    let git = Git::discover(cwd)?;
    let layout = Layout::of_checkout(&git.root)?;
    let state = super::store::state::load(&layout.state)?;
    // The last run's tasks, then those it carried from earlier runs (of
    // another plan file, or of other tasks), whose questions still wait.
    let tasks = || state.tasks.iter().chain(&state.carried);
    let waiting: Vec<&str> = tasks()
        .filter(|t| t.status == TaskStatus::NeedsHuman)
        .map(|t| t.name.as_str())
        .collect();
    let waiting_list = if waiting.is_empty() {
        "no task of the last run waits for an answer".to_string()
    } else {
        format!("tasks waiting for an answer: {}", waiting.join(", "))
    };
    let Some(ts) = tasks().find(|t| t.name == task) else {
        return Err(format!(
            "the last run (plan `{}`) has no task `{task}`; {waiting_list}",
            state.plan
        ));
    };
    // An answerer agent's answer (the task went on) may be overridden: the
    // question is the one it answered last.
    let by_agent = answers::load(&layout, task)?
        .pop()
        .filter(|a| a.by.is_some())
        .map(|a| a.question);
    if ts.status != TaskStatus::NeedsHuman && by_agent.is_none() {
        return Err(format!(
            "task `{task}` is not waiting for an answer (it is {}); {waiting_list}",
            ts.status.as_str()
        ));
    }
    if text.trim().is_empty() {
        return Err(format!(
            "the answer to task `{task}` is empty; give the text, or `--file PATH`"
        ));
    }
    let question = match ts.status {
        TaskStatus::NeedsHuman => ts.question.clone(),
        _ => by_agent,
    }
    .unwrap_or_default();
    let file = answers::add(
        &layout,
        task,
        Answer {
            question: question.clone(),
            answer: text.to_string(),
            answered_at: super::time::now_rfc3339(),
            by: None,
        },
    )?;
    Ok(Answered { question, file })
}
