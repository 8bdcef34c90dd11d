//! `loopc report [-o FILE] [--run N] [--json]`: writes the report
//! [`loopc::run::report`] builds of the last run (or run N), as a
//! self-contained HTML page (default `.loopc/report.html` at the
//! repository's top) or, with `--json`, its JSON document (stdout unless
//! `-o`); prints where it wrote the page. Exit 0, or 2 (no run yet, no
//! run N, a file that cannot be written).

use super::{current_dir, exit, output_status, say, write_stdout};
use std::path::{Path, PathBuf};

/// `loopc report [-o FILE] [--run N] [--json]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Where to write it (`-`: stdout); default `.loopc/report.html` at the
    /// repository's top (with `--json`: stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Report run N, an earlier run (default: the last one). Runs are
    /// numbered as their worktrees are (`<task>.r<N>-a<attempt>`).
    #[arg(long = "run", value_name = "N")]
    pub run: Option<u32>,
    /// Write the report's data as JSON (docs/report.md) instead of HTML.
    #[arg(long)]
    pub json: bool,
}

/// Runs `loopc report`.
pub fn run(args: &Args) -> i32 {
    let cwd = match current_dir() {
        Ok(d) => d,
        Err(status) => return status,
    };
    let options = loopc::run::report::Options { run: args.run };
    let built = match loopc::run::report::build(&cwd, &options) {
        Ok(b) => b,
        Err(e) => {
            say(&e);
            return exit::USAGE;
        }
    };
    let text = if args.json {
        match loopc::run::report::json::to_json(&built.report) {
            Ok(t) => t,
            Err(e) => {
                say(&e);
                return exit::USAGE;
            }
        }
    } else {
        built.html()
    };
    let target = match &args.output {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) => Some(p.clone()),
        None if args.json => None,
        None => Some(loopc::run::report::default_file(&built.root)),
    };
    let Some(path) = target else {
        return output_status(write_stdout(&text), |e| {
            format!("error: cannot write to stdout: {e}")
        });
    };
    if path.is_dir() {
        say(&format!(
            "cannot write the report to {}: it is a directory; name a file in it (`-o {}`)",
            path.display(),
            path.join("report.html").display()
        ));
        return exit::USAGE;
    }
    if let Err(e) = write_file(&path, &text) {
        say(&format!(
            "cannot write the report to {}: {e}",
            path.display()
        ));
        return exit::USAGE;
    }
    output_status(write_stdout(&format!("{}\n", path.display())), |e| {
        format!("error: cannot write to stdout: {e}")
    })
}

/// Writes `text` to `path` whole: to a temporary file beside it, then
/// renamed over it, so a browser never shows half a report.
fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
