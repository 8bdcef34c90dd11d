//! The parser: pest grammar (`grammar/loop.pest`) → [`crate::ast::File`] (docs/language.md).
//!
//! It never fails. It parses one item at a time; when an item cannot be
//! parsed it reports E0001 (what was expected, what was found), records an
//! [`crate::ast::Item::Error`] and resumes at the next line that starts an item, so a file
//! with several independent mistakes gets one diagnostic for each. Literals are
//! decoded here; a bad literal is E0012 (or E0009 for an integer overflow) and
//! becomes [`crate::ast::ValueKind::Invalid`].
//!
//! This module is the driver: item-by-item parsing, recovery and syntax
//! errors. `lower` turns pest's pairs into the tree; [`literal`] decodes
//! literals and prints values back as literals.

mod chunks;
mod fast;
pub mod literal;
mod lower;
mod recover;
mod reuse;

pub use literal::Money;
pub use reuse::reparse;

use crate::ast::{File, Item};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;
use lower::Lowering;
use pest::Parser;

pub use chunks::parse_each;
use chunks::parse_parallel;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/loop.pest"]
struct LoopParser;

/// Item keywords, in the order used by messages.
pub const ITEM_KEYWORDS: [&str; 7] = [
    "task", "agent", "gate", "executor", "defaults", "budget", "loop",
];

/// Parses `source` into a syntax tree and its syntax diagnostics
/// (E0001, E0009 for integer overflow, E0011 for bare ids, E0012).
pub fn parse(source: &str) -> (File, Vec<Diagnostic>) {
    let start = if source.starts_with('\u{FEFF}') { 3 } else { 0 };
    let (items, diagnostics) = parse_parallel(source, start)
        .unwrap_or_else(|| parse_range(source, start, source.len(), true));
    let file = File {
        items,
        comments: comments(source),
    };
    (file, diagnostics)
}

/// Parses the items of `source[start..end]` (`end` at an item boundary or
/// the end of the file), recovering at item boundaries. With `fast`, a task
/// item is first read by [`fast::task`], and whatever it does not read pest
/// does, given only the text it looks at ([`pest_item`]); without, pest
/// parses every item with all the text after it: the reference that the
/// differential tests hold the fast way to.
fn parse_range(source: &str, start: usize, end: usize, fast: bool) -> (Vec<Item>, Vec<Diagnostic>) {
    let (items, diagnostics, _) = parse_items(source, start, end, fast, &mut |_| false);
    (items, diagnostics)
}

/// [`parse_range`] (fast) that stops before parsing from a position where
/// `stop` says so; also returns where it stopped.
fn parse_until(
    source: &str,
    start: usize,
    end: usize,
    stop: &mut dyn FnMut(usize) -> bool,
) -> (Vec<Item>, Vec<Diagnostic>, usize) {
    parse_items(source, start, end, true, stop)
}

fn parse_items(
    source: &str,
    start: usize,
    end: usize,
    fast: bool,
    stop: &mut dyn FnMut(usize) -> bool,
) -> (Vec<Item>, Vec<Diagnostic>, usize) {
    let mut p = Lowering::default();
    let mut items = Vec::new();
    let mut pos = start;
    while pos < end {
        if stop(pos) {
            break;
        }
        if fast && let Some((item, after)) = fast::task(source, pos, end) {
            items.push(item);
            pos = after;
            continue;
        }
        p.offset = pos;
        let parsed = if fast {
            pest_item(source, pos, end)
        } else {
            LoopParser::parse(Rule::next_item, &source[pos..end]).map_err(Box::new)
        };
        match parsed {
            Ok(mut pairs) => {
                let Some(next) = pairs.next() else { break };
                let Some(inner) = next.into_inner().next() else {
                    break;
                };
                if inner.as_rule() != Rule::item {
                    break; // end of input
                }
                let end = inner.as_span().end();
                if let Some(item) = inner.into_inner().next() {
                    items.push(p.item(item));
                }
                pos += end.max(1);
            }
            Err(e) => {
                let start = skip_trivia(source, pos);
                if start >= end {
                    break;
                }
                let err_at = match e.location {
                    pest::error::InputLocation::Pos(at) => pos + at,
                    pest::error::InputLocation::Span((at, _)) => pos + at,
                };
                let resume = recovery_point(source, start + 1).min(end);
                // A parse that ran past the next item's line through a block
                // string: that string's closing quotes are missing (the
                // quotes that end it open another string further on).
                let runs_on = (err_at > resume)
                    .then(|| block_string_across(source, start, resume))
                    .flatten();
                p.diagnostics
                    .push(match (runs_on, unclosed_string(source, start, err_at)) {
                        (Some((open, close)), _) => literal::block_runs_on(open, close),
                        (None, Some((open, true))) => literal::unterminated_block(open),
                        (None, Some((open, false))) => literal::unterminated_string(open),
                        (None, None) => syntax_error(source, start, err_at, &e),
                    });
                items.push(Item::Error(recover::unparsed(source, start, resume)));
                pos = resume;
            }
        }
    }
    (items, p.diagnostics, pos)
}

