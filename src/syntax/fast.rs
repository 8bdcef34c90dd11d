//! The fast path for the common item: a `task` that parses without any
//! diagnostic, read by hand in one pass over its bytes.
//!
//! `grammar/loop.pest` stays the source of truth. This reader accepts a
//! subset of what the grammar accepts (a task item whose names, literals,
//! lists and maps all decode cleanly) and builds exactly the tree the pest
//! parser and its lowering build for it. At the first thing it does not
//! handle, or anything that would be a diagnostic (a bad literal, an
//! unterminated string, a bare id, a keyword where a name should be, a
//! syntax error), it gives up and the caller parses the item with pest, so
//! every diagnostic still comes from one place. A test parses the bench
//! plans and every fixture both ways and compares the trees.
//!
//! Why: pest's generated parser builds a token queue and tracks attempts
//! for error messages on every rule call, and the lowering walks the pairs
//! again; together they were about 40 % of `loopc check` on the bench
//! plans (docs/benchmarks.md). Tasks are almost every item of a large plan.

use super::literal;
use crate::ast::*;
use crate::span::Span;

/// The item keywords, which a bare name may not be where the grammar says
/// `!item_keyword` (dependencies, name values) and which end a block's
/// fields unless `=` follows.
const KEYWORDS: [&[u8]; 7] = [
    b"loop",
    b"budget",
    b"defaults",
    b"agent",
    b"executor",
    b"gate",
    b"task",
];

/// Reads the `task` item that starts at the first token at or after `pos`
/// in `source[..end]`. Returns the item and the offset just past its `}`,
/// or `None` when the item is not a task or is anything the fast path does
/// not read (the caller then parses from `pos` with pest).
pub(super) fn task(source: &str, pos: usize, end: usize) -> Option<(Item, usize)> {
    let mut r = Reader {
        src: source,
        b: &source.as_bytes()[..end],
        at: pos,
    };
    r.trivia();
    let start = r.at;
    if !r.b[start..].starts_with(b"task") || is_name_char(r.peek_at(start + 4)) {
        return None;
    }
    let keyword = Span::new(start, start + 4);
    r.at += 4;
    r.trivia();
    let name = r.task_name(false)?;
    r.trivia();
    let mut title = None;
    if r.peek() == Some(b'"') {
        let (text, span) = r.plain_string()?;
        title = Some(StrLit { text, span });
        r.trivia();
    }
    let mut dependencies = Vec::new();
    if r.peek() == Some(b':') {
        r.at += 1;
        r.trivia();
        while r.peek() != Some(b'{') {
            dependencies.push(r.task_name(true)?);
            r.trivia();
        }
    }
    if r.peek() != Some(b'{') {
        return None;
    }
    let block_start = r.at;
    r.at += 1;
    let mut fields = Vec::new();
    loop {
        r.trivia();
        match r.peek()? {
            b'}' => break,
            _ => fields.push(r.field()?),
        }
    }
    r.at += 1;
    // A vector's first push reserves four elements: for the one or two
    // dependencies and fields a task has, most of that was never used,
    // and the tree holds it for every task.
    dependencies.shrink_to_fit();
    fields.shrink_to_fit();
    let span = Span::new(start, r.at);
    let item = Item::Task(TaskItem {
        name,
        title,
        dependencies,
        block: Block {
            span,
            keyword,
            body: Span::new(block_start, r.at),
            fields,
        },
        span,
    });
    Some((item, r.at))
}

