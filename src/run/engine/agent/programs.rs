//! Failing fast on what no retry can fix: before the first attempt, the
//! program each `run` string starts (every agent and fallback, resolver,
//! command task, `accept`, gate and `setup` of the plan) is looked up the
//! way the shell will look it up, with the environment the string will run
//! with (`execvp`'s lookup on `PATH`, then `sh -c 'command -v -- WORD'`
//! for what that does not find). A program that is not there stops the
//! run before any work, naming the `run` string and where it is in the plan. A command
//! launched through an executor runs where the executor puts it (a sandbox,
//! a cluster node): there the executor's own program is looked up instead.

use crate::Compilation;
use crate::ast::{Block, GateBody, Item, Value, ValueKind};
use crate::plan::{Executor, GateKind, Plan, TaskKind};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Characters that make a word something other than a plain program name
/// (expansions, quoting, redirections, globs, compound commands).
pub(super) const SHELL_SPECIAL: &[char] = &[
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
pub(super) struct Use<'a> {
    /// What runs it, for people ("agent `claude`", "the gate `tests` of task `a`").
    pub(super) what: String,
    /// The string whose program is looked up: the command, or the
    /// launcher prefix of the executor it runs through.
    pub(super) run: &'a str,
    /// The command itself (run in the worktree, wherever it is launched).
    pub(super) command: &'a str,
    /// The executor that launches it, if any: `run` is then its launcher.
    pub(super) via: Option<&'a str>,
    /// Whether an agent runs it (an agent's own command, which no work of
    /// the run writes first; a gate's may be a file the task writes).
    pub(super) agent: bool,
    /// Its extra environment.
    pub(super) env: BTreeMap<String, String>,
}

/// Every `run` string of `plan`, with what runs it.
pub(super) fn uses(plan: &Plan) -> Vec<Use<'_>> {
    let mut out = Vec::new();
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
            via: via(agent.executor.as_ref()),
            command: &agent.run,
            agent: true,
            env,
        }
    }
    for task in &plan.tasks {
        match &task.kind {
            TaskKind::Agent { agent, .. } => {
                out.push(Use {
                    what: format!("agent `{}` (task `{}`)", agent.name, task.name),
                    run: through(agent.executor.as_ref(), &agent.run),
                    via: via(agent.executor.as_ref()),
                    command: &agent.run,
                    agent: true,
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
                via: via(task.executor.as_ref()),
                command: run,
                agent: false,
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
                via: via(task.executor.as_ref()),
                command: accept,
                agent: false,
                env: task.env.clone(),
            });
        }
        gate_uses(task, &mut out);
        if let Some(setup) = &plan.settings.setup {
            out.push(Use {
                what: "`loop.setup`".to_string(),
                run: through(plan.settings.setup_executor.as_ref(), setup),
                via: via(plan.settings.setup_executor.as_ref()),
                command: setup,
                agent: false,
                env: task.env.clone(),
            });
        }
    }
    out
}

/// The name of the executor a command is launched through, if any.
fn via(executor: Option<&std::sync::Arc<Executor>>) -> Option<&str> {
    executor.map(|e| e.name.as_str())
}

/// What a command launched through `executor` looks up here: the
/// launcher's program, not the command's.
fn through<'a>(executor: Option<&'a std::sync::Arc<Executor>>, run: &'a str) -> &'a str {
    executor.map_or(run, |e| e.run.as_str())
}

/// The `run` strings of `task`'s gates (a command gate's command, an agent
/// gate's agent under the task's environment), appended to `out`.
fn gate_uses<'p>(task: &'p crate::plan::Task, out: &mut Vec<Use<'p>>) {
    for g in &task.gates {
        match &g.kind {
            GateKind::Command { run } => out.push(Use {
                what: format!("gate `{}` (task `{}`)", g.name, task.name),
                run: through(g.executor.as_ref(), run),
                via: via(g.executor.as_ref()),
                command: run,
                agent: false,
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
                    via: via(g.executor.as_ref()),
                    command: &agent.run,
                    agent: true,
                    env,
                });
            }
        }
    }
}

