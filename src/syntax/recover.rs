//! What a syntax error leaves readable: the header of an item that failed
//! to parse (its keyword and name, so that the checker does not report
//! references to it as unknown), and the `{` that a missing `}` leaves open
//! (the E0001's secondary label).

use super::{ITEM_KEYWORDS, literals};
use crate::ast::Unparsed;
use crate::span::Span;

/// The item that failed to parse in `source[start..end]`: its span, and
/// the keyword and name its header starts with, when they can be read.
pub(super) fn unparsed(source: &str, start: usize, end: usize) -> Unparsed {
    let text = &source[start..end];
    let keyword = ITEM_KEYWORDS.iter().copied().find(|k| {
        text.strip_prefix(k).is_some_and(|rest| {
            !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '-')
        })
    });
    let (name, name_span) = match keyword {
        Some(k @ ("task" | "agent" | "gate" | "executor")) => {
            let at = super::skip_trivia(source, start + k.len()).min(end);
            let name = header_name(&source[at..end], k == "task");
            // A quoted task name starts after its quote.
            let from = at + usize::from(source[at..end].starts_with('"'));
            let span = name.as_ref().map(|n| Span::new(from, from + n.len()));
            (name, span)
        }
        _ => (None, None),
    };
    Unparsed {
        span: Span::new(start, end),
        keyword,
        name,
        name_span,
    }
}

/// The name at the start of `text`: a bare name, or (for a task) a bare
/// task name, letters outside ASCII included (E0011 is the checker's), or
/// a string without escapes on one line.
fn header_name(text: &str, task: bool) -> Option<String> {
    if task && let Some(rest) = text.strip_prefix('"') {
        let close = rest.find(['"', '\\', '\n', '\r'])?;
        return (rest.as_bytes()[close] == b'"').then(|| rest[..close].to_string());
    }
    let name: String = text
        .chars()
        .take_while(|&c| {
            c.is_ascii_alphanumeric()
                || c == '_'
                || c == '-'
                || (task && (c == '.' || (!c.is_ascii() && c.is_alphanumeric())))
        })
        .collect();
    let starts_well = name
        .chars()
        .next()
        .is_some_and(|c| task || c.is_ascii_alphabetic() || c == '_');
    (starts_well && !name.is_empty()).then_some(name)
}

/// The innermost `{` opened in `source[start..at]` (outside strings and
/// comments) that is still open at `at`, if any.
pub(super) fn unclosed_brace(source: &str, start: usize, at: usize) -> Option<usize> {
    let bytes = source.as_bytes();
    let at = at.min(bytes.len());
    let mut open = Vec::new();
    let mut i = start;
    while i < at {
        match bytes[i] {
            b'#' => i = crate::span::line_end(source, i),
            b'"' => {
                i = literals(source, i)
                    .next()
                    .and_then(|l| l.close)
                    .unwrap_or(at)
                    .max(i + 1);
            }
            b'{' => {
                open.push(i);
                i += 1;
            }
            b'}' => {
                open.pop();
                i += 1;
            }
            _ => i += 1,
        }
    }
    open.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_of_an_unparsed_item() {
        let read = |s: &str| {
            let u = unparsed(s, 0, s.len());
            (u.keyword, u.name)
        };
        assert_eq!(read("task a \"A\" {\n"), (Some("task"), Some("a".into())));
        assert_eq!(read("task \"0f3a\" {"), (Some("task"), Some("0f3a".into())));
        assert_eq!(read("task café {"), (Some("task"), Some("café".into())));
        assert_eq!(
            read("agent claude { run"),
            (Some("agent"), Some("claude".into()))
        );
        assert_eq!(read("gate 0x = 1"), (Some("gate"), None));
        assert_eq!(read("budget { x"), (Some("budget"), None));
        assert_eq!(read("tasks a {"), (None, None));
        assert_eq!(read("task \"a\\\"b\" {"), (Some("task"), None));
    }

    #[test]
    fn the_brace_left_open() {
        let s = "task a { env = { X = \"}\" } # }\n prompt = \"x\"\n";
        assert_eq!(unclosed_brace(s, 0, s.len()), Some(7));
        let s = "task a { env = { X = \"1\"\n";
        assert_eq!(unclosed_brace(s, 0, s.len()), Some(15));
        assert_eq!(unclosed_brace("task a { }", 0, 10), None);
    }
}
