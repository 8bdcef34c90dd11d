//! Failing fast on an agent whose command names a file the attempts will
//! not have: attempts start from a commit, so `run = "sh scripts/agent.sh"`
//! with `scripts/agent.sh` never committed fails every attempt the same
//! way ("cannot open scripts/agent.sh"), each one charged. Before any work
//! the file an agent's command runs (a relative program, `./agent.sh`, or
//! the script an interpreter is given, `sh scripts/agent.sh`, `python3
//! bot.py`) is looked up in the commit the run starts from, and the run is
//! refused, naming it, when it is not there (nor brought in by
//! `loop.copy`/`loop.link`). Only agents' commands: a gate or a command
//! task may well run a file that an earlier task of the run writes.

use super::programs::{Locator, SHELL_SPECIAL, uses};
use crate::Compilation;
use crate::plan::{GateKind, Plan, TaskKind};
use std::collections::{HashMap, HashSet};

/// Programs that run the file named by their first argument.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "python", "python3", "node", "ruby", "perl", "php",
];

/// Whether the relative path `file` climbs above the directory it is
/// relative to (`../x`, `a/../../x`).
fn leaves_the_top(file: &str) -> bool {
    let mut depth = 0usize;
    for part in file.split('/') {
        match part {
            "" | "." => {}
            ".." if depth == 0 => return true,
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    false
}

/// The file of the repository that `run` executes, when it names one: its
/// program when that is a relative path (`./agent.sh`, `bin/agent`), or
/// the first argument of an interpreter (`sh scripts/agent.sh`) when that
/// looks like a path (a `/` or a `.` in it) and comes before any other
/// argument (`sh -c '…'`, `python3 -m mod`: none). A leading `./` is
/// dropped; `None` when it cannot be told without running the shell.
pub fn file_of(run: &str) -> Option<&str> {
    let mut words = run.split_whitespace().skip_while(|w| {
        w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    });
    let program = words.next()?;
    let plain = |w: &str| !w.contains(SHELL_SPECIAL) && !w.starts_with('/');
    if program.contains('/') {
        return plain(program).then(|| program.trim_start_matches("./"));
    }
    if !INTERPRETERS.contains(&program) {
        return None;
    }
    for word in words {
        if word == "--" {
            continue;
        }
        // An option: `-c`, `-m` and `-e` give code, not a file; any other
        // may take an argument that is no file (`-X dev`), so stop at one
        // that does not look like a path.
        if word.starts_with('-') {
            if matches!(word, "-c" | "-m" | "-e" | "-" | "-s") {
                return None;
            }
            continue;
        }
        let path_like = word.contains('/') || word.contains('.');
        return (plain(word) && path_like).then(|| word.trim_start_matches("./"));
    }
    None
}

/// The distinct commands agents of `plan` run: each task's agent and its
/// fallbacks, its resolver, and its agent gates' agents.
fn agent_commands(plan: &Plan) -> HashSet<&str> {
    let mut out: HashSet<&str> = HashSet::new();
    for task in &plan.tasks {
        if let TaskKind::Agent { agent, .. } = &task.kind {
            out.insert(&agent.run);
            out.extend(agent.fallbacks.iter().map(|f| f.run.as_str()));
        }
        out.extend(task.resolver.iter().map(|r| r.run.as_str()));
        for g in &task.gates {
            if let GateKind::Agent { agent, .. } = &g.kind {
                out.insert(&agent.run);
            }
        }
    }
    out
}

/// Checks that the file each agent's command runs ([`file_of`]) is in the
/// commit attempts start from (`base`; `committed` lists its files, asked
/// only when some agent's command names a file) or among what the plan
/// brings into every worktree (`brought`, paths relative to the top).
/// `state` says what a missing file is in the main checkout, for the
/// message (`"it is not in git"`).
///
/// Errors: one line per missing file, at the first command that runs it
/// (what runs it, the string, and where it is in the plan), and one more
/// counting the other commands that run it; or why the commit's files
/// cannot be listed.
pub fn check(
    plan: &Plan,
    compilation: &Compilation,
    committed: &mut dyn FnMut() -> Result<HashSet<String>, String>,
    brought: &[String],
    base: &str,
    state: &dyn Fn(&str) -> &'static str,
) -> Result<(), Vec<String>> {
    let named: HashSet<&str> = agent_commands(plan)
        .into_iter()
        .filter_map(file_of)
        .filter(|f| {
            !brought
                .iter()
                .any(|b| f == b || f.starts_with(&format!("{b}/")))
        })
        .collect();
    if named.is_empty() {
        return Ok(());
    }
    let committed = committed().map_err(|e| vec![e])?;
    let missing: HashSet<&str> = named
        .into_iter()
        .filter(|f| !committed.contains(*f))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    // A refusal: now say where each is run, in the plan's order.
    let mut lines: Vec<String> = Vec::new();
    let mut reported: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut locator = Locator::new(compilation);
    let short = base.get(..10).unwrap_or(base);
    for u in uses(plan).into_iter().filter(|u| u.agent) {
        let Some(file) = file_of(u.command).filter(|f| missing.contains(f)) else {
            continue;
        };
        if let Some((_, more)) = reported.get_mut(file) {
            *more += 1;
            continue;
        }
        reported.insert(file, (lines.len(), 0));
        let at = locator
            .of_run(u.command)
            .map(|l| format!("{l}: "))
            .unwrap_or_default();
        // Neither fix reaches a file above the repository's top: `copy`
        // cannot leave it (E0014), and git does not hold it.
        lines.push(if leaves_the_top(file) {
            format!(
                "{at}{}: `{file}` is outside the repository (run = {:?}): an attempt \
                 runs in a worktree of it, where that path names nothing; give the \
                 file's absolute path, or move it into the repository and commit it; \
                 nothing was run",
                u.what, u.command
            )
        } else {
            format!(
                "{at}{}: `{file}` is not in the commit attempts start from ({short}): {} \
                 (run = {:?}); commit it, or bring it in with `loop {{ copy = [...] }}`; \
                 nothing was run",
                u.what,
                state(file),
                u.command
            )
        });
    }
    let mut more: Vec<(usize, String)> = reported
        .into_iter()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(file, (at, n))| {
            let commands = if n == 1 {
                "command runs"
            } else {
                "commands run"
            };
            (at, format!("{n} more {commands} `{file}`"))
        })
        .collect();
    more.sort_by_key(|m| std::cmp::Reverse(m.0));
    for (at, line) in more {
        lines.insert(at + 1, line);
    }
    Err(lines)
}

#[cfg(test)]
mod tests {
    use super::{file_of, leaves_the_top};

    #[test]
    fn a_path_that_climbs_above_its_top() {
        assert!(leaves_the_top("../tools/agent.sh"));
        assert!(leaves_the_top("a/../../x.sh"));
        assert!(!leaves_the_top("a/../x.sh"));
        assert!(!leaves_the_top("scripts/./agent.sh"));
    }

    #[test]
    fn the_file_a_command_runs() {
        assert_eq!(file_of("sh scripts/agent.sh"), Some("scripts/agent.sh"));
        assert_eq!(file_of("FOO=1 bash ./run.sh --fast"), Some("run.sh"));
        assert_eq!(file_of("python3 -u bot.py"), Some("bot.py"));
        assert_eq!(file_of("./agent.sh -p"), Some("agent.sh"));
        assert_eq!(file_of("bin/agent"), Some("bin/agent"));
        assert_eq!(file_of("sh -c 'x.sh'"), None);
        assert_eq!(file_of("python3 -m agent.main"), None);
        assert_eq!(file_of("python3 -X dev bot.py"), None);
        assert_eq!(file_of("sh /opt/agent.sh"), None);
        assert_eq!(file_of("/usr/bin/agent"), None);
        assert_eq!(file_of("claude -p"), None);
        assert_eq!(file_of("sh \"$HOME/a.sh\""), None);
        assert_eq!(file_of("bash"), None);
    }
}
