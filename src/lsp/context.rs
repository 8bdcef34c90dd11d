//! What the cursor is in, for completion: a tolerant scan of the text before
//! the cursor that works on half-typed documents the parser cannot read.
//!
//! The scan tokenizes the source up to the cursor (skipping comments and
//! strings, docs/language.md) and follows the item/block/field structure of docs/language.md with
//! the same recovery rule as the parser: an item keyword where a field name
//! is expected starts a new item. All offsets are byte offsets.

/// The kinds of blocks, for the fields each takes ([`crate::model::fields`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// `loop { … }`
    Loop,
    /// `budget { … }`
    Budget,
    /// `defaults { … }`
    Defaults,
    /// `agent NAME { … }`
    Agent,
    /// `gate NAME { … }` (or the short form's header)
    Gate,
    /// `executor NAME { … }`
    Executor,
    /// `task NAME … { … }`
    Task,
}

impl BlockKind {
    /// The block kind started by an item keyword.
    pub fn from_keyword(word: &str) -> Option<BlockKind> {
        Some(match word {
            "loop" => BlockKind::Loop,
            "budget" => BlockKind::Budget,
            "defaults" => BlockKind::Defaults,
            "agent" => BlockKind::Agent,
            "gate" => BlockKind::Gate,
            "executor" => BlockKind::Executor,
            "task" => BlockKind::Task,
            _ => return None,
        })
    }

    /// The keyword that starts this kind of item.
    pub fn keyword(self) -> &'static str {
        match self {
            BlockKind::Loop => "loop",
            BlockKind::Budget => "budget",
            BlockKind::Defaults => "defaults",
            BlockKind::Agent => "agent",
            BlockKind::Gate => "gate",
            BlockKind::Executor => "executor",
            BlockKind::Task => "task",
        }
    }

    /// The field names this block takes (docs/language.md).
    pub fn fields(self) -> &'static [&'static str] {
        use crate::model::fields;
        match self {
            BlockKind::Loop => fields::LOOP,
            BlockKind::Budget => fields::BUDGET,
            BlockKind::Defaults => fields::DEFAULTS,
            BlockKind::Agent => fields::AGENT,
            BlockKind::Gate => fields::GATE,
            BlockKind::Executor => fields::EXECUTOR,
            BlockKind::Task => fields::TASK,
        }
    }
}

/// Where the cursor is, as far as completion cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Context {
    /// Between items: an item keyword may start here.
    TopLevel,
    /// In a task header after `:`: a dependency. `own` is the task's name.
    Dependency {
        /// The name of the task being declared (not offered as its own dependency).
        own: Option<String>,
        /// The dependencies written before the cursor (not offered again).
        listed: Vec<String>,
    },
    /// Inside a block where a field name goes; `present` are fields already set.
    FieldName {
        /// The block.
        block: BlockKind,
        /// Fields already written in this block (before the cursor).
        present: Vec<String>,
    },
    /// The value of `field` in `block`; `in_list` when inside its `[ … ]`.
    Value {
        /// The block.
        block: BlockKind,
        /// The field whose value this is.
        field: String,
        /// Whether the cursor is inside the value's list brackets.
        in_list: bool,
        /// In a list: the names written in it before the cursor (not
        /// offered again).
        listed: Vec<String>,
    },
    /// Inside a string or comment, or somewhere nothing can be completed.
    None,
}

/// The completion context at byte `offset` and the partial word before it
/// (the text from the start of the name under the cursor to the cursor).
pub fn at(source: &str, offset: usize) -> (Context, String) {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let tokens = match tokenize(source.get(..offset).unwrap_or(source)) {
        Some(t) => t,
        None => return (Context::None, String::new()),
    };
    // A name that touches the cursor is the prefix being typed.
    let (tokens, prefix) = match tokens.split_last() {
        Some((last, rest)) if last.kind == Tok::Word && last.end == offset => (
            rest,
            source.get(last.start..last.end).unwrap_or("").to_string(),
        ),
        _ => (&tokens[..], String::new()),
    };
    let mut s = Scan::default();
    for (i, t) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1);
        s.step(source, t, next);
    }
    (s.context(), prefix)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Word,
    Str,
    LBrace,
    RBrace,
    LBrack,
    RBrack,
    Eq,
    Colon,
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Tok,
    start: usize,
    end: usize,
}

