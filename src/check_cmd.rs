//! `loopc check PLAN…` (spec §4): prints every diagnostic of every file.
//!
//! Human diagnostics go to stderr (colored only when stderr is a terminal and
//! `NO_COLOR` is unset); `--format json` prints one object per line on stdout.
//! Exit status: 0 no errors, 1 errors (or warnings with `--deny-warnings`),
//! 2 a file could not be read or stdout could not be written (a closed pipe is
//! a normal end).

use crate::commands::{CheckArgs, DiagnosticFormat};
use crate::diagnostic::{self, Diagnostic, Severity};
use crate::exit;
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::io::{IsTerminal, Write};

/// Whether human output on stderr should be colored.
pub fn stderr_color() -> ColorChoice {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    if !no_color && std::io::stderr().is_terminal() {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    }
}

/// Prints `diagnostics` of one file to stderr in the human format.
pub fn print_human(name: &str, source: &str, diagnostics: &[Diagnostic]) {
    let mut err = StandardStream::stderr(stderr_color());
    // A closed stderr is not worth failing over.
    let _ = diagnostic::emit_human(&mut err, name, source, diagnostics);
}

/// Prints `diagnostics` of `compilation` to stderr in the human format,
/// each in its own file (a REEL spec's diagnostics may be in its spec files
/// and its defaults plan).
pub fn print_compilation(compilation: &crate::Compilation, diagnostics: &[Diagnostic]) {
    let mut err = StandardStream::stderr(stderr_color());
    // A closed stderr is not worth failing over.
    let _ = compilation
        .files
        .emit_human(&mut err, &compilation.source, diagnostics);
}

/// A directory stands for its `.loop` plans, each checked on its own (like
/// `loopc check dir/*.loop`), and, when it holds REEL specs, for those specs
/// too, checked together with `defaults.loop` as their defaults. Anything
/// else is checked as given.
fn expand(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Some(loops) = crate::loop_files_in(path) else {
        return vec![path.to_path_buf()];
    };
    if crate::reel::spec_files(path).is_ok_and(|specs| !specs.is_empty()) {
        let mut out = vec![path.to_path_buf()];
        out.extend(
            loops
                .into_iter()
                .filter(|p| p.file_name().is_some_and(|n| n != "defaults.loop")),
        );
        return out;
    }
    if loops.is_empty() {
        return vec![path.to_path_buf()];
    }
    loops
}

/// Runs `loopc check`.
pub fn run(args: &CheckArgs) -> i32 {
    let mut status = exit::OK;
    let mut errors = 0usize;
    let mut warnings = 0usize;
    let stdout = std::io::stdout();
    let plans: Vec<std::path::PathBuf> = args.plans.iter().flat_map(|p| expand(p)).collect();
    for path in &plans {
        let mut compiled = match crate::compile_path(path, args.defaults.as_deref()) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                status = exit::USAGE;
                continue;
            }
        };
        let mut diags = std::mem::take(&mut compiled.diagnostics);
        if args.deny_warnings {
            for d in &mut diags {
                d.severity = Severity::Error;
            }
        }
        errors += diags.iter().filter(|d| d.is_error()).count();
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
                            eprintln!("error: cannot write diagnostics: {e}");
                            return exit::USAGE;
                        }
                    }
                }
            }
        }
    }
    if status == exit::USAGE {
        return status;
    }
    if args.format == DiagnosticFormat::Human {
        let files = plans.len();
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        if errors > 0 {
            eprintln!(
                "error: {} checked: {}, {}",
                plural(files, "file"),
                plural(errors, "error"),
                plural(warnings, "warning")
            );
        }
    }
    if errors > 0 { exit::FAILURE } else { exit::OK }
}