/// Parses the item at `pos` (or the trivia before the end) with pest, as
/// `LoopParser::parse(Rule::next_item, &source[pos..end])` would, but
/// giving pest only as much text after the item as it looks at.
///
/// pest's error for a failed parse finds the start of the error's line by
/// walking its input back from the end (`Position::line_of`), so parsing
/// each broken item with the rest of a large file made syntax errors
/// quadratic (20,000 of them: 3.3 s). The text is cut at a line starting an
/// item (outside block strings; [`item_bound`]). The result is the same as
/// with all of it unless a parse reached the cut (an error at the cut, or an
/// item that ends there, as an unterminated block string does): pest looks
/// at nothing past the furthest position it attempted, and every way to
/// reach the cut attempts a rule there. Then the cut is moved twice as far
/// and the item parsed again.
fn pest_item(
    source: &str,
    pos: usize,
    end: usize,
) -> Result<pest::iterators::Pairs<'_, Rule>, Box<pest::error::Error<Rule>>> {
    let start = skip_trivia(source, pos);
    let mut bound = if start < end {
        item_bound(source, start, end)
    } else {
        end
    };
    loop {
        let result = LoopParser::parse(Rule::next_item, &source[pos..bound]).map_err(Box::new);
        if bound >= end {
            return result;
        }
        let reached = match &result {
            Ok(pairs) => pairs
                .peek()
                .is_none_or(|p| pos + p.as_span().end() >= bound),
            Err(e) => match e.location {
                pest::error::InputLocation::Pos(at) | pest::error::InputLocation::Span((at, _)) => {
                    pos + at >= bound
                }
            },
        };
        if !reached {
            return result;
        }
        let further = (pos + 2 * (bound - pos)).min(end);
        bound = recovery_point(source, further).min(end);
    }
}

/// The block string opened in `source[start..at]` that is still open at
/// `at`, and where its closing quotes are: `(open, close)`; `None` when
/// none is open there or it never closes.
fn block_string_across(source: &str, start: usize, at: usize) -> Option<(usize, usize)> {
    literals(source, start)
        .take_while(|l| l.open < at)
        .find_map(|l| match l.close {
            Some(end) if l.block && end - 3 >= at => Some((l.open, end - 3)),
            _ => None,
        })
}

/// Where the item starting at `start` can be cut for [`pest_item`]: the
/// first line after it that starts an item and is not inside a block
/// string, else `end`.
fn item_bound(source: &str, start: usize, end: usize) -> usize {
    let mut bound = recovery_point(source, start + 1).min(end);
    for l in literals(source, start) {
        if l.open >= bound {
            break;
        }
        let close = l.close.map_or(end, |c| c.min(end));
        if l.block && close > bound {
            bound = recovery_point(source, close).min(end);
        }
    }
    bound
}