fn is_name_char(b: Option<u8>) -> bool {
    b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A cursor over one chunk of the source.
struct Reader<'a> {
    src: &'a str,
    /// The chunk's bytes (the source up to the chunk's end).
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn peek_at(&self, at: usize) -> Option<u8> {
        self.b.get(at).copied()
    }

    /// Skips whitespace and `#` comments (the grammar's implicit trivia).
    fn trivia(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' => self.at += 1,
                b'#' => {
                    while !matches!(self.peek(), None | Some(b'\n' | b'\r')) {
                        self.at += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// A bare name (`[A-Za-z_][A-Za-z0-9_-]*`) at the cursor, if one starts here.
    fn name(&mut self) -> Option<Span> {
        let start = self.at;
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.at += 1,
            _ => return None,
        }
        while is_name_char(self.peek()) {
            self.at += 1;
        }
        Some(Span::new(start, self.at))
    }

    fn text(&self, span: Span) -> &str {
        &self.src[span.range()]
    }

    fn is_keyword(&self, span: Span) -> bool {
        KEYWORDS.contains(&self.text(span).as_bytes())
    }

    /// A task name or dependency: a bare name or a string. `dependency`:
    /// a bare keyword ends the dependencies in the grammar; here it gives up.
    fn task_name(&mut self, dependency: bool) -> Option<TaskName> {
        if self.peek() == Some(b'"') {
            let (text, span) = self.plain_string()?;
            return Some(TaskName {
                text,
                span,
                quoted: true,
            });
        }
        let span = self.name()?;
        if dependency && self.is_keyword(span) {
            return None;
        }
        Some(TaskName {
            text: self.text(span).to_string(),
            span,
            quoted: false,
        })
    }

    /// A `"…"` string that closes on its line and decodes cleanly: its text
    /// and span (quotes included). Not a block string.
    fn plain_string(&mut self) -> Option<(String, Span)> {
        if self.b[self.at..].starts_with(b"\"\"\"") {
            return None;
        }
        let start = self.at;
        let body = start + 1;
        let mut i = body;
        loop {
            match self.b.get(i)? {
                b'"' => break,
                b'\\' => match self.b.get(i + 1)? {
                    b'\n' | b'\r' => return None,
                    _ => i += 2,
                },
                b'\n' | b'\r' => return None,
                _ => i += 1,
            }
        }
        let text = literal::decode_string(&self.src[body..i], body).ok()?;
        self.at = i + 1;
        Some((text, Span::new(start, self.at)))
    }

    /// `name = value`.
    fn field(&mut self) -> Option<Field> {
        let name = self.name()?;
        if self.is_keyword(name) && self.text(name) != "agent" {
            // `gate = [t]` is a (misspelled) field; an item keyword other
            // than `agent` not followed by `=` on its line ends the block
            // (a syntax error here). `agent` is always a field name.
            let rest = &self.b[self.at..];
            let blanks = rest
                .iter()
                .take_while(|&&c| c == b' ' || c == b'\t')
                .count();
            if rest.get(blanks) != Some(&b'=') {
                return None;
            }
        }
        self.trivia();
        if self.peek() != Some(b'=') {
            return None;
        }
        self.at += 1;
        self.trivia();
        let value = match self.peek()? {
            b'[' => self.list()?,
            b'{' => self.map()?,
            _ => self.scalar()?,
        };
        Some(Field {
            name: Ident {
                text: self.text(name).to_string(),
                span: name,
            },
            span: Span::new(name.start, value.span.end),
            value,
        })
    }

    /// `[ scalar, … ]` with an optional trailing comma.
    fn list(&mut self) -> Option<Value> {
        let start = self.at;
        self.at += 1;
        let mut items = Vec::new();
        self.trivia();
        while self.peek()? != b']' {
            items.push(self.scalar()?);
            self.trivia();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.trivia();
                }
                b']' => {}
                _ => return None,
            }
        }
        self.at += 1;
        items.shrink_to_fit();
        Some(Value {
            kind: ValueKind::List(items),
            span: Span::new(start, self.at),
        })
    }

    /// `{ KEY = scalar [,] … }`.
    fn map(&mut self) -> Option<Value> {
        let start = self.at;
        self.at += 1;
        let mut entries = Vec::new();
        loop {
            self.trivia();
            if self.peek()? == b'}' {
                break;
            }
            let key = self.name()?;
            self.trivia();
            if self.peek() != Some(b'=') {
                return None;
            }
            self.at += 1;
            self.trivia();
            let value = self.scalar()?;
            entries.push(MapEntry {
                key: Ident {
                    text: self.text(key).to_string(),
                    span: key,
                },
                value,
            });
            self.trivia();
            if self.peek() == Some(b',') {
                self.at += 1;
            }
        }
        self.at += 1;
        entries.shrink_to_fit();
        Some(Value {
            kind: ValueKind::Map(entries),
            span: Span::new(start, self.at),
        })
    }

    /// One scalar literal, in the grammar's order of alternatives.
    fn scalar(&mut self) -> Option<Value> {
        let start = self.at;
        let kind = match self.peek()? {
            b'"' if self.b[start..].starts_with(b"\"\"\"") => {
                let body = start + 3;
                let close = find(&self.b[body..], b"\"\"\"")? + body;
                let text = literal::decode_block_string(&self.src[body..close], start).ok()?;
                self.at = close + 3;
                ValueKind::BlockString(text.into())
            }
            b'"' => ValueKind::String(self.plain_string()?.0.into()),
            b'$' => {
                // money = "$" DIGIT+ ("." DIGIT*)? (ALNUM | "_" | ".")*
                let mut i = start + 1;
                if !self.peek_at(i)?.is_ascii_digit() {
                    return None;
                }
                while self.peek_at(i).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                }
                while self
                    .peek_at(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
                {
                    i += 1;
                }
                self.at = i;
                let span = Span::new(start, i);
                let m = literal::decode_money(self.text(span), span).ok()?;
                ValueKind::Money(m.micros())
            }
            c if c.is_ascii_digit() => {
                let mut i = start + 1;
                while self
                    .peek_at(i)
                    .is_some_and(|c| c.is_ascii_digit() || c == b'_')
                {
                    i += 1;
                }
                match self.peek_at(i) {
                    Some(c) if c.is_ascii_alphabetic() => {
                        // duration = DIGIT (DIGIT | "_")* ALPHA (ALNUM | "_")*
                        while self
                            .peek_at(i)
                            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                        {
                            i += 1;
                        }
                        self.at = i;
                        let span = Span::new(start, i);
                        ValueKind::Duration(literal::decode_duration(self.text(span), span).ok()?)
                    }
                    // `1.5`: a bad number (E0012), read by pest.
                    Some(b'.') => return None,
                    _ => {
                        self.at = i;
                        let span = Span::new(start, i);
                        ValueKind::Integer(literal::decode_integer(self.text(span), span).ok()?)
                    }
                }
            }
            _ => {
                let span = self.name()?;
                if self.is_keyword(span) {
                    return None;
                }
                match self.text(span) {
                    "true" => ValueKind::Bool(true),
                    "false" => ValueKind::Bool(false),
                    s => ValueKind::Name(s.to_string()),
                }
            }
        };
        Some(Value {
            kind,
            span: Span::new(start, self.at),
        })
    }
}

