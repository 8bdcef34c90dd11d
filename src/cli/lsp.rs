//! `loopc lsp`: runs [`loopc::lsp::serve`] on stdio.
//!
//! Exit status: 0 after `shutdown` then `exit`; 1 when the client exits
//! without `shutdown`, closes the connection, breaks the protocol, or its
//! process (the `processId` of `initialize`) is gone.

use super::exit;
use loopc::lsp::Ending;

/// Runs `loopc lsp`.
pub fn run() -> i32 {
    // The editor is gone: nothing is left to answer.
    loopc::lsp::on_client_gone(|| std::process::exit(exit::FAILURE));
    match loopc::lsp::serve(std::io::stdin(), std::io::stdout()) {
        Ok(Ending::Shutdown) => exit::OK,
        Ok(Ending::Abrupt) => exit::FAILURE,
        Err(e) => {
            eline!("error: {e}");
            exit::FAILURE
        }
    }
}