/// The byte spans of every `#` comment in `source` (strings are skipped).
///
/// Used by the formatter to keep comments where they were.
pub fn comments(source: &str) -> Vec<Span> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // Jump to the next `#` or `"` (a vectorised search): everything else
    // is skipped, and a plan is mostly text between them.
    while let Some(n) = bytes
        .get(i..)
        .and_then(|rest| memchr::memchr2(b'#', b'"', rest))
    {
        i += n;
        match bytes[i] {
            b'#' => {
                let end = crate::span::line_end(source, i);
                out.push(Span::new(i, end));
                i = end;
            }
            b'"' if source[i..].starts_with("\"\"\"") => {
                i = source[i + 3..]
                    .find("\"\"\"")
                    .map_or(source.len(), |n| i + 3 + n + 3);
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// The first string in `source[start..end]` (the text of an item that failed
/// to parse, up to the error) that is never closed: `(offset, is_block)`.
/// A `"…"` string must close on its line; a block string anywhere before the
/// end of the file. Such a string is the real mistake behind the syntax error.
fn unclosed_string(source: &str, start: usize, end: usize) -> Option<(usize, bool)> {
    literals(source, start)
        .take_while(|l| l.open < end)
        .find(|l| l.close.is_none())
        .map(|l| (l.open, l.block))
}

/// A string literal found by [`literals`].
struct Literal {
    /// Where its opening quotes are.
    open: usize,
    /// Whether it is a `"""` block string.
    block: bool,
    /// Where it ends, after its closing quotes; `None` when it is never
    /// closed (a `"…"` string at its line's end, a block string at the
    /// file's).
    close: Option<usize>,
}

/// The string literals of `source` from `from` on, outside comments, as the
/// grammar reads them: the one scan behind syntax-error recovery
/// ([`unclosed_string`], [`block_string_across`]) and pest's cut points
/// ([`item_bound`]). pest stays the authority on what parses.
fn literals(source: &str, from: usize) -> impl Iterator<Item = Literal> + '_ {
    let bytes = source.as_bytes();
    let mut i = from;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            match bytes[i] {
                b'#' => i = crate::span::line_end(source, i),
                b'"' if bytes[i..].starts_with(b"\"\"\"") => {
                    let open = i;
                    let close = memchr::memmem::find(&bytes[i + 3..], b"\"\"\"").map(|n| i + 6 + n);
                    i = close.unwrap_or(bytes.len());
                    return Some(Literal {
                        open,
                        block: true,
                        close,
                    });
                }
                b'"' => {
                    let open = i;
                    i += 1;
                    // A backslash escapes anything but a line break.
                    let close = loop {
                        match bytes.get(i) {
                            None | Some(b'\n' | b'\r') => break None,
                            Some(b'"') => {
                                i += 1;
                                break Some(i);
                            }
                            Some(b'\\') if !matches!(bytes.get(i + 1), Some(b'\n' | b'\r')) => {
                                i += 2
                            }
                            Some(_) => i += 1,
                        }
                    };
                    return Some(Literal {
                        open,
                        block: false,
                        close,
                    });
                }
                _ => i += 1,
            }
        }
        None
    })
}

/// Skips whitespace and comments from `pos`.
fn skip_trivia(source: &str, mut pos: usize) -> usize {
    let bytes = source.as_bytes();
    while pos < bytes.len() {
        match bytes[pos] {
            b' ' | b'\t' | b'\r' | b'\n' => pos += 1,
            b'#' => pos = crate::span::line_end(source, pos),
            _ => break,
        }
    }
    pos
}

/// The first position at or after `from` where a line's first token is an
/// item keyword starting an item (not a field such as `agent = claude`).
fn recovery_point(source: &str, mut from: usize) -> usize {
    while from < source.len() && !source.is_char_boundary(from) {
        from += 1;
    }
    let mut line_start = crate::span::line_start(source, from);
    while line_start < source.len() {
        let line_end = crate::span::line_end(source, line_start);
        let line = &source[line_start..line_end];
        let indent = line.len() - line.trim_start().len();
        let p = line_start + indent;
        if p >= from && starts_item(&source[p..line_end]) {
            return p;
        }
        line_start = crate::span::next_line(source, line_end);
    }
    source.len()
}

fn starts_item(line: &str) -> bool {
    ITEM_KEYWORDS.iter().any(|kw| {
        let Some(rest) = line.strip_prefix(kw) else {
            return false;
        };
        match rest.chars().next() {
            None => true,
            Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '-' => false,
            // No item starts `KEYWORD =`: `agent = claude` is a field, and
            // `gate = [t]` a misspelled one (E0002), not a broken item.
            Some(_) => !rest.trim_start_matches([' ', '\t']).starts_with('='),
        }
    })
}

