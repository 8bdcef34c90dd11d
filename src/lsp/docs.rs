//! What hover and completion both show: each field's documentation and a
//! text cut to one line.

use super::context::BlockKind;

/// What each field means (docs/language.md), for hover and completion:
/// the blocks a field is documented in, its name, its documentation.
const FIELD_DOCS: &[(&[BlockKind], &str, &str)] = {
    use BlockKind::*;
    &[
        (
            &[Loop],
            "base",
            "Branch to start from (default: the branch checked out).",
        ),
        (
            &[Loop],
            "branch",
            "Integration branch (default `loop/<name or file stem>`).",
        ),
        (
            &[Loop],
            "parallel",
            "Tasks at once (default 1; `-j` overrides).",
        ),
        (
            &[Loop],
            "setup",
            "Command run in every new worktree before the agent.",
        ),
        (
            &[Loop],
            "copy",
            "Globs of untracked or ignored files in the main checkout copied into every new worktree (part of the cache key).",
        ),
        (
            &[Loop],
            "link",
            "Globs of untracked or ignored files or directories in the main checkout symlinked into every new worktree.",
        ),
        (
            &[Loop],
            "notify",
            "Command run once when the run ends, with the run's state (`loopc status --json`) on stdin.",
        ),
        (
            &[Loop],
            "stages",
            "The stages of a REEL spec tree that `loopc run` works (default `[\"inflight\"]`; `--stage` overrides).",
        ),
        (
            &[Budget],
            "iterations",
            "Agent attempts across the whole run.",
        ),
        (
            &[Budget],
            "time",
            "Wall clock for the whole run (a duration such as `2h`).",
        ),
        (
            &[Budget],
            "cost",
            "Sum of what agents report, in dollars (`$20`).",
        ),
        (
            &[Budget],
            "failures",
            "Consecutive failed attempts that stop the run (default 3).",
        ),
        (
            &[Budget],
            "wait",
            "The most time spent waiting for agents' usage or rate limits to reset, in all (a duration).",
        ),
        (
            &[Agent],
            "run",
            "Shell command that starts the agent (required); the prompt is on stdin.",
        ),
        (
            &[Agent],
            "output",
            "How stdout is read: `text` (default), a reader (`claude-json`, `codex-json`, `gemini-json`, `opencode-json`, `cursor-json`, `amp-json`, `copilot-json`, `droid-json`), or `{ summary = \"…\" cost = \"…\" error = \"…\" … }`: where in each JSON message the facts are.",
        ),
        (&[Agent], "timeout", "Per-attempt timeout (default 30m)."),
        (
            &[Agent],
            "idle",
            "How long the agent may print nothing before its attempt is stopped as stalled (a failure, not a timeout); also for the agent gates and resolvers it runs.",
        ),
        (
            &[Agent],
            "cost",
            "Per-attempt cost cap, exported as `LOOP_COST_CAP_USD`; an attempt reporting more is over cap, counted in full.",
        ),
        (
            &[Agent],
            "fallback",
            "The agent that takes an attempt instead of waiting while this one is usage or rate limited.",
        ),
        (
            &[Agent, Defaults, Task],
            "env",
            "Environment map `{ KEY = \"value\" }`; agent, then defaults, then task (later wins).",
        ),
        (
            &[Executor],
            "run",
            "Launcher prefix (required): the command is handed to it as `sh -c COMMAND`, one argument; `LOOP_*` variables are set.",
        ),
        (
            &[Agent],
            "executor",
            "Executor that launches this agent (default `defaults.executor`).",
        ),
        (
            &[Gate],
            "executor",
            "Executor that launches this gate's command or agent (default: the agent's, else `defaults.executor`).",
        ),
        (
            &[Defaults],
            "executor",
            "Executor of commands that name none (agents, gates, command tasks, `accept`).",
        ),
        (
            &[Loop],
            "executor",
            "Executor that launches `setup` (default `defaults.executor`).",
        ),
        (
            &[Loop],
            "expand_depth",
            "How deep plan fragments may nest (default 3): a fragment's task at this depth may not `expands`.",
        ),
        (
            &[Loop],
            "resolver",
            "Agent that resolves merge conflicts of tasks whose block and `defaults` name none.",
        ),
        (
            &[Defaults],
            "resolver",
            "Agent that resolves merge conflicts of tasks that name none.",
        ),
        (
            &[Task],
            "resolver",
            "Agent that resolves a conflict of this task's merge onto the integration branch; its resolution must pass the task's gates.",
        ),
        (&[Gate], "run", "Command gate: passes on exit status 0."),
        (
            &[Gate],
            "agent",
            "Agent-judged gate: the agent reviews the diff read-only.",
        ),
        (
            &[Gate],
            "prompt",
            "What the reviewing agent is asked (required with `agent`).",
        ),
        (&[Gate], "timeout", "Timeout of one gate run (default 30m)."),
        (
            &[Gate],
            "on_fail",
            "`retry` (default), `block`, `fail`, or `replan` (the task that wrote the rejected task's plan fragment re-plans it at once).",
        ),
        (
            &[Task],
            "on_fail",
            "Once the attempts are spent: `retry` (default: the task fails) or `replan` (the task that wrote its plan fragment writes it again; on a task with `expands`, for every task its fragment writes).",
        ),
        (
            &[Task],
            "replans",
            "On a task with `expands`: how many times a run may re-plan its fragment (default 2; 0: never).",
        ),
        (
            &[Loop, Defaults, Task],
            "answerer",
            "Agent a `needs_human` question goes to first (task, else `defaults`, else `loop`); its answer is recorded as `loopc answer` records one, and the task goes on. Empty output or `DECLINE` leaves it to a person.",
        ),
        (
            &[Gate],
            "on_change",
            "A command gate that changes tracked files: `fail` (default: the attempt fails) or `ignore` (reported and discarded; the verdict stands). Untracked files it leaves are always discarded.",
        ),
        (
            &[Loop, Defaults, Task],
            "protect",
            "Globs of paths (relative to the repo root) an attempt may not add, change, delete, rename or change the mode of; gates run them as at the task's start. Part of the cache key.",
        ),
        (
            &[Task],
            "may_change",
            "Globs of protected paths this task may change (a task that writes tests). Part of the cache key.",
        ),
        (&[Defaults], "agent", "Agent of tasks that set none."),
        (&[Defaults], "gates", "Gates of tasks that set none."),
        (&[Defaults], "attempts", "Attempts per task (default 3)."),
        (
            &[Defaults],
            "timeout",
            "Per-attempt timeout of tasks that set none.",
        ),
        (
            &[Task],
            "prompt",
            "The agent's instructions: makes this an agent task.",
        ),
        (
            &[Task],
            "run",
            "A shell command: makes this a command task (no agent).",
        ),
        (
            &[Task],
            "agent",
            "The agent doing this task (default `defaults.agent`).",
        ),
        (
            &[Task],
            "accept",
            "The task's own acceptance check, run before its gates.",
        ),
        (
            &[Task],
            "gates",
            "Gates the result must pass (replaces `defaults.gates`).",
        ),
        (
            &[Task],
            "attempts",
            "Attempts allowed (default `defaults.attempts`, else 3).",
        ),
        (&[Task], "timeout", "Per-attempt timeout."),
        (
            &[Task],
            "changes",
            "`required` (default: an attempt that changes nothing fails) or `optional` (a check-only task).",
        ),
        (
            &[Task],
            "expands",
            "A plan fragment (a `.loop` file of tasks) the task writes; when it passes, its tasks join the plan as `<task>.<name>`, before the task's dependents.",
        ),
        (
            &[Defaults, Task],
            "context",
            "Files (paths relative to the repo root) whose content at the attempt's start each prompt carries under `## Context: <path>`, before the task's text; a task's list adds to `defaults.context`. Part of the cache key.",
        ),
        (
            &[Defaults],
            "inputs",
            "Globs of files (relative to the repo root) part of every task's cache key; a task's `inputs` add to them.",
        ),
        (
            &[Defaults, Task],
            "verify",
            "`true`: `accept` runs on the task's starting commit first; if it passes, the task passes with no agent and no change (already satisfied). Default `false`; `loopc run --verify` sets it on every task.",
        ),
        (
            &[Task],
            "inputs",
            "Globs of files (relative to the repo root) that are part of the cache key.",
        ),
    ]
};

