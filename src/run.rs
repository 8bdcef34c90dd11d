//! The interpreter (`loopc run`, `status`, `clean`): spec §5. Not built yet.

use crate::commands::{CleanArgs, RunArgs, StatusArgs};

/// `loopc run`.
pub fn run(_args: &RunArgs) -> i32 {
    eprintln!("loopc: `run` is not implemented yet");
    crate::exit::USAGE
}

/// `loopc status`.
pub fn status(_args: &StatusArgs) -> i32 {
    eprintln!("loopc: `status` is not implemented yet");
    crate::exit::USAGE
}

/// `loopc clean`.
pub fn clean(_args: &CleanArgs) -> i32 {
    eprintln!("loopc: `clean` is not implemented yet");
    crate::exit::USAGE
}
