//! The canonical layout printer (see `docs/fmt.md`).
//!
//! It walks a syntax tree that parsed without diagnostics and writes every
//! token from the tree, copying literals verbatim from the source (so escapes
//! and number spellings never change), except block strings, which are
//! re-indented from their decoded text. Comments are taken from
//! [`ast::File::comments`] in source order and emitted where they belong:
//!
//! - an *own-line* comment (only whitespace before it on its line) goes on a
//!   line of its own before the next item, field, list element, map entry or
//!   closing bracket, at that element's indentation;
//! - a *trailing* comment (code before it on its line) stays at the end of the
//!   output line of the element it followed;
//! - a comment inside a construct that is printed on one line (an item
//!   header such as `task a # x` + newline + `: b {`, or between a field's `=`
//!   and its value) is moved to its own line just before that construct.
//!
//! All offsets here are byte offsets into the source.

use crate::ast::{Block, Field, File, GateBody, Item, MapEntry, Value, ValueKind};
use crate::span::Span;
use crate::syntax::literal;

/// Lists and maps are printed on one line when they contain no comment and
/// no multi-line value, and the line (from the start of its indentation to
/// the closing bracket) is at most this many characters long.
pub const MAX_WIDTH: usize = 100;

/// One indentation level, in spaces.
const INDENT: usize = 2;

/// Prints `file`, parsed from `source`, in the canonical layout.
pub fn print(source: &str, file: &File) -> String {
    let mut p = Printer {
        src: source,
        comments: file.comments.clone(),
        next: 0,
        out: String::with_capacity(source.len() + source.len() / 8),
        prev_end: None,
    };
    p.file(file);
    p.finish()
}

struct Printer<'a> {
    src: &'a str,
    /// Every comment span, in source order.
    comments: Vec<Span>,
    /// Index of the first comment not yet printed.
    next: usize,
    out: String,
    /// End offset of the last source element printed in the current sequence
    /// (items, fields, list elements…); `None` right after an opening bracket,
    /// where no blank line is kept.
    prev_end: Option<usize>,
}