/// The documentation of `field` in a `block` ([`FIELD_DOCS`]).
pub(super) fn field_doc(block: BlockKind, field: &str) -> Option<&'static str> {
    FIELD_DOCS
        .iter()
        .find(|(blocks, name, _)| *name == field && blocks.contains(&block))
        .map(|(_, _, doc)| *doc)
}

/// The first line of `text`, cut to 80 characters.
pub(super) fn one_line(text: &str) -> String {
    let first = text.trim().lines().next().unwrap_or("");
    let mut s: String = first.chars().take(80).collect();
    if first.chars().count() > 80 || text.trim().lines().count() > 1 {
        s.push('…');
    }
    s
}

/// What each key of `output = { … }` means (docs/language.md "Reading any
/// JSON agent"), for hover and completion.
pub fn output_key_doc(key: &str) -> Option<&'static str> {
    Some(match key {
        "summary" => "Path to the summary text (the last one found).",
        "cost" => "Path to the cost in US dollars (a number; the last one found).",
        "error" => {
            "Path to an error: text (or `true`) found there fails the attempt, as its reason and feedback."
        }
        "limit" => {
            "Path to usage-limit text: found, the attempt waits until the reset time the text names."
        }
        "session" => "Path to the session id.",
        "input_tokens" => "Path to the input token count (the last one found).",
        "output_tokens" => "Path to the output token count (the last one found).",
        "activity" => "Path to what the agent is doing now, shown on the running attempt's line.",
        _ => return None,
    })
}
