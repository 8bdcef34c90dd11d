//! `loopc run [PLAN] [TASK…] [-j N] [--dry-run] [--force T…] [--no-cache] [--stage S,…]`:
//! compiles the plan, cuts a REEL spec tree down to its worked stages
//! ([`loopc::plan::Plan::work`]), then to the named tasks and their
//! dependencies ([`loopc::plan::Plan::select`]) and runs it with
//! [`loopc::run::start`] and its phases.
//!
//! Exit status: 0 every task passed or was cached, 1 some task failed, was
//! blocked or skipped (or a spec tree's spec could not move on), 2 the plan
//! has errors or the repository cannot be used (or the integration branch
//! moved during the run), 3 a budget or the circuit breaker stopped the
//! run, 130 Ctrl-C or SIGTERM.

use super::display::{Progress, Ui};
use super::{
    Verbosity, exit, note_verbose, output_status, print_compilation, say, verbosity, warn,
    write_stdout,
};
use loopc::plan::Plan;
use loopc::run::{Options, Outcome};
use std::path::{Path, PathBuf};

/// `loopc run [PLAN] [TASK…] [-j N] [--dry-run] [--force T…] [--no-cache] [--stage S,…]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The plan, then the tasks to run (with their dependencies; default:
    /// all). The first word is the plan when it ends in `.loop`, `.md`,
    /// `.json` or `.feature` or names an existing file or directory;
    /// without one, the plan is found from the current directory: its
    /// `plan.loop`, else its only `*.loop`, else the same in the directories
    /// above it up to the repository's top.
    #[arg(value_name = "PLAN|TASK")]
    pub words: Vec<String>,
    /// The defaults plan for REEL specs (agent, gates, defaults, budget,
    /// loop); default `defaults.loop` beside the specs.
    #[arg(long, value_name = "FILE.loop")]
    pub defaults: Option<PathBuf>,
    /// For a REEL spec tree: the stages whose specs run, comma-separated
    /// (`--stage inflight,review`); overrides `loop.stages` (default
    /// `inflight`). A spec whose tasks all pass moves to the next stage.
    #[arg(long = "stage", value_name = "STAGE,…", value_delimiter = ',')]
    pub stages: Vec<String>,
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

/// The exit status of a run that ended so (docs/running.md).
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

/// Whether the command-line word `word` names a plan rather than a task:
/// it has a plan's extension or names an existing path (so a task is
/// taken for a plan only when a file or directory of its name is here:
/// then name the plan first).
fn is_plan_word(word: &str, cwd: &Path) -> bool {
    [".loop", ".md", ".json", ".feature"]
        .iter()
        .any(|x| word.ends_with(x))
        || cwd.join(word).exists()
}

/// The line after the summary that says how to write the run's report:
/// `report: loopc report -o .loopc/report.html` (the path as seen from
/// `cwd`, in the repository whose top is `root`).
fn report_line(root: &Path, cwd: &Path) -> String {
    let shown = match cwd.strip_prefix(root) {
        Ok(below) => {
            let mut up = PathBuf::new();
            for _ in below.components() {
                up.push("..");
            }
            up.join(loopc::run::report::DEFAULT_FILE)
        }
        Err(_) => loopc::run::report::default_file(root),
    };
    format!(
        "report: loopc report -o {}\n",
        loopc::run::status::shell_word(&shown.to_string_lossy())
    )
}

/// Finds, compiles and runs the plan; returns the exit status, or the
/// message of an error that is exit 2.
fn run_plan(args: &Args) -> Result<i32, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let (given, words, force) = split_words(args, &cwd);
    let path = match given {
        Some(p) => p,
        None => {
            let found = loopc::discover::find_plan(&cwd).map_err(|e| e.to_string())?;
            note_verbose(&format!("using the plan {}", found.display()));
            found
        }
    };
    let mut compilation = compile(&path, args, &cwd)?;
    if !compilation.diagnostics.is_empty() {
        print_compilation(&compilation, &compilation.diagnostics);
    }
    let Some(plan) = compilation.plan.take() else {
        return Err(format!("{} has errors; nothing was run", path.display()));
    };
    check_stages(&plan, args, &path)?;
    let plan = cut(plan, args, &words)?;
    check_files(&plan, &compilation, &cwd)?;
    let base = plan.tasks.iter().any(|t| t.expands.is_some()).then(|| {
        let mut base = loopc::expand::Base::of(&compilation, &plan.name);
        base.targets = words.clone();
        base
    });
    let options = Options {
        base,
        jobs: args.jobs,
        dry_run: args.dry_run,
        force,
        no_cache: args.no_cache,
        plan_file: path.display().to_string(),
        exit_status,
    };
    execute(plan, &options, &cwd)
}

