//! The command line: the one place that knows clap, prints a command's
//! results and errors, and picks exit statuses (see [`exit`]).
//!
//! Each subcommand has a file: its clap arguments, and a handler that turns
//! them into the library's plain options, calls the library, and maps its
//! `Result` to output and an exit status. The library under `loopc::` never
//! prints a command's result, never reads clap structs and never names an
//! exit status. A closed stdout (`loopc graph … | head`) is a normal end.

/// `eprintln!` for the command line: a closed stderr (`loopc check … 2>&1
/// >/dev/null | head -1`) is a normal end, never a panic; control and
/// format characters other than `\n` and `\t` (from a file name, a plan's
/// name, …) are shown as escapes ([`loopc::visible`]).
macro_rules! eline {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        // One write a line: stderr is unbuffered, and `writeln!` would
        // write the text and its line break apart.
        let mut text = loopc::visible::escape(&line, &['\n', '\t']).into_owned();
        text.push('\n');
        let _ = std::io::stderr().write_all(text.as_bytes());
    }};
}

mod answer;
mod board;
mod check;
mod clean;
mod completions;
mod display;
mod exit;
mod fmt;
mod graph;
mod id;
mod import;
mod init;
mod list;
mod logs;
mod lsp;
mod report;
mod run;
mod standby;
mod status;

use clap::{Parser, Subcommand};
use codespan_reporting::term::termcolor::{BufferedStandardStream, ColorChoice};
use loopc::Compilation;
use loopc::diagnostic::Diagnostic;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

/// Declarative, checked and cached loops of coding agents.
#[derive(Parser)]
#[command(name = "loopc", version, about, propagate_version = true)]
struct Cli {
    /// When to color output: `auto` colors a terminal unless NO_COLOR is set,
    /// CLICOLOR is 0 or TERM is dumb.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    color: ColorWhen,
    /// Print only errors and the output the command is for (no progress,
    /// no success lines, no notes, no warnings; `check` still prints its
    /// diagnostics, warnings among them: they are its output).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Also say what loopc found and decided: the plan it found, and for
    /// `run` one line per event even on a terminal.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

/// `--color`: when output is colored.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
enum ColorWhen {
    /// Color a terminal, unless the environment says not to.
    #[default]
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// How much a command says besides its output (`-q`, `-v`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum Verbosity {
    /// `-q`: errors and the command's output only.
    Quiet,
    /// Neither flag.
    #[default]
    Normal,
    /// `-v`: also what loopc found and decided.
    Verbose,
}

/// The `-q`/`-v` of this invocation (set once, in [`main`]).
static VERBOSITY: std::sync::OnceLock<Verbosity> = std::sync::OnceLock::new();

/// This invocation's verbosity.
fn verbosity() -> Verbosity {
    VERBOSITY.get().copied().unwrap_or_default()
}

/// Whether `-q` was given.
fn quiet() -> bool {
    verbosity() == Verbosity::Quiet
}

/// Prints `note: {message}` on stderr with `-v` only (what loopc found or
/// decided, such as the plan it found).
fn note_verbose(message: &str) {
    if verbosity() == Verbosity::Verbose {
        eline!("note: {message}");
    }
}

/// Prints `warning: {message}` on stderr unless `-q`.
fn warn(message: &str) {
    if !quiet() {
        eline!("warning: {message}");
    }
}

/// The `--color` of this invocation (set once, in [`main`]).
static COLOR: std::sync::OnceLock<ColorWhen> = std::sync::OnceLock::new();

/// The one rule for color on every stream: `--color always` and `never` win;
/// `auto` colors a terminal unless `NO_COLOR` is set (non-empty),
/// `CLICOLOR=0` or `TERM=dumb`. `env` reads an environment variable.
fn use_color(when: ColorWhen, is_terminal: bool, env: impl Fn(&str) -> Option<String>) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            is_terminal
                && env("NO_COLOR").is_none_or(|v| v.is_empty())
                && env("CLICOLOR").is_none_or(|v| v != "0")
                && env("TERM").is_none_or(|v| v != "dumb")
        }
    }
}

/// Whether output to a stream that is (or is not) a terminal is colored.
fn color_for(is_terminal: bool) -> bool {
    let when = COLOR.get().copied().unwrap_or_default();
    use_color(when, is_terminal, |k| {
        std::env::var_os(k).map(|v| v.to_string_lossy().into_owned())
    })
}

