//! The check the plan names is the check that runs: before a command
//! check (`accept`, a command gate), the scripts its command runs from the
//! repository (`sh verify.sh`, `python3 tests/check.py`, `./run-tests`) are put back
//! as they are at the commit the try started from (`LOOP_BASE`: the task's
//! starting commit; for a merge's checks, the integration head), whatever
//! the attempt did to them. Protected paths need no pinning: an attempt
//! that changed one failed before its gates ([`super::protect`]). A path
//! the task `may_change` is not pinned.

use super::{Check, CheckKind, Verdict};
use crate::run::engine::attempt::protect::Protection;
use crate::run::engine::context::{Io, Protocol};
use crate::run::engine::outcome::stopping;
use crate::run::sys::checkout::Checkout;

/// Programs that run the script named after their options.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "python", "python3", "node", "perl", "ruby", "php",
    "Rscript", "deno", "bun", "tclsh", "pwsh", "lua",
];

/// The interpreters among [`INTERPRETERS`] that are shells: `-e` is one
/// of their options (errexit), not code to run, and `-c` gives a command.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh"];

/// Programs that run the command after their own options and arguments:
/// `timeout 5 sh verify.sh`, `env X=1 sh verify.sh`.
const WRAPPERS: &[&str] = &[
    "env", "timeout", "nice", "time", "exec", "command", "nohup", "stdbuf", "ionice", "chrt",
];

