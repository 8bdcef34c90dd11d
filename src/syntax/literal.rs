//! Literals (docs/language.md): decoding the text of integers, durations, money and
//! strings into values, and printing values back as literals a plan file can
//! hold. Both directions live here so that they agree: decoding what a
//! printer wrote gives the value back (`decode(print(x)) == x`, tested below
//! for many values).
//!
//! Decoders take the literal's text and its span and report a bad literal as
//! E0012 (E0009 when it is out of range) with a span inside the literal.

use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;
use std::fmt;
use std::time::Duration;

/// An amount of money in micro-dollars (`$0.50` is 500 000); no float ever
/// holds one.
///
/// Its one display is the plan-file literal, so what loopc shows can be
/// pasted into a plan: whole dollars without decimals (`$2`), otherwise at
/// least two decimals with further trailing zeros trimmed (`$1.50`, `$0.05`,
/// `$0.000125`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(pub u64);

impl Money {
    /// The amount in micro-dollars.
    pub fn micros(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.0 / 1_000_000;
        let frac = self.0 % 1_000_000;
        if frac == 0 {
            return write!(f, "${whole}");
        }
        let digits = format!("{frac:06}");
        let digits = digits.trim_end_matches('0');
        write!(f, "${whole}.{digits:0<2}")
    }
}

/// The note of every malformed money literal.
const MONEY_FORM: &str = "money is `$` + dollars, optionally `.` + 1 to 6 digits: `$0.50`";

/// Decodes a money literal (`$20`, `$0.50`, `$0.000125`).
///
/// Errors: E0012 for anything but `$` + digits + optionally `.` and 1 to 6
/// digits; E0009 for an amount above what a u64 of micro-dollars holds.
pub fn decode_money(text: &str, span: Span) -> Result<Money, Diagnostic> {
    let body = text.strip_prefix('$').unwrap_or(text);
    if body.chars().any(|c| !(c.is_ascii_digit() || c == '.')) || body.matches('.').count() > 1 {
        return Err(Diagnostic::new(
            Code::E0012,
            format!("invalid amount `{text}`"),
            span,
            "invalid amount",
        )
        .with_note(MONEY_FORM));
    }
    let (whole, frac) = match body.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (body, None),
    };
    if whole.is_empty() {
        let msg = format!("invalid amount `{text}`: expected digits before `.`");
        return Err(Diagnostic::new(Code::E0012, msg, span, "invalid amount").with_note(MONEY_FORM));
    }
    if let Some(f) = frac
        && (f.is_empty() || f.len() > 6)
    {
        let msg = if f.is_empty() {
            format!("invalid amount `{text}`: expected digits after `.`")
        } else {
            format!("invalid amount `{text}`: more than 6 decimal places")
        };
        return Err(Diagnostic::new(Code::E0012, msg, span, "invalid amount").with_note(MONEY_FORM));
    }
    let frac_micros = frac.map_or(0u64, |f| format!("{f:0<6}").parse().unwrap_or(0));
    whole
        .parse::<u64>()
        .ok()
        .and_then(|w| w.checked_mul(1_000_000))
        .and_then(|w| w.checked_add(frac_micros))
        .map(Money)
        .ok_or_else(|| {
            Diagnostic::new(
                Code::E0009,
                format!("amount `{text}` is too large"),
                span,
                "out of range",
            )
        })
}

/// Duration units and their length in milliseconds, longest first.
const UNITS: [(&str, u128); 5] = [
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1_000),
    ("ms", 1),
];