#[derive(Subcommand)]
enum Command {
    /// Check plans and print diagnostics.
    Check(check::Args),
    /// Render a plan's task graph.
    Graph(graph::Args),
    /// Execute a plan (or some of its tasks) in git worktrees.
    #[command(override_usage = "loopc run [OPTIONS] [PLAN] [TASK]...")]
    Run(run::Args),
    /// List a plan's tasks in topological order with their last status.
    List(list::Args),
    /// Write a starter plan (`plan.loop`) that passes `check`.
    Init(init::Args),
    /// Show the last run's tasks.
    Status(status::Args),
    /// Write a run's report: one HTML page (graph, timeline, cost, tasks).
    Report(report::Args),
    /// Remove loopc's worktrees, task branches and logs.
    Clean(clean::Args),
    /// Print the logs of a task's attempt in the last run.
    Logs(logs::Args),
    /// Answer the question of a task that needs a human.
    #[command(
        override_usage = "loopc answer <TASK> <TEXT>\n       loopc answer <TASK> --file <PATH>"
    )]
    Answer(answer::Args),
    /// Watch the run's tasks (or a REEL tree's specs) on a terminal board.
    Board(board::Args),
    /// Format plans in the canonical layout.
    Fmt(fmt::Args),
    /// Start the language server on stdio.
    Lsp,
    /// Convert REEL specs (Markdown, JSON, Gherkin) into a `.loop` plan.
    Import(import::Args),
    /// Print a new REEL task id that no spec in a directory uses yet.
    Id(id::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::Args),
}

/// The stack of the thread that parses the command line, in bytes.
const PARSE_STACK: usize = 8 << 20;

/// Answers a shell asking for completions (`loopc completions`; the
/// process then ends) or parses the command line. clap's derived builders
/// put every argument of a subcommand in one frame, large in a debug build,
/// so this runs on a thread with a fixed stack of its own: the main
/// thread's stack stays for the work, which never needs more for a larger
/// plan (tests/check/scale.rs runs loopc on 256 KiB).
fn parse() -> Result<Cli, clap::Error> {
    let parse = || {
        clap_complete::CompleteEnv::with_factory(command)
            .var(completions::VAR)
            .complete();
        Cli::try_parse()
    };
    match std::thread::Builder::new()
        .name("parse".to_string())
        .stack_size(PARSE_STACK)
        .spawn(parse)
    {
        Ok(thread) => match thread.join() {
            Ok(parsed) => parsed,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        // No thread to be had: parse here, on the main thread's stack.
        Err(_) => parse(),
    }
}

/// Parses the command line, runs the subcommand and returns its exit status.
pub fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            let _ = e.print();
            return status(code);
        }
    };
    let _ = COLOR.set(cli.color);
    let _ = VERBOSITY.set(if cli.quiet {
        Verbosity::Quiet
    } else if cli.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    });
    let code = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Graph(args) => graph::run(&args),
        Command::Run(args) if args.watch => standby::run(&args),
        Command::Run(args) => run::run(&args),
        Command::List(args) => list::run(&args),
        Command::Init(args) => init::run(&args),
        Command::Status(args) => status::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Clean(args) => clean::run(&args),
        Command::Logs(args) => logs::run(&args),
        Command::Answer(args) => answer::run(&args),
        Command::Board(args) => board::run(&args),
        Command::Fmt(args) => fmt::run(&args),
        Command::Lsp => lsp::run(),
        Command::Import(args) => import::run(&args),
        Command::Id(args) => id::run(&args),
        Command::Completions(args) => completions::run(&args),
    };
    status(code)
}

/// The whole command line's clap definition (for `loopc completions`).
fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// The process exit status for `code` (one of [`exit`]'s).
fn status(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Whether human output on stderr is colored ([`use_color`]).
fn stderr_color() -> ColorChoice {
    if color_for(io::stderr().is_terminal()) {
        ColorChoice::Always
    } else {
        ColorChoice::Never
    }
}

/// Prints `diagnostics` of one file to stderr in the human format.
fn print_human(name: &str, source: &str, diagnostics: &[Diagnostic]) {
    // Buffered: codespan-reporting writes a snippet a character at a time.
    let mut err = BufferedStandardStream::stderr(stderr_color());
    // A closed stderr is not worth failing over.
    let _ = loopc::diagnostic::emit_human(&mut err, name, source, diagnostics);
    let _ = err.flush();
}

/// Prints the diagnostics of a plan that a command other than `check` uses
/// (`run`, `graph`, `list`): all of them, or under `-q` only the errors.
fn print_plan_diagnostics(compilation: &Compilation) {
    if quiet() {
        let errors: Vec<Diagnostic> = compilation
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect();
        if !errors.is_empty() {
            print_compilation(compilation, &errors);
        }
    } else if !compilation.diagnostics.is_empty() {
        print_compilation(compilation, &compilation.diagnostics);
    }
}

/// Prints `diagnostics` of `compilation` to stderr in the human format,
/// each in its own file (a REEL spec's diagnostics may be in its spec files
/// and its defaults plan).
fn print_compilation(compilation: &Compilation, diagnostics: &[Diagnostic]) {
    let mut err = BufferedStandardStream::stderr(stderr_color());
    // A closed stderr is not worth failing over.
    let _ = compilation
        .files
        .emit_human(&mut err, &compilation.source, diagnostics);
    let _ = err.flush();
}

/// Writes `text` to stdout and flushes it.
///
/// Errors: the write failed (a closed pipe is `BrokenPipe`).
fn write_stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// The exit status after writing a command's output: 0 when it was
/// written or when the reader went away (a closed pipe, `| head`); for any
/// other error (a full disk) `failed(error)` is printed on stderr and the
/// status is 2.
fn output_status(written: io::Result<()>, failed: impl FnOnce(&io::Error) -> String) -> i32 {
    match written {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            // A closed stderr must not turn the exit status into a panic.
            eline!("{}", failed(&e));
            exit::USAGE
        }
    }
}

