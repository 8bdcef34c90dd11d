//! Lowering: pest's pairs for one item → the syntax tree, literals decoded
//! by [`super::literal`] (their diagnostics collected here).

use super::Rule;
use super::literal;
use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;
use pest::iterators::Pair;

/// The state of lowering one chunk of a file.
#[derive(Default)]
pub(super) struct Lowering {
    /// Diagnostics of the items lowered so far.
    pub(super) diagnostics: Vec<Diagnostic>,
    /// Absolute offset of the slice being parsed.
    pub(super) offset: usize,
}

impl Lowering {
    fn span(&self, pair: &Pair<'_, Rule>) -> Span {
        let s = pair.as_span();
        Span::new(s.start(), s.end()).shift(self.offset)
    }

    pub(super) fn item(&mut self, pair: Pair<'_, Rule>) -> Item {
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
                    None => Item::Error(span.into()),
                }
            }
            Rule::budget_item | Rule::defaults_item => {
                let Some(b) = inner.next() else {
                    return Item::Error(span.into());
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
                    return Item::Error(span.into());
                };
                let name = self.ident(&n);
                let block = self.block(b, span, keyword);
                Item::Agent(AgentItem { name, block, span })
            }
            Rule::executor_item => {
                let (Some(n), Some(b)) = (inner.next(), inner.next()) else {
                    return Item::Error(span.into());
                };
                let name = self.ident(&n);
                let block = self.block(b, span, keyword);
                Item::Executor(AgentItem { name, block, span })
            }
            Rule::gate_item => self.gate_item(inner, span, keyword),
            Rule::task_item => self.task_item(inner, span, keyword),
            _ => Item::Error(span.into()),
        }
    }

    /// A `gate` item (spanning `span`, its keyword at `keyword`) from the
    /// pairs after its keyword.
    fn gate_item<'i>(
        &mut self,
        mut inner: impl Iterator<Item = Pair<'i, Rule>>,
        span: Span,
        keyword: Span,
    ) -> Item {
        let Some(n) = inner.next() else {
            return Item::Error(span.into());
        };
        let name = self.ident(&n);
        let body = match inner.next() {
            Some(p) if p.as_rule() == Rule::eq => match inner.next() {
                Some(v) => GateBody::Short(self.value(v)),
                None => return Item::Error(span.into()),
            },
            Some(b) => GateBody::Long(self.block(b, span, keyword)),
            None => return Item::Error(span.into()),
        };
        Item::Gate(GateItem {
            name,
            body,
            span,
            keyword,
        })
    }

    /// A `task` item (spanning `span`, its keyword at `keyword`) from the
    /// pairs after its keyword.
    fn task_item<'i>(
        &mut self,
        mut inner: impl Iterator<Item = Pair<'i, Rule>>,
        span: Span,
        keyword: Span,
    ) -> Item {
        let Some(n) = inner.next() else {
            return Item::Error(span.into());
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
            None => Item::Error(span.into()),
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
            // A non-ASCII bare name is E0011 in the checker, as a quoted one.
            Some(p) if matches!(p.as_rule(), Rule::name | Rule::non_ascii_name) => TaskName {
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
            ValueKind::String(text) | ValueKind::BlockString(text) => Some(StrLit {
                text: text.to_string(),
                span,
            }),
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

    /// The value of a decoded literal, or `Invalid` with its diagnostic.
    fn decoded<T>(
        &mut self,
        decoded: Result<T, Diagnostic>,
        value: impl FnOnce(T) -> ValueKind,
    ) -> ValueKind {
        match decoded {
            Ok(v) => value(v),
            Err(d) => {
                self.diagnostics.push(d);
                ValueKind::Invalid
            }
        }
    }

    fn value_inner(&mut self, pair: Pair<'_, Rule>, span: Span) -> ValueKind {
        match pair.as_rule() {
            Rule::string => {
                let body = pair.into_inner().next();
                let (text, at) = match &body {
                    Some(b) => (b.as_str(), self.span(b).start),
                    None => ("", span.start + 1),
                };
                match literal::decode_string(text, at) {
                    Ok(s) => ValueKind::String(s.into()),
                    Err(errors) => {
                        self.diagnostics.extend(errors);
                        ValueKind::Invalid
                    }
                }
            }
            Rule::unterminated_string | Rule::unterminated_block => {
                self.diagnostics
                    .push(literal::unterminated_string(span.start));
                ValueKind::Invalid
            }
            Rule::block_string => {
                let body = pair.into_inner().next();
                let text = body.as_ref().map_or("", |b| b.as_str());
                self.decoded(literal::decode_block_string(text, span.start), |s| {
                    ValueKind::BlockString(s.into())
                })
            }
            Rule::integer => self.decoded(
                literal::decode_integer(pair.as_str(), span),
                ValueKind::Integer,
            ),
            Rule::duration => self.decoded(
                literal::decode_duration(pair.as_str(), span),
                ValueKind::Duration,
            ),
            Rule::money => self.decoded(literal::decode_money(pair.as_str(), span), |m| {
                ValueKind::Money(m.micros())
            }),
            Rule::bad_number => {
                self.diagnostics
                    .push(literal::bad_number(pair.as_str(), span));
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
}

#[cfg(test)]
mod tests {
    use crate::ast::*;
    use crate::syntax::parse;
    use std::time::Duration;

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
}
