//! `loopc status [--json]`: prints [`loopc::run::status`]'s report. Exit 0,
//! or 2 when there is no readable state.

use super::{current_dir, exit, output_status, say, write_stdout};

/// `loopc status [--json]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Print the whole state document (`.loopc/state.json`, see docs/state.md) as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `loopc status`.
pub fn run(args: &Args) -> i32 {
    let cwd = match current_dir() {
        Ok(d) => d,
        Err(status) => return status,
    };
    let options = loopc::run::status::Options { json: args.json };
    match loopc::run::status::status(&cwd, &options) {
        Ok(text) => output_status(write_stdout(&text), |e| {
            format!("error: cannot write to stdout: {e}")
        }),
        Err(e) => {
            say(&e);
            exit::USAGE
        }
    }
}
