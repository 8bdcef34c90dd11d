//! The subcommands (spec §7): argument structs and the entry points `main.rs` calls.
//!
//! Each entry point returns the process exit status (see [`crate::exit`]).

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `loopc check PLAN… [--format human|json] [--deny-warnings]`
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// Plan files to check (`.loop`, or REEL specs: `.md`, `.json`,
    /// `.feature`, or a directory of them).
    #[arg(required = true, value_name = "PLAN")]
    pub plans: Vec<PathBuf>,
    /// The defaults plan for REEL specs (agent, gates, defaults, budget,
    /// loop); default `defaults.loop` beside the specs.
    #[arg(long, value_name = "FILE.loop")]
    pub defaults: Option<PathBuf>,
    /// Output format of diagnostics.
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Human)]
    pub format: DiagnosticFormat,
    /// Treat warnings as errors (exit 1 when any warning is reported).
    #[arg(long)]
    pub deny_warnings: bool,
}

/// How diagnostics are printed.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticFormat {
    /// codespan-reporting's text on stderr, colored on a terminal.
    Human,
    /// One JSON object per diagnostic per line on stdout (spec §4).
    Json,
}

/// `loopc graph PLAN [--format …] [--state]`
#[derive(Args, Debug, Clone)]
pub struct GraphArgs {
    /// The plan file (or a REEL spec, or a directory of them).
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,
    /// The defaults plan for REEL specs (agent, gates, defaults, budget,
    /// loop); default `defaults.loop` beside the specs.
    #[arg(long, value_name = "FILE.loop")]
    pub defaults: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
    pub format: GraphFormat,
    /// Show each task's last status from `.loopc/state.json`.
    #[arg(long)]
    pub state: bool,
}

/// Graph output formats (spec §7).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    /// Tasks in layers, for a terminal.
    Text,
    /// Graphviz input.
    Dot,
    /// A Mermaid `flowchart`.
    Mermaid,
    /// The compiled plan as one JSON document.
    Json,
    /// An SVG drawing, laid out in-process.
    Svg,
}

/// `loopc run [PLAN] [-j N] [--dry-run] [--force T…] [--no-cache]`
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
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
    /// Say what would run or be replayed from the cache, and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not read the cache for these tasks (their results are still written).
    #[arg(long, value_name = "TASK", num_args = 1..)]
    pub force: Vec<String>,
    /// Neither read nor write the cache.
    #[arg(long)]
    pub no_cache: bool,
}

/// `loopc status [--json]`
#[derive(Args, Debug, Clone)]
pub struct StatusArgs {
    /// Print state.json's task list as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `loopc clean [--integration]`
#[derive(Args, Debug, Clone)]
pub struct CleanArgs {
    /// Also delete the integration branch(es) loopc created.
    #[arg(long)]
    pub integration: bool,
}

/// `loopc fmt [--check] PLAN…`
/// `loopc logs TASK [--attempt N] [--follow]`.
#[derive(Args, Debug, Clone)]
pub struct LogsArgs {
    /// The task.
    #[arg(value_name = "TASK")]
    pub task: String,
    /// The attempt (default: the task's last).
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,
    /// Keep printing the attempt's output while it runs.
    #[arg(long)]
    pub follow: bool,
}

#[derive(Args, Debug, Clone)]
pub struct FmtArgs {
    /// Do not write; exit 1 and name the files that would change.
    #[arg(long)]
    pub check: bool,
    /// Plan files to format.
    #[arg(required = true, value_name = "PLAN")]
    pub plans: Vec<PathBuf>,
}

/// `loopc import SPEC… [-o plan.loop] [--defaults FILE.loop]` (`docs/reel.md`)
#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// REEL specs (`.md`, `.json`, `.feature`) or directories of them.
    #[arg(required = true, value_name = "SPEC")]
    pub specs: Vec<PathBuf>,
    /// Write the plan here instead of to stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE.loop")]
    pub output: Option<PathBuf>,
    /// The defaults plan for REEL specs (agent, gates, defaults, budget,
    /// loop); default `defaults.loop` beside the specs.
    #[arg(long, value_name = "FILE.loop")]
    pub defaults: Option<PathBuf>,
}

/// `loopc id [DIR]` (`docs/reel.md`)
#[derive(Args, Debug, Clone)]
pub struct IdArgs {
    /// The directory of specs whose ids the new one must differ from; default `.`.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `loopc import`.
pub fn import(args: &ImportArgs) -> i32 {
    crate::reel::import::run(args)
}

/// `loopc id`.
pub fn id(args: &IdArgs) -> i32 {
    crate::reel::id::run(args)
}

/// `loopc check`.
pub fn check(args: &CheckArgs) -> i32 {
    crate::check_cmd::run(args)
}

/// `loopc graph`.
pub fn graph(args: &GraphArgs) -> i32 {
    crate::render::run(args)
}

/// `loopc run`.
pub fn run(args: &RunArgs) -> i32 {
    crate::run::run(args)
}

/// `loopc status`.
pub fn status(args: &StatusArgs) -> i32 {
    crate::run::status(args)
}

/// `loopc clean`.
pub fn clean(args: &CleanArgs) -> i32 {
    crate::run::clean(args)
}

/// `loopc fmt`.
/// `loopc logs`: exit 0, or 2 when the task has no such logs.
pub fn logs(args: &LogsArgs) -> i32 {
    crate::run::logs::logs(&crate::run::logs::LogsRequest {
        task: args.task.clone(),
        attempt: args.attempt,
        follow: args.follow,
    })
}

pub fn fmt(args: &FmtArgs) -> i32 {
    crate::fmt::run(args)
}

/// `loopc lsp`.
pub fn lsp() -> i32 {
    crate::lsp::serve()
}
