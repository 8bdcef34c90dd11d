//! REEL JSON specs (`*.json`).
//!
//! ```json
//! {
//!   "name": "auth-refactor",
//!   "tasks": [
//!     {"id": "a1b2c3d4", "title": "Extract session manager",
//!      "description": "Move session handling …",
//!      "acceptance": "pytest -q tests/test_session.py",
//!      "depends_on": []}
//!   ]
//! }
//! ```
//!
//! A bare array of tasks is accepted too. `title` is optional (without one
//! the task has no title). Other keys are ignored, except a key that looks
//! like a misspelled one (`depends-on`, `acceptence`), which is E0002 so that
//! a dependency is never dropped silently.
//!
//! The reader is a small JSON parser that keeps the byte span of every value,
//! so that diagnostics point at the value they are about.

use super::{Located, Spec, SpecTask};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;

/// A JSON value with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where it was written.
    pub span: Span,
}

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string, escapes decoded.
    String(String),
    /// An array.
    Array(Vec<Node>),
    /// An object's members in source order (duplicates kept).
    Object(Vec<Member>),
}

impl Value {
    fn describe(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// `"key": value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// The decoded key.
    pub key: String,
    /// Where the key was written (with its quotes).
    pub key_span: Span,
    /// The value.
    pub value: Node,
}

const MAX_DEPTH: usize = 128;

/// Parses one JSON document (RFC 8259), keeping spans.
///
/// Errors: E0001 at the first byte that is not valid JSON.
pub fn parse_document(source: &str) -> Result<Node, Diagnostic> {
    let start = if source.starts_with('\u{feff}') { 3 } else { 0 };
    let mut p = Parser {
        src: source,
        pos: start,
        depth: 0,
    };
    p.ws();
    let node = p.value()?;
    p.ws();
    if p.pos < source.len() {
        return Err(p.error("the end of the document"));
    }
    Ok(node)
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn found(&self) -> (String, Span) {
        match self.src.get(self.pos..).and_then(|r| r.chars().next()) {
            None => ("the end of the file".to_string(), Span::at(self.pos)),
            Some(c) if c.is_control() => (
                format!("`{}`", c.escape_debug()),
                Span::new(self.pos, self.pos + c.len_utf8()),
            ),
            Some(c) => (
                format!("`{c}`"),
                Span::new(self.pos, self.pos + c.len_utf8()),
            ),
        }
    }

    fn error(&self, expected: &str) -> Diagnostic {
        let (found, span) = self.found();
        Diagnostic::new(
            Code::E0001,
            format!("invalid JSON: expected {expected}, found {found}"),
            span,
            format!("expected {expected}"),
        )
    }

    fn value(&mut self) -> Result<Node, Diagnostic> {
        let start = self.pos;
        let value = match self.peek() {
            Some(b'{') => self.nested(Parser::object)?,
            Some(b'[') => self.nested(Parser::array)?,
            Some(b'"') => Value::String(self.string()?),
            Some(b't') => self.word("true", Value::Bool(true))?,
            Some(b'f') => self.word("false", Value::Bool(false))?,
            Some(b'n') => self.word("null", Value::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            _ => return Err(self.error("a value")),
        };
        Ok(Node {
            value,
            span: Span::new(start, self.pos),
        })
    }

    fn nested(
        &mut self,
        f: fn(&mut Self) -> Result<Value, Diagnostic>,
    ) -> Result<Value, Diagnostic> {
        if self.depth >= MAX_DEPTH {
            return Err(Diagnostic::new(
                Code::E0001,
                "invalid JSON: nested too deeply",
                Span::new(self.pos, self.pos + 1),
                format!("more than {MAX_DEPTH} levels of arrays and objects"),
            ));
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn word(&mut self, word: &str, value: Value) -> Result<Value, Diagnostic> {
        if self.src[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("a value"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value, Diagnostic> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else if self.digits() == 0 {
            return Err(self.error("a digit"));
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.error("a digit"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("a digit"));
            }
        }
        Ok(Value::Number(self.src[start..self.pos].to_string()))
    }

    fn hex4(&mut self) -> Result<u32, Diagnostic> {
        let digits = self.src.get(self.pos..self.pos + 4).unwrap_or("");
        match u32::from_str_radix(digits, 16) {
            Ok(v) if digits.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.pos += 4;
                Ok(v)
            }
            _ => Err(self.error("4 hex digits")),
        }
    }

    fn string(&mut self) -> Result<String, Diagnostic> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.src[self.pos..];
            let Some(c) = rest.chars().next() else {
                return Err(Diagnostic::new(
                    Code::E0001,
                    "invalid JSON: unterminated string",
                    Span::new(open, open + 1),
                    "this string is never closed",
                ));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\\' => {
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error("an escape"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let at = self.pos - 2;
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi)
                                && self.src[self.pos..].starts_with("\\u")
                            {
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    u32::MAX
                                }
                            } else {
                                hi
                            };
                            match char::from_u32(code) {
                                Some(ch) => out.push(ch),
                                None => {
                                    return Err(Diagnostic::new(
                                        Code::E0001,
                                        "invalid JSON: a `\\u` escape that is not a character",
                                        Span::new(at, self.pos),
                                        "lone surrogate",
                                    ));
                                }
                            }
                        }
                        _ => {
                            self.pos -= 1;
                            return Err(self.error(
                                "one of the escapes `\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u`",
                            ));
                        }
                    }
                }
                c if (c as u32) < 0x20 => {
                    return Err(
                        self.error("a character or an escape (control characters must be escaped)")
                    );
                }
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn array(&mut self) -> Result<Value, Diagnostic> {
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.ws();
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("`,` or `]`")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, Diagnostic> {
        self.pos += 1;
        let mut members = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("a key in double quotes"));
            }
            let key_start = self.pos;
            let key = self.string()?;
            let key_span = Span::new(key_start, self.pos);
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.error("`:`"));
            }
            self.pos += 1;
            self.ws();
            let value = self.value()?;
            members.push(Member {
                key,
                key_span,
                value,
            });
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("`,` or `}`")),
            }
        }
    }
}

