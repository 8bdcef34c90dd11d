//! The parser: pest grammar (`grammar/loop.pest`) → [`ast::File`] (spec §2, §3).
//!
//! It never fails. It parses one item at a time; when an item cannot be
//! parsed it reports E0001 (what was expected, what was found), records an
//! [`Item::Error`] and resumes at the next line that starts an item, so a file
//! with several independent mistakes gets one diagnostic for each. Literals are
//! decoded here; a bad literal is E0012 (or E0009 for an integer overflow) and
//! becomes [`ValueKind::Invalid`].

use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;
use pest::Parser;
use pest::iterators::Pair;
use std::time::Duration;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/loop.pest"]
struct LoopParser;

/// Item keywords, in the order used by messages.
pub const ITEM_KEYWORDS: [&str; 6] = ["task", "agent", "gate", "defaults", "budget", "loop"];

/// Parses `source` into a syntax tree and its syntax diagnostics
/// (E0001, E0009 for integer overflow, E0011 for bare ids, E0012).
pub fn parse(source: &str) -> (File, Vec<Diagnostic>) {
    let start = if source.starts_with('\u{FEFF}') { 3 } else { 0 };
    let (items, diagnostics) =
        parse_parallel(source, start).unwrap_or_else(|| parse_range(source, start, source.len()));
    let file = File {
        items,
        comments: comments(source),
    };
    (file, diagnostics)
}

/// Files at least this large (bytes) are parsed in chunks on several threads.
const PARALLEL_MIN: usize = 1 << 20;

/// Parses a large file in chunks that start at lines starting an item, one
/// chunk per rayon task. Any diagnostic in any chunk (a chunk boundary that
/// fell inside a block string shows as one) makes it give up, so that
/// `parse` falls back to the sequential parser: the result is always the
/// sequential parser's.
fn parse_parallel(source: &str, start: usize) -> Option<(Vec<Item>, Vec<Diagnostic>)> {
    use rayon::prelude::*;
    let threads = rayon::current_num_threads();
    if source.len() < PARALLEL_MIN || threads < 2 {
        return None;
    }
    let chunks = threads * 4;
    let mut bounds = vec![start];
    for k in 1..chunks {
        let b = recovery_point(source, source.len() * k / chunks);
        if bounds.last().is_some_and(|&last| b > last) && b < source.len() {
            bounds.push(b);
        }
    }
    bounds.push(source.len());
    let parts: Vec<(Vec<Item>, Vec<Diagnostic>)> = bounds
        .par_windows(2)
        .map(|w| parse_range(source, w[0], w[1]))
        .collect();
    if parts.iter().any(|(_, d)| !d.is_empty()) {
        return None;
    }
    Some((
        parts.into_iter().flat_map(|(items, _)| items).collect(),
        Vec::new(),
    ))
}

/// Parses the items of `source[start..end]` (`end` at an item boundary or
/// the end of the file), recovering at item boundaries.
fn parse_range(source: &str, start: usize, end: usize) -> (Vec<Item>, Vec<Diagnostic>) {
    let mut p = Lowering {
        diagnostics: Vec::new(),
        offset: 0,
    };
    let mut items = Vec::new();
    let mut pos = start;
    while pos < end {
        p.offset = pos;
        match LoopParser::parse(Rule::next_item, &source[pos..end]) {
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
                match unclosed_string(source, start, err_at) {
                    Some((open, true)) => p.diagnostics.push(
                        Diagnostic::new(
                            Code::E0012,
                            "unterminated block string",
                            Span::new(open, open + 3),
                            "this block string is never closed",
                        )
                        .with_note("close it with `\"\"\"` on a line of its own"),
                    ),
                    Some((open, false)) => p.diagnostics.push(
                        Diagnostic::new(
                            Code::E0012,
                            "unterminated string",
                            Span::new(open, open + 1),
                            "this string is never closed",
                        )
                        .with_note(
                            "a \"…\" string ends on its line: close it with `\"`, or use a block string (`\"\"\"`) for several lines",
                        ),
                    ),
                    None => p.diagnostics.push(syntax_error(source, err_at, &e)),
                }
                let resume = recovery_point(source, start + 1).min(end);
                items.push(Item::Error(Span::new(start, resume)));
                pos = resume;
            }
        }
    }
    (items, p.diagnostics)
}

