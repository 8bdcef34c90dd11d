//! `loopc run [PLAN] [TASK…] [-j N] [--dry-run] [--force T…] [--skip-gate G]… [--retry-failed [T…]] [--no-cache] [--verify] [--stage S,…] [--watch]`:
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
    Verbosity, exit, note_verbose, output_status, print_plan_diagnostics, quiet, say, verbosity,
    warn, write_stdout,
};
use clap_complete::engine::ArgValueCompleter;
use loopc::plan::Plan;
use loopc::run::standby::{Standby, Watched};
use loopc::run::sys::git::Git;
use loopc::run::{Options, Outcome, RetryFailed};
use std::path::{Path, PathBuf};

/// `loopc run [PLAN] [TASK…] [-j N] [--dry-run] [--force T…] [--skip-gate G]… [--retry-failed [T…]] [--no-cache] [--verify] [--stage S,…] [--watch]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The plan, then the tasks to run (with their dependencies; default:
    /// all). The first word is the plan when it ends in `.loop`, `.md`,
    /// `.json` or `.feature` or names an existing file or directory;
    /// without one, the plan is found from the current directory: its
    /// `plan.loop`, else its only `*.loop`, else the same in the directories
    /// above it up to the repository's top.
    #[arg(
        value_name = "PLAN|TASK",
        add = ArgValueCompleter::new(super::completions::plan_or_task)
    )]
    pub words: Vec<String>,
    /// The defaults plan for REEL specs (agent, gates, defaults, budget,
    /// loop); default `defaults.loop` beside the specs.
    #[arg(long, value_name = "FILE.loop")]
    pub defaults: Option<PathBuf>,
    /// For a REEL spec tree: the stages whose specs run, comma-separated
    /// (`--stage inflight,review`); overrides `loop.stages` (default
    /// `inflight`). A spec whose tasks all pass moves to the next stage.
    #[arg(
        long = "stage",
        value_name = "STAGE,…",
        value_delimiter = ',',
        add = ArgValueCompleter::new(super::completions::stages)
    )]
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
    #[arg(
        long,
        value_name = "TASK",
        num_args = 1..,
        add = ArgValueCompleter::new(super::completions::tasks)
    )]
    pub force: Vec<String>,
    /// Run without this gate, for speed; one gate each time, the flag
    /// again for more (`--skip-gate review --skip-gate lint`): results are
    /// recorded as not checked by them, and a later run without the flag
    /// runs just those gates on those results.
    #[arg(long = "skip-gate", value_name = "GATE", action = clap::ArgAction::Append)]
    pub skip_gate: Vec<String>,
    /// Neither read nor write the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Verify every task first, as `verify = true` does: its `accept` runs
    /// on its starting commit, and if it passes the task is already
    /// satisfied (no agent, no change).
    #[arg(long)]
    pub verify: bool,
    /// Run again the tasks (all, without names) that ran out of attempts
    /// in an earlier run with the same key, or whose question is not
    /// answered yet, which are otherwise not run (their failures and
    /// questions are remembered: docs/resilience.md). They start over at
    /// attempt 1, told the last failure's feedback (`--force` runs a task
    /// it names so too).
    #[arg(
        long = "retry-failed",
        value_name = "TASK",
        num_args = 0..,
        add = ArgValueCompleter::new(super::completions::tasks)
    )]
    pub retry_failed: Option<Vec<String>>,
    /// Standby: once the run ends, wait for a change to the plan, to a
    /// file a task's `inputs` match or to the base branch, then run again
    /// with the cache (only what the change affects runs); a line per
    /// round; a plan with errors is waited on. Ctrl-C ends it (exit 130).
    #[arg(long, conflicts_with = "dry_run")]
    pub watch: bool,
}