/// The scripts `command` runs from the repository: in each simple command
/// (split at `;`, `|`, `&`, line breaks and parentheses; leading `VAR=value`
/// assignments skipped), a program named by a relative path (`./run-tests`,
/// `scripts/check`), or the script an interpreter runs (`sh verify.sh`,
/// `sh -e verify.sh`, `python3 tests/check.py`; none after `-m`, or `-e`
/// for an interpreter that is not a shell), through wrappers (`timeout 5`,
/// `env X=1`, `nice`) and a shell's `-c` command (`bash -c 'sh x.sh'`);
/// `$PWD/` names the worktree's top, where checks run. Only scripts: a
/// file a command merely reads (`test -f x`, `grep y src/a.py`) is not
/// pinned, or the check would judge the base instead of the work.
pub(crate) fn named_paths(command: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for simple in command.split(|c: char| ";|&\n()".contains(c)) {
        let words: Vec<&str> = simple
            .split(|c: char| c.is_whitespace() || "'\"`<>".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        scripts_of(&words, &mut out);
    }
    out
}

/// The script the simple command `words` runs ([`named_paths`]), added to
/// `out` unless it is there already.
fn scripts_of(words: &[&str], out: &mut Vec<String>) {
    let mut rest = words
        .iter()
        .copied()
        .skip_while(|w| w.contains('=') && !w.starts_with('='))
        .peekable();
    // Wrappers, with their options, assignments and (`timeout`) duration.
    let program = loop {
        let Some(program) = rest.next() else {
            return;
        };
        let name = program.rsplit('/').next().unwrap_or(program);
        if !WRAPPERS.contains(&name) {
            break program;
        }
        while rest.peek().is_some_and(|w| {
            w.starts_with('-') || w.contains('=') || w.starts_with(|c: char| c.is_ascii_digit())
        }) {
            rest.next();
        }
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    let script = if INTERPRETERS.contains(&name) {
        let shell = SHELLS.contains(&name);
        let mut found = None;
        while let Some(w) = rest.next() {
            match w {
                // A shell's command: its words are a command of their own.
                "-c" if shell => {
                    let nested: Vec<&str> = rest.collect();
                    scripts_of(&nested, out);
                    return;
                }
                "-c" | "-m" => return,
                "-e" if !shell => return,
                w if w.starts_with('-') => {}
                w => {
                    found = Some(w);
                    break;
                }
            }
        }
        found
    } else if program.contains('/') {
        Some(program)
    } else {
        None
    };
    let Some(script) = script else {
        return;
    };
    let script = script
        .strip_prefix("$PWD/")
        .or_else(|| script.strip_prefix("${PWD}/"))
        .unwrap_or(script)
        .trim_start_matches("./");
    if script.is_empty()
        || script.starts_with(['$', '/', '~'])
        || script.split('/').any(|c| c == "..")
        || out.iter().any(|w| w == script)
    {
        return;
    }
    out.push(script.to_string());
}

/// Pins the files `check` names at `proto.base` in `co` (a command check
/// only) and returns them: the paths the try changed from the base that
/// the base has (the worktree is restored after the check, see
/// [`super::litter`]).
pub(super) fn pin(
    io: Io<'_>,
    co: &Checkout,
    proto: &Protocol<'_>,
    check: &Check,
) -> Result<Vec<String>, Verdict> {
    let CheckKind::Command(command) = &check.kind else {
        return Ok(Vec::new());
    };
    let lifted = Protection::of(proto.task).map_err(Verdict::Error)?;
    let named: Vec<String> = named_paths(command)
        .into_iter()
        .filter(|p| proto.task.may_change.is_empty() || !lifted.lifts(p))
        .collect();
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let fail = |e: String| {
        if stopping(io.control) {
            Verdict::Stopped
        } else {
            Verdict::Error(format!("cannot pin the files `{}` runs: {e}", check.label))
        }
    };
    // What differs between the base and the worktree's files, of those
    // named (`A`: the base lacks it, nothing to pin). A word that names a
    // directory matches the files below it: those are not pinned (the
    // command names them no more than `pytest src` names the code).
    let mut args = vec![
        "diff",
        "-z",
        "--no-renames",
        "--name-status",
        proto.base,
        "--",
    ];
    let specs: Vec<String> = named.iter().map(|p| format!(":(literal){p}")).collect();
    args.extend(specs.iter().map(String::as_str));
    let out = io.git.run_co(co, &args).map_err(fail)?;
    let mut fields = out.stdout.split('\0');
    let mut pinned = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        if status != "A" && named.iter().any(|n| n == path) {
            pinned.push(path.to_string());
        }
    }
    if pinned.is_empty() {
        return Ok(pinned);
    }
    let mut args = vec!["checkout", "-q", proto.base, "--"];
    let specs: Vec<String> = pinned.iter().map(|p| format!(":(literal){p}")).collect();
    args.extend(specs.iter().map(String::as_str));
    io.git.run_co(co, &args).map_err(fail)?;
    Ok(pinned)
}

#[cfg(test)]
mod tests {
    use super::named_paths;

    #[test]
    fn the_scripts_a_command_runs() {
        assert_eq!(named_paths("sh verify.sh"), ["verify.sh"]);
        assert_eq!(
            named_paths("PYTHONPATH=. python3 -u tests/check.py -q && ./run-tests; make"),
            ["tests/check.py", "run-tests"]
        );
        assert_eq!(named_paths("bash -c 'sh x.sh'"), ["x.sh"]);
        assert_eq!(named_paths("sh -e verify.sh"), ["verify.sh"]);
        assert_eq!(named_paths("timeout 5 sh verify.sh"), ["verify.sh"]);
        assert_eq!(named_paths("env X=1 -i sh verify.sh"), ["verify.sh"]);
        assert_eq!(named_paths("nice -n 5 ./run-tests"), ["run-tests"]);
        assert_eq!(named_paths("sh $PWD/verify.sh"), ["verify.sh"]);
        assert_eq!(named_paths("perl -e 'print 1' x.pl"), Vec::<String>::new());
        assert_eq!(named_paths("env"), Vec::<String>::new());
        assert_eq!(named_paths("python3 -m pytest tests"), Vec::<String>::new());
        assert_eq!(
            named_paths("test -f a.md && grep -q x src/a.py"),
            Vec::<String>::new()
        );
        assert_eq!(
            named_paths("/usr/bin/env x; sh ../up.sh; sh $X"),
            Vec::<String>::new()
        );
        assert_eq!(named_paths("scripts/check --all"), ["scripts/check"]);
    }
}
