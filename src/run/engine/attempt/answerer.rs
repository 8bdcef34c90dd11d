//! Answers without a person (docs/language.md "Answers without a
//! person"): an attempt whose agent asked a question (`needs_human`) puts
//! it to the task's `answerer` agent first, with the task's prompt, the
//! question and the attempt's diff. What the answerer prints (a JSON
//! reader's summary) is its answer, recorded as `loopc answer` records one
//! (with its name as `by`); empty output, a first line `DECLINE` or a
//! failed run declines, and a person answers as without an answerer.

use crate::plan::{Agent, Executor, OutputFormat, Task, TaskKind};
use crate::run::engine::agent::{executor, report};
use crate::run::engine::context::{AttemptFiles, RunCtx};
use crate::run::engine::outcome::{Answerer, AttemptResult};
use crate::run::store::answers::{self, Answer};
use crate::run::store::events::Event;
use crate::run::sys::process::{self, Exit, Spec};
use std::sync::Arc;

/// The answer that declines, as the first line of an answerer's output
/// (any case): the question goes to a person.
pub const DECLINE: &str = "DECLINE";

/// How many of a task's recorded answers may be an answerer's: a later
/// question goes to a person (no agent answers a task's questions forever).
pub const MAX_AGENT_ANSWERS: usize = 3;

/// Puts `question`, asked by attempt `r` of `task` (with the agent
/// environment `env`), to the task's answerer, if it has one and has
/// answered fewer than [`MAX_AGENT_ANSWERS`] of its questions. Records
/// its answer and notes in `r.answerer` what it did; its cost is the
/// attempt's. A failure to run it or to record the answer declines (the
/// reason is in the attempt's log directory, `answerer.log`).
pub(super) fn ask(
    ctx: &RunCtx,
    task: &Task,
    r: &mut AttemptResult,
    files: &AttemptFiles,
    env: &[(String, String)],
    question: &str,
) {
    let Some(agent) = &task.answerer else {
        return;
    };
    let given = answers::load(&ctx.layout, &task.name).unwrap_or_default();
    if given.iter().filter(|a| a.by.is_some()).count() >= MAX_AGENT_ANSWERS {
        return;
    }
    super::phase(ctx.io(), &task.name, r.input.attempt, "answer");
    let answer = run(ctx, task, agent, r, files, env, question).and_then(|answer| {
        let Some(answer) = answer else {
            return Ok(None);
        };
        let record = Answer {
            question: question.to_string(),
            answer: answer.clone(),
            answered_at: crate::run::time::now_rfc3339(),
            by: Some(agent.name.clone()),
        };
        answers::add(&ctx.layout, &task.name, record).map(|_| Some(answer))
    });
    let answered = match answer {
        Ok(Some(answer)) => {
            ctx.events.emit(Event::Answered {
                task: task.name.clone(),
                by: agent.name.clone(),
                question: question.to_string(),
                answer,
            });
            true
        }
        Ok(None) => false,
        Err(why) => {
            let _ = std::fs::write(files.dir.join("answerer.log"), format!("{why}\n"));
            false
        }
    };
    r.answerer = Some(Answerer {
        agent: agent.name.clone(),
        answered,
    });
}