/// What a round of `--watch` learns as it goes (the standby loop in
/// `cli/standby.rs` carries it from round to round).
#[derive(Default)]
pub(super) struct Round {
    /// What the round before read (a plan with errors still reads its
    /// inputs); taken in.
    pub previous: Option<Watched>,
    /// What this round reads, once the plan was found.
    pub watched: Option<Watched>,
    /// How the run ended and each task with it, when it ran.
    pub ran: Option<(Outcome, Vec<loopc::run::RanTask>)>,
    /// The watcher, started by the first round that found its repository
    /// and handed on from round to round.
    pub standby: Option<Standby>,
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

/// Runs `loopc run` once (`--watch` is dispatched to the standby loop,
/// which calls [`run_plan`] per round).
pub fn run(args: &Args) -> i32 {
    match run_plan(args, &mut Round::default()) {
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
/// `cwd`, in the repository whose top is `root`); from outside that
/// repository, `report: cd <root> && loopc report` (`loopc report` reports
/// the repository it is run in).
fn report_line(root: &Path, cwd: &Path) -> String {
    let Ok(below) = cwd.strip_prefix(root) else {
        return format!(
            "report: cd {} && loopc report\n",
            loopc::visible::shell_word(&root.to_string_lossy())
        );
    };
    let mut shown = PathBuf::new();
    for _ in below.components() {
        shown.push("..");
    }
    let shown = shown.join(loopc::run::report::DEFAULT_FILE);
    format!(
        "report: loopc report -o {}\n",
        loopc::visible::shell_word(&shown.to_string_lossy())
    )
}

/// Finds, compiles and runs the plan, noting in `round` what it reads and
/// how it ended; returns the exit status, or the message of an error that
/// is exit 2.
pub(super) fn run_plan(args: &Args, round: &mut Round) -> Result<i32, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    // In a worktree loopc made for an attempt, say so before looking for a
    // plan there (it would suggest `loopc init`).
    loopc::run::store::layout::Layout::of_checkout(&cwd)?;
    let (given, words, force, skip_gates, retry_failed) = split_words(args, &cwd);
    let path = match given {
        Some(p) => super::given_plan(&p),
        None => {
            let found = loopc::discover::find_plan(&cwd).map_err(|e| e.to_string())?;
            note_verbose(&format!("using the plan {}", found.display()));
            found
        }
    };
    stage_of_tree(&path, args)?;
    let compiled = compile(&path, args, &cwd);
    if args.watch {
        let previous = round.previous.as_ref();
        let watched = Watched::of(&path, &cwd, compiled.as_ref().ok(), previous);
        // Watching starts before the first round runs: an input changed
        // while it runs wakes the next one.
        if round.standby.is_none()
            && let Some(root) = &watched.root
        {
            round.standby = Some(Standby::start(root)?);
        }
        round.watched = Some(watched);
    }
    let mut compilation = compiled?;
    print_plan_diagnostics(&compilation);
    let Some(plan) = compilation.plan.take() else {
        return Err(format!("{} has errors; nothing was run", path.display()));
    };
    check_stages(&plan, args, &path)?;
    let plan = cut(plan, args, &words)?;
    let (git, start_commit) = refuse_early(&plan, &compilation, &cwd, &path)?;
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
        skip_gates,
        retry_failed,
        no_cache: args.no_cache,
        verify: args.verify,
        plan_file: path.display().to_string(),
        repository: git,
        start_commit: Some(start_commit),
        exit_status,
    };
    // The syntax tree and source are as large as the plan and the run no
    // longer reads them (a plan that expands has its own copy, `base`).
    drop(compilation);
    execute(plan, &options, &cwd, round)
}

/// What [`split_words`] finds: the plan, the tasks named, the `--force`
/// tasks, the `--skip-gate` gates and what `--retry-failed` says.
type Words = (
    Option<PathBuf>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
    RetryFailed,
);

/// The plan named on the command line, if any, the tasks named, the
/// `--force` tasks, the `--skip-gate` gates and the `--retry-failed`
/// tasks. `--force` and `--retry-failed` take several values, so `--force
/// a b j.loop` puts the plan among them: without a PLAN, a last value that
/// names a plan is it. `--skip-gate` takes one (the words after it are
/// the plan and tasks).
fn split_words(args: &Args, cwd: &Path) -> Words {
    let mut words = args.words.clone();
    let mut force = args.force.clone();
    let skip = args.skip_gate.clone();
    let mut retry = args.retry_failed.clone();
    let mut given = None;
    if words.first().is_some_and(|w| is_plan_word(w, cwd)) {
        given = Some(PathBuf::from(words.remove(0)));
    } else if words.is_empty() {
        let lists = [Some(&mut force), retry.as_mut()];
        for list in lists.into_iter().flatten() {
            if given.is_none()
                && let Some(last) = list.last()
                && is_plan_word(last, cwd)
            {
                given = list.pop().map(PathBuf::from);
            }
        }
    }
    let retry = match retry {
        None => RetryFailed::None,
        Some(names) if names.is_empty() => RetryFailed::All,
        Some(names) => RetryFailed::Tasks(names),
    };
    (given, words, force, skip, retry)
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

/// `--stage` with one stage directory of a REEL spec tree as the plan
/// (`specs/inflight`): refused before it is compiled (alone, a stage's
/// specs lack the tree's defaults, and their errors would hide the
/// misuse), naming the tree to give instead.
fn stage_of_tree(path: &Path, args: &Args) -> Result<(), String> {
    let stage = path.file_name().and_then(|n| n.to_str());
    let tree = loopc::compile::parent_dir(path);
    match stage {
        Some(stage)
            if !args.stages.is_empty()
                && loopc::origin::STAGES.contains(&stage)
                && loopc::reel::is_spec_tree(tree) =>
        {
            Err(format!(
                "--stage applies to a REEL spec tree, and {} is one of its stages: name the \
                 tree, `loopc run {} --stage {}`",
                path.display(),
                tree.display(),
                args.stages.join(",")
            ))
        }
        _ => Ok(()),
    }
}

/// Refuses `--stage` without a spec tree (and warns of `loop.stages`
/// there) and a stage named twice.
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
    let selected = worked
        .as_ref()
        .unwrap_or(&tree)
        .select(words)
        .map_err(|e| {
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
                    // A word that looks like a file name was maybe meant
                    // as the plan (`plan.lop`): no such file is there.
                    None if e.name.contains(['.', '/']) && e.suggestion.is_none() => format!(
                        "{e}, and no file `{}` (a plan is named first: `loopc run PLAN [TASK…]`)",
                        e.name
                    ),
                    None => e.to_string(),
                },
            }
        })?;
    outside_selection(&tree, &selected, args, words)?;
    Ok(selected)
}

