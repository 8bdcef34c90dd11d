//! `loopc init [--force]`: writes a starter plan, `plan.loop` (the file
//! plan discovery looks for first), in the current directory. It passes
//! `loopc check` with no warnings and is in `loopc fmt` layout.
//!
//! Exit status: 0 written; 2 the file exists (without `--force`) or cannot
//! be written.

use super::{current_dir, exit, quiet, say};
use loopc::discover::PLAN_FILE;
use std::io::Write;

/// `loopc init [--force]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Overwrite an existing `plan.loop`.
    #[arg(long)]
    pub force: bool,
}

/// The starter plan: a budget, one agent with a per-attempt cost cap, one
/// gate, and two tasks, the second depending on the first.
pub const STARTER: &str = r#"# A starter plan: point the agent and the gate at your tools, describe your
# tasks, then `loopc check`, `loopc graph` and `loopc run`.
# The language: docs/language.md in loopc's repository.

budget {
  iterations = 10
  time       = 1h
  cost       = $5
}

agent claude {
  # `cost` is the per-attempt cap; Claude Code stops there itself when told
  # it ($LOOP_COST_CAP_USD holds it in dollars).
  run    = "claude -p --output-format json --dangerously-skip-permissions --max-budget-usd \"$LOOP_COST_CAP_USD\""
  output = claude-json
  cost   = $1
}

gate tests = "make test"

defaults {
  agent = claude
  gates = [tests]
}

task first "The first piece of work" {
  prompt = "Describe the change the agent should make, and how to tell it is done."
}

task second "Work that builds on the first": first {
  prompt = "Each task gets a fresh worktree with its dependencies' work merged in."
}
"#;

/// Runs `loopc init`.
pub fn run(args: &Args) -> i32 {
    let cwd = match current_dir() {
        Ok(d) => d,
        Err(status) => return status,
    };
    let path = cwd.join(PLAN_FILE);
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    if args.force {
        open.create(true).truncate(true);
    } else {
        open.create_new(true);
    }
    let written = open
        .open(&path)
        .and_then(|mut f| f.write_all(STARTER.as_bytes()));
    match written {
        Ok(()) => {
            if !quiet() {
                eline!("wrote {PLAN_FILE}: check it with `loopc check`, run it with `loopc run`");
            }
            exit::OK
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            say(&format!(
                "{PLAN_FILE} already exists; left as it is (`loopc init --force` overwrites it)"
            ));
            exit::USAGE
        }
        Err(e) => {
            say(&format!("cannot write {}: {e}", path.display()));
            exit::USAGE
        }
    }
}
