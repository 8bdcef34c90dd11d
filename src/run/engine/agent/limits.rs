//! Usage and rate limits: telling a limit from a failure in what an agent
//! reported, and when it resets ([`reset`]).
//!
//! What is recognised, and where each wording comes from (the sources are
//! cited again in tests/fixtures/agents/README.md):
//! - Claude Code: a `rate_limit_event` whose `rate_limit_info.status` is
//!   `rejected`, with `resetsAt` in seconds since the epoch
//!   (anthropics/claude-agent-sdk-python, `types.py` `RateLimitInfo`); an
//!   error result (often `subtype` `success` with `is_error` true) whose
//!   text is `Claude AI usage limit reached|<epoch>`, `5-hour limit reached
//!   ∙ resets 2am`, `Weekly limit reached · resets 10am (Asia/Seoul)`,
//!   `You've hit your session limit · resets 1:40pm`, `You've hit your
//!   weekly limit · resets Sep 15 at 7pm`, `You're out of extra usage ·
//!   resets May 2, 2pm (Asia/Jerusalem)` or `Claude usage limit reached.
//!   Your limit will reset at 9am (America/Chicago)` (anthropics/claude-code
//!   issues #7641, #12789, #69995, #92834, #55114, #15064); a result with
//!   `terminal_reason` `blocking_limit`, or `api_error_status` 429 or 529.
//! - Codex: `You've hit your usage limit. … Try again at 3:28 PM.` (or `at
//!   Aug 18th, 2026 3:28 PM`; openai/codex `codex-rs/core/src/error.rs`,
//!   `UsageLimitReachedError`), or `exceeded retry limit, last status: 429
//!   Too Many Requests` (`RetryLimitReachedError`).
//! - Gemini CLI: `You have exhausted your capacity on this model. Your
//!   quota will reset after 8h44m7s.`, `You exceeded your current quota`,
//!   `RESOURCE_EXHAUSTED` (google-gemini/gemini-cli issues #13004, #8414).
//! - OpenCode: `Error 429: You have reached your weekly … limit. The limit
//!   resets in 1d 5h` (`provider.rate-limit`); Copilot: a `session.error`
//!   of type `rate_limit` or `quota`.

mod reset;

pub use reset::{clock, reset_time, reset_time_at};

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A usage or rate limit the agent ran into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitHit {
    /// When the limit resets, in seconds since the Unix epoch, if said.
    pub resets_at: Option<u64>,
    /// What the agent said.
    pub message: String,
}

/// Seconds since the Unix epoch, now.
pub fn now_epoch() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The first wait when a limit gives no reset time.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(60);
/// The longest wait when a limit gives no reset time.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30 * 60);

/// The wait after the `n`-th limit in a row without a reset time (from 0):
/// one minute, doubling, at most thirty.
pub fn backoff(n: u32) -> Duration {
    FIRST_BACKOFF
        .saturating_mul(1u32 << n.min(5))
        .min(MAX_BACKOFF)
}

/// Whether `text` says a usage or rate limit was hit.
pub fn says_limit(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let reached = lower.contains("limit reached")
        && !lower.contains("turn limit reached")
        && !lower.contains("context limit reached");
    reached
        || lower.contains("usage limit")
        || lower.contains("rate limit")
        || lower.contains("rate_limit")
        || lower.contains("429 too many requests")
        || lower.contains("out of extra usage")
        || lower.contains("exhausted your capacity")
        || (lower.contains("quota") && (lower.contains("exceed") || lower.contains("exhaust")))
        || lower.contains("resource_exhausted")
        || lower.contains("blocking_limit")
        || (lower.contains("hit your") && lower.contains("limit"))
        || (lower.contains("reached your") && lower.contains("limit"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_wording_is_a_limit_and_failures_are_not() {
        for limit in [
            "Weekly limit reached ∙ resets 5am",
            "5-hour limit reached ∙ resets 2am",
            "You've hit your session limit · resets 1:40pm",
            "You're out of extra usage · resets 9pm",
            "You've hit your limit · resets 3pm (Europe/Paris)",
            "Claude AI usage limit reached|1767225600",
            "You have exhausted your capacity on this model. Your quota will reset after 8h44m7s.",
            "Error 429: You have reached your weekly ExamplePass limit. The limit resets in 1d 5h, please try again later.",
        ] {
            assert!(says_limit(limit), "{limit}");
        }
        for failure in [
            "Reached maximum number of turns (3)",
            "Reached maximum budget ($0.01)",
            "Tool execution failed: Bash exited with an internal error",
            "Not logged in · Please run /login",
        ] {
            assert!(!says_limit(failure), "{failure}");
        }
    }

    #[test]
    fn backoff_doubles_to_thirty_minutes() {
        assert_eq!(backoff(0), Duration::from_secs(60));
        assert_eq!(backoff(1), Duration::from_secs(120));
        assert_eq!(backoff(4), Duration::from_secs(960));
        assert_eq!(backoff(5), Duration::from_secs(1800));
        assert_eq!(backoff(40), Duration::from_secs(1800));
    }
}
