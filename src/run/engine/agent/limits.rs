//! Usage and rate limits: telling a limit from a failure in what an agent
//! reported, and when it resets.
//!
//! What is recognised, and where each shape comes from:
//! - Claude Code: a `rate_limit_event` whose `rate_limit_info.status` is
//!   `rejected`, with `resetsAt` in seconds since the epoch
//!   (anthropics/claude-agent-sdk-python, `types.py` `RateLimitInfo`); an
//!   error result whose text is `Claude AI usage limit reached|<epoch>` or
//!   `You've hit your limit · resets 3pm`; an error result with
//!   `api_error_status` 429 (rate limited) or 529 (overloaded).
//! - Codex: an `error` or `turn.failed` message `You've hit your usage
//!   limit. … Try again at 3:28 PM.` (or `at Aug 18th, 2026 3:28 PM`,
//!   local time; openai/codex `codex-rs/core/src/error.rs`,
//!   `UsageLimitReachedError`), or `exceeded retry limit, last status: 429
//!   Too Many Requests` (`RetryLimitReachedError`).

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

/// Local broken-down time of `epoch` (libc `localtime_r`).
fn local(epoch: u64) -> Option<libc::tm> {
    let t = libc::time_t::try_from(epoch).ok()?;
    // SAFETY: a zeroed tm is a valid out-parameter; localtime_r only writes it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call.
    let r = unsafe { libc::localtime_r(&t, &mut tm) };
    (!r.is_null()).then_some(tm)
}

/// Seconds since the epoch of local time `tm` (libc `mktime`).
fn epoch_of(mut tm: libc::tm) -> Option<u64> {
    tm.tm_isdst = -1;
    // SAFETY: mktime reads and normalises a valid tm.
    let t = unsafe { libc::mktime(&mut tm) };
    u64::try_from(t).ok()
}

