//! `loopc lsp`: placeholder while the server is written.

/// `loopc lsp`.
pub fn serve() -> i32 {
    crate::exit::USAGE
}
