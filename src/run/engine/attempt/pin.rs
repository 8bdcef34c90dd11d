//! The check the plan names is the check that runs: before a command
//! check (`accept`, a command gate), the repository files its command names
//! (`sh verify.sh`, `python3 tests/check.py`, `./run-tests`) are put back
//! as they are at the commit the try started from (`LOOP_BASE`: the task's
//! starting commit; for a merge's checks, the integration head), whatever
//! the attempt did to them. Protected paths need no pinning: an attempt
//! that changed one failed before its gates ([`super::protect`]). A path
//! the task `may_change` is not pinned.

use super::gate::{Check, CheckKind, Verdict};
use super::protect::Protection;
use crate::run::engine::context::{Protocol, RunCtx};
use crate::run::engine::outcome::stopping;
use crate::run::sys::checkout::Checkout;

/// The words of `command` that may name a file of the repository: split
/// at white space, quotes and shell operators, without a leading `./`;
/// not options, variables or absolute paths.
pub(crate) fn named_paths(command: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in command.split(|c: char| c.is_whitespace() || "'\"`;|&()<>=".contains(c)) {
        let word = word.trim_start_matches("./");
        if word.is_empty()
            || word == "."
            || word.starts_with(['$', '/', '~'])
            || word.split('/').any(|c| c == "..")
            || out.iter().any(|w| w == word)
        {
            continue;
        }
        out.push(word.to_string());
    }
    out
}

/// Pins the files `check` names at `proto.base` in `co` (a command check
/// only) and returns them: the paths the try changed from the base that
/// the base has (the worktree is restored after the check, see
/// [`super::litter`]).
pub(super) fn pin(
    ctx: &RunCtx,
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
        if stopping(ctx) {
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
    let out = ctx.git.run_co(co, &args).map_err(fail)?;
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
    ctx.git.run_co(co, &args).map_err(fail)?;
    Ok(pinned)
}

#[cfg(test)]
mod tests {
    use super::named_paths;

    #[test]
    fn the_words_that_may_name_files() {
        assert_eq!(named_paths("sh verify.sh"), ["sh", "verify.sh"]);
        assert_eq!(
            named_paths("PYTHONPATH=. python3 tests/check.py -q && ./run-tests"),
            ["PYTHONPATH", "python3", "tests/check.py", "-q", "run-tests"]
        );
        assert_eq!(
            named_paths("bash -c 'sh x.sh' /abs $HOME ../up"),
            ["bash", "-c", "sh", "x.sh"]
        );
    }
}