/// The plan named on the command line, if any, the tasks named and the
/// `--force` tasks. `--force` takes one or more values, so `--force a b
/// j.loop` puts the plan among them: without a PLAN, a last value that
/// names a plan is it.
fn split_words(args: &Args, cwd: &Path) -> (Option<PathBuf>, Vec<String>, Vec<String>) {
    let mut words = args.words.clone();
    let mut force = args.force.clone();
    let mut given = None;
    if words.first().is_some_and(|w| is_plan_word(w, cwd)) {
        given = Some(PathBuf::from(words.remove(0)));
    } else if words.is_empty()
        && let Some(last) = force.last()
        && is_plan_word(last, cwd)
    {
        given = force.pop().map(PathBuf::from);
    }
    (given, words, force)
}

/// Compiles the plan at `path`; the error says when a directory that is
/// no plan was meant as a task.
fn compile(path: &Path, args: &Args, cwd: &Path) -> Result<loopc::Compilation, String> {
    loopc::compile_path(path, args.defaults.as_deref()).map_err(|e| {
        let mut message = e.to_string();
        // `loopc run check` in a directory with a `check/`: the word was
        // meant as a task of the plan found here.
        if path.is_dir()
            && let Some(word) = path.to_str()
            && let Ok(found) = loopc::discover::find_plan(cwd)
            && let Ok(c) = loopc::compile_path(&found, args.defaults.as_deref())
            && c.plan
                .as_ref()
                .is_some_and(|p| p.tasks.iter().any(|t| t.name == word))
        {
            message.push_str(&format!(
                "\nhint: `{word}` is also a task of {}; to run the task, name the plan first: \
                 `loopc run {} {word}`",
                found.display(),
                found.display()
            ));
        }
        message
    })
}

/// Refuses `--stage` without a spec tree (and warns of `loop.stages`
/// there), a spec tree with plan fragments, and a stage named twice.
fn check_stages(plan: &Plan, args: &Args, path: &Path) -> Result<(), String> {
    if plan.pipeline.is_none() {
        if !args.stages.is_empty() {
            return Err(format!(
                "--stage applies to a REEL spec tree (a directory with todo/, inflight/, … \
                 in it), and {} is not one",
                path.display()
            ));
        }
        if plan.settings.stages.is_some() {
            warn(&format!(
                "`loop.stages` applies to a REEL spec tree, and {} is not one: it is ignored",
                path.display()
            ));
        }
    }
    // A grown plan is compiled again from the plan's syntax tree, which
    // would lose the stage cut of a spec tree: refuse the two together.
    if plan.pipeline.is_some()
        && let Some(t) = plan.tasks.iter().find(|t| t.expands.is_some())
    {
        return Err(format!(
            "task `{}` has `expands`, and {} is a REEL spec tree: plan fragments are not \
             supported in spec trees; run the task from a `.loop` plan",
            t.name,
            path.display()
        ));
    }
    // As in `loop.stages` (E0009), a stage is named once.
    if let Some((_, twice)) = args
        .stages
        .iter()
        .enumerate()
        .find(|(i, s)| args.stages[..*i].contains(s))
    {
        return Err(format!(
            "--stage: `{twice}` is named twice; name each stage once"
        ));
    }
    Ok(())
}