/// The offset of the first `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let first = *needle.first()?;
    let mut from = 0;
    while let Some(n) = hay.get(from..)?.iter().position(|&c| c == first) {
        if hay[from + n..].starts_with(needle) {
            return Some(from + n);
        }
        from += n + 1;
    }
    None
}

#[cfg(test)]
#[path = "../../bench/gen_plan.rs"]
pub(super) mod gen_plan;

#[cfg(test)]
mod tests {
    use super::super::parse_range;
    use super::gen_plan;

    /// Both parsers on `source`: the same items and diagnostics.
    fn same(source: &str) {
        let fast = parse_range(source, 0, source.len(), true);
        let pest = parse_range(source, 0, source.len(), false);
        assert_eq!(fast, pest, "on {source:?}");
    }

    /// Every `.loop` file under `dir`, recursively.
    fn loop_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                loop_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "loop") {
                out.push(p);
            }
        }
    }

    #[test]
    fn the_fast_path_builds_pests_tree_on_every_fixture_and_example() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["tests", "examples", "docs"] {
            loop_files(&root.join(dir), &mut files);
        }
        assert!(files.len() > 20, "found {} plans", files.len());
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            same(&String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn the_fast_path_builds_pests_tree_on_tricky_tasks() {
        for src in [
            "task a { run = \"x\" }",
            "task a \"T\": b \"c d\" { run = \"x\\n\\u{1F600}\" }",
            "task a:{run=\"x\"}task b:a{prompt=\"\"\"\n  hi\n  \"\"\"}",
            "task \"0f3\" { prompt = \"\"\"x\"\"\"\" }",
            "task 0f3 { run = \"x\" }",
            "task a: task { }",
            "task a: b task c { }",
            "task task { run = \"x\" }",
            "task a { agent = claude gate = [t] }",
            "task a { agent\n= claude }",
            "task a { gate\n= x }",
            "task a { gate = x }",
            "task a { task = 1 }",
            "task a { x = [a, \"b\", 1, 2h, $1.5, true,] y = { K = \"v\", L = \"w\" } }",
            "task a { x = [,] }",
            "task a { x = [a,,b] }",
            "task a { x = [a b] }",
            "task a { x = {,} }",
            "task a { x = { K = [a] } }",
            "task a { x = 1.5 y = -1 z = 1_0 w = 1h30m v = 99999999999 }",
            "task a { x = $ y = $1.234567891 z = 3q }",
            "task a { x = \"\\q\" }",
            "task a { x = \"abc\n\" }",
            "task a { x = \"\"\"unterminated }",
            "task a { x = \"\"\"\n  a\n b\n  \"\"\" }",
            "task a { x = loop }",
            "task a { x = 1 # c\n y = 2 } # d\n",
            "task a\r{\rrun = \"x\"\r}\rtask b { }",
            "task a { run = \"x\" ",
            "task a { run = \"x\" } junk",
            "task-x { }",
            "tasks { }",
            "task a { é = 1 }",
            "task \"a\\\"b\" { }",
            "task a \"\"\"t\"\"\" { }",
            "task a: \"\"\"b\"\"\" { }",
            "task a: 1b { }",
            "task a { x = \"a\" y = truex z = false }",
            // Where pest's text is cut (the next line starting an item) and
            // what may reach past it: a missing `}`, a keyword pest reads as
            // a name, block strings holding item lines, unclosed ones.
            "task a { run = \"x\"\ntask b { run = \"y\" }\n",
            "task a { run = \"x\"\nagent b { run = \"y\" }\n",
            "task a { run = \"x\"\nagent = b }\ntask c { }",
            "task\ntask b { }\n",
            "gate g =\ntask b { }\n",
            "gate g = \"\"\"\ntask x {\n\"\"\"\ntask b { }\n",
            "task a { prompt = \"\"\"\n  task x { y }\n  agent z\n  \"\"\" }\ntask b { }",
            "task a { prompt = \"\"\"\n  task x { y }\ntask b { }",
            "task a { p = \"\\\"\"\"\" # \"\"\"\ntask b { }\n\"\"\" }",
            "task a { p = \"x\\\ntask b { }",
            "agent a { run = [\ntask b { }",
            "budget { x = {\nloop { }",
            "task a: b\ntask c { }",
            "loop \"n\"\n\ndefaults {\n  agent = x\n\ntask t { }",
        ] {
            same(src);
        }
    }

    #[test]
    fn the_fast_path_builds_pests_tree_on_the_bench_plan_and_its_mutations() {
        let plan = gen_plan::generate(200).plan;
        same(&plan);
        // And the fast path reads every task of it (it is the hot path).
        let (items, _) = parse_range(&plan, 0, plan.len(), false);
        for item in &items {
            if let crate::ast::Item::Task(t) = item {
                assert!(
                    super::task(&plan, t.span.start, plan.len()).is_some(),
                    "gave up on {:?}",
                    &plan[t.span.range()]
                );
            }
        }
        // Every kind of damage at many places: deleting, doubling or
        // replacing one byte, so that the fast path meets every way a task
        // can go wrong and must give up exactly where pest reports.
        let bytes = plan.as_bytes();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1500 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state as usize) % bytes.len();
            let mut m = bytes.to_vec();
            match state % 3 {
                0 => {
                    m.remove(at);
                }
                1 => m.insert(at, bytes[at]),
                _ => m[at] = b"\"{}[]=,:#$\\ \n-1a_."[(state >> 32) as usize % 18],
            }
            // Work on a window around the change, to keep the test quick.
            let from = at.saturating_sub(2000);
            let to = (at + 2000).min(m.len());
            let window = String::from_utf8_lossy(&m[from..to]).into_owned();
            same(&window);
        }
    }
}
