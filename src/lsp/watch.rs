//! Watching the editor that started the server: the `processId` of
//! `initialize` names the client's process, and the Language Server
//! Protocol asks a server to exit when that process is gone, even while
//! its input stays open (a child of the editor may hold the pipe).
//!
//! [`client`] polls the process about once a second (`kill(pid, 0)`; on
//! Linux a zombie counts as gone) on a thread of its own and, once it is
//! gone, calls what [`on_client_gone`] registered (`loopc lsp` exits). A
//! process that is not there when `initialize` names it is not watched: it
//! may live in another PID namespace (an editor in a container) and be
//! alive.

use std::sync::OnceLock;
use std::time::Duration;

/// How often the client's process is looked at.
const EVERY: Duration = Duration::from_secs(1);

/// What to do once the client's process is gone (registered once).
static ON_GONE: OnceLock<fn()> = OnceLock::new();

/// Registers `gone`, called once from the watching thread when the client
/// process named by `initialize` ends; without it, the server keeps
/// serving its input. The first registration holds.
pub fn on_client_gone(gone: fn()) {
    let _ = ON_GONE.set(gone);
}

/// The client's process id in `initialize`'s params (`processId`; `null`,
/// absent, or not a positive id: none).
fn process_id(params: &serde_json::Value) -> Option<i32> {
    params
        .get("processId")?
        .as_i64()
        .and_then(|p| i32::try_from(p).ok())
        .filter(|&p| p > 0)
}

/// Starts watching the client process named in `params` (`initialize`'s),
/// when it names one that is alive now and something is registered
/// ([`on_client_gone`]).
pub fn client(params: &serde_json::Value) {
    let (Some(pid), Some(&gone)) = (process_id(params), ON_GONE.get()) else {
        return;
    };
    if !crate::pid::alive(pid) {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("loopc-lsp-client".into())
        .spawn(move || {
            while crate::pid::alive(pid) {
                std::thread::sleep(EVERY);
            }
            gone();
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_id_is_read_from_the_params() {
        let p = |v: serde_json::Value| process_id(&v);
        assert_eq!(p(serde_json::json!({"processId": 4242})), Some(4242));
        assert_eq!(p(serde_json::json!({"processId": null})), None);
        assert_eq!(p(serde_json::json!({"processId": -1})), None);
        assert_eq!(p(serde_json::json!({})), None);
        assert!(crate::pid::alive(std::process::id() as i32));
    }
}