const TASK_KEYS: [&str; 5] = ["id", "title", "description", "acceptance", "depends_on"];

/// Reads a JSON spec. Diagnostics: E0001 for invalid JSON, E0002 for a key
/// that looks like a misspelled task key, E0003 for a key given twice, E0007
/// for a value of the wrong type, E0008 for a missing `tasks`, `id` or
/// `acceptance`.
pub fn parse(source: &str) -> (Spec, Vec<Diagnostic>) {
    let mut spec = Spec::default();
    let mut diags = Vec::new();
    let root = match parse_document(source) {
        Ok(n) => n,
        Err(d) => {
            diags.push(d.with_note("a REEL JSON spec is {\"name\": …, \"tasks\": [{\"id\", \"description\", \"acceptance\", \"depends_on\"}]}"));
            return (spec, diags);
        }
    };
    let tasks = match &root.value {
        Value::Array(items) => items.as_slice(),
        Value::Object(members) => {
            let m = fields(members, &[], &mut diags);
            if let Some(n) = m.get("name") {
                if let Value::String(s) = &n.value {
                    spec.name = Some(Located::new(s.clone(), n.span));
                } else {
                    diags.push(wrong_type("name", "a string", n));
                }
            }
            match m.get("tasks") {
                Some(Node {
                    value: Value::Array(items),
                    ..
                }) => items.as_slice(),
                Some(other) => {
                    diags.push(wrong_type("tasks", "an array of tasks", other));
                    &[]
                }
                None => {
                    diags.push(
                        Diagnostic::new(
                            Code::E0008,
                            "the spec has no `tasks`",
                            Span::new(root.span.start, root.span.start + 1),
                            "this object has no `tasks` key",
                        )
                        .with_note("a REEL JSON spec is {\"name\": …, \"tasks\": [ … ]}"),
                    );
                    &[]
                }
            }
        }
        other => {
            diags.push(
                Diagnostic::new(
                    Code::E0007,
                    format!(
                        "expected an object with `tasks`, found {}",
                        other.describe()
                    ),
                    root.span,
                    "not a REEL spec",
                )
                .with_note("a REEL JSON spec is {\"name\": …, \"tasks\": [ … ]}"),
            );
            &[]
        }
    };
    for node in tasks {
        if let Some(t) = task(node, &mut diags) {
            spec.tasks.push(t);
        }
    }
    (spec, diags)
}

/// The members of an object by key; E0003 for repeated keys, and E0002 for
/// unknown keys close to one of `known` (when `known` is not empty).
fn fields<'a>(
    members: &'a [Member],
    known: &[&str],
    diags: &mut Vec<Diagnostic>,
) -> std::collections::HashMap<&'a str, &'a Node> {
    let mut seen: std::collections::HashMap<&str, (&Node, Span)> = Default::default();
    for m in members {
        if let Some((_, first)) = seen.get(m.key.as_str()) {
            diags.push(
                Diagnostic::new(
                    Code::E0003,
                    format!("key `{}` is given twice", m.key),
                    m.key_span,
                    "second one",
                )
                .with_label(*first, "first one here"),
            );
            continue;
        }
        if !known.is_empty()
            && !known.contains(&m.key.as_str())
            && let Some(s) = crate::check::names::suggest(&m.key, known.iter().copied())
        {
            diags.push(
                Diagnostic::new(
                    Code::E0002,
                    format!("unknown task key `{}`", m.key),
                    m.key_span,
                    format!("did you mean `{s}`?"),
                )
                .with_note(format!("a task takes {}", known.join(", "))),
            );
        }
        seen.insert(&m.key, (&m.value, m.key_span));
    }
    seen.into_iter().map(|(k, (v, _))| (k, v)).collect()
}

fn wrong_type(key: &str, expected: &str, node: &Node) -> Diagnostic {
    Diagnostic::new(
        Code::E0007,
        format!(
            "`{key}` must be {expected}, found {}",
            node.value.describe()
        ),
        node.span,
        format!("expected {expected}"),
    )
}