/// `tree` cut to the worked stages of a spec tree, then to the tasks
/// `words` names and their dependencies.
fn cut(tree: Plan, args: &Args, words: &[String]) -> Result<Plan, String> {
    let stages = (!args.stages.is_empty()).then_some(args.stages.as_slice());
    // Without a spec tree or targets the plan is used as it is: copying it
    // twice was most of a large dry run's memory.
    let worked = match tree.pipeline {
        Some(_) => Some(tree.work(stages).map_err(|e| format!("--stage: {e}"))?),
        None => None,
    };
    if words.is_empty() {
        return Ok(worked.unwrap_or(tree));
    }
    worked.as_ref().unwrap_or(&tree).select(words).map_err(|e| {
        // A task of a spec in a stage this run does not work.
        match tree.spec_of_task(&e.name) {
            Some(spec) => format!(
                "task `{}` is in {} ({}/), a stage this run does not work; add it with \
                 `--stage` (e.g. `--stage {}`)",
                e.name,
                spec.path.display(),
                spec.stage_name(),
                spec.stage_name()
            ),
            None => match loopc::expand::unknown_task_hint(&tree, &e.name) {
                Some(hint) => format!("no task named `{}` in the plan: {hint}", e.name),
                None => e.to_string(),
            },
        }
    })
}

/// Refuses, before any work, a program or a `loop.copy`/`loop.link` file
/// that is not there.
fn check_files(plan: &Plan, compilation: &loopc::Compilation, cwd: &Path) -> Result<(), String> {
    // A program that is not there fails every attempt the same way: say so
    // before any work (`--dry-run` too: it refuses what `run` refuses).
    // `run` strings are run from the worktree's top, so a relative program
    // is looked up from the repository's.
    // Outside a repository nothing can run: say that first, not that a
    // program is missing.
    let top = loopc::run::sys::git::Git::discover(cwd)?.root;
    if let Err(missing) = loopc::run::engine::agent::programs::check(plan, compilation, &top) {
        return Err(missing.join("\nerror: "));
    }
    // So is a file `loop.copy` or `loop.link` names that is not there.
    if let Err(missing) = loopc::run::engine::worktree_files::check(plan, compilation, cwd) {
        return Err(missing.join("\nerror: "));
    }
    Ok(())
}

/// Runs `plan` in the repository containing `cwd` (or, with `--dry-run`,
/// says what would run) through the library's phases, printing what each
/// returns: the warnings before any work, the notes of the clean-up after
/// a killed run (not with `-q`), the live display, then the summary.
fn execute(plan: Plan, options: &Options, cwd: &Path) -> Result<i32, String> {
    let started = loopc::run::start(plan, options, cwd).map_err(|e| e.message)?;
    for w in &started.warnings {
        eline!("{w}");
    }
    if options.dry_run {
        let report = started.dry_run().map_err(|e| e.message)?;
        return Ok(output_status(write_stdout(&report), |e| {
            format!("error: cannot write to stdout: {e}")
        }));
    }
    let progress = match verbosity() {
        Verbosity::Quiet => Progress::Off,
        Verbosity::Normal => Progress::Auto,
        Verbosity::Verbose => Progress::Lines,
    };
    let recovered = started.recover().map_err(|e| e.message)?;
    // Notes are for the person watching: `-q` leaves them out.
    if progress != Progress::Off {
        for note in &recovered.notes {
            eline!("note: {note}");
        }
    }
    let ran = recovered
        .run(Box::new(Ui::for_progress(progress)))
        .map_err(|e| e.message)?;
    for w in &ran.warnings {
        eline!("{w}");
    }
    // Where the run's report would be written: built only when asked for
    // (`loopc report`).
    let summary = format!("{}{}", ran.summary, report_line(&ran.root, cwd));
    // `-q` prints the summary only when the run did not pass. A closed or
    // full stdout does not change the run's result (state.json has it), but
    // a full one is said.
    if !(verbosity() == Verbosity::Quiet && ran.outcome == Outcome::Passed)
        && let Err(e) = write_stdout(&summary)
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eline!(
            "warning: cannot write the run's summary to stdout: {e} (`loopc status` \
             prints it again)"
        );
    }
    Ok(exit_status(ran.outcome))
}