/// Tokens of `text`; `None` when `text` ends inside a string or a comment.
fn tokenize(text: &str) -> Option<Vec<Token>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let kind = match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'#' => match crate::span::line_end(text, i) {
                end if end < text.len() => {
                    i = end;
                    continue;
                }
                _ => return None,
            },
            b'"' if text[i..].starts_with("\"\"\"") => match text[i + 3..].find("\"\"\"") {
                Some(n) => {
                    i += 3 + n + 3;
                    Tok::Str
                }
                None => return None,
            },
            b'"' => {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => return None,
                        Some(b'\\') => i += 2,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                Tok::Str
            }
            b'{' => {
                i += 1;
                Tok::LBrace
            }
            b'}' => {
                i += 1;
                Tok::RBrace
            }
            b'[' => {
                i += 1;
                Tok::LBrack
            }
            b']' => {
                i += 1;
                Tok::RBrack
            }
            b'=' => {
                i += 1;
                Tok::Eq
            }
            b':' => {
                i += 1;
                Tok::Colon
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' => {
                i += 1;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'_' | b'-' | b'.'))
                {
                    i += 1;
                }
                Tok::Word
            }
            _ => {
                // Any other character, including multi-byte ones.
                i += text[i..].chars().next().map_or(1, char::len_utf8);
                Tok::Other
            }
        };
        out.push(Token {
            kind,
            start,
            end: i.min(bytes.len()),
        });
    }
    Some(out)
}

#[derive(Default, Debug)]
struct Scan {
    /// The item being read, if any.
    item: Option<BlockKind>,
    /// Whether its `{` was seen.
    in_body: bool,
    /// Task header: the task's name, and whether `:` was seen.
    own_name: Option<String>,
    colon: bool,
    /// Gate header: `=` seen (short form).
    short_gate: bool,
    /// Body: the field being read, whether its `=` was seen, bracket depth
    /// inside its value, and the fields seen so far.
    field: Option<String>,
    after_eq: bool,
    nest: usize,
    present: Vec<String>,
    /// The names written after a task header's `:`, or in the field's list
    /// value (at its first level), before the cursor.
    listed: Vec<String>,
}

impl Scan {
    fn start_item(&mut self, kind: BlockKind) {
        *self = Scan {
            item: Some(kind),
            ..Scan::default()
        };
    }

    fn close_item(&mut self) {
        *self = Scan::default();
    }

    fn value_done(&mut self) {
        self.field = None;
        self.after_eq = false;
        self.nest = 0;
        self.listed.clear();
    }

    fn step(&mut self, source: &str, t: &Token, next: Option<&Token>) {
        let text = source.get(t.start..t.end).unwrap_or("");
        let keyword = (t.kind == Tok::Word)
            .then(|| BlockKind::from_keyword(text))
            .flatten();
        let Some(kind) = self.item else {
            if let Some(k) = keyword {
                self.start_item(k);
            }
            return;
        };
        if !self.in_body {
            match t.kind {
                Tok::LBrace if !self.short_gate => {
                    self.in_body = true;
                }
                Tok::Colon => self.colon = true,
                Tok::Eq if kind == BlockKind::Gate => self.short_gate = true,
                Tok::Word if keyword.is_some() && !self.short_gate => {
                    if let Some(k) = keyword {
                        self.start_item(k);
                    }
                }
                Tok::Word | Tok::Str if self.short_gate => self.close_item(),
                Tok::Word | Tok::Str if self.colon && kind == BlockKind::Task => {
                    self.listed.push(text.trim_matches('"').to_string());
                }
                Tok::Word | Tok::Str if self.own_name.is_none() && kind == BlockKind::Task => {
                    let name = text.trim_matches('"').to_string();
                    self.own_name = Some(name);
                }
                _ => {}
            }
            return;
        }
        if self.nest > 0 {
            match t.kind {
                Tok::Word | Tok::Str if self.nest == 1 => {
                    self.listed.push(text.trim_matches('"').to_string());
                }
                Tok::LBrack | Tok::LBrace => self.nest += 1,
                Tok::RBrack | Tok::RBrace => {
                    self.nest -= 1;
                    if self.nest == 0 {
                        self.value_done();
                    }
                }
                _ => {}
            }
            return;
        }
        // An item keyword where a field could start begins a new item unless
        // `=` follows it (no item starts `KEYWORD =`: `agent = a` is a field,
        // `gate = [t]` a misspelled one), as in the parser.
        let starts_item = keyword.is_some() && next.is_none_or(|n| n.kind != Tok::Eq);
        match (&self.field, self.after_eq, t.kind) {
            (_, _, Tok::RBrace) => self.close_item(),
            (None, _, Tok::Word) | (Some(_), false, Tok::Word) => {
                if starts_item {
                    if let Some(k) = keyword {
                        self.start_item(k);
                    }
                } else {
                    self.field = Some(text.to_string());
                    self.after_eq = false;
                }
            }
            (Some(name), false, Tok::Eq) => {
                self.present.push(name.clone());
                self.after_eq = true;
            }
            (Some(_), true, Tok::LBrack | Tok::LBrace) => self.nest = 1,
            (Some(_), true, Tok::Word) if starts_item && keyword != Some(BlockKind::Agent) => {
                if let Some(k) = keyword {
                    self.start_item(k);
                }
            }
            (Some(_), true, Tok::Word | Tok::Str) => self.value_done(),
            _ => {}
        }
    }