/// Describes what a rule stands for in "expected …" messages.
fn describe(rule: Rule) -> &'static str {
    match rule {
        Rule::item | Rule::next_item => {
            "an item (`task`, `agent`, `gate`, `executor`, `defaults`, `budget` or `loop`)"
        }
        Rule::kw_loop
        | Rule::kw_budget
        | Rule::kw_defaults
        | Rule::kw_agent
        | Rule::kw_executor
        | Rule::kw_gate
        | Rule::kw_task
        | Rule::loop_item
        | Rule::budget_item
        | Rule::defaults_item
        | Rule::agent_item
        | Rule::executor_item
        | Rule::gate_item
        | Rule::task_item => {
            "an item (`task`, `agent`, `gate`, `executor`, `defaults`, `budget` or `loop`)"
        }
        Rule::EOI => "end of file",
        Rule::name => "a name",
        Rule::field_name => "a field name",
        Rule::task_name | Rule::dependency | Rule::bad_bare_id | Rule::non_ascii_name => {
            "a task name"
        }
        Rule::field => "a field (`name = value`)",
        Rule::map_entry => "a map entry (`KEY = \"value\"`)",
        Rule::value
        | Rule::scalar
        | Rule::list
        | Rule::map
        | Rule::money
        | Rule::duration
        | Rule::integer
        | Rule::bad_number
        | Rule::block_string
        | Rule::unterminated_block => "a value",
        Rule::string | Rule::unterminated_string | Rule::string_body | Rule::block_body => {
            "a string"
        }
        Rule::block => "`{`",
        Rule::lbrace => "`{`",
        Rule::rbrace => "`}`",
        Rule::lbrack => "`[`",
        Rule::rbrack => "`]`",
        Rule::eq => "`=`",
        Rule::colon => "`:`",
        Rule::comma => "`,`",
        _ => "something else",
    }
}

/// Builds the E0001 diagnostic for a pest error at absolute offset `at` in
/// the item that starts at `item`.
fn syntax_error(source: &str, item: usize, at: usize, e: &pest::error::Error<Rule>) -> Diagnostic {
    let mut expected: Vec<&str> = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            positives.iter().map(|r| describe(*r)).collect()
        }
        pest::error::ErrorVariant::CustomError { .. } => Vec::new(),
    };
    expected.dedup();
    let mut seen = Vec::new();
    expected.retain(|d| {
        if seen.contains(d) {
            false
        } else {
            seen.push(*d);
            true
        }
    });
    let (found, len) = found_token(source, at);
    let expected = match expected.len() {
        0 => "something else".to_string(),
        1 => expected[0].to_string(),
        n => format!("{} or {}", expected[..n - 1].join(", "), expected[n - 1]),
    };
    let mut d = Diagnostic::new(
        Code::E0001,
        format!("expected {expected}, found {found}"),
        Span::new(at, at + len),
        format!("expected {expected}"),
    );
    let keyword = ITEM_KEYWORDS
        .iter()
        .find(|k| found == format!("`{k}`"))
        .copied();
    // A `}` missing before the next item or the end of the file: the
    // `{` it would close is labelled, wherever it is.
    let at_end = found == "end of file";
    if expected.contains("`}`") && (keyword.is_some() || at_end) {
        if let Some(open) = recover::unclosed_brace(source, item, at) {
            d = d.with_label(Span::new(open, open + 1), "this `{` is never closed");
        }
        d = d.with_note(if at_end {
            "the file ends before this block is closed: add `}`"
        } else {
            "the block before this item is not closed: add `}`"
        });
    }
    if let Some(k) = keyword
        && expected.contains("`{`")
        && in_dependency_list(source, at)
    {
        d = d.with_note(format!(
            "`{k}` is an item keyword, so it ends the dependency list: write a dependency \
             named `{k}` quoted (`\"{k}\"`), or rename that task"
        ));
    }
    if expected == "`=`" {
        let before = source[..at.min(source.len())].trim_end();
        let word: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !word.is_empty() {
            d = d.with_note(format!(
                "`{word}` is read as a field name; a field is `name = value`"
            ));
        }
    }
    if found == "`,`" {
        d = d.with_note(if expected.contains("a task name") {
            "dependencies are separated by whitespace only, as in make: `task y: x w { … }`"
        } else {
            "fields are separated by whitespace only, not commas"
        });
    }
    if found == "`'`" {
        d = d.with_note("strings are written in double quotes: `\"…\"`");
    }
    if found == "`.`"
        && let Some(name) = dotted_task_name(source, at)
    {
        d = d.with_note(format!(
            "a task name with `.` is written quoted: `\"{name}\"` (bare names take letters, \
             digits, `_` and `-`)"
        ));
    }
    d
}