/// Decodes a duration literal: one or more `<integer><unit>` (`90s`,
/// `1h30m`), units `ms`, `s`, `m`, `h`, `d`, in any order, the parts added
/// up (`30m1h` is `1h30m`).
///
/// Errors: E0012 for a missing number or unit or an unknown unit (spanning
/// the unit); E0009 for an integer that does not fit in a u32 (spanning
/// it) or a duration too long to represent.
pub fn decode_duration(text: &str, span: Span) -> Result<Duration, Diagnostic> {
    let mut total: u128 = 0;
    let mut rest = text;
    let mut at = span.start;
    while !rest.is_empty() {
        // `_` separates digits (`1_000ms`); it does not start a part.
        if rest.starts_with('_') {
            return Err(Diagnostic::new(
                Code::E0012,
                format!("invalid duration `{text}`"),
                Span::new(at, at + 1),
                "`_` may only follow a digit",
            )
            .with_note("a duration is one or more <integer><unit>, e.g. `90s`, `1h30m`"));
        }
        let digits_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len());
        let digits = &rest[..digits_len];
        let after = &rest[digits_len..];
        let unit_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let unit = &after[..unit_len];
        if digits.is_empty() || unit.is_empty() {
            let (msg, label) = if unit.is_empty() {
                (
                    format!("missing unit after `{digits}` in duration `{text}`"),
                    "add a unit: ms, s, m, h or d",
                )
            } else {
                (
                    format!("invalid duration `{text}`"),
                    "expected a number before the unit",
                )
            };
            return Err(Diagnostic::new(Code::E0012, msg, span, label)
                .with_note("a duration is one or more <integer><unit>, e.g. `90s`, `1h30m`"));
        }
        let unit_span = Span::new(at + digits_len, at + digits_len + unit_len);
        let Some(&(_, millis)) = UNITS.iter().find(|(u, _)| *u == unit) else {
            let suggestion = match unit {
                "sec" | "secs" | "second" | "seconds" => " (did you mean `s`?)",
                "min" | "mins" | "minute" | "minutes" => " (did you mean `m`?)",
                "hr" | "hrs" | "hour" | "hours" => " (did you mean `h`?)",
                "day" | "days" => " (did you mean `d`?)",
                _ => "",
            };
            return Err(Diagnostic::new(
                Code::E0012,
                format!("unknown duration unit `{unit}`{suggestion}"),
                unit_span,
                "unknown unit",
            )
            .with_note("duration units are ms, s, m, h and d"));
        };
        // Every integer of the language fits in a u32, a duration's too.
        let n = decode_integer(digits, Span::new(at, at + digits_len)).map_err(|_| {
            Diagnostic::new(
                Code::E0009,
                format!("`{digits}` in duration `{text}` is too large"),
                Span::new(at, at + digits_len),
                "out of range",
            )
            .with_note("an integer must fit in 32 bits (at most 4294967295)")
        })?;
        total = total.saturating_add(u128::from(n) * millis);
        at += digits_len + unit_len;
        rest = &after[unit_len..];
    }
    match u64::try_from(total) {
        Ok(ms) if ms <= u64::MAX / 1_000 => Ok(Duration::from_millis(ms)),
        _ => Err(Diagnostic::new(
            Code::E0009,
            format!("duration `{text}` is too long"),
            span,
            "out of range",
        )
        .with_note(format!(
            "a duration is at most {}ms (about 584,000 years)",
            u64::MAX / 1_000
        ))),
    }
}

/// A duration as plans write it (`1h30m`, `500ms`, `0s`), in whole
/// milliseconds (the precision of the literal).
pub fn print_duration(d: Duration) -> String {
    let mut ms = d.as_millis();
    if ms == 0 {
        return "0s".to_string();
    }
    let mut s = String::new();
    for (unit, len) in UNITS {
        if ms >= len {
            s.push_str(&format!("{}{unit}", ms / len));
            ms %= len;
        }
    }
    s
}

/// Decodes an integer literal (underscores allowed: `1_000`).
///
/// Errors: E0009 when it does not fit in a u32.
pub fn decode_integer(text: &str, span: Span) -> Result<u32, Diagnostic> {
    let digits: String = text.chars().filter(|c| *c != '_').collect();
    digits.parse::<u32>().map_err(|_| {
        Diagnostic::new(
            Code::E0009,
            format!("integer `{text}` is too large"),
            span,
            format!("the largest integer is {}", u32::MAX),
        )
    })
}