/// Whether `sh` finds `program` with `env` added to loopc's environment:
/// an executable file on that `PATH` (or at that absolute path) is found
/// without starting `sh`, which `command -v` would find too; anything else
/// (a builtin, a function, no such file) is `sh`'s to say.
fn resolves(program: &str, env: &BTreeMap<String, String>, dir: &Path) -> bool {
    let path = env
        .get("PATH")
        .cloned()
        .or_else(|| std::env::var("PATH").ok());
    on_path(program, path.as_deref(), dir) || sh_finds(program, env, dir)
}

/// Whether `program` is an executable file at `program` when it is
/// absolute, else in a directory of `path` (`:`-separated; a relative
/// entry is read from `dir`, as the shell reads it from its working
/// directory): `execvp`'s lookup (the `which` crate). Without a `PATH` the
/// shell has a default of its own: `false`, `sh` is asked.
fn on_path(program: &str, path: Option<&str>, dir: &Path) -> bool {
    match path {
        _ if program.starts_with('/') => which::which_in(program, path, dir).is_ok(),
        Some(path) if !program.contains('/') => which::which_in(program, Some(path), dir).is_ok(),
        _ => false,
    }
}

/// Whether `sh -c 'command -v -- PROGRAM'` succeeds.
fn sh_finds(program: &str, env: &BTreeMap<String, String>, dir: &Path) -> bool {
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

/// Where strings and spans are in the plan's files, as `file:line:column`
/// (1-based), for the messages of [`check`]: the plan's string values and
/// line starts are indexed once, at the first question (a plan of 100,000
/// tasks whose `accept` strings all start a missing program asked 100,000
/// times, and each answer walked the whole tree and counted its lines).
pub(super) struct Locator<'c> {
    compilation: &'c Compilation,
    /// The first span of each string value of the plan.
    strings: Option<HashMap<&'c str, crate::span::Span>>,
    lines: Option<crate::diagnostic::LineIndex>,
}

impl<'c> Locator<'c> {
    pub(super) fn new(compilation: &'c Compilation) -> Self {
        Locator {
            compilation,
            strings: None,
            lines: None,
        }
    }

    /// Where the string `run` is written in the plan, when it is written
    /// there as a string.
    pub(super) fn of_run(&mut self, run: &str) -> Option<String> {
        let compilation = self.compilation;
        let strings = self.strings.get_or_insert_with(|| {
            let mut strings = HashMap::new();
            let mut add = |v: &'c Value| {
                if let ValueKind::String(s) | ValueKind::BlockString(s) = &v.kind {
                    strings.entry(&**s).or_insert(v.span);
                }
            };
            for item in &compilation.ast.items {
                let block: Option<&Block> = match item {
                    Item::Loop(l) => Some(&l.block),
                    Item::Defaults(b) => Some(b),
                    Item::Agent(a) | Item::Executor(a) => Some(&a.block),
                    Item::Gate(g) => match &g.body {
                        GateBody::Short(v) => {
                            add(v);
                            None
                        }
                        GateBody::Long(b) => Some(b),
                    },
                    Item::Task(t) => Some(&t.block),
                    Item::Budget(_) | Item::Error(_) => None,
                };
                for f in block.map_or(&[][..], |b| &b.fields) {
                    add(&f.value);
                }
            }
            strings
        });
        let span = *strings.get(run)?;
        self.of_span(span)
    }

    /// Where `span` is in the plan's files.
    fn of_span(&mut self, span: crate::span::Span) -> Option<String> {
        let source = self.compilation.source.as_str();
        let (file, local) = self.compilation.files.locate(span)?;
        let at = file.span.start + local.start;
        let lines = self
            .lines
            .get_or_insert_with(|| crate::diagnostic::LineIndex::new(source));
        let line = lines.line_of(at);
        let line_start = lines.line_range(source, line)?.start.max(file.span.start);
        let line = line - lines.line_of(file.span.start) + 1;
        let column = source.get(line_start..at)?.chars().count() + 1;
        Some(format!("{}:{line}:{column}", file.name))
    }
}

