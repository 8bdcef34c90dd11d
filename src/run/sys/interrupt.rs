//! Ctrl-C, SIGTERM and SIGHUP (the terminal went away): the handler only
//! sets a flag (`signal-hook`); the coordinator sees it, stops starting work
//! and kills every running process group through
//! [`super::process::Control`], saves state and exits 130.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Once};

static INTERRUPTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));
static INSTALL: Once = Once::new();

/// Installs the SIGINT, SIGTERM and SIGHUP handlers (idempotent). A signal
/// that cannot be hooked keeps its default action, as before loopc ran.
pub fn install() {
    INSTALL.call_once(|| {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            let _ = signal_hook::flag::register(sig, Arc::clone(&INTERRUPTED));
        }
    });
}

/// The stop reason of a run these signals stopped (state.json's
/// `stop_reason`, after `run interrupted:`).
pub const REASON: &str = "Ctrl-C, SIGTERM or SIGHUP received";

/// Whether SIGINT, SIGTERM or SIGHUP arrived.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
