//! `loopc run [PLAN] [-j N] [--dry-run] [--force T…] [--no-cache]`
//! (spec §5): compiles the plan and runs it with [`loopc::run::execute`].
//!
//! Exit status: 0 every task passed or was cached, 1 some task failed, was
//! blocked or skipped, 2 the plan has errors or the repository cannot be
//! used (or the integration branch moved during the run), 3 a budget or the
//! circuit breaker stopped the run, 130 Ctrl-C or SIGTERM.

use super::{exit, output_status, print_compilation, say, write_stdout};
use loopc::run::{Options, Outcome, Ran};
use std::path::PathBuf;

/// `loopc run [PLAN] [-j N] [--dry-run] [--force T…] [--no-cache]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The plan file (or a REEL spec, or a directory of them); default
    /// `plan.loop` or the only `*.loop` in the directory.
    #[arg(value_name = "PLAN")]
    pub plan: Option<PathBuf>,
    /// The defaults plan for REEL specs (agent, gates, defaults, budget,
    /// loop); default `defaults.loop` beside the specs.
    #[arg(long, value_name = "FILE.loop")]
    pub defaults: Option<PathBuf>,
    /// Tasks at once; overrides `loop.parallel`.
    #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Make every check `run` makes (failing the same way), then say what
    /// would run or be replayed from the cache, and which replays run
    /// their checks again; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not read the cache for these tasks (their results are still written).
    #[arg(long, value_name = "TASK", num_args = 1..)]
    pub force: Vec<String>,
    /// Neither read nor write the cache.
    #[arg(long)]
    pub no_cache: bool,
}

/// The exit status of a run that ended so (spec §5).
fn exit_status(outcome: Outcome) -> i32 {
    match outcome {
        Outcome::Passed => exit::OK,
        Outcome::Failed => exit::FAILURE,
        Outcome::Budget => exit::BUDGET,
        Outcome::BranchMoved => exit::USAGE,
        Outcome::Interrupted => exit::INTERRUPTED,
        Outcome::StateNotRecorded => exit::USAGE,
    }
}

/// Runs `loopc run`.
pub fn run(args: &Args) -> i32 {
    match run_plan(args) {
        Ok(code) => code,
        Err(message) => {
            say(&message);
            exit::USAGE
        }
    }
}

/// Finds, compiles and runs the plan; returns the exit status, or the
/// message of an error that is exit 2.
fn run_plan(args: &Args) -> Result<i32, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    // `--force` takes one or more values, so `--force a b j.loop` puts the
    // plan among them: without a PLAN, a last value that names a file or
    // ends in `.loop` is the plan.
    let mut force = args.force.clone();
    let mut given = args.plan.clone();
    if given.is_none()
        && let Some(last) = force.last()
        && (last.ends_with(".loop") || cwd.join(last).is_file())
    {
        given = force.pop().map(PathBuf::from);
    }
    let path = loopc::run::find_plan(given.as_deref(), &cwd).map_err(|e| e.message)?;
    let mut compilation =
        loopc::compile_path(&path, args.defaults.as_deref()).map_err(|e| e.to_string())?;
    if !compilation.diagnostics.is_empty() {
        print_compilation(&compilation, &compilation.diagnostics);
    }
    let Some(plan) = compilation.plan.take() else {
        return Err(format!("{} has errors; nothing was run", path.display()));
    };
    // A program that is not there fails every attempt the same way: say so
    // before any work (`--dry-run` too: it refuses what `run` refuses).
    if let Err(missing) = loopc::run::engine::programs::check(&plan, &compilation, &cwd) {
        return Err(missing.join("\nloopc: "));
    }
    // So is a file `loop.copy` or `loop.link` names that is not there.
    if let Err(missing) = loopc::run::engine::worktree_files::check(&plan, &compilation, &cwd) {
        return Err(missing.join("\nloopc: "));
    }
    let options = Options {
        jobs: args.jobs,
        dry_run: args.dry_run,
        force,
        no_cache: args.no_cache,
        plan_file: path.display().to_string(),
        exit_status,
    };
    Ok(
        match loopc::run::execute(plan, &options, &cwd).map_err(|e| e.message)? {
            Ran::DryRun(report) => output_status(write_stdout(&report), |e| {
                format!("loopc: cannot write to stdout: {e}")
            }),
            Ran::Finished(outcome) => exit_status(outcome),
        },
    )
}
