//! `loopc lsp`: not built yet.

/// `loopc lsp`.
pub fn serve() -> i32 {
    eprintln!("loopc: `lsp` is not implemented yet");
    crate::exit::USAGE
}