/// The diagnostic of a number that is negative (E0009) or has a fraction
/// (E0012): `-1`, `1.5h`.
pub fn bad_number(text: &str, span: Span) -> Diagnostic {
    if text.starts_with('-') {
        Diagnostic::new(
            Code::E0009,
            format!("negative value `{text}`"),
            span,
            "values are never negative",
        )
    } else {
        Diagnostic::new(
            Code::E0012,
            format!("invalid number `{text}`: fractions are not allowed"),
            span,
            "not an integer or a duration",
        )
        .with_note("write whole units: `1h30m` rather than `1.5h`, `1500ms` rather than `1.5s`")
    }
}

/// Decodes the escapes of the body of a `"…"` string (the text between the
/// quotes), which starts at absolute offset `at`.
///
/// Errors: E0012 for each unknown escape and each invalid `\u{…}`.
pub fn decode_string(body: &str, at: usize) -> Result<String, Vec<Diagnostic>> {
    if !body.contains('\\') {
        return Ok(body.to_string());
    }
    let mut out = String::with_capacity(body.len());
    let mut errors = Vec::new();
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else {
            break;
        };
        match e {
            '\\' => out.push('\\'),
            '"' => out.push('"'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            '0' => out.push('\0'),
            'u' => {
                // \u{1F600}: up to six hex digits in braces, a Unicode scalar value.
                let rest = &body[i + 2..];
                let decoded = rest.strip_prefix('{').and_then(|r| {
                    let close = r.find('}')?;
                    let hex = &r[..close];
                    if hex.is_empty() || hex.len() > 6 {
                        return None;
                    }
                    let v = u32::from_str_radix(hex, 16).ok()?;
                    Some((char::from_u32(v)?, close + 2))
                });
                match decoded {
                    Some((ch, consumed)) => {
                        out.push(ch);
                        for _ in 0..consumed {
                            chars.next();
                        }
                    }
                    None => {
                        let end = rest.find('}').map_or(i + 2, |n| i + 2 + n + 1);
                        let end = if rest.starts_with('{') { end } else { i + 2 };
                        errors.push(
                            Diagnostic::new(
                                Code::E0012,
                                "invalid unicode escape",
                                Span::new(at + i, at + end),
                                "not a valid `\\u{…}` escape",
                            )
                            .with_note("write a Unicode scalar value in hex: `\\u{1F600}`"),
                        );
                    }
                }
            }
            other => errors.push(
                Diagnostic::new(
                    Code::E0012,
                    format!("unknown escape `\\{}`", shown_char(other)),
                    Span::new(at + i, at + i + 1 + other.len_utf8()),
                    "unknown escape",
                )
                .with_note(
                    "valid escapes are \\\\ \\\" \\n \\r \\t \\0 and \\u{…}; for backslashes use `\\\\` or a block string",
                ),
            ),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// `s` as a `"…"` string literal: `\\`, `\"`, `\n`, `\r`, `\t`, `\0` and
/// `\u{…}` for other control characters; everything else as itself.
pub fn print_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The diagnostic of a `"…"` string opened at `at` and never closed on its line.
pub fn unterminated_string(at: usize) -> Diagnostic {
    Diagnostic::new(
        Code::E0012,
        "unterminated string",
        Span::new(at, at + 1),
        "this string is never closed",
    )
    .with_note(
        "a \"…\" string ends on its line: close it with `\"`, or use a block string (`\"\"\"`) for several lines",
    )
}

/// The diagnostic of a block string opened at `at` and never closed.
pub fn unterminated_block(at: usize) -> Diagnostic {
    Diagnostic::new(
        Code::E0012,
        "unterminated block string",
        Span::new(at, at + 3),
        "this block string is never closed",
    )
    .with_note("close it with `\"\"\"` on a line of its own")
}

/// The diagnostic of a block string opened at `at` whose closing `"""`
/// comes only after the next item starts (at `close`, most likely the
/// opening quotes of another block string): the item cannot be read.
pub fn block_runs_on(at: usize, close: usize) -> Diagnostic {
    Diagnostic::new(
        Code::E0012,
        "unterminated block string",
        Span::new(at, at + 3),
        "this block string is not closed before the next item",
    )
    .with_label(Span::new(close, close + 3), "the `\"\"\"` that ends it now")
    .with_note("close it with `\"\"\"` on a line of its own")
}

/// Decodes a block string opened at `at`: `raw` is the text between its
/// `"""`s. Lines are dedented by their common indentation; a last line of
/// only whitespace is dropped with the line break before it.
///
/// Errors: E0012 when the text does not start with a line break.
pub fn decode_block_string(raw: &str, at: usize) -> Result<String, Diagnostic> {
    // A line ends at LF, CRLF or a lone CR, as editors show it.
    let Some(raw) = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .or_else(|| raw.strip_prefix('\r'))
    else {
        return Err(Diagnostic::new(
            Code::E0012,
            "a block string must start with a line break after `\"\"\"`",
            Span::new(at, at + 3),
            "start the text on the next line",
        )
        .with_note("for a one-line string, use `\"…\"`"));
    };
    // Copied only when there is a CR to normalise.
    let normalized = if raw.contains('\r') {
        std::borrow::Cow::Owned(raw.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        std::borrow::Cow::Borrowed(raw)
    };
    let mut lines: Vec<&str> = normalized.split('\n').collect();
    if lines.len() > 1 && lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
        .reduce(|a, b| {
            let n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            &a[..n]
        })
        .unwrap_or("");
    let mut out = String::with_capacity(normalized.len());
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !l.trim().is_empty() {
            out.push_str(&l[indent.len()..]);
        }
    }
    Ok(out)
}

/// `text` as a block string whose lines and closing `"""` are indented by
/// `indent` spaces (empty lines stay empty). It decodes to `text` when
/// [`fits_block_string`] says so.
pub fn print_block_string(text: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str("\"\"\"\n");
    for line in text.split('\n') {
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
        out.push('\n');
    }
    out.push_str(&pad);
    out.push_str("\"\"\"");
    out
}

/// Whether `text` printed as a block string decodes to `text` exactly (no
/// `"""`, no carriage return or leading whitespace the rules would drop).
pub fn fits_block_string(text: &str) -> bool {
    if text.contains("\"\"\"") {
        return false;
    }
    let printed = print_block_string(text, 4);
    printed
        .get(3..printed.len() - 3)
        .and_then(|raw| decode_block_string(raw, 0).ok())
        .is_some_and(|decoded| decoded == text)
}

/// `text` as a block string (indented by 4) when it has several lines and a
/// block string holds it exactly, else as a `"…"` string.
pub fn print_text(text: &str) -> String {
    if text.contains('\n') && fits_block_string(text) {
        print_block_string(text, 4)
    } else {
        print_string(text)
    }
}

/// A task name as a plan writes it: bare when it can be (`build`,
/// `fix-auth`), else quoted (`"0f3a9b2c"`, `"v1.2"`, and item keywords,
/// which end a dependency list: `"task"`).
pub fn print_task_name(name: &str) -> String {
    let bare = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !super::ITEM_KEYWORDS.contains(&name);
    if bare {
        name.to_string()
    } else {
        print_string(name)
    }
}

/// `c` as a message shows it after a backslash: a letter, digit or
/// punctuation as it is (`\'`, `\q`), anything else escaped (`\u{202e}`).
fn shown_char(c: char) -> String {
    if c.is_ascii_graphic() || c.is_alphanumeric() {
        c.to_string()
    } else {
        c.escape_debug().to_string()
    }
}

#[cfg(test)]
mod tests;
