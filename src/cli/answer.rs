//! `loopc answer TASK [TEXT] [--file PATH]`: records a person's answer with
//! [`loopc::run::answer`]. Exit 0, or 2 (unknown task, a task not waiting
//! for an answer, an empty answer, an unreadable file, no state).

use super::{current_dir, exit, say, write_stdout};
use clap_complete::engine::ArgValueCompleter;

/// `loopc answer TASK [TEXT] [--file PATH]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The task whose question is answered (its status is `needs-human`).
    #[arg(value_name = "TASK", add = ArgValueCompleter::new(super::completions::tasks))]
    pub task: String,
    /// The answer.
    #[arg(
        value_name = "TEXT",
        required_unless_present = "file",
        conflicts_with = "file"
    )]
    pub text: Option<String>,
    /// Read the answer from this file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub file: Option<std::path::PathBuf>,
}

/// Runs `loopc answer`.
pub fn run(args: &Args) -> i32 {
    let cwd = match current_dir() {
        Ok(d) => d,
        Err(status) => return status,
    };
    let text = match (&args.text, &args.file) {
        (Some(t), _) => t.clone(),
        (None, Some(p)) if p.as_os_str() == "-" => {
            let mut s = String::new();
            if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
                say(&format!("cannot read the answer from stdin: {e}"));
                return exit::USAGE;
            }
            s
        }
        (None, Some(p)) => match std::fs::read(p) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                say(&format!("cannot read the answer from {}: {e}", p.display()));
                return exit::USAGE;
            }
        },
        (None, None) => String::new(),
    };
    match loopc::run::answer::answer(&cwd, &args.task, &text) {
        Ok(a) => {
            let _ = write_stdout(&format!(
                "answered task `{}` ({}); the next `loopc run` gives it the answer\n",
                args.task,
                a.file.display()
            ));
            exit::OK
        }
        Err(e) => {
            say(&e);
            exit::USAGE
        }
    }
}