/// The current directory, or (having said why) exit status 2.
fn current_dir() -> Result<std::path::PathBuf, i32> {
    std::env::current_dir().map_err(|e| {
        say(&format!("cannot read the current directory: {e}"));
        exit::USAGE
    })
}

/// Prints `message` on stderr as `error: {message}`, the one prefix of
/// every error a command reports (diagnostics print their own `error[E…]`).
fn say(message: &str) {
    // A closed stderr is not worth failing over.
    eline!("error: {message}");
}

/// The plans a command that takes several uses: `given`, else the one
/// [`plan_or_discover`] finds, or (having said why) exit status 2.
fn plans_or_discover(given: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>, i32> {
    if given.is_empty() {
        plan_or_discover(None).map(|p| vec![p])
    } else {
        Ok(given.to_vec())
    }
}

/// Finds (see [`plan_or_discover`]) and compiles the plan of a command that
/// shows it (`graph`, `list`), printing its diagnostics like `check`.
/// `nothing` says what was not done when it has errors (`no graph drawn`).
///
/// Errors: the exit status, having said why: 2 no plan or it cannot be
/// read, 1 it has errors.
fn compile_for_display(
    given: Option<&std::path::Path>,
    defaults: Option<&std::path::Path>,
    nothing: &str,
) -> Result<(std::path::PathBuf, Compilation), i32> {
    let path = plan_or_discover(given)?;
    let compiled = loopc::compile_path(&path, defaults).map_err(|e| {
        say(&e.to_string());
        exit::USAGE
    })?;
    print_plan_diagnostics(&compiled);
    if compiled.plan.is_none() || compiled.has_errors() {
        let errors = compiled.diagnostics.iter().filter(|d| d.is_error()).count();
        eline!(
            "error: `{}` has {} error{}; {nothing}",
            compiled.name,
            errors,
            if errors == 1 { "" } else { "s" }
        );
        return Err(exit::FAILURE);
    }
    Ok((path, compiled))
}

/// The plan named `given`: a directory that holds no REEL spec stands for
/// its plan ([`loopc::discover::plan_in`]: its `plan.loop`, else its only
/// `*.loop` file); anything else is itself.
fn given_plan(given: &std::path::Path) -> std::path::PathBuf {
    if given.is_dir()
        && let Some(plan) = loopc::discover::plan_in(given)
    {
        note_verbose(&format!("using the plan {}", plan.display()));
        return plan;
    }
    given.to_path_buf()
}

/// The plan a command uses: `given`, else the one [`loopc::discover`]
/// finds from the current directory (named with `-v`), or (having said
/// why) exit status 2.
fn plan_or_discover(given: Option<&std::path::Path>) -> Result<std::path::PathBuf, i32> {
    if let Some(p) = given {
        return Ok(given_plan(p));
    }
    let cwd = current_dir()?;
    match loopc::discover::find_plan(&cwd) {
        Ok(p) => {
            note_verbose(&format!("using the plan {}", p.display()));
            Ok(p)
        }
        Err(e) => {
            say(&e.to_string());
            Err(exit::USAGE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_color_rule() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(use_color(ColorWhen::Auto, true, env(&[])));
        assert!(!use_color(ColorWhen::Auto, false, env(&[])));
        assert!(!use_color(ColorWhen::Auto, true, env(&[("NO_COLOR", "1")])));
        assert!(use_color(ColorWhen::Auto, true, env(&[("NO_COLOR", "")])));
        assert!(!use_color(ColorWhen::Auto, true, env(&[("CLICOLOR", "0")])));
        assert!(!use_color(ColorWhen::Auto, true, env(&[("TERM", "dumb")])));
        assert!(use_color(
            ColorWhen::Always,
            false,
            env(&[("TERM", "dumb")])
        ));
        assert!(!use_color(ColorWhen::Never, true, env(&[])));
    }
}
