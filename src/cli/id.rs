//! `loopc id [DIR]`: prints a new REEL id that no spec in `DIR` uses yet
//! (`docs/reel.md`). Exit 0, or 2 when the directory cannot be read.

use super::{exit, output_status, write_stdout};
use std::path::{Path, PathBuf};

/// `loopc id [DIR]` (`docs/reel.md`)
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The directory of specs whose ids the new one must differ from; default `.`.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Runs `loopc id`.
pub fn run(args: &Args) -> i32 {
    let dir = args.dir.as_deref().unwrap_or(Path::new("."));
    match loopc::reel::id::used_ids(dir) {
        Ok(used) => {
            let id = loopc::reel::id::new_id(&used);
            output_status(write_stdout(&format!("{id}\n")), |e| {
                format!("error: cannot write the id: {e}")
            })
        }
        Err(e) => {
            eline!("error: cannot read the specs in `{}`: {e}", dir.display());
            exit::USAGE
        }
    }
}
