//! What an error an agent reported means for its attempt, whichever CLI
//! said it: a usage or rate limit (waited for, [`LimitHit`]), a login or
//! API key that no retry can fix ([`Cause::Auth`]: the task is blocked), the
//! agent's own cost cap (`--max-budget-usd`, [`Cause::CostCap`]), or a
//! plain failure.
//!
//! The authentication wording is that of the CLIs' own messages as users
//! recorded them: Claude Code's `Not logged in · Please run /login`,
//! `Invalid API key · Please run /login`, `Missing API key · Run /login`,
//! `Failed to authenticate: OAuth session expired …`, an API 401
//! (`authentication_error`); Codex's `unexpected status 401 Unauthorized`;
//! OpenCode's `Invalid Authentication` (401); Copilot's `session.error`
//! of type `authentication`; Gemini's `FatalAuthenticationError`.

use super::{AgentReport, LimitHit};
use crate::run::engine::agent::handoff::one_line;
use crate::run::engine::agent::limits;

/// What an error means for the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cause {
    /// A failure: the next attempt may do better.
    #[default]
    Failed,
    /// The agent cannot authenticate: no retry can fix it.
    Auth,
    /// The agent stopped at its own cost cap (Claude Code's
    /// `--max-budget-usd`).
    CostCap,
}

/// Whether `text` says the agent could not authenticate.
pub fn says_auth(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    [
        "not logged in",
        "please run /login",
        "invalid api key",
        "missing api key",
        "failed to authenticate",
        "authentication_error",
        "authentication_failed",
        "authenticationerror",
        "invalid authentication",
        "not authenticated",
        "not signed in",
        "oauth token has expired",
        "oauth token revoked",
        "401 unauthorized",
        "status 401",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// Whether `text` says the agent stopped at its own cost cap.
fn says_cost_cap(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("exceeded usd budget")
        || lower.contains("reached maximum budget")
        || lower.contains("error_max_budget_usd")
        || lower.contains("budget_exhausted")
}

/// Decides what the report's error means: sets [`AgentReport::limit`] for
/// a usage or rate limit (a limit the agent got past, a finished run
/// without an error, is none) and the error's [`Cause`] otherwise.
pub(super) fn classify(report: &mut AgentReport) {
    let failed = report.error.is_some() || !report.finished;
    if !failed {
        report.limit = None;
        return;
    }
    let Some(e) = &report.error else { return };
    // The CLI's error, never the summary: Codex's is the agent's own last
    // message, which may well talk about rate limits or logins.
    let text = format!("{}\n{}\n{}", e.kind, e.message, e.detail);
    if let Some(l) = report.limit.as_mut() {
        // A limit an event named (Claude's `rate_limit_event`): the
        // error's own words say it better, and may say when it resets.
        if limits::says_limit(&text) {
            if !e.message.trim().is_empty() {
                l.message = one_line(&e.message);
            }
            l.resets_at = l.resets_at.or_else(|| limits::reset_time(&text));
        }
        return;
    }
    let hit = |resets_at| LimitHit {
        resets_at,
        message: one_line(if e.message.is_empty() {
            &e.kind
        } else {
            &e.message
        }),
    };
    if limits::says_limit(&text) {
        report.limit = Some(hit(limits::reset_time(&text)));
        return;
    }
    if matches!(report.api_error_status, Some(429 | 529)) {
        report.limit = Some(hit(None));
        return;
    }
    let cause = if says_cost_cap(&text) {
        Cause::CostCap
    } else if says_auth(&text) || report.api_error_status == Some(401) {
        Cause::Auth
    } else {
        e.cause
    };
    if let Some(e) = report.error.as_mut() {
        e.cause = cause;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::engine::agent::report::ReportedError;

    fn classified(kind: &str, message: &str) -> AgentReport {
        let mut r = AgentReport {
            finished: true,
            error: Some(ReportedError::new(kind, message)),
            ..AgentReport::default()
        };
        classify(&mut r);
        r
    }

    /// What the agent wrote (Codex's last message is the summary) is no
    /// error of the CLI's: an agent that added rate limiting or a login
    /// page hit no limit and is logged in (before, a plain HTTP 500 became
    /// an endless usage-limit wait, or a blocked task).
    #[test]
    fn the_agents_own_words_are_not_read_as_its_error() {
        for said in [
            "Added a rate limit to the API client (429 Too Many Requests is now retried).",
            "Fixed the handler: a 401 Unauthorized response now sends the user to /login.",
        ] {
            let mut r = AgentReport {
                finished: true,
                summary: Some(said.into()),
                error: Some(ReportedError::new(
                    "turn.failed",
                    "stream error: unexpected status 500 Internal Server Error",
                )),
                ..AgentReport::default()
            };
            classify(&mut r);
            assert!(r.limit.is_none(), "{said}");
            assert_eq!(r.error.map(|e| e.cause), Some(Cause::Failed), "{said}");
        }
        // The CLI's own text beside its `errors` still counts.
        let mut r = AgentReport {
            finished: true,
            error: Some(ReportedError {
                detail: "Claude AI usage limit reached|1700000000".into(),
                ..ReportedError::new("error_during_execution", "stopped")
            }),
            ..AgentReport::default()
        };
        classify(&mut r);
        assert!(r.limit.is_some());
    }

    /// A limit an event named takes the CLI's own words from the error,
    /// and its reset time when the event gave none.
    #[test]
    fn a_limit_an_event_named_takes_the_errors_words_and_reset() {
        let mut r = AgentReport {
            finished: true,
            limit: Some(LimitHit {
                resets_at: None,
                message: "five_hour limit reached".into(),
            }),
            error: Some(ReportedError::new(
                "error",
                "Claude AI usage limit reached|1767225600",
            )),
            ..AgentReport::default()
        };
        classify(&mut r);
        assert_eq!(
            r.limit,
            Some(LimitHit {
                resets_at: Some(1_767_225_600),
                message: "Claude AI usage limit reached|1767225600".into(),
            })
        );
    }

    #[test]
    fn logins_limits_and_cost_caps_are_told_apart() {
        for auth in [
            "Not logged in · Please run /login",
            "Invalid API key · Please run /login",
            "Missing API key · Run /login",
            "Failed to authenticate: OAuth session expired and could not be refreshed",
            "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header",
        ] {
            let r = classified("error", auth);
            assert_eq!(r.error.unwrap().cause, Cause::Auth, "{auth}");
            assert_eq!(r.limit, None);
        }
        // A session limit says `/login` too, but it is a limit.
        let r = classified(
            "error",
            "You've hit your session limit · resets 5:40pm (Europe/Berlin)\n/login to switch to an API usage-billed account.",
        );
        assert!(r.limit.is_some());
        let r = classified("error_max_budget_usd", "Reached maximum budget ($0.01)");
        assert_eq!(r.error.unwrap().cause, Cause::CostCap);
        let r = classified("error_max_turns", "Reached maximum number of turns (3)");
        assert_eq!(r.error.unwrap().cause, Cause::Failed);
        assert_eq!(r.limit, None);
    }
}