/// Where `span` is in the plan's files, as `file:line:column` (1-based).
pub fn span_location(compilation: &Compilation, span: crate::span::Span) -> Option<String> {
    Locator::new(compilation).of_span(span)
}

/// Where the value of the `loop` block's field `name` (`base`) is written
/// (`file:line:column`), when the plan's file writes it.
pub fn loop_field_location(compilation: &Compilation, name: &str) -> Option<String> {
    let span = compilation.ast.items.iter().find_map(|item| match item {
        Item::Loop(l) => l
            .block
            .fields
            .iter()
            .find(|f| f.name.text == name)
            .map(|f| f.value.span),
        _ => None,
    })?;
    span_location(compilation, span)
}

/// Looks up the program of every `run` string of `plan`, run from `dir`.
///
/// Errors: for each program that cannot be found, one line naming the first
/// `run` string that starts it (what runs it, the string, and where it is
/// in the plan), and one more counting the other commands that start it
/// (each task's agent, `accept`, gates, … once per task).
pub fn check(plan: &Plan, compilation: &Compilation, dir: &Path) -> Result<(), Vec<String>> {
    let mut known: HashMap<(String, Option<String>), bool> = HashMap::new();
    let mut missing = Vec::new();
    // Per missing program: its line in `missing`, and how many other
    // commands start it.
    let mut reported: HashMap<String, (usize, usize)> = HashMap::new();
    let mut locator = Locator::new(compilation);
    for u in uses(plan) {
        let Some(program) = program_of(u.run) else {
            continue;
        };
        let key = (program.to_string(), u.env.get("PATH").cloned());
        let found = *known
            .entry(key)
            .or_insert_with(|| resolves(program, &u.env, dir));
        if found {
            continue;
        }
        if let Some((_, more)) = reported.get_mut(program) {
            *more += 1;
            continue;
        }
        reported.insert(program.to_string(), (missing.len(), 0));
        let at = locator
            .of_run(u.run)
            .map(|l| format!("{l}: "))
            .unwrap_or_default();
        let what = match u.via {
            Some(e) => format!("executor `{e}`, launching {}", u.what),
            None => u.what,
        };
        missing.push(format!(
            "{at}{what}: `{program}` is not a command the shell can find (run = {:?}); nothing \
             was run",
            u.run
        ));
    }
    let mut more: Vec<(usize, String)> = reported
        .into_iter()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(program, (at, n))| {
            let commands = if n == 1 {
                "command starts"
            } else {
                "commands start"
            };
            (
                at,
                format!("{n} more {commands} `{program}`, which the shell cannot find either"),
            )
        })
        .collect();
    // Each count after its program's line, latest first so positions hold.
    more.sort_by_key(|m| std::cmp::Reverse(m.0));
    for (at, line) in more {
        missing.insert(at + 1, line);
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::{on_path, program_of, sh_finds};

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

    use std::collections::BTreeMap;
    use std::os::unix::fs::PermissionsExt;

    /// What is found without `sh` is what `sh` finds; what is not found
    /// is left to `sh` (a builtin, a file that cannot be run).
    #[test]
    fn a_program_found_on_path_is_one_sh_finds() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let make = |name: &str, mode: u32| {
            let file = bin.join(name);
            std::fs::write(&file, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        make("tool", 0o755);
        make("plain", 0o644);
        let path = format!("/nonexistent:{}", bin.display());
        let env = BTreeMap::from([("PATH".to_string(), path.clone())]);
        let here = dir.path();
        for (program, found) in [
            ("tool", true),
            ("plain", false),
            ("missing", false),
            ("cd", false),
            ("/bin/sh", true),
        ] {
            assert_eq!(on_path(program, Some(&path), here), found, "{program}");
            if found {
                assert!(sh_finds(program, &env, here), "{program}");
            }
        }
        // A builtin is sh's to find.
        assert!(sh_finds("cd", &env, here));
        // A relative entry is read from the working directory.
        assert!(on_path("tool", Some("bin"), here));
        assert!(!on_path("tool", None, here));
    }
}
