//! The command line: the one place that knows clap, prints a command's
//! results and errors, and picks exit statuses (see [`exit`]).
//!
//! Each subcommand has a file: its clap arguments, and a handler that turns
//! them into the library's plain options, calls the library, and maps its
//! `Result` to output and an exit status. The library under `loopc::` never
//! prints a command's result, never reads clap structs and never names an
//! exit status. A closed stdout (`loopc graph … | head`) is a normal end.

/// `eprintln!` for the command line: a closed stderr (`loopc check … 2>&1
/// >/dev/null | head -1`) is a normal end, never a panic.
macro_rules! eline {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod board;
mod check;
mod clean;
mod exit;
mod fmt;
mod graph;
mod id;
mod import;
mod logs;
mod lsp;
mod run;
mod status;

use clap::{Parser, Subcommand};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
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
    /// Execute a plan in git worktrees.
    Run(run::Args),
    /// Show the last run's tasks.
    Status(status::Args),
    /// Remove loopc's worktrees, task branches and logs.
    Clean(clean::Args),
    /// Print the logs of a task's attempt in the last run.
    Logs(logs::Args),
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
}

/// Parses the command line, runs the subcommand and returns its exit status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
    let code = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Graph(args) => graph::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Status(args) => status::run(&args),
        Command::Clean(args) => clean::run(&args),
        Command::Logs(args) => logs::run(&args),
        Command::Board(args) => board::run(&args),
        Command::Fmt(args) => fmt::run(&args),
        Command::Lsp => lsp::run(),
        Command::Import(args) => import::run(&args),
        Command::Id(args) => id::run(&args),
    };
    status(code)
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
    let mut err = StandardStream::stderr(stderr_color());
    // A closed stderr is not worth failing over.
    let _ = loopc::diagnostic::emit_human(&mut err, name, source, diagnostics);
}

/// Prints `diagnostics` of `compilation` to stderr in the human format,
/// each in its own file (a REEL spec's diagnostics may be in its spec files
/// and its defaults plan).
fn print_compilation(compilation: &Compilation, diagnostics: &[Diagnostic]) {
    let mut err = StandardStream::stderr(stderr_color());
    // A closed stderr is not worth failing over.
    let _ = compilation
        .files
        .emit_human(&mut err, &compilation.source, diagnostics);
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
            let _ = writeln!(io::stderr(), "{}", failed(&e));
            exit::USAGE
        }
    }
}

/// Prints `message` on stderr as `loopc: {message}`, the way `run`,
/// `status` and `clean` report what stopped them.
/// The current directory, or (having said why) exit status 2.
fn current_dir() -> Result<std::path::PathBuf, i32> {
    std::env::current_dir().map_err(|e| {
        say(&format!("cannot read the current directory: {e}"));
        exit::USAGE
    })
}

fn say(message: &str) {
    // A closed stderr is not worth failing over.
    let _ = writeln!(io::stderr(), "loopc: {message}");
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
