//! Ctrl-C, SIGTERM and SIGHUP (the terminal went away): the handler only
//! sets a flag; the coordinator sees it, stops starting work and kills every
//! running process group through [`super::process::Control`], saves state
//! and exits 130.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT, SIGTERM and SIGHUP handlers (idempotent).
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is
        // async-signal-safe; sigaction is given a zeroed, valid struct.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// Whether SIGINT, SIGTERM or SIGHUP arrived.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
