//! `loopc check [PLAN…]`: prints every diagnostic of every file.
//!
//! Human diagnostics go to stderr (colored by the one color rule), then one
//! line: `ok: 5 tasks, 0 warnings` (not with `-q`) or `error: 1 plan
//! checked: …`; `--format json` prints one object per line on stdout and
//! nothing else. No PLAN: the plan `run` would find.
//! Exit status: 0 no errors, 1 errors (or warnings with `--deny-warnings`),
//! 2 a file could not be read or stdout could not be written (a closed pipe is
//! a normal end).

use super::{exit, plans_or_discover, print_compilation, quiet};
use clap::ValueEnum;
use loopc::diagnostic::Severity;
use loopc::origin::DEFAULTS_FILE;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `loopc check [PLAN…] [--format human|json] [--deny-warnings]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Plan files to check (`.loop`, or REEL specs: `.md`, `.json`,
    /// `.feature`, or a directory of them); default: the plan found from the
    /// current directory, as `run` finds it.
    #[arg(value_name = "PLAN")]
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
    /// Compiler-style text on stderr (the source line under each message), colored on a terminal.
    Human,
    /// One JSON object per diagnostic per line on stdout (see docs/language.md).
    Json,
}

/// A directory stands for its `.loop` plans, each checked on its own (like
/// `loopc check dir/*.loop`), and, when it holds REEL specs (or is a spec
/// tree, with stage directories), for those specs too, checked together
/// with `defaults.loop` as their defaults. Anything else is checked as
/// given.
fn expand(path: &Path) -> Vec<PathBuf> {
    let Some(loops) = loopc::loop_files_in(path) else {
        return vec![path.to_path_buf()];
    };
    if loopc::reel::is_spec_tree(path)
        || loopc::reel::spec_files(path).is_ok_and(|specs| !specs.is_empty())
    {
        let mut out = vec![path.to_path_buf()];
        out.extend(
            loops
                .into_iter()
                .filter(|p| p.file_name().is_some_and(|n| n != DEFAULTS_FILE)),
        );
        return out;
    }
    if loops.is_empty() {
        return vec![path.to_path_buf()];
    }
    loops
}

/// E0015 for each `context` file of `compiled` (the plan at `path`) that
/// is not in the checkout ([`loopc::compile::missing_context`]), added to
/// `diags` in order.
fn missing_context(
    compiled: &loopc::Compilation,
    path: &Path,
    diags: &mut Vec<loopc::diagnostic::Diagnostic>,
) {
    let missing = loopc::compile::missing_context(&compiled.context, path);
    if !missing.is_empty() {
        diags.extend(missing);
        loopc::diagnostic::sort(diags);
    }
}

/// Runs `loopc check`.
pub fn run(args: &Args) -> i32 {
    let mut status = exit::OK;
    let mut errors = 0usize;
    let mut warnings = 0usize;
    let mut tasks = 0usize;
    let stdout = std::io::stdout();
    let given = match plans_or_discover(&args.plans) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let plans: Vec<PathBuf> = given.iter().flat_map(|p| expand(p)).collect();
    for path in &plans {
        // Only the diagnostics: no plan, so no keys, are built for `check`.
        let goal = loopc::compile::Goal::Diagnostics;
        let mut compiled =
            match loopc::compile::compile_path_for(path, args.defaults.as_deref(), goal) {
                Ok(c) => c,
                Err(e) => {
                    eline!("error: {e}");
                    status = exit::USAGE;
                    continue;
                }
            };
        let mut diags = std::mem::take(&mut compiled.diagnostics);
        missing_context(&compiled, path, &mut diags);
        if args.deny_warnings {
            for d in &mut diags {
                d.severity = Severity::Error;
            }
        }
        errors += diags.iter().filter(|d| d.is_error()).count();
        tasks += compiled.tasks;
        warnings += diags.iter().filter(|d| !d.is_error()).count();
        match args.format {
            DiagnosticFormat::Human => print_compilation(&compiled, &diags),
            DiagnosticFormat::Json => {
                let mut out = stdout.lock();
                for line in compiled.files.to_json_lines(&compiled.source, &diags) {
                    match writeln!(out, "{line}") {
                        Ok(()) => {}
                        // A closed pipe (`| head`) is a normal end.
                        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                            return status.max(if errors > 0 { exit::FAILURE } else { exit::OK });
                        }
                        Err(e) => {
                            eline!("error: cannot write diagnostics: {e}");
                            return exit::USAGE;
                        }
                    }
                }
            }
        }
        if Some(path) == plans.last() {
            // The process ends next: freeing the tree, model and plan one
            // allocation at a time was a tenth of a large plan's check.
            std::mem::forget(compiled);
        }
    }
    if status == exit::USAGE {
        return status;
    }
    if args.format == DiagnosticFormat::Human {
        let files = plans.len();
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        if errors > 0 {
            eline!(
                "error: {} checked: {}, {}",
                plural(files, "plan"),
                plural(errors, "error"),
                plural(warnings, "warning")
            );
        } else if !quiet() {
            let files = if files == 1 {
                String::new()
            } else {
                format!("{}, ", plural(files, "plan"))
            };
            eline!(
                "ok: {files}{}, {}",
                plural(tasks, "task"),
                plural(warnings, "warning")
            );
        }
    }
    if errors > 0 { exit::FAILURE } else { exit::OK }
}
