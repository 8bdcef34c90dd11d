//! `loopc graph`: not built yet.

/// `loopc graph`.
pub fn run(_args: &crate::commands::GraphArgs) -> i32 {
    eprintln!("loopc: `graph` is not implemented yet");
    crate::exit::USAGE
}