impl Printer<'_> {
    fn finish(mut self) -> String {
        while self.out.ends_with('\n') || self.out.ends_with(' ') {
            self.out.pop();
        }
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out
    }

    fn text(&self, span: Span) -> &str {
        self.src
            .get(span.start.min(self.src.len())..span.end.min(self.src.len()))
            .unwrap_or("")
    }

    /// The comment's text without trailing whitespace.
    fn comment_text(&self, span: Span) -> String {
        self.text(span).trim_end().to_string()
    }

    fn pending(&self) -> Option<Span> {
        self.comments.get(self.next).copied()
    }

    /// Whether the source between `from` and `to` contains an empty line.
    fn blank_between(&self, from: usize, to: usize) -> bool {
        if from >= to {
            return false;
        }
        let mut newlines = 0;
        let mut chars = self.text(Span::new(from, to)).chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                // A line ends at `\n`, `\r\n` or a lone `\r`.
                '\r' if chars.peek() == Some(&'\n') => {}
                '\n' | '\r' => {
                    newlines += 1;
                    if newlines >= 2 {
                        return true;
                    }
                }
                ' ' | '\t' => {}
                _ => newlines = 0,
            }
        }
        false
    }

    /// Makes the output end with an empty line (unless it is empty).
    fn blank_line(&mut self) {
        if self.out.is_empty() {
            return;
        }
        self.end_line();
        if !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }

    /// Ends the current output line, if one is open.
    fn end_line(&mut self) {
        while self.out.ends_with(' ') {
            self.out.pop();
        }
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }

    fn indent(&mut self, n: usize) {
        for _ in 0..n {
            self.out.push(' ');
        }
    }

    /// Keeps one blank line before an element starting at `start` when the
    /// source had one since the previous element of the sequence.
    fn start_element(&mut self, start: usize) {
        if let Some(p) = self.prev_end
            && self.blank_between(p, start)
        {
            self.blank_line();
        }
    }

    /// Prints every pending comment that starts before `before` on its own
    /// line at `indent`, keeping blank lines between them as in the source.
    fn comments_before(&mut self, before: usize, indent: usize) {
        while let Some(c) = self.pending() {
            if c.start >= before {
                break;
            }
            self.start_element(c.start);
            self.end_line();
            self.indent(indent);
            let t = self.comment_text(c);
            self.out.push_str(&t);
            self.out.push('\n');
            self.next += 1;
            self.prev_end = Some(c.end);
        }
    }

    /// Prints the comments inside a construct printed on one line (they
    /// start before `before`) on their own lines, without blank lines.
    fn hoist(&mut self, before: usize, indent: usize) {
        let saved = self.prev_end.take();
        self.comments_before(before, indent);
        self.prev_end = saved;
    }

    /// Appends a comment that follows `after` on the same source line and
    /// starts before `limit` (the next element) to the current output line.
    fn trailing(&mut self, after: usize, limit: usize) {
        let Some(c) = self.pending() else { return };
        if c.start < after || c.start >= limit {
            return;
        }
        if self.text(Span::new(after, c.start)).contains(['\n', '\r']) {
            return;
        }
        let t = self.comment_text(c);
        self.out.push(' ');
        self.out.push_str(&t);
        self.next += 1;
        self.prev_end = Some(c.end);
    }

    /// Whether a comment starts inside `span`.
    fn has_comment_in(&self, span: Span) -> bool {
        self.comments
            .get(self.next..)
            .unwrap_or_default()
            .iter()
            .any(|c| c.start >= span.start && c.start < span.end)
    }

    fn file(&mut self, file: &File) {
        let mut prev: Option<&Item> = None;
        for (i, item) in file.items.iter().enumerate() {
            let start = item.span().start;
            if let Some(p) = prev {
                let first = self.pending().map_or(start, |c| c.start.min(start));
                let grouped = is_short_gate(p)
                    && is_short_gate(item)
                    && !self
                        .prev_end
                        .is_some_and(|end| self.blank_between(end, first));
                if !grouped {
                    self.blank_line();
                }
            }
            self.comments_before(start, 0);
            self.start_element(start);
            let next_start = file
                .items
                .get(i + 1)
                .map_or(self.src.len(), |n| n.span().start);
            self.item(item, next_start);
            prev = Some(item);
        }
        self.comments_before(usize::MAX, 0);
    }

    fn item(&mut self, item: &Item, limit: usize) {
        match item {
            Item::Loop(l) => {
                let header = match &l.name {
                    Some(n) => format!("loop {}", self.text(n.span)),
                    None => "loop".to_string(),
                };
                self.block_item(&header, &l.block, limit);
            }
            Item::Budget(b) => self.block_item("budget", b, limit),
            Item::Defaults(b) => self.block_item("defaults", b, limit),
            Item::Agent(a) => {
                let header = format!("agent {}", self.text(a.name.span));
                self.block_item(&header, &a.block, limit);
            }
            Item::Executor(e) => {
                let header = format!("executor {}", self.text(e.name.span));
                self.block_item(&header, &e.block, limit);
            }
            Item::Gate(g) => match &g.body {
                GateBody::Long(b) => {
                    let header = format!("gate {}", self.text(g.name.span));
                    self.block_item(&header, b, limit);
                }
                GateBody::Short(v) => {
                    self.hoist(v.span.start, 0);
                    self.end_line();
                    let head = format!("gate {} = ", self.text(g.name.span));
                    self.out.push_str(&head);
                    self.value(v, 0, head.chars().count());
                    self.prev_end = Some(g.span.end);
                    self.trailing(g.span.end, limit);
                    self.end_line();
                }
            },
            Item::Task(t) => {
                let mut header = format!("task {}", self.text(t.name.span));
                if let Some(title) = &t.title {
                    header.push(' ');
                    header.push_str(self.text(title.span));
                }
                if !t.dependencies.is_empty() {
                    header.push(':');
                    for d in &t.dependencies {
                        header.push(' ');
                        header.push_str(self.text(d.span));
                    }
                }
                self.block_item(&header, &t.block, limit);
            }
            Item::Error(crate::ast::Unparsed { span, .. }) => {
                // Not reached: files with syntax errors are not formatted.
                // Kept verbatim so that nothing is ever lost.
                self.hoist(span.start, 0);
                self.end_line();
                let t = self.text(*span).trim_end().to_string();
                self.out.push_str(&t);
                self.prev_end = Some(span.end);
                self.end_line();
                while self.pending().is_some_and(|c| c.start < span.end) {
                    self.next += 1;
                }
            }
        }
    }

    /// An item made of a header and a `{ field* }` block, at indentation 0.
    fn block_item(&mut self, header: &str, block: &Block, limit: usize) {
        let open = block.body.start;
        let close = block.body.end.saturating_sub(1);
        self.hoist(open, 0);
        self.end_line();
        self.out.push_str(header);
        self.out.push_str(" {");
        self.block_body(block.fields.as_slice(), open, close, 0);
        self.prev_end = Some(block.body.end);
        self.trailing(block.body.end, limit);
        self.end_line();
    }

    /// The fields of a block whose `{` is at `open` and `}` at `close`; the
    /// `{` is already printed, the `}` is printed here at `indent`.
    fn block_body(&mut self, fields: &[Field], open: usize, close: usize, indent: usize) {
        if fields.is_empty() && !self.has_comment_in(Span::new(open, close)) {
            self.out.push('}');
            return;
        }
        let first = fields.first().map_or(close, |f| f.span.start);
        self.trailing(open + 1, first);
        self.end_line();
        self.prev_end = None;
        let inner = indent + INDENT;
        let width = fields
            .iter()
            .map(|f| f.name.text.chars().count())
            .max()
            .unwrap_or(0);
        for (i, f) in fields.iter().enumerate() {
            self.comments_before(f.span.start, inner);
            self.start_element(f.span.start);
            self.hoist(f.value.span.start, inner);
            self.end_line();
            self.indent(inner);
            self.out.push_str(&f.name.text);
            let pad = width - f.name.text.chars().count();
            self.indent(pad);
            self.out.push_str(" = ");
            self.value(&f.value, inner, inner + width + 3);
            self.prev_end = Some(f.value.span.end);
            let next = fields.get(i + 1).map_or(close, |n| n.span.start);
            self.trailing(f.value.span.end, next);
            self.end_line();
        }
        self.comments_before(close, inner);
        self.end_line();
        self.indent(indent);
        self.out.push('}');
    }

    /// The one-line form of `v`, if it has one: no comment inside, no block
    /// string, no multi-line list or map.
    fn flat(&self, v: &Value) -> Option<String> {
        match &v.kind {
            ValueKind::BlockString(_) => None,
            ValueKind::List(items) => {
                if self.has_comment_in(v.span) {
                    return None;
                }
                let mut parts = Vec::with_capacity(items.len());
                for e in items {
                    let s = self.flat(e)?;
                    if s.contains('\n') {
                        return None;
                    }
                    parts.push(s);
                }
                Some(format!("[{}]", parts.join(", ")))
            }
            ValueKind::Map(entries) => {
                if self.has_comment_in(v.span) {
                    return None;
                }
                if entries.is_empty() {
                    return Some("{}".to_string());
                }
                let mut parts = Vec::with_capacity(entries.len());
                for e in entries {
                    let s = self.flat(&e.value)?;
                    if s.contains('\n') {
                        return None;
                    }
                    parts.push(format!("{} = {s}", e.key.text));
                }
                // Map entries are separated by whitespace (docs/language.md), two spaces
                // on one line so that entries stand apart.
                Some(format!("{{ {} }}", parts.join("  ")))
            }
            _ => Some(self.text(v.span).to_string()),
        }
    }

    /// Prints value `v` starting at output column `col` on a line indented
    /// by `indent`; multi-line forms put their contents at `indent + 2`.
    fn value(&mut self, v: &Value, indent: usize, col: usize) {
        match &v.kind {
            ValueKind::BlockString(text) => {
                // Two levels deeper than the line, as in the spec's examples.
                let block = literal::print_block_string(text, indent + 2 * INDENT);
                self.out.push_str(&block);
            }
            ValueKind::List(items) => {
                if let Some(s) = self.flat(v)
                    && col + s.chars().count() <= MAX_WIDTH
                {
                    self.out.push_str(&s);
                    return;
                }
                self.out.push('[');
                let close = v.span.end.saturating_sub(1);
                let first = items.first().map_or(close, |e| e.span.start);
                self.trailing(v.span.start + 1, first);
                self.end_line();
                self.prev_end = None;
                let inner = indent + INDENT;
                for (i, e) in items.iter().enumerate() {
                    self.comments_before(e.span.start, inner);
                    self.start_element(e.span.start);
                    self.end_line();
                    self.indent(inner);
                    self.value(e, inner, inner);
                    self.out.push(',');
                    self.prev_end = Some(e.span.end);
                    let next = items.get(i + 1).map_or(close, |n| n.span.start);
                    self.trailing(e.span.end, next);
                    self.end_line();
                }
                self.comments_before(close, inner);
                self.end_line();
                self.indent(indent);
                self.out.push(']');
            }
            ValueKind::Map(entries) => {
                if let Some(s) = self.flat(v)
                    && col + s.chars().count() <= MAX_WIDTH
                {
                    self.out.push_str(&s);
                    return;
                }
                self.out.push('{');
                let close = v.span.end.saturating_sub(1);
                let first = entries.first().map_or(close, |e| e.key.span.start);
                self.trailing(v.span.start + 1, first);
                self.end_line();
                self.prev_end = None;
                let inner = indent + INDENT;
                let width = entries
                    .iter()
                    .map(|e| e.key.text.chars().count())
                    .max()
                    .unwrap_or(0);
                for (i, e) in entries.iter().enumerate() {
                    self.map_entry(e, inner, width);
                    let next = entries.get(i + 1).map_or(close, |n| n.key.span.start);
                    self.trailing(e.value.span.end, next);
                    self.end_line();
                }
                self.comments_before(close, inner);
                self.end_line();
                self.indent(indent);
                self.out.push('}');
            }
            _ => {
                let t = self.text(v.span).to_string();
                self.out.push_str(&t);
            }
        }
    }

    fn map_entry(&mut self, e: &MapEntry, indent: usize, width: usize) {
        self.comments_before(e.key.span.start, indent);
        self.start_element(e.key.span.start);
        self.hoist(e.value.span.start, indent);
        self.end_line();
        self.indent(indent);
        self.out.push_str(&e.key.text);
        self.indent(width - e.key.text.chars().count());
        self.out.push_str(" = ");
        self.value(&e.value, indent, indent + width + 3);
        self.prev_end = Some(e.value.span.end);
    }
}

fn is_short_gate(item: &Item) -> bool {
    matches!(
        item,
        Item::Gate(g) if matches!(g.body, GateBody::Short(_))
    )
}
