//! Ctrl-C, SIGTERM and SIGHUP (the terminal went away): the handler only
//! sets a flag (`signal-hook`); the coordinator sees it, stops starting work
//! and kills every running process group through
//! [`super::process::Control`], saves state and exits 130.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Once};

/// The last of these signals that arrived (its number), 0 before any.
static INTERRUPTED: LazyLock<Arc<AtomicUsize>> = LazyLock::new(|| Arc::new(AtomicUsize::new(0)));
static INSTALL: Once = Once::new();

/// Installs the SIGINT, SIGTERM and SIGHUP handlers (idempotent). A signal
/// that cannot be hooked keeps its default action, as before loopc ran.
pub fn install() {
    INSTALL.call_once(|| {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            let value = usize::try_from(sig).unwrap_or(usize::MAX);
            let _ = signal_hook::flag::register_usize(sig, Arc::clone(&INTERRUPTED), value);
        }
    });
}

/// The stop reason of a run these signals stopped (state.json's
/// `stop_reason`, after `run interrupted:`), naming the signal that
/// arrived: `Ctrl-C (SIGINT) received`, `SIGTERM received`, `SIGHUP
/// received (the terminal went away)`.
pub fn reason() -> String {
    let got = INTERRUPTED.load(Ordering::SeqCst);
    let is = |sig: i32| usize::try_from(sig).is_ok_and(|s| s == got);
    if is(SIGINT) {
        "Ctrl-C (SIGINT) received".into()
    } else if is(SIGTERM) {
        "SIGTERM received".into()
    } else if is(SIGHUP) {
        "SIGHUP received (the terminal went away)".into()
    } else {
        "Ctrl-C, SIGTERM or SIGHUP received".into()
    }
}

/// Whether SIGINT, SIGTERM or SIGHUP arrived.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst) != 0
}
