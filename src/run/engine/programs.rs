//! Failing fast on what no retry can fix: before the first attempt, the
//! program each `run` string starts (every agent and fallback, resolver,
//! command task, `accept`, gate and `setup` of the plan) is looked up the way the shell will look
//! it up (`sh -c 'command -v -- WORD'`, with the environment the string
//! will run with). A program that is not there stops the run before any
//! work, naming the `run` string and where it is in the plan. A command
//! launched through an executor runs where the executor puts it (a sandbox,
//! a cluster node): there the executor's own program is looked up instead.

use crate::Compilation;
use crate::ast::{Block, GateBody, Item, Value, ValueKind};
use crate::plan::{Executor, GateKind, Plan, TaskKind};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Characters that make a word something other than a plain program name
/// (expansions, quoting, redirections, globs, compound commands).
const SHELL_SPECIAL: &[char] = &[
    '$', '`', '\'', '"', '\\', '(', ')', '{', '}', ';', '&', '|', '<', '>', '*', '?', '[', ']',
    '~', '#', '!', '=',
];

/// The program a `run` string starts: its first word after plain variable
/// assignments (`NAME=value`). `None` when it cannot be told without
/// running the shell (the word is quoted, expanded or compound) or is a
/// relative path (it names a file in the worktree, which does not exist
/// yet).
pub fn program_of(run: &str) -> Option<&str> {
    for word in run.split_whitespace() {
        if let Some((name, value)) = word.split_once('=')
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !value.contains(SHELL_SPECIAL)
        {
            continue;
        }
        if word.contains(SHELL_SPECIAL) || (word.contains('/') && !word.starts_with('/')) {
            return None;
        }
        return Some(word);
    }
    None
}

/// One `run` string the plan will execute.
struct Use<'a> {
    /// What runs it, for people ("agent `claude`", "the gate `tests` of task `a`").
    what: String,
    /// The string.
    run: &'a str,
    /// Its extra environment.
    env: BTreeMap<String, String>,
}

fn uses(plan: &Plan) -> Vec<Use<'_>> {
    let mut out = Vec::new();
    // What a command launched through `executor` looks up here: the
    // launcher's program, not the command's.
    fn through<'a>(executor: Option<&'a std::sync::Arc<Executor>>, run: &'a str) -> &'a str {
        executor.map_or(run, |e| e.run.as_str())
    }
    // An agent that runs for `task` in place of its own (a fallback, the
    // resolver): that agent's environment under the task's own.
    fn instead<'p>(
        agent: &'p crate::plan::Agent,
        task: &crate::plan::Task,
        what: String,
    ) -> Use<'p> {
        let mut env = agent.env.clone();
        env.extend(task.own_env.clone());
        Use {
            what,
            run: through(agent.executor.as_ref(), &agent.run),
            env,
        }
    }
    for task in &plan.tasks {
        match &task.kind {
            TaskKind::Agent { agent, .. } => {
                out.push(Use {
                    what: format!("agent `{}` (task `{}`)", agent.name, task.name),
                    run: through(agent.executor.as_ref(), &agent.run),
                    env: task.env.clone(),
                });
                // A fallback may take any of its attempts.
                for f in &agent.fallbacks {
                    out.push(instead(
                        f,
                        task,
                        format!(
                            "agent `{}`, the fallback of `{}` (task `{}`)",
                            f.name, agent.name, task.name
                        ),
                    ));
                }
            }
            TaskKind::Command { run } => out.push(Use {
                what: format!("task `{}`", task.name),
                run: through(task.executor.as_ref(), run),
                env: task.env.clone(),
            }),
        }
        // The resolver of a merge conflict, with its environment under
        // the task's own (as it runs).
        if let Some(agent) = &task.resolver {
            out.push(instead(
                agent,
                task,
                format!(
                    "agent `{}`, the resolver of task `{}`",
                    agent.name, task.name
                ),
            ));
        }
        if let Some(accept) = &task.accept {
            out.push(Use {
                what: format!("the `accept` of task `{}`", task.name),
                run: through(task.executor.as_ref(), accept),
                env: task.env.clone(),
            });
        }
        for g in &task.gates {
            match &g.kind {
                GateKind::Command { run } => out.push(Use {
                    what: format!("gate `{}` (task `{}`)", g.name, task.name),
                    run: through(g.executor.as_ref(), run),
                    env: task.env.clone(),
                }),
                GateKind::Agent { agent, .. } => {
                    let mut env = agent.env.clone();
                    env.extend(task.env.clone());
                    out.push(Use {
                        what: format!(
                            "agent `{}` of gate `{}` (task `{}`)",
                            agent.name, g.name, task.name
                        ),
                        run: through(g.executor.as_ref(), &agent.run),
                        env,
                    });
                }
            }
        }
        if let Some(setup) = &plan.settings.setup {
            out.push(Use {
                what: "`loop.setup`".to_string(),
                run: through(plan.settings.setup_executor.as_ref(), setup),
                env: task.env.clone(),
            });
        }
    }
    out
}