/// The byte spans of every `#` comment in `source` (strings are skipped).
///
/// Used by the formatter to keep comments where they were.
pub fn comments(source: &str) -> Vec<Span> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
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
    let bytes = source.as_bytes();
    let end = end.min(source.len());
    let mut i = start;
    while i < end {
        match bytes[i] {
            b'#' => i = crate::span::line_end(source, i),
            b'"' if source[i..].starts_with("\"\"\"") => match source[i + 3..].find("\"\"\"") {
                Some(n) => i = i + 3 + n + 3,
                None => return Some((i, true)),
            },
            b'"' => {
                let open = i;
                i += 1;
                loop {
                    match bytes.get(i) {
                        None | Some(b'\n' | b'\r') => return Some((open, false)),
                        Some(b'"') => break,
                        Some(b'\\') => i += 2,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
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
            // `agent = claude` is a field of a task or of `defaults`; no other
            // item keyword is a field name, so `gate = "x"` is a broken item.
            Some(_) => *kw != "agent" || !rest.trim_start().starts_with('='),
        }
    })
}

/// Describes what a rule stands for in "expected …" messages.
fn describe(rule: Rule) -> &'static str {
    match rule {
        Rule::item | Rule::next_item => {
            "an item (`task`, `agent`, `gate`, `defaults`, `budget` or `loop`)"
        }
        Rule::kw_loop
        | Rule::kw_budget
        | Rule::kw_defaults
        | Rule::kw_agent
        | Rule::kw_gate
        | Rule::kw_task
        | Rule::loop_item
        | Rule::budget_item
        | Rule::defaults_item
        | Rule::agent_item
        | Rule::gate_item
        | Rule::task_item => "an item (`task`, `agent`, `gate`, `defaults`, `budget` or `loop`)",
        Rule::EOI => "end of file",
        Rule::name => "a name",
        Rule::field_name => "a field name",
        Rule::task_name | Rule::dependency | Rule::bad_bare_id => "a task name",
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

/// Builds the E0001 diagnostic for a pest error at absolute offset `at`.
fn syntax_error(source: &str, at: usize, e: &pest::error::Error<Rule>) -> Diagnostic {
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
    if expected.contains("`}`") && ITEM_KEYWORDS.iter().any(|k| found == format!("`{k}`")) {
        d = d.with_note("the block before this item is not closed: add `}`");
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
        d = d.with_note("fields are separated by whitespace only, not commas");
    }
    d
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
    (format!("`{c}`"), c.len_utf8())
}

struct Lowering {
    diagnostics: Vec<Diagnostic>,
    /// Absolute offset of the slice being parsed.
    offset: usize,
}

impl Lowering {
    fn span(&self, pair: &Pair<'_, Rule>) -> Span {
        let s = pair.as_span();
        Span::new(s.start(), s.end()).shift(self.offset)
    }

    fn item(&mut self, pair: Pair<'_, Rule>) -> Item {
        let span = self.span(&pair);
        let rule = pair.as_rule();
        let mut inner = pair.into_inner().peekable();
        let keyword = inner.next().map(|k| self.span(&k)).unwrap_or(span);
        match rule {
            Rule::loop_item => {
                let mut name = None;
                let mut block = None;
                for p in inner {
                    match p.as_rule() {
                        Rule::block => block = Some(self.block(p, span, keyword)),
                        _ => name = self.str_lit(p),
                    }
                }
                match block {
                    Some(block) => Item::Loop(LoopItem { name, block, span }),
                    None => Item::Error(span),
                }
            }
            Rule::budget_item | Rule::defaults_item => {
                let Some(b) = inner.next() else {
                    return Item::Error(span);
                };
                let block = self.block(b, span, keyword);
                if rule == Rule::budget_item {
                    Item::Budget(block)
                } else {
                    Item::Defaults(block)
                }
            }
            Rule::agent_item => {
                let (Some(n), Some(b)) = (inner.next(), inner.next()) else {
                    return Item::Error(span);
                };
                let name = self.ident(&n);
                let block = self.block(b, span, keyword);
                Item::Agent(AgentItem { name, block, span })
            }
            Rule::gate_item => {
                let Some(n) = inner.next() else {
                    return Item::Error(span);
                };
                let name = self.ident(&n);
                let body = match inner.next() {
                    Some(p) if p.as_rule() == Rule::eq => match inner.next() {
                        Some(v) => GateBody::Short(self.value(v)),
                        None => return Item::Error(span),
                    },
                    Some(b) => GateBody::Long(self.block(b, span, keyword)),
                    None => return Item::Error(span),
                };
                Item::Gate(GateItem {
                    name,
                    body,
                    span,
                    keyword,
                })
            }
            Rule::task_item => {
                let Some(n) = inner.next() else {
                    return Item::Error(span);
                };
                let name = self.task_name(n);
                let mut title = None;
                let mut dependencies = Vec::new();
                let mut block = None;
                for p in inner {
                    match p.as_rule() {
                        Rule::string | Rule::unterminated_string => title = self.str_lit(p),
                        Rule::colon => {}
                        Rule::dependency => {
                            if let Some(t) = p.into_inner().next() {
                                dependencies.push(self.task_name(t));
                            }
                        }
                        Rule::block => block = Some(self.block(p, span, keyword)),
                        _ => {}
                    }
                }
                match block {
                    Some(block) => Item::Task(TaskItem {
                        name,
                        title,
                        dependencies,
                        block,
                        span,
                    }),
                    None => Item::Error(span),
                }
            }
            _ => Item::Error(span),
        }
    }

    fn ident(&self, pair: &Pair<'_, Rule>) -> Ident {
        Ident {
            text: pair.as_str().to_string(),
            span: self.span(pair),
        }
    }

    fn task_name(&mut self, pair: Pair<'_, Rule>) -> TaskName {
        let span = self.span(&pair);
        let inner = pair.into_inner().next();
        match inner {
            Some(p) if p.as_rule() == Rule::name => TaskName {
                text: p.as_str().to_string(),
                span,
                quoted: false,
            },
            Some(p) if p.as_rule() == Rule::bad_bare_id => {
                let text = p.as_str().to_string();
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::E0011,
                        format!("invalid task name `{text}`: a bare name must start with a letter or `_`"),
                        span,
                        "write this name as a string",
                    )
                    .with_note(format!("quote ids that start with a digit: `\"{text}\"`")),
                );
                TaskName {
                    text,
                    span,
                    quoted: false,
                }
            }
            Some(p) => {
                let text = self.str_lit(p).map(|s| s.text).unwrap_or_default();
                TaskName {
                    text,
                    span,
                    quoted: true,
                }
            }
            None => TaskName {
                text: String::new(),
                span,
                quoted: false,
            },
        }
    }

    /// A `string` or `unterminated_string` pair as a string literal
    /// (`None` when it could not be decoded; the diagnostic is reported).
    fn str_lit(&mut self, pair: Pair<'_, Rule>) -> Option<StrLit> {
        let span = self.span(&pair);
        let v = self.value_inner(pair, span);
        match v {
            ValueKind::String(text) | ValueKind::BlockString(text) => Some(StrLit { text, span }),
            _ => None,
        }
    }

    fn block(&mut self, pair: Pair<'_, Rule>, item: Span, keyword: Span) -> Block {
        let body = self.span(&pair);
        let mut fields = Vec::new();
        for f in pair.into_inner() {
            if f.as_rule() != Rule::field {
                continue;
            }
            let span = self.span(&f);
            let mut parts = f.into_inner();
            let (Some(n), Some(_eq), Some(v)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            let name = self.ident(&n);
            let value = self.value(v);
            fields.push(Field { name, value, span });
        }
        Block {
            span: item,
            keyword,
            body,
            fields,
        }
    }

    fn value(&mut self, pair: Pair<'_, Rule>) -> Value {
        let span = self.span(&pair);
        let kind = match pair.into_inner().next() {
            Some(inner) => self.value_inner(inner, span),
            None => ValueKind::Invalid,
        };
        Value { kind, span }
    }

    fn value_inner(&mut self, pair: Pair<'_, Rule>, span: Span) -> ValueKind {
        match pair.as_rule() {
            Rule::string => {
                let body = pair.into_inner().next();
                let (text, at) = match &body {
                    Some(b) => (b.as_str(), self.span(b).start),
                    None => ("", span.start + 1),
                };
                match self.unescape(text, at) {
                    Some(s) => ValueKind::String(s),
                    None => ValueKind::Invalid,
                }
            }
            Rule::unterminated_string | Rule::unterminated_block => {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::E0012,
                        "unterminated string",
                        Span::new(span.start, span.start + 1),
                        "this string is never closed",
                    )
                    .with_note(
                        "a \"…\" string ends on its line: close it with `\"`, or use a block string (`\"\"\"`) for several lines",
                    ),
                );
                ValueKind::Invalid
            }
            Rule::block_string => {
                let body = pair.into_inner().next();
                let text = body.as_ref().map_or("", |b| b.as_str());
                match block_string(text) {
                    Some(s) => ValueKind::BlockString(s),
                    None => {
                        self.diagnostics.push(
                            Diagnostic::new(
                                Code::E0012,
                                "a block string must start with a line break after `\"\"\"`",
                                Span::new(span.start, span.start + 3),
                                "start the text on the next line",
                            )
                            .with_note("for a one-line string, use `\"…\"`"),
                        );
                        ValueKind::Invalid
                    }
                }
            }
            Rule::integer => self.integer(pair.as_str(), span),
            Rule::duration => self.duration(pair.as_str(), span),
            Rule::money => self.money(pair.as_str(), span),
            Rule::bad_number => {
                let text = pair.as_str();
                let d = if text.starts_with('-') {
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
                };
                self.diagnostics.push(d);
                ValueKind::Invalid
            }
            Rule::name => match pair.as_str() {
                "true" => ValueKind::Bool(true),
                "false" => ValueKind::Bool(false),
                s => ValueKind::Name(s.to_string()),
            },
            Rule::list => {
                let mut items = Vec::new();
                for p in pair.into_inner() {
                    if p.as_rule() == Rule::scalar {
                        items.push(self.value(p));
                    }
                }
                ValueKind::List(items)
            }
            Rule::map => {
                let mut entries = Vec::new();
                for p in pair.into_inner() {
                    if p.as_rule() != Rule::map_entry {
                        continue;
                    }
                    let mut parts = p.into_inner();
                    let (Some(k), Some(_eq), Some(v)) = (parts.next(), parts.next(), parts.next())
                    else {
                        continue;
                    };
                    let key = self.ident(&k);
                    let value = self.value(v);
                    entries.push(MapEntry { key, value });
                }
                ValueKind::Map(entries)
            }
            _ => ValueKind::Invalid,
        }
    }

    /// Decodes the escapes of a string body starting at absolute offset `at`.
    fn unescape(&mut self, body: &str, at: usize) -> Option<String> {
        if !body.contains('\\') {
            return Some(body.to_string());
        }
        let mut out = String::with_capacity(body.len());
        let mut ok = true;
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
                            self.diagnostics.push(
                                Diagnostic::new(
                                    Code::E0012,
                                    "invalid unicode escape",
                                    Span::new(at + i, at + end),
                                    "not a valid `\\u{…}` escape",
                                )
                                .with_note("write a Unicode scalar value in hex: `\\u{1F600}`"),
                            );
                            ok = false;
                        }
                    }
                }
                other => {
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::E0012,
                            format!("unknown escape `\\{}`", other.escape_debug()),
                            Span::new(at + i, at + i + 1 + other.len_utf8()),
                            "unknown escape",
                        )
                        .with_note(
                            "valid escapes are \\\\ \\\" \\n \\r \\t \\0 and \\u{…}; for backslashes use `\\\\` or a block string",
                        ),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    fn integer(&mut self, text: &str, span: Span) -> ValueKind {
        let digits: String = text.chars().filter(|c| *c != '_').collect();
        match digits.parse::<u32>() {
            Ok(v) => ValueKind::Integer(v),
            Err(_) => {
                self.diagnostics.push(Diagnostic::new(
                    Code::E0009,
                    format!("integer `{text}` is too large"),
                    span,
                    format!("the largest integer is {}", u32::MAX),
                ));
                ValueKind::Invalid
            }
        }
    }

    fn duration(&mut self, text: &str, span: Span) -> ValueKind {
        let mut total: u128 = 0;
        let mut rest = text;
        let mut at = span.start;
        while !rest.is_empty() {
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
                self.diagnostics.push(
                    Diagnostic::new(Code::E0012, msg, span, label).with_note(
                        "a duration is one or more <integer><unit>, e.g. `90s`, `1h30m`",
                    ),
                );
                return ValueKind::Invalid;
            }
            let unit_span = Span::new(at + digits_len, at + digits_len + unit_len);
            let millis: u128 = match unit {
                "ms" => 1,
                "s" => 1_000,
                "m" => 60_000,
                "h" => 3_600_000,
                "d" => 86_400_000,
                _ => {
                    let suggestion = match unit {
                        "sec" | "secs" | "second" | "seconds" => " (did you mean `s`?)",
                        "min" | "mins" | "minute" | "minutes" => " (did you mean `m`?)",
                        "hr" | "hrs" | "hour" | "hours" => " (did you mean `h`?)",
                        "day" | "days" => " (did you mean `d`?)",
                        _ => "",
                    };
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::E0012,
                            format!("unknown duration unit `{unit}`{suggestion}"),
                            unit_span,
                            "unknown unit",
                        )
                        .with_note("duration units are ms, s, m, h and d"),
                    );
                    return ValueKind::Invalid;
                }
            };
            let n: u128 = digits
                .chars()
                .filter(|c| *c != '_')
                .collect::<String>()
                .parse()
                .unwrap_or(u128::MAX);
            total = total.saturating_add(n.saturating_mul(millis));
            at += digits_len + unit_len;
            rest = &after[unit_len..];
        }
        match u64::try_from(total) {
            Ok(ms) if ms <= u64::MAX / 1_000 => ValueKind::Duration(Duration::from_millis(ms)),
            _ => {
                self.diagnostics.push(Diagnostic::new(
                    Code::E0009,
                    format!("duration `{text}` is too long"),
                    span,
                    "out of range",
                ));
                ValueKind::Invalid
            }
        }
    }

    fn money(&mut self, text: &str, span: Span) -> ValueKind {
        let body = &text[1..];
        if body.chars().any(|c| !(c.is_ascii_digit() || c == '.')) || body.matches('.').count() > 1
        {
            self.diagnostics.push(
                Diagnostic::new(
                    Code::E0012,
                    format!("invalid amount `{text}`"),
                    span,
                    "invalid amount",
                )
                .with_note("money is `$` + dollars, optionally `.` + 1 to 6 digits: `$0.50`"),
            );
            return ValueKind::Invalid;
        }
        let (whole, frac) = match body.split_once('.') {
            Some((w, f)) => (w, Some(f)),
            None => (body, None),
        };
        if let Some(f) = frac
            && (f.is_empty() || f.len() > 6)
        {
            let msg = if f.is_empty() {
                format!("invalid amount `{text}`: expected digits after `.`")
            } else {
                format!("invalid amount `{text}`: more than 6 decimal places")
            };
            self.diagnostics.push(
                Diagnostic::new(Code::E0012, msg, span, "invalid amount")
                    .with_note("money is `$` + dollars, optionally `.` + 1 to 6 digits: `$0.50`"),
            );
            return ValueKind::Invalid;
        }
        let frac_micros = frac.map_or(0u64, |f| {
            let padded = format!("{f:0<6}");
            padded.parse().unwrap_or(0)
        });
        let whole = whole.parse::<u64>().ok();
        match whole
            .and_then(|w| w.checked_mul(1_000_000))
            .and_then(|w| w.checked_add(frac_micros))
        {
            Some(m) => ValueKind::Money(m),
            None => {
                self.diagnostics.push(Diagnostic::new(
                    Code::E0009,
                    format!("amount `{text}` is too large"),
                    span,
                    "out of range",
                ));
                ValueKind::Invalid
            }
        }
    }
}