/// Runs `agent` in the attempt's worktree on the answerer's prompt and
/// returns its answer, `None` when it declines.
///
/// Errors: it could not be started, or it failed (exit status, timeout).
fn run(
    ctx: &RunCtx,
    task: &Task,
    agent: &Arc<Agent>,
    r: &mut AttemptResult,
    files: &AttemptFiles,
    env: &[(String, String)],
    question: &str,
) -> Result<Option<String>, String> {
    let context = super::context_files::sections(&ctx.git, task, &r.input.base)
        .map_err(|e| e.into_message())?;
    let text = context + &prompt(ctx, task, r, question);
    let prompt_file = files.dir.join("answerer-prompt.md");
    std::fs::write(&prompt_file, &text)
        .map_err(|e| format!("cannot write {}: {e}", prompt_file.display()))?;
    let exec = agent.executor.as_deref();
    let command = Executor::wrap(exec, &agent.run);
    let report_file = executor::report_path(&files.dir, "answerer");
    let mut env = env.to_vec();
    env.extend(agent.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let env = executor::with_report(env, exec, &report_file);
    let stdout = files.dir.join("answerer.stdout");
    let stderr = files.dir.join("answerer.stderr");
    let timeout = agent.timeout.unwrap_or(task.timeout);
    let spec = Spec {
        command: &command,
        dir: &r.worktree,
        env: &env,
        env_remove: &["LOOP_DIFF_FILE"],
        stdin: Some(text.into_bytes()),
        stdout: &stdout,
        stderr: Some(&stderr),
        timeout,
        idle: agent.idle,
        grace: executor::grace(exec),
    };
    let exit = process::run(&spec, &ctx.control)?;
    let read = report::read(&agent.output, &stdout);
    let mut cost = crate::run::engine::budget::Cost::default();
    cost.add_reported(report::reported_cost(read.as_ref(), &Ok(None)), agent);
    r.cost.absorb(cost);
    if !matches!(exit, Exit::Code(0)) {
        // Its last word on stderr says why, as a resolver's reason does.
        let said = std::fs::read(&stderr)
            .map(|b| super::last_line(&String::from_utf8_lossy(&b)))
            .unwrap_or_default();
        let why = format!("the answerer {}", exit.describe(timeout));
        return Err(if said.is_empty() {
            why
        } else {
            format!("{why}: {said}")
        });
    }
    let answer = match &agent.output {
        OutputFormat::Text => std::fs::read_to_string(&stdout)
            .map_err(|e| format!("cannot read {}: {e}", stdout.display()))?,
        _ => read.and_then(|rep| rep.summary).unwrap_or_default(),
    };
    Ok(accepted(&answer))
}

/// `output` as an answer: trimmed; `None` when it declines (nothing but
/// whitespace, or a first line that is [`DECLINE`] in any case).
pub fn accepted(output: &str) -> Option<String> {
    let answer = output.trim();
    let first = answer.lines().next().unwrap_or_default().trim();
    (!answer.is_empty() && !first.eq_ignore_ascii_case(DECLINE)).then(|| answer.to_string())
}

/// The answerer's prompt after its context sections: what it is asked to
/// do, the task's prompt, the question, and the attempt's diff against its
/// base (cut as feedback is).
fn prompt(ctx: &RunCtx, task: &Task, r: &AttemptResult, question: &str) -> String {
    let task_prompt = match &task.kind {
        TaskKind::Agent { prompt, .. } => prompt.to_string(),
        TaskKind::Command { run } => run.to_string(),
    };
    let quoted: String = question
        .trim()
        .lines()
        .map(|l| format!("> {l}\n"))
        .collect();
    format!(
        "## A question for you to answer\n\
         The agent doing task `{name}` asked a question that a person would answer. Answer \
         it in that person's place: print the answer on standard output, and nothing else. \
         If the decision is not yours to make, print only `{DECLINE}`; a person then \
         answers.\n\n\
         ## The task's prompt\n{task_prompt}\n\n\
         ## The question\n{quoted}\n\
         ## What the attempt changed so far (git diff against its base)\n{diff}\n",
        name = task.name,
        task_prompt = task_prompt.trim_end(),
        diff = diff(ctx, r),
    )
}

/// The attempt's uncommitted work against its base, as `git diff` shows
/// it, with the files git does not track yet listed after it.
fn diff(ctx: &RunCtx, r: &AttemptResult) -> String {
    let git = &ctx.git;
    let wt = &r.worktree;
    let base = r.input.base.as_str();
    let tracked = git
        .try_run_in(wt, &["diff", "--no-color", "--no-ext-diff", base, "--"])
        .map(|o| o.stdout)
        .unwrap_or_else(|e| format!("(loopc could not read the diff: {e})\n"));
    let untracked = git
        .try_run_in(wt, &["ls-files", "--others", "--exclude-standard"])
        .map(|o| o.stdout)
        .unwrap_or_default();
    let mut text = tracked;
    for path in untracked.lines().filter(|p| !p.starts_with(".loopc")) {
        text.push_str(&format!("new file, not yet added: {path}\n"));
    }
    if text.trim().is_empty() {
        text = "(no changes)\n".to_string();
    }
    crate::run::engine::attempt::gate::cut_feedback(text)
}

#[cfg(test)]
mod tests {
    use super::accepted;

    #[test]
    fn empty_output_and_decline_leave_the_question_to_a_person() {
        assert_eq!(accepted("  \n"), None);
        assert_eq!(accepted("decline\nI cannot pick"), None);
        assert_eq!(accepted(" DECLINE "), None);
        assert_eq!(accepted("Use SQLite.\n"), Some("Use SQLite.".into()));
        assert_eq!(
            accepted("Declined options: none\nUse SQLite."),
            Some("Declined options: none\nUse SQLite.".into())
        );
    }
}
