//! `loopc fmt`: not built yet.

/// `loopc fmt`.
pub fn run(_args: &crate::commands::FmtArgs) -> i32 {
    eprintln!("loopc: `fmt` is not implemented yet");
    crate::exit::USAGE
}