fn string(key: &str, node: Option<&&Node>, diags: &mut Vec<Diagnostic>) -> Option<Located> {
    let node = node?;
    match &node.value {
        Value::String(s) => Some(Located::new(s.clone(), node.span)),
        _ => {
            diags.push(wrong_type(key, "a string", node));
            None
        }
    }
}

fn task(node: &Node, diags: &mut Vec<Diagnostic>) -> Option<SpecTask> {
    let Value::Object(members) = &node.value else {
        diags.push(wrong_type("a task", "an object", node));
        return None;
    };
    let open = Span::new(node.span.start, node.span.start + 1);
    let mut m = fields(members, &TASK_KEYS, diags);
    // `null` is what many generators write for "none": the same as no key.
    m.retain(|_, v| v.value != Value::Null);
    let Some(id) = string("id", m.get("id"), diags) else {
        if !m.contains_key("id") {
            diags.push(
                Diagnostic::new(
                    Code::E0008,
                    "a task has no `id`",
                    open,
                    "this task has no `id`",
                )
                .with_note("every REEL task has an 8-hex id; `loopc id` prints an unused one"),
            );
        }
        return None;
    };
    let title = string("title", m.get("title"), diags).filter(|t| !t.text.trim().is_empty());
    let description =
        string("description", m.get("description"), diags).filter(|d| !d.text.trim().is_empty());
    let acceptance = match string("acceptance", m.get("acceptance"), diags) {
        Some(a) if a.text.trim().is_empty() => {
            diags.push(
                Diagnostic::new(
                    Code::E0008,
                    format!("task `{}` has an empty acceptance command", id.text),
                    a.span,
                    "empty command",
                )
                .with_note(
                    "give the command that checks the task, e.g. \"pytest -q tests/test_x.py\"",
                ),
            );
            None
        }
        Some(a) => Some(a),
        None => {
            if !m.contains_key("acceptance") {
                diags.push(super::missing_acceptance(
                    &id.text,
                    id.span,
                    "add \"acceptance\": \"COMMAND\" to the task",
                ));
            }
            None
        }
    };
    let mut depends_on = Vec::new();
    match m.get("depends_on") {
        None => {}
        Some(Node {
            value: Value::Array(items),
            ..
        }) => {
            for item in items {
                match &item.value {
                    Value::String(s) => depends_on.push(Located::new(s.clone(), item.span)),
                    _ => diags.push(wrong_type("depends_on", "an array of ids (strings)", item)),
                }
            }
        }
        Some(other) => diags.push(wrong_type("depends_on", "an array of ids", other)),
    }
    Some(SpecTask {
        header: id.span,
        id,
        generated_id: false,
        title,
        description,
        acceptance,
        depends_on,
        span: node.span,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_spans_of_values() {
        let src = r#"{"name": "x", "tasks": [{"id": "a1b2c3d4", "description": "d\u00e9\n", "acceptance": "make", "depends_on": ["b2c3d4e5"]}]}"#;
        let (spec, diags) = parse(src);
        assert!(diags.is_empty(), "{diags:?}");
        let t = &spec.tasks[0];
        assert_eq!(&src[t.id.span.range()], "\"a1b2c3d4\"");
        assert_eq!(t.description.as_ref().unwrap().text, "dé\n");
        assert_eq!(&src[t.depends_on[0].span.range()], "\"b2c3d4e5\"");
        assert_eq!(spec.name.unwrap().text, "x");
    }

    #[test]
    fn reports_invalid_json_where_it_is() {
        let src = "{\"tasks\": [\n  {\"id\": \"a1b2c3d4\",}\n]}";
        let (_, diags) = parse(src);
        assert_eq!(diags[0].code, Code::E0001);
        assert_eq!(&src[diags[0].primary.span.range()], "}");
        for bad in [
            "",
            "[",
            "\"\\u12",
            "{\"a\" 1}",
            "-",
            "1e",
            "[1,]",
            "\"\\ud800\\u0041\"",
        ] {
            assert!(parse_document(bad).is_err(), "{bad}");
        }
        let deep = "[".repeat(1000);
        assert!(parse_document(&deep).is_err());
    }

    #[test]
    fn a_misspelled_key_is_e0002_and_an_unknown_one_ignored() {
        let src = r#"[{"id": "a1b2c3d4", "acceptance": "x", "depends-on": [], "status": "todo"}]"#;
        let (_, diags) = parse(src);
        let codes: Vec<Code> = diags.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::E0002]);
        // `null` is no value: no dependencies, and a missing acceptance command.
        let src = r#"[{"id": "a1b2c3d4", "title": null, "acceptance": null, "depends_on": null}]"#;
        let (spec, diags) = parse(src);
        let codes: Vec<Code> = diags.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::E0008]);
        assert!(spec.tasks[0].depends_on.is_empty() && spec.tasks[0].title.is_none());
    }
}