/// The first task `--force` or `--retry-failed` names that is in the plan
/// but not among the tasks `words` selected (they and their
/// dependencies): the run would not touch it. A name the plan does not
/// have is left to the run's own message.
fn outside_selection(
    tree: &Plan,
    selected: &Plan,
    args: &Args,
    words: &[String],
) -> Result<(), String> {
    let flags = [("--force", args.force.as_slice())]
        .into_iter()
        .chain(args.retry_failed.as_deref().map(|r| ("--retry-failed", r)));
    for (flag, names) in flags {
        if let Some(name) = names
            .iter()
            .find(|n| selected.task_index(n).is_none() && tree.task_index(n).is_some())
        {
            return Err(format!(
                "{flag}: task `{name}` is not among the tasks this run works ({} and \
                 the tasks {} depends on); name it as a task to run too: `loopc run {} {name} \
                 {flag} {name}`",
                quoted_list(words),
                if words.len() == 1 { "it" } else { "they" },
                words.join(" "),
            ));
        }
    }
    Ok(())
}

/// `a`, `` `a` and `b` ``, `` `a`, `b` and `c` ``.
fn quoted_list(words: &[String]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

/// The repository a run of the plan at `plan` (as given, relative to
/// `cwd`) uses: the one that holds the plan, whatever the current
/// directory; a note says so when the current directory is in another.
///
/// Errors: the plan is in no repository (with the way to make one).
fn plan_repository(cwd: &Path, plan: &Path) -> Result<Git, String> {
    let dir = cwd.join(loopc::compile::plan_dir(plan));
    let git = Git::discover(&dir).map_err(|e| {
        if e.contains("is not inside a git repository") {
            format!(
                "{} is not inside a git repository: loopc runs a plan in the git repository \
                 that holds it, each attempt in a worktree from a commit; make one with `git \
                 init`, then commit the project (`git add -A && git commit -m start`)",
                plan.display()
            )
        } else {
            e
        }
    })?;
    // A current directory inside the plan's repository is in it (no git
    // call to ask, for the common case).
    let inside = |root: &Path| {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        canon(cwd).starts_with(canon(root))
    };
    if !inside(&git.root)
        && let Ok(here) = Git::discover(cwd)
        && !loopc::run::sys::git::same_path(&here.root, &git.root)
        && !quiet()
    {
        eline!(
            "note: the plan {} is in the repository {}, not in the current directory's ({}): \
             it runs there (`loopc status` and `loopc logs` work from there)",
            plan.display(),
            git.root.display(),
            here.root.display()
        );
    }
    Ok(git)
}

/// The checks that refuse a run before the library is asked for one, so
/// that nothing is written: the plan's repository and the commit attempts
/// start from exist, every program a `run` string starts is there, every
/// `loop.copy`/`loop.link` pattern matches, and every file an agent's
/// command runs is in that commit. Returns the repository and that commit.
///
/// Errors: the message naming each problem (exit 2).
fn refuse_early(
    plan: &loopc::plan::Plan,
    compilation: &loopc::Compilation,
    cwd: &Path,
    path: &Path,
) -> Result<(Git, String), String> {
    use loopc::run::engine::{agent, worktree_files};
    // Outside a repository nothing can run: say that first, not that a
    // program is missing; then that there is no commit to start from.
    let git = plan_repository(cwd, path)?;
    // A missing `loop.base` is the plan's: its message says where it is written.
    let base_at = agent::programs::loop_field_location(compilation, "base");
    let base = loopc::run::start_commit(&git, plan, base_at.as_deref()).map_err(|e| e.message)?;
    // Everything below fails every attempt the same way: say it all before
    // any work (`--dry-run` too: it refuses what `run` refuses), every kind
    // at once, as `check` reports every error of a file.
    let mut errors: Vec<String> = Vec::new();
    // A program that is not there. `run` strings are run from the
    // worktree's top, so a relative program is looked up from the
    // repository's.
    if let Err(m) = agent::programs::check(plan, compilation, &git.root) {
        errors.extend(m);
    }
    // A file `loop.copy` or `loop.link` names that is not there.
    let brought = worktree_files::check(plan, compilation, &git.root);
    // An agent's script that the commit does not have (one `copy` brings
    // counts: when `copy` is in error, which it brings is not known).
    let mut committed = || -> Result<std::collections::HashSet<String>, String> {
        Ok(git
            .tree_files(&base)?
            .into_iter()
            .map(|(path, _)| path)
            .collect())
    };
    let state = |file: &str| {
        if git.tracked_paths().unwrap_or_default().contains(file) {
            "it is added but not committed"
        } else if git.root.join(file).exists() {
            "it is not in git"
        } else {
            "there is no such file"
        }
    };
    match brought {
        Ok(brought) => {
            if let Err(m) =
                agent::scripts::check(plan, compilation, &mut committed, &brought, &base, &state)
            {
                errors.extend(m);
            }
        }
        Err(m) => errors.extend(m),
    }
    // A `context` file that the commit does not have (E0015): diagnostics,
    // printed after the errors above.
    let files = if compilation.context.is_empty() {
        None
    } else {
        committed().map_err(|e| errors.push(e)).ok()
    };
    let missing = if let Some(files) = files {
        let short = base.get(..10).unwrap_or(&base);
        let place = format!("in the commit attempts start from ({short})");
        use loopc::check::context::Found;
        let mut found = |p: &str| {
            let dir = format!("{p}/");
            if files.contains(p) {
                Found::File
            } else if files.iter().any(|f| f.starts_with(&dir)) {
                Found::Directory
            } else {
                Found::Missing
            }
        };
        loopc::check::context::missing(&compilation.context, &mut found, &place)
    } else {
        Vec::new()
    };
    if missing.is_empty() {
        if errors.is_empty() {
            return Ok((git, base));
        }
        return Err(errors.join("\nerror: "));
    }
    for e in &errors {
        eline!("error: {e}");
    }
    super::print_compilation(compilation, &missing);
    Err(format!(
        "{} names context files that are not in the commit attempts start from; \
         nothing was run",
        path.display()
    ))
}

/// Runs `plan` in the repository containing `cwd` (or, with `--dry-run`,
/// says what would run) through the library's phases, printing what each
/// returns: the warnings before any work, the notes of the clean-up after
/// a killed run (not with `-q`), the live display, then the summary.
fn execute(plan: Plan, options: &Options, cwd: &Path, round: &mut Round) -> Result<i32, String> {
    let branch = plan.settings.branch.clone();
    let started = loopc::run::start(plan, options, cwd).map_err(|e| e.message)?;
    // `-q`: errors and the output asked for only, no warnings.
    if !quiet() {
        for w in &started.warnings {
            eline!("{w}");
        }
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
    round.ran = Some((ran.outcome, ran.tasks.clone()));
    if !quiet() {
        for w in &ran.warnings {
            eline!("{w}");
        }
    }
    // Where the run's report would be written: built only when asked for
    // (`loopc report`).
    let mut summary = ran.summary.clone();
    // The work is on the integration branch, not yours: say how to bring
    // it over.
    if ran.outcome == Outcome::Passed && !ran.merged_already {
        let cd = match cwd.strip_prefix(&ran.root) {
            Ok(_) => String::new(),
            Err(_) => format!(
                "cd {} && ",
                loopc::visible::shell_word(&ran.root.to_string_lossy())
            ),
        };
        summary.push_str(&format!(
            "to bring the work onto your branch: {cd}git merge {branch}\n"
        ));
    }
    summary.push_str(&report_line(&ran.root, cwd));
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