/// `HH:MM` local time of `epoch`, with the date (`Mon D HH:MM`) when it is
/// not today.
pub fn clock(epoch: u64) -> String {
    let (Some(tm), Some(today)) = (local(epoch), local(now_epoch())) else {
        return format!("@{epoch}");
    };
    if (tm.tm_year, tm.tm_yday) == (today.tm_year, today.tm_yday) {
        format!("{:02}:{:02}", tm.tm_hour, tm.tm_min)
    } else {
        let month = MONTHS
            .get(usize::try_from(tm.tm_mon).unwrap_or(0))
            .copied()
            .unwrap_or("?");
        format!("{month} {} {:02}:{:02}", tm.tm_mday, tm.tm_hour, tm.tm_min)
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A clock time as people write it: `3pm`, `3:30pm`, `3:28 PM`, `15:00`.
/// Returns hours (0–23) and minutes, and the rest of the text.
fn time_of_day(text: &str) -> Option<(i32, i32)> {
    let t = text.trim_start();
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    let mut hour: i32 = digits.parse().ok()?;
    let mut rest = &t[digits.len()..];
    let mut minute = 0;
    if let Some(r) = rest.strip_prefix(':') {
        let m: String = r.chars().take_while(char::is_ascii_digit).collect();
        minute = m.parse().ok()?;
        rest = &r[m.len()..];
    }
    let rest = rest.trim_start().to_ascii_lowercase();
    if rest.starts_with("pm") || rest.starts_with("p.m") {
        if hour < 12 {
            hour += 12;
        }
    } else if (rest.starts_with("am") || rest.starts_with("a.m")) && hour == 12 {
        hour = 0;
    }
    ((0..24).contains(&hour) && (0..60).contains(&minute)).then_some((hour, minute))
}

/// The next moment (after `now`) at local clock time `hour:minute`.
fn next_at(now: u64, hour: i32, minute: i32) -> Option<u64> {
    let mut tm = local(now)?;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = 0;
    let today = epoch_of(tm)?;
    if today > now {
        return Some(today);
    }
    tm.tm_mday += 1;
    epoch_of(tm)
}

/// `Aug 18th, 2026 3:28 PM` (Codex's format for a reset on another day).
fn dated(text: &str) -> Option<u64> {
    let mut words = text.split_whitespace();
    let month = words.next()?;
    let mon = MONTHS
        .iter()
        .position(|m| month.len() >= 3 && m.eq_ignore_ascii_case(&month[..3]))?;
    let day: i32 = words
        .next()?
        .trim_end_matches(',')
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()?;
    let year: i32 = words.next()?.trim_end_matches(',').parse().ok()?;
    let rest: Vec<&str> = words.collect();
    let (hour, minute) = time_of_day(&rest.join(" "))?;
    let mut tm = local(now_epoch())?;
    tm.tm_year = year - 1900;
    tm.tm_mon = i32::try_from(mon).ok()?;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = 0;
    epoch_of(tm)
}

/// `3 days 6 hours 57 minutes` (after "try again in").
fn relative(text: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut words = text.split_whitespace().peekable();
    let mut any = false;
    while let Some(w) = words.next() {
        let Ok(n) = w.parse::<u64>() else { break };
        let unit = words.next().unwrap_or("");
        let secs = match unit.trim_end_matches(['.', ',']) {
            u if u.starts_with("day") => 86_400,
            u if u.starts_with("hour") => 3_600,
            u if u.starts_with("min") => 60,
            u if u.starts_with("sec") => 1,
            _ => break,
        };
        total += n * secs;
        any = true;
    }
    any.then(|| now_epoch() + total)
}

/// When the limit described by `text` resets, if it says.
pub fn reset_time(text: &str) -> Option<u64> {
    // Claude Code: "Claude AI usage limit reached|1767225600".
    if let Some((_, epoch)) = text.split_once("limit reached|") {
        let digits: String = epoch.chars().take_while(char::is_ascii_digit).collect();
        let n: u64 = digits.parse().ok()?;
        // Milliseconds, should it ever say so.
        return Some(if n > 100_000_000_000 { n / 1000 } else { n });
    }
    let lower = text.to_ascii_lowercase();
    for key in ["try again at ", "resets at ", "resets "] {
        if let Some(at) = lower.find(key) {
            let after = &text[at + key.len()..];
            if let Some(t) = dated(after) {
                return Some(t);
            }
            if let Some((h, m)) = time_of_day(after) {
                return next_at(now_epoch(), h, m);
            }
        }
    }
    if let Some(at) = lower.find("try again in ") {
        return relative(&text[at + "try again in ".len()..]);
    }
    None
}

/// Whether `text` says a usage or rate limit was hit.
pub fn says_limit(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("usage limit")
        || lower.contains("hit your limit")
        || lower.contains("rate limit")
        || lower.contains("429 too many requests")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_times() {
        assert_eq!(
            reset_time("Claude AI usage limit reached|1767225600"),
            Some(1_767_225_600)
        );
        let now = now_epoch();
        let t = reset_time("You've hit your limit · resets 3pm (Europe/Paris)").unwrap();
        assert!(t > now && t <= now + 86_400, "{t}");
        let tm = local(t).unwrap();
        assert_eq!((tm.tm_hour, tm.tm_min), (15, 0));
        let t = reset_time("You've hit your usage limit. Try again at 3:28 PM.").unwrap();
        let tm = local(t).unwrap();
        assert_eq!((tm.tm_hour, tm.tm_min), (15, 28));
        let t = reset_time(
            "You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to \
             purchase more credits or try again at Aug 18th, 2030 3:28 PM.",
        )
        .unwrap();
        let tm = local(t).unwrap();
        assert_eq!((tm.tm_year, tm.tm_mon, tm.tm_mday), (130, 7, 18));
        assert_eq!((tm.tm_hour, tm.tm_min), (15, 28));
        let t = reset_time("try again in 2 hours 5 minutes").unwrap();
        assert!((7_499..=7_501).contains(&(t - now)), "{}", t - now);
        assert_eq!(
            reset_time("You've hit your usage limit. Try again later."),
            None
        );
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
