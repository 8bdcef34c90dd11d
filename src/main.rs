//! The `loopc` binary: wires the command line to the library.

use clap::{Parser, Subcommand};
use loopc::commands;
use std::process::ExitCode;

/// Declarative, checked and cached loops of coding agents.
#[derive(Parser)]
#[command(name = "loopc", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check plans and print diagnostics.
    Check(commands::CheckArgs),
    /// Render a plan's task graph.
    Graph(commands::GraphArgs),
    /// Execute a plan in git worktrees.
    Run(commands::RunArgs),
    /// Show the last run's tasks.
    Status(commands::StatusArgs),
    /// Remove loopc's worktrees, task branches and logs.
    Clean(commands::CleanArgs),
    /// Print the logs of a task's attempt in the last run.
    Logs(commands::LogsArgs),
    /// Format plans in the canonical layout.
    Fmt(commands::FmtArgs),
    /// Start the language server on stdio.
    Lsp,
    /// Convert REEL specs (Markdown, JSON, Gherkin) into a `.loop` plan.
    Import(commands::ImportArgs),
    /// Print a new REEL task id that no spec in a directory uses yet.
    Id(commands::IdArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                loopc::exit::USAGE
            } else {
                0
            };
            let _ = e.print();
            return ExitCode::from(code as u8);
        }
    };
    let code = match cli.command {
        Command::Check(args) => commands::check(&args),
        Command::Graph(args) => commands::graph(&args),
        Command::Run(args) => commands::run(&args),
        Command::Status(args) => commands::status(&args),
        Command::Clean(args) => commands::clean(&args),
        Command::Logs(args) => commands::logs(&args),
        Command::Fmt(args) => commands::fmt(&args),
        Command::Lsp => commands::lsp(),
        Command::Import(args) => commands::import(&args),
        Command::Id(args) => commands::id(&args),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