/// The dotted task name written bare around the `.` at `at` in a task
/// header or its dependency list (`task x.1 { … }`, `task y: x.1 { … }`).
fn dotted_task_name(source: &str, at: usize) -> Option<String> {
    if !source.is_char_boundary(at) || at >= source.len() {
        return None;
    }
    let line = &source[crate::span::line_start(source, at)..at];
    if !line.trim_start().starts_with("task") || line.contains('{') {
        return None;
    }
    let part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    let head = line.trim_end_matches(part).len();
    let before = &line[head..];
    let after: String = source[at..].chars().take_while(|&c| part(c)).collect();
    if before.is_empty() || after.len() < 2 {
        return None;
    }
    Some(format!("{before}{after}"))
}

/// Whether `at` is after the `:` of a task header on its line
/// (`task z: a ⟨at⟩`), where dependency names go.
fn in_dependency_list(source: &str, at: usize) -> bool {
    let at = at.min(source.len());
    if !source.is_char_boundary(at) {
        return false;
    }
    let line = &source[crate::span::line_start(source, at)..at];
    line.trim_start().starts_with("task") && line.contains(':') && !line.contains('{')
}

/// Describes the token at `at` and its byte length.
fn found_token(source: &str, at: usize) -> (String, usize) {
    let rest = &source[at.min(source.len())..];
    let Some(c) = rest.chars().next() else {
        return ("end of file".to_string(), 0);
    };
    if c.is_alphanumeric() || c == '_' {
        let word: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        let len = word.len();
        return (format!("`{word}`"), len);
    }
    if c == '"' {
        return ("a string".to_string(), 1);
    }
    if c == '\n' || c == '\r' {
        return ("end of line".to_string(), 0);
    }
    if let Some(kind) = invisible(c) {
        return (format!("{kind} U+{:04X}", u32::from(c)), c.len_utf8());
    }
    (format!("`{c}`"), c.len_utf8())
}

/// What kind of character `c` is when it would show as nothing (or move
/// the text around it) if quoted in a message: a control character, a
/// format character such as a zero-width or bidirectional one (the other
/// hidden characters of [`crate::visible`]), or a space other than U+0020.
fn invisible(c: char) -> Option<&'static str> {
    match c {
        _ if c.is_control() => Some("the control character"),
        _ if crate::visible::is_hidden(c) => Some("the invisible character"),
        _ if c.is_whitespace() && c != ' ' => Some("the space character"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_named_not_quoted() {
        for (src, want) in [
            (
                "task a {\u{200B} run = \"x\" }\n",
                "the invisible character U+200B",
            ),
            (
                "task a {\u{0C} run = \"x\" }\n",
                "the control character U+000C",
            ),
            (
                "task a { run\u{A0}= \"x\" }\n",
                "the space character U+00A0",
            ),
        ] {
            let (_, d) = parse(src);
            assert!(
                d.iter()
                    .any(|d| d.message.ends_with(&format!("found {want}"))),
                "{src:?}: {d:?}"
            );
        }
    }

    #[test]
    fn recovers_at_item_boundaries() {
        let src =
            "task a { prompt = }\ntask b { prompt = \"x\" }\ngate g = \ntask c { run = \"y\" }\n";
        let (f, d) = parse(src);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(f.items.len(), 4, "{:#?}", f.items);
        assert!(matches!(f.items[1], Item::Task(_)));
        assert!(matches!(f.items[3], Item::Task(_)), "{:#?} {d:#?}", f.items);
    }

    #[test]
    fn comments_skip_strings() {
        let src = "# a\nx = \"#no\" # b\n\"\"\"\n# no\n\"\"\"";
        let c: Vec<&str> = comments(src).iter().map(|s| &src[s.range()]).collect();
        assert_eq!(c, ["# a", "# b"]);
    }
}
