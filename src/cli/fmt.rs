//! `loopc fmt [--check] [PLAN…]`: rewrites plans in the canonical layout with
//! [`loopc::fmt::format_file`]. No PLAN: the plan `run` would find.
//!
//! Exit status: 0 when every file is formatted (or, with `--check`, already
//! was); 1 when a file has syntax errors, or with `--check` when a file would
//! change (its path is printed on stdout, one per line); 2 when a file could
//! not be read or written (the worst status wins).

use super::{exit, output_status, plans_or_discover, print_human, quiet};
use loopc::fmt::{FmtError, Formatted};
use std::io::Write;
use std::path::PathBuf;

/// `loopc fmt [--check] [PLAN…]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Do not write; exit 1 and name the files that would change.
    #[arg(long)]
    pub check: bool,
    /// Plan files (or directories of them) to format; default: the plan
    /// found from the current directory, as `run` finds it.
    #[arg(value_name = "PLAN")]
    pub plans: Vec<PathBuf>,
}

/// Runs `loopc fmt`.
pub fn run(args: &Args) -> i32 {
    let mut status = exit::OK;
    let mut would_change = 0usize;
    // A directory stands for the `.loop` plans in it, as for `check`.
    let mut plans = Vec::new();
    let given = match plans_or_discover(&args.plans) {
        Ok(p) => p,
        Err(status) => return status,
    };
    for path in &given {
        match loopc::loop_files_in(path) {
            Some(files) if files.is_empty() => {
                eline!(
                    "error: `{}` is a directory with no .loop plan in it",
                    path.display()
                );
                status = exit::USAGE;
            }
            Some(files) => plans.extend(files),
            None => plans.push(path.clone()),
        }
    }
    for path in &plans {
        let name = path.display().to_string();
        let s = match loopc::fmt::format_file(path, args.check) {
            Ok(Formatted::Unchanged) => exit::OK,
            Ok(Formatted::Changed) if args.check => {
                would_change += 1;
                let mut out = std::io::stdout().lock();
                // A closed stdout still leaves the exit status to tell; a
                // full one loses the list, which is said.
                let written = writeln!(out, "{name}").and_then(|()| out.flush());
                match output_status(written, |e| format!("error: cannot write to stdout: {e}")) {
                    exit::OK => exit::FAILURE,
                    failed => failed,
                }
            }
            Ok(Formatted::Changed) => exit::OK,
            Err(FmtError::ReelSpec) => {
                eline!(
                    "error: `{name}` is a REEL spec; `loopc fmt` formats .loop plans (`loopc import` converts a spec into one)"
                );
                exit::USAGE
            }
            Err(FmtError::Read(e)) => {
                eline!("error: cannot read `{name}`: {e}");
                exit::USAGE
            }
            Err(FmtError::NotUtf8 {
                source,
                diagnostics,
            }) => {
                print_human(&name, &source, &diagnostics);
                eline!("error: `{name}` was not formatted");
                exit::FAILURE
            }
            Err(FmtError::Syntax {
                source,
                diagnostics,
            }) => {
                print_human(&name, &source, &diagnostics);
                eline!("error: `{name}` has syntax errors and was not formatted");
                exit::FAILURE
            }
            Err(FmtError::Write(e)) => {
                eline!("error: cannot write `{name}`: {e}");
                exit::USAGE
            }
        };
        status = status.max(s);
    }
    if args.check && would_change > 0 && !quiet() {
        let plural = if would_change == 1 { "" } else { "s" };
        eline!(
            "error: {would_change} file{plural} would be reformatted (run `loopc fmt` without --check)"
        );
    }
    status
}