/// Applies §2's block-string rules to the text between the quotes; `None`
/// when it does not start with a line break.
fn block_string(raw: &str) -> Option<String> {
    let raw = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))?;
    let normalized = raw.replace("\r\n", "\n");
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
    let out: Vec<&str> = lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                ""
            } else {
                &l[indent.len()..]
            }
        })
        .collect();
    Some(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_string_dedents_and_drops_last_line() {
        assert_eq!(
            block_string("\n      a\n        b\n\n      c\n      ").as_deref(),
            Some("a\n  b\n\nc")
        );
        assert_eq!(block_string("\r\n  x\r\n  ").as_deref(), Some("x"));
        assert_eq!(block_string("x\n"), None);
    }

    #[test]
    fn literals_decode() {
        let (f, d) = parse(
            "budget { time = 1h30m cost = $0.000125 iterations = 1_000 }\nagent a { run = \"x\\u{1F600}\\n\" }",
        );
        assert!(d.is_empty(), "{d:?}");
        let Item::Budget(b) = &f.items[0] else {
            panic!()
        };
        assert_eq!(
            b.fields[0].value.kind,
            ValueKind::Duration(Duration::from_secs(5400))
        );
        assert_eq!(b.fields[1].value.kind, ValueKind::Money(125));
        assert_eq!(b.fields[2].value.kind, ValueKind::Integer(1000));
        let Item::Agent(a) = &f.items[1] else {
            panic!()
        };
        assert_eq!(
            a.block.fields[0].value.kind,
            ValueKind::String("x😀\n".into())
        );
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
    fn parallel_parsing_gives_the_sequential_tree_or_declines() {
        let plan = |inner: &str| {
            let mut src = String::new();
            for i in 0..20_000 {
                src.push_str(&format!(
                    "# task {i}\ntask t{i} \"T {i}\" {{\n  prompt = \"\"\"\n      {inner}\n      \"\"\"\n  inputs = [\"src/**\"]\n}}\n"
                ));
            }
            src
        };
        // A clean file is parsed in parallel, item for item the same.
        let clean = plan("Do the work.");
        assert!(clean.len() >= PARALLEL_MIN);
        let sequential = parse_range(&clean, 0, clean.len());
        assert!(sequential.1.is_empty());
        if rayon::current_num_threads() >= 2 {
            let (items, diags) = parse_parallel(&clean, 0).expect("parsed in parallel");
            assert!(diags.is_empty());
            assert_eq!(items, sequential.0);
        }
        assert_eq!(parse(&clean).0.items, sequential.0);
        // Lines inside block strings that look like items can be chosen as
        // chunk boundaries; a chunk then reports errors and parsing falls
        // back to the sequential parser.
        let tricky = plan("task x { inside a block string }");
        assert!(parse_parallel(&tricky, 0).is_none());
        let sequential = parse_range(&tricky, 0, tricky.len());
        assert!(sequential.1.is_empty());
        assert_eq!(parse(&tricky).0.items, sequential.0);
    }

    #[test]
    fn comments_skip_strings() {
        let src = "# a\nx = \"#no\" # b\n\"\"\"\n# no\n\"\"\"";
        let c: Vec<&str> = comments(src).iter().map(|s| &src[s.range()]).collect();
        assert_eq!(c, ["# a", "# b"]);
    }
}
