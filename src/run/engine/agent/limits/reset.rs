//! When a usage limit resets, from the words the agent used: a clock time
//! (`resets 3pm`, `try again at 3:28 PM`), in the zone it names (`resets
//! 11pm (Europe/Warsaw)`, `resets 12am (UTC)`) or else the machine's; a date
//! with or without a year (`resets Feb 7, 11am (Asia/Seoul)`, `resets Sep 15
//! at 7pm`, `try again at Aug 18th, 2026 3:28 PM`); a span (`reset after
//! 8h44m7s`, `resets in 1d 5h`, `try again in 2 hours 5 minutes`); or
//! Claude Code's `limit reached|<epoch>`. Zones are read from the system
//! time zone database (/usr/share/zoneinfo) through `jiff`.

use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `HH:MM` local time of `epoch`, with the date (`Mon D HH:MM`) when it is
/// not today.
pub fn clock(epoch: u64) -> String {
    let tz = TimeZone::system();
    let zoned = |s: u64| {
        let s = i64::try_from(s).ok()?;
        Some(
            Timestamp::from_second(s)
                .ok()?
                .to_zoned_datetime(tz.clone()),
        )
    };
    let (Some(at), Some(today)) = (zoned(epoch), zoned(super::now_epoch())) else {
        return format!("@{epoch}");
    };
    if at.date() == today.date() {
        format!("{:02}:{:02}", at.hour(), at.minute())
    } else {
        let month = MONTHS
            .get(usize::try_from(at.month() - 1).unwrap_or(0))
            .copied()
            .unwrap_or("?");
        // Another year is said (a reset time of `1`, the epoch, is 1970's).
        let year = if at.year() == today.year() {
            String::new()
        } else {
            format!(" {}", at.year())
        };
        format!(
            "{month} {}{year} {:02}:{:02}",
            at.day(),
            at.hour(),
            at.minute()
        )
    }
}

/// When the limit described by `text` resets, if it says.
pub fn reset_time(text: &str) -> Option<u64> {
    reset_time_at(text, super::now_epoch())
}

/// [`reset_time`], read at `now` (seconds since the epoch).
pub fn reset_time_at(text: &str, now: u64) -> Option<u64> {
    // Claude Code: "Claude AI usage limit reached|1767225600".
    if let Some((_, epoch)) = text.split_once("limit reached|") {
        let digits: String = epoch.chars().take_while(char::is_ascii_digit).collect();
        let n: u64 = digits.parse().ok()?;
        // Milliseconds, should it ever say so.
        return Some(if n > 100_000_000_000 { n / 1000 } else { n });
    }
    let lower = text.to_ascii_lowercase();
    const SPANS: [&str; 6] = [
        "resets in ",
        "reset in ",
        "reset after ",
        "try again in ",
        "retry in ",
        "retry after ",
    ];
    const TIMES: [&str; 5] = [
        "try again at ",
        "resets at ",
        "reset at ",
        "resets on ",
        "resets ",
    ];
    for key in SPANS {
        if let Some(at) = lower.find(key)
            && let Some(secs) = span(&text[at + key.len()..])
        {
            return Some(now + secs);
        }
    }
    let now_ts = Timestamp::from_second(i64::try_from(now).ok()?).ok()?;
    for key in TIMES {
        if let Some(at) = lower.find(key)
            && let Some(t) = when(&text[at + key.len()..], now_ts)
        {
            return u64::try_from(t.as_second()).ok();
        }
    }
    None
}

/// `8h44m7s`, `1d 5h`, `2 hours 5 minutes`, `15.5s`: seconds (fractions
/// rounded up).
fn span(text: &str) -> Option<u64> {
    let mut total = 0f64;
    let mut any = false;
    let mut rest = text.trim_start();
    loop {
        let n_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let Ok(n) = rest[..n_len].parse::<f64>() else {
            break;
        };
        let after = rest[n_len..].trim_start();
        let u_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let unit = after[..u_len].to_ascii_lowercase();
        let secs = match unit.as_str() {
            "d" | "day" | "days" => 86_400.0,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            _ => break,
        };
        total += n * secs;
        any = true;
        rest = after[u_len..].trim_start_matches([',', ' ']);
        rest = rest.strip_prefix("and ").unwrap_or(rest);
    }
    any.then(|| total.ceil() as u64)
}