    fn context(&self) -> Context {
        let Some(kind) = self.item else {
            return Context::TopLevel;
        };
        if !self.in_body {
            return if kind == BlockKind::Task && self.colon {
                Context::Dependency {
                    own: self.own_name.clone(),
                    listed: self.listed.clone(),
                }
            } else {
                Context::None
            };
        }
        match (&self.field, self.after_eq) {
            (None, _) => Context::FieldName {
                block: kind,
                present: self.present.clone(),
            },
            (Some(_), false) => Context::None,
            (Some(f), true) => Context::Value {
                block: kind,
                field: f.clone(),
                in_list: self.nest == 1,
                listed: self.listed.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(marked: &str) -> (Context, String) {
        let at_ = marked.find('|').unwrap_or(marked.len());
        let src = marked.replacen('|', "", 1);
        at(&src, at_)
    }

    #[test]
    fn contexts() {
        assert_eq!(ctx("|").0, Context::TopLevel);
        assert_eq!(
            ctx("task a { run = \"x\" }\nta|"),
            (Context::TopLevel, "ta".into())
        );
        assert_eq!(
            ctx("task a { run = \"x\" pro|"),
            (
                Context::FieldName {
                    block: BlockKind::Task,
                    present: vec!["run".into()]
                },
                "pro".into()
            )
        );
        assert_eq!(
            ctx("task b: a |").0,
            Context::Dependency {
                own: Some("b".into()),
                listed: vec!["a".into()]
            }
        );
        assert_eq!(
            ctx("defaults { agent = |").0,
            Context::Value {
                block: BlockKind::Defaults,
                field: "agent".into(),
                in_list: false,
                listed: vec![]
            }
        );
        assert_eq!(
            ctx("task t { gates = [a, |").0,
            Context::Value {
                block: BlockKind::Task,
                field: "gates".into(),
                in_list: true,
                listed: vec!["a".into()]
            }
        );
        assert_eq!(ctx("task t { prompt = \"in a str|").0, Context::None);
        assert_eq!(ctx("task t { # comm|").0, Context::None);
        // An unclosed block ends at the next item keyword.
        assert_eq!(
            ctx("task a { run = \"x\"\nagent claude {\n  |").0,
            Context::FieldName {
                block: BlockKind::Agent,
                present: vec![]
            }
        );
        // `agent = …` inside a task is a field, not a new item.
        assert_eq!(
            ctx("task a { agent = claude\n  |").0,
            Context::FieldName {
                block: BlockKind::Task,
                present: vec!["agent".into()]
            }
        );
        assert_eq!(ctx("gate g = \"x\"\n|").0, Context::TopLevel);
        assert_eq!(
            ctx("task a { env = { A = \"1\" }\n  |").0,
            Context::FieldName {
                block: BlockKind::Task,
                present: vec!["env".into()]
            }
        );
    }

    #[test]
    fn never_panics_on_any_prefix() {
        let src = "task \"é😀\" \"t\": a b { prompt = \"\"\"\n x\n \"\"\" gates = [g, h] env = { A = \"1\" } } # c\ngate g = \"x\"";
        for i in 0..=src.len() + 2 {
            let _ = at(src, i);
        }
    }
}
