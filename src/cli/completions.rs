//! `loopc completions SHELL`: prints the shell's registration of loopc's
//! completions on stdout. The shell then asks loopc itself at each Tab
//! (`LOOPC_COMPLETE=SHELL loopc -- WORDS…`, clap_complete's dynamic
//! completion, answered in [`super::main`] before anything else): the
//! subcommands, options and values of the command line's definition, and
//! the task names of the plan found from the current directory for `run`,
//! `logs`, `answer` and `--force` ([`tasks`]).
//!
//! Exit status: 0, or 2 when stdout cannot be written (a closed pipe is a
//! normal end).

use super::{output_status, write_stdout};
use clap_complete::Shell;
use clap_complete::engine::{CompletionCandidate, ValueCompleter};
use std::ffi::OsStr;

/// The environment variable that makes `loopc` answer a completion request.
pub const VAR: &str = "LOOPC_COMPLETE";

/// `loopc completions SHELL`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_name = "SHELL", value_enum)]
    pub shell: Shell,
}

/// Runs `loopc completions`.
pub fn run(args: &Args) -> i32 {
    let name = args.shell.to_string();
    let shells = clap_complete::env::Shells::builtins();
    let mut script = Vec::new();
    if let Some(shell) = shells.completer(&name) {
        // The shell calls this binary back: by its path when it was run by
        // one (`target/debug/loopc completions bash`), else from PATH.
        let completer = std::env::args_os()
            .next()
            .map(std::path::PathBuf::from)
            .filter(|p| p.components().count() > 1)
            .and_then(|p| std::path::absolute(p).ok())
            .map_or_else(|| "loopc".to_string(), |p| p.to_string_lossy().into_owned());
        if let Err(e) = shell.write_registration(VAR, "loopc", "loopc", &completer, &mut script) {
            eline!("error: cannot write the completion script: {e}");
            return super::exit::USAGE;
        }
    }
    output_status(write_stdout(&String::from_utf8_lossy(&script)), |e| {
        format!("error: cannot write to stdout: {e}")
    })
}

/// The tasks of the plan `loopc run` would find from the current
/// directory, with their titles, for a completion; none when there is no
/// plan or it does not compile.
fn plan_tasks() -> Vec<CompletionCandidate> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let Ok(path) = loopc::discover::find_plan(&cwd) else {
        return Vec::new();
    };
    let Ok(compiled) = loopc::compile_path(&path, None) else {
        return Vec::new();
    };
    let Some(plan) = &compiled.plan else {
        return Vec::new();
    };
    // With the tasks the last run added from plan fragments (`logs
    // design.parser`), as `list` shows them.
    let dir = loopc::compile::plan_dir(&path);
    let grown = loopc::render::state::load_for_dir(&dir, &plan.name)
        .ok()
        .and_then(|s| super::graph::grown(&compiled, plan, &s, &dir));
    let plan = grown.as_ref().unwrap_or(plan);
    plan.tasks
        .iter()
        .map(|t| {
            let help = t.title.as_ref().map(|title| {
                loopc::visible::escape(title.lines().next().unwrap_or(""), &[])
                    .into_owned()
                    .into()
            });
            CompletionCandidate::new(&t.name).help(help)
        })
        .collect()
}

/// Completes a task name (`logs TASK`, `answer TASK`, `--force TASK…`).
pub fn tasks(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    plan_tasks()
        .into_iter()
        .filter(|c| c.get_value().to_string_lossy().starts_with(&*current))
        .collect()
}

/// Completes a word of `loopc run [PLAN] [TASK…]`: a task of the plan
/// found here, or a path (a plan file or a directory of specs).
pub fn plan_or_task(current: &OsStr) -> Vec<CompletionCandidate> {
    let mut out = tasks(current);
    out.extend(clap_complete::engine::PathCompleter::any().complete(current));
    out
}

/// Completes `--stage STAGE,…`: the stages of a REEL spec tree, after
/// those the word names already.
pub fn stages(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    let (named, partial) = match current.rsplit_once(',') {
        Some((named, partial)) => (format!("{named},"), partial),
        None => (String::new(), &*current),
    };
    let taken: Vec<&str> = named.split(',').collect();
    loopc::origin::STAGES
        .iter()
        .filter(|s| s.starts_with(partial) && !taken.contains(s))
        .map(|s| CompletionCandidate::new(format!("{named}{s}")))
        .collect()
}
