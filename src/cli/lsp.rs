//! `loopc lsp`: runs [`loopc::lsp::serve`] on stdio.
//!
//! Exit status: 0 after `shutdown` then `exit`; 1 when the client exits
//! without `shutdown`, closes the connection, or breaks the protocol.

use super::exit;
use loopc::lsp::Ending;

/// Runs `loopc lsp`.
pub fn run() -> i32 {
    match loopc::lsp::serve(std::io::stdin(), std::io::stdout()) {
        Ok(Ending::Shutdown) => exit::OK,
        Ok(Ending::Abrupt) => exit::FAILURE,
        Err(e) => {
            eline!("error: {e}");
            exit::FAILURE
        }
    }
}