/// The zone a reset names in parentheses after its time (`(Europe/Warsaw)`,
/// `(UTC)`), and the text before it; the machine's zone when it names none
/// (or one the tz database does not know).
fn zone_of(text: &str) -> (TimeZone, &str) {
    // The phrase ends at the zone, or at the next separator.
    let end = text
        .find(['·', '∙', '\n'])
        .or_else(|| text.find(". "))
        .unwrap_or(text.len());
    let phrase = &text[..end];
    if let Some(open) = phrase.find('(')
        && let Some(close) = phrase[open..].find(')')
    {
        let name = phrase[open + 1..open + close].trim();
        if let Ok(tz) = TimeZone::get(name) {
            return (tz, &phrase[..open]);
        }
    }
    (TimeZone::system(), phrase)
}

/// A clock time as people write it: `3pm`, `3:30pm`, `3:28 PM`, `15:00`,
/// `12am`: hours (0–23) and minutes.
fn time_of_day(text: &str) -> Option<(i8, i8)> {
    let t = text.trim_start();
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    let mut hour: i8 = digits.parse().ok()?;
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

/// The moment at `hour:minute` on `date` in `tz`.
fn at(date: Date, (hour, minute): (i8, i8), tz: &TimeZone) -> Option<ZonedDateTime> {
    let time = Time::new(hour, minute, 0, 0).ok()?;
    date.to_datetime(time).to_zoned_datetime(tz.clone()).ok()
}

/// When the reset `text` (what follows "resets ") names, seen at `now`.
fn when(text: &str, now: Timestamp) -> Option<Timestamp> {
    let (tz, phrase) = zone_of(text);
    let today = now.to_zoned_datetime(tz.clone());
    let mut words = phrase.split_whitespace().peekable();
    let first = *words.peek()?;
    let month = MONTHS.iter().position(|m| {
        first.len() >= 3 && first.get(..3).is_some_and(|f| m.eq_ignore_ascii_case(f))
    });
    let Some(month) = month else {
        // A clock time: the next one after now.
        let hm = time_of_day(phrase)?;
        let t = at(today.date(), hm, &tz)?;
        if t.timestamp() > now {
            return Some(t.timestamp());
        }
        return Some(at(today.date().tomorrow().ok()?, hm, &tz)?.timestamp());
    };
    words.next();
    let day_word = words.next()?;
    let day: i8 = day_word
        .trim_end_matches(',')
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()?;
    let mut year = None;
    if let Some(w) = words.peek()
        && let Ok(y) = w.trim_end_matches(',').parse::<i16>()
        && y > 1900
    {
        year = Some(y);
        words.next();
    }
    let rest: Vec<&str> = words.filter(|w| !w.eq_ignore_ascii_case("at")).collect();
    let hm = time_of_day(&rest.join(" "))?;
    let month = i8::try_from(month + 1).ok()?;
    if let Some(y) = year {
        return Some(at(Date::new(y, month, day).ok()?, hm, &tz)?.timestamp());
    }
    // No year: this year's, or next year's when this year's is long past.
    let this = at(Date::new(today.year(), month, day).ok()?, hm, &tz)?;
    if this.timestamp().as_second() + 12 * 3600 >= now.as_second() {
        return Some(this.timestamp());
    }
    let next = today.year().checked_add(1)?;
    Some(at(Date::new(next, month, day).ok()?, hm, &tz)?.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds since the epoch of `text` (RFC 3339).
    fn epoch(text: &str) -> u64 {
        u64::try_from(text.parse::<Timestamp>().unwrap().as_second()).unwrap()
    }

    #[test]
    fn a_clock_of_another_year_says_the_year() {
        // The epoch's second 1 is far in the past whatever the zone.
        assert!(
            clock(1).contains(" 1970 ") || clock(1).contains(" 1969 "),
            "{}",
            clock(1)
        );
        let soon = super::super::now_epoch() + 60;
        assert!(!clock(soon).contains(" 20"), "{}", clock(soon));
    }

    #[test]
    fn a_named_zone_is_honoured() {
        // 2026-02-01 12:00 UTC is 13:00 in Warsaw: 11pm there is 22:00 UTC.
        let now = epoch("2026-02-01T12:00:00Z");
        assert_eq!(
            reset_time_at("You've hit your limit · resets 11pm (Europe/Warsaw)", now),
            Some(epoch("2026-02-01T22:00:00Z"))
        );
        // Past it there: tomorrow's.
        let late = epoch("2026-02-01T23:30:00Z");
        assert_eq!(
            reset_time_at(
                "You're out of extra usage · resets 11pm (Europe/Warsaw)",
                late
            ),
            Some(epoch("2026-02-02T22:00:00Z"))
        );
        assert_eq!(
            reset_time_at("You're out of extra usage · resets 12am (UTC)", now),
            Some(epoch("2026-02-02T00:00:00Z"))
        );
        assert_eq!(
            reset_time_at(
                "Weekly limit reached · resets 10am (Asia/Seoul) · /upgrade to Max or turn on /extra-usage",
                now
            ),
            Some(epoch("2026-02-02T01:00:00Z"))
        );
    }

    #[test]
    fn dated_resets_are_read() {
        let now = epoch("2026-02-01T12:00:00Z");
        // Seoul is UTC+9: Feb 7, 11am there is 02:00 UTC.
        assert_eq!(
            reset_time_at(
                "You've hit your weekly limit · resets Feb 7, 11am (Asia/Seoul)",
                now
            ),
            Some(epoch("2026-02-07T02:00:00Z"))
        );
        assert_eq!(
            reset_time_at(
                "You've hit your limit · resets Apr 10 at 7am (America/Chicago)",
                now
            ),
            Some(epoch("2026-04-10T12:00:00Z"))
        );
        // A date long past this year is next year's.
        assert_eq!(
            reset_time_at("resets Jan 12, 10:59am (America/New_York)", now),
            Some(epoch("2027-01-12T15:59:00Z"))
        );
        let codex = reset_time_at(
            "You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to \
             purchase more credits or try again at Aug 18th, 2030 3:28 PM.",
            now,
        )
        .unwrap();
        let local = Timestamp::from_second(i64::try_from(codex).unwrap())
            .unwrap()
            .to_zoned_datetime(TimeZone::system());
        assert_eq!((local.year(), local.month(), local.day()), (2030, 8, 18));
        assert_eq!((local.hour(), local.minute()), (15, 28));
    }

    #[test]
    fn spans_and_epochs() {
        let now = 1_000_000;
        assert_eq!(
            reset_time_at("Claude AI usage limit reached|1767225600", now),
            Some(1_767_225_600)
        );
        assert_eq!(
            reset_time_at("Your quota will reset after 8h44m7s.", now),
            Some(now + 8 * 3600 + 44 * 60 + 7)
        );
        assert_eq!(
            reset_time_at("The limit resets in 1d 5h, please try again later.", now),
            Some(now + 86_400 + 5 * 3600)
        );
        assert_eq!(
            reset_time_at("try again in 2 hours 5 minutes", now),
            Some(now + 7_500)
        );
        assert_eq!(
            reset_time_at("You've hit your usage limit. Try again later.", now),
            None
        );
    }

    #[test]
    fn a_clock_time_without_a_zone_is_the_machines() {
        let now = super::super::now_epoch();
        let t = reset_time("5-hour limit reached ∙ resets 2am").unwrap();
        assert!(t > now && t <= now + 86_400, "{t}");
        let local = Timestamp::from_second(i64::try_from(t).unwrap())
            .unwrap()
            .to_zoned_datetime(TimeZone::system());
        assert_eq!((local.hour(), local.minute()), (2, 0));
        let t = reset_time("You've hit your usage limit. Try again at 3:28 PM.").unwrap();
        let local = Timestamp::from_second(i64::try_from(t).unwrap())
            .unwrap()
            .to_zoned_datetime(TimeZone::system());
        assert_eq!((local.hour(), local.minute()), (15, 28));
    }
}