/// Whether `sh` finds `program` with `env` added to loopc's environment.
fn resolves(program: &str, env: &BTreeMap<String, String>, dir: &Path) -> bool {
    std::process::Command::new("sh")
        .args([
            "-c",
            "command -v -- \"$1\" >/dev/null 2>&1",
            "loopc",
            program,
        ])
        .envs(env)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        // If `sh` itself cannot start, every attempt will say so.
        .unwrap_or(true)
}

/// Where the string `run` is written in the plan (`file:line:column`),
/// when it is written there as a string.
fn location(compilation: &Compilation, run: &str) -> Option<String> {
    fn in_value(v: &Value, run: &str) -> Option<crate::span::Span> {
        match &v.kind {
            ValueKind::String(s) | ValueKind::BlockString(s) if **s == *run => Some(v.span),
            _ => None,
        }
    }
    fn in_block(b: &Block, run: &str) -> Option<crate::span::Span> {
        b.fields.iter().find_map(|f| in_value(&f.value, run))
    }
    let span = compilation.ast.items.iter().find_map(|item| match item {
        Item::Loop(l) => in_block(&l.block, run),
        Item::Defaults(b) => in_block(b, run),
        Item::Agent(a) | Item::Executor(a) => in_block(&a.block, run),
        Item::Gate(g) => match &g.body {
            GateBody::Short(v) => in_value(v, run),
            GateBody::Long(b) => in_block(b, run),
        },
        Item::Task(t) => in_block(&t.block, run),
        Item::Budget(_) | Item::Error(_) => None,
    })?;
    span_location(compilation, span)
}

/// Where `span` is in the plan's files, as `file:line:column` (1-based).
pub fn span_location(compilation: &Compilation, span: crate::span::Span) -> Option<String> {
    let (file, local) = compilation.files.locate(span)?;
    let text = compilation.source.get(file.span.start..file.span.end)?;
    let before = text.get(..local.start)?;
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some(format!("{}:{line}:{column}", file.name))
}

/// Looks up the program of every `run` string of `plan`, run from `dir`.
///
/// Errors: one line per program that cannot be found, naming what runs it,
/// its `run` string and where the string is in the plan.
pub fn check(plan: &Plan, compilation: &Compilation, dir: &Path) -> Result<(), Vec<String>> {
    let mut known: HashMap<(String, Option<String>), bool> = HashMap::new();
    let mut missing = Vec::new();
    let mut reported = std::collections::HashSet::new();
    for u in uses(plan) {
        let Some(program) = program_of(u.run) else {
            continue;
        };
        let key = (program.to_string(), u.env.get("PATH").cloned());
        let found = *known
            .entry(key)
            .or_insert_with(|| resolves(program, &u.env, dir));
        if found || !reported.insert(u.run.to_string()) {
            continue;
        }
        let at = location(compilation, u.run)
            .map(|l| format!("{l}: "))
            .unwrap_or_default();
        missing.push(format!(
            "{at}{}: `{program}` is not a command the shell can find (run = {:?}); nothing was run",
            u.what, u.run
        ));
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::program_of;

    #[test]
    fn the_program_of_a_run_string() {
        assert_eq!(program_of("claude -p --output-format json"), Some("claude"));
        assert_eq!(program_of("  FOO=1 BAR=x codex exec -"), Some("codex"));
        assert_eq!(
            program_of("/usr/bin/env python3 x.py"),
            Some("/usr/bin/env")
        );
        assert_eq!(program_of("./scripts/agent.sh"), None);
        assert_eq!(program_of("\"$HOME/bin/agent\""), None);
        assert_eq!(program_of("$AGENT -p"), None);
        assert_eq!(program_of("(cd x && make)"), None);
        assert_eq!(program_of("FOO=$(date) make"), None);
        assert_eq!(program_of(""), None);
    }
}
