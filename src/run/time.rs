//! Wall-clock timestamps (RFC 3339, UTC) for state and events, and the
//! formatting of durations and money for people. Ordering never depends on
//! these: events carry sequence numbers, timeouts use a monotonic clock.
//!
//! It sits at the root of `run` rather than in a room because every room
//! uses it (state and events stamp times, processes describe timeouts,
//! budgets and the display show money) and it uses nothing.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The current time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn now_rfc3339() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    format_rfc3339(since)
}

/// Formats a duration since the Unix epoch as RFC 3339 UTC with milliseconds.
pub fn format_rfc3339(since_epoch: Duration) -> String {
    let secs = since_epoch.as_secs();
    let millis = since_epoch.subsec_millis();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Seconds since the Unix epoch of a `YYYY-MM-DDTHH:MM:SS[.mmm]Z` time as
/// [`format_rfc3339`] writes it; `None` for any other text.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let num = |s: Option<&str>| -> Option<i64> { s?.parse().ok() };
    let (date, time) = text.strip_suffix('Z')?.split_once('T')?;
    let mut d = date.splitn(3, '-');
    let (y, m, day) = (num(d.next())?, num(d.next())?, num(d.next())?);
    let mut t = time.split('.').next()?.splitn(3, ':');
    let (h, min, sec) = (num(t.next())?, num(t.next())?, num(t.next())?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || h > 23 || min > 59 || sec > 60 {
        return None;
    }
    // Days from 1970-01-01 (inverse of `civil_from_days`).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + min * 60 + sec).ok()
}

/// A duration for people: `850ms`, `12s`, `3m05s`, `1h02m`.
pub fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    // Tenths of a second, rounded: 59.97 s would show as `60.0s`, which is
    // a minute.
    let tenths = (ms + 50) / 100;
    if tenths < 600 {
        return format!("{}.{}s", tenths / 10, tenths % 10);
    }
    let s = d.as_secs().max(60);
    if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s / 60) % 60)
    }
}

/// Micro-dollars as loopc shows money: `$0.42`, `$1`, `$1.50` (see
/// [`crate::syntax::Money`]).
pub fn dollars(micro: u64) -> String {
    crate::syntax::Money(micro).to_string()
}

/// Micro-dollars as a plain decimal number of dollars (`0.42`, `1`), the
/// form of `LOOP_COST_CAP_USD`.
pub fn decimal_usd(micro: u64) -> String {
    let whole = micro / 1_000_000;
    let frac = micro % 1_000_000;
    if frac == 0 {
        return whole.to_string();
    }
    let f = format!("{frac:06}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}

/// The most dollars one report counts for: a larger one (up to infinity)
/// counts as this much, still far over any cap and budget.
const MAX_REPORTED_USD: f64 = 1.0e9;

/// Dollars (as reported in JSON) to micro-dollars, rounded; `None` for a
/// negative value or NaN. A value above [`MAX_REPORTED_USD`] counts as
/// that: an agent reporting $1e14 is over its cap, never of unknown cost.
pub fn usd_to_micro(usd: f64) -> Option<u64> {
    if usd.is_nan() || usd < 0.0 {
        return None;
    }
    Some((usd.min(MAX_REPORTED_USD) * 1_000_000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_what_format_writes() {
        for secs in [0u64, 951_782_400, 1_767_225_600, 4_102_444_799] {
            let text = format_rfc3339(Duration::from_millis(secs * 1000 + 250));
            assert_eq!(parse_rfc3339(&text), Some(secs), "{text}");
        }
        assert_eq!(parse_rfc3339("2026-13-01T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("soon"), None);
    }

    #[test]
    fn epoch_and_leap_day() {
        assert_eq!(format_rfc3339(Duration::ZERO), "1970-01-01T00:00:00.000Z");
        // 2024-02-29T12:34:56.789Z
        let t = Duration::from_millis(1_709_210_096_789);
        assert_eq!(format_rfc3339(t), "2024-02-29T12:34:56.789Z");
    }

    #[test]
    fn money() {
        assert_eq!(dollars(420_000), "$0.42");
        assert_eq!(dollars(1_000_000), "$1");
        assert_eq!(dollars(500_000), "$0.50");
        assert_eq!(decimal_usd(125), "0.000125");
        assert_eq!(usd_to_micro(0.42), Some(420_000));
        assert_eq!(usd_to_micro(-1.0), None);
        assert_eq!(usd_to_micro(f64::NAN), None);
        assert_eq!(usd_to_micro(2.0e13), Some(1_000_000_000_000_000));
        assert_eq!(usd_to_micro(f64::INFINITY), Some(1_000_000_000_000_000));
    }

    #[test]
    fn durations() {
        assert_eq!(human_duration(Duration::from_millis(850)), "850ms");
        assert_eq!(human_duration(Duration::from_secs(185)), "3m05s");
        assert_eq!(human_duration(Duration::from_millis(1260)), "1.3s");
        // Just under a minute rounds to one, not to `60.0s`.
        assert_eq!(human_duration(Duration::from_millis(59_970)), "1m00s");
        assert_eq!(human_duration(Duration::from_millis(59_940)), "59.9s");
        assert_eq!(human_duration(Duration::from_secs(3720)), "1h02m");
    }
}
