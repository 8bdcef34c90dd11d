//! Everything the language server knows about one document, computed from
//! its text on every change, and the answers to the editor's requests.
//!
//! Offsets inside this module are byte offsets into the document; LSP
//! positions (0-based lines, UTF-16 columns) are converted at the edges with
//! [`LineIndex`]. Nothing here panics on any text: the parser never fails
//! and every lookup tolerates missing or broken items.

use super::context::{self, BlockKind, Context};
use super::docs::{field_doc, one_line};
use crate::Compilation;
use crate::ast::{self, GateBody, Item, ValueKind};
use crate::diagnostic::{self, Code, LineIndex, Severity};
use crate::model::Model;
use crate::span::Span;
use crate::syntax::literal;
use lsp_types as lsp;

/// One analysed version of a document.
pub struct Analysis {
    /// The document's text.
    pub source: String,
    /// Line starts, for offset ↔ position conversion.
    pub index: LineIndex,
    /// The compiled document: tree, diagnostics (exactly `loopc check`'s) and plan.
    pub compilation: Compilation,
    /// The checked model (definitions resolved as far as possible).
    pub model: Model,
    /// Whether the client's text starts with a byte-order mark. `source`
    /// does not hold it (docs/language.md: it is ignored, as `loopc check` does), but
    /// the client counts it as one UTF-16 unit on line 0.
    pub bom: bool,
    /// Whether parsing reported nothing, so that the next version can
    /// reuse this one's items ([`Analysis::edited`]).
    pub clean_parse: bool,
}

/// What kind of thing a name refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    /// A task.
    Task,
    /// An agent.
    Agent,
    /// A gate.
    Gate,
    /// An executor.
    Executor,
}

/// A name in the document: a definition or a reference.
#[derive(Clone, Debug)]
pub struct Occurrence {
    /// What it names.
    pub kind: NameKind,
    /// The name.
    pub name: String,
    /// Where it is written (byte span).
    pub span: Span,
    /// Whether this is the definition itself.
    pub definition: bool,
}

/// Frees `value` on another thread: freeing a large document's tree, model
/// and plan is not on the way to the answer. If no thread can be started,
/// it is freed here.
fn free_later<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("lsp-free".into())
        .spawn(move || drop(value));
}

/// The text without a leading byte-order mark, and whether it had one.
fn strip_bom(text: String) -> (String, bool) {
    match text.strip_prefix('\u{FEFF}') {
        Some(rest) => (rest.to_string(), true),
        None => (text, false),
    }
}

/// The byte offset in `source` (BOM removed) of a client position, which
/// counts a removed BOM as one UTF-16 unit on line 0.
fn offset_of(index: &LineIndex, source: &str, bom: bool, position: lsp::Position) -> usize {
    let shift = u32::from(bom && position.line == 0);
    index.offset(
        source,
        diagnostic::Position {
            line: position.line,
            character: position.character.saturating_sub(shift),
        },
    )
}

impl Analysis {
    /// Analyses `source`, the text of the file called `name` (its stem is
    /// the default loop name, as for `loopc check`).
    pub fn new(name: &str, source: String) -> Analysis {
        Analysis::edited(name, source, None)
    }

    /// Analyses `source`, a new version of the document whose analysis was
    /// `previous`: its unchanged items are reused rather than parsed again
    /// (when it parsed cleanly), and it is freed off the caller's path.
    pub fn edited(name: &str, source: String, previous: Option<Analysis>) -> Analysis {
        let (source, bom) = strip_bom(source);
        let previous = previous.and_then(|mut p| {
            let reuse = p.clean_parse.then(|| crate::compile::Previous {
                source: std::mem::take(&mut p.source),
                items: std::mem::take(&mut p.compilation.ast.items),
            });
            free_later(p);
            reuse
        });
        let (compilation, model, clean_parse) =
            crate::compile::compile_edited(name, source.clone(), previous);
        Analysis {
            index: LineIndex::new(&source),
            source,
            compilation,
            model,
            bom,
            clean_parse,
        }
    }

    /// The LSP position of byte `offset`.
    pub fn position(&self, offset: usize) -> lsp::Position {
        let p = self.index.position(&self.source, offset);
        let shift = u32::from(self.bom && p.line == 0);
        lsp::Position::new(p.line, p.character + shift)
    }

    /// The LSP range of a byte span.
    pub fn range(&self, span: Span) -> lsp::Range {
        lsp::Range::new(self.position(span.start), self.position(span.end))
    }

    /// The byte offset of an LSP position (clamped to the document).
    pub fn offset(&self, position: lsp::Position) -> usize {
        offset_of(&self.index, &self.source, self.bom, position)
    }

    /// Applies a ranged edit (`range` in the client's positions) to a
    /// document's text, without analysing it. The result holds no BOM.
    pub fn apply_edit(text: String, range: lsp::Range, new_text: &str) -> String {
        let (mut text, bom) = strip_bom(text);
        let index = LineIndex::new(&text);
        let start = offset_of(&index, &text, bom, range.start);
        let end = offset_of(&index, &text, bom, range.end).max(start);
        text.replace_range(start..end, new_text);
        text
    }

    /// The diagnostics of `loopc check` for this document, as LSP
    /// diagnostics: the compilation's and `extra` (what `check` adds from
    /// the checkout: [`crate::compile::missing_context`]), in `check`'s
    /// order; the primary span is the range, the code is the docs/language.md code,
    /// the message is the headline followed by the primary label and the
    /// notes, and secondary labels become related information in `uri`.
    pub fn diagnostics(
        &self,
        uri: &lsp::Uri,
        extra: Vec<diagnostic::Diagnostic>,
    ) -> Vec<lsp::Diagnostic> {
        let mut all = extra;
        if !all.is_empty() {
            all.extend(self.compilation.diagnostics.iter().cloned());
            crate::diagnostic::sort(&mut all);
        }
        let list = if all.is_empty() {
            &self.compilation.diagnostics
        } else {
            &all
        };
        list.iter()
            .map(|d| {
                let mut message = d.message.clone();
                if !d.primary.message.is_empty() {
                    message.push('\n');
                    message.push_str(&d.primary.message);
                }
                for n in &d.notes {
                    message.push_str("\nnote: ");
                    message.push_str(n);
                }
                let related: Vec<lsp::DiagnosticRelatedInformation> = d
                    .secondary
                    .iter()
                    .map(|l| lsp::DiagnosticRelatedInformation {
                        location: lsp::Location::new(uri.clone(), self.range(l.span)),
                        message: if l.message.is_empty() {
                            d.message.clone()
                        } else {
                            l.message.clone()
                        },
                    })
                    .collect();
                lsp::Diagnostic {
                    range: self.range(d.primary.span),
                    severity: Some(match d.severity {
                        Severity::Error => lsp::DiagnosticSeverity::ERROR,
                        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
                    }),
                    code: Some(lsp::NumberOrString::String(d.code.as_str().to_string())),
                    code_description: None,
                    source: Some("loopc".to_string()),
                    message,
                    related_information: (!related.is_empty()).then_some(related),
                    tags: (d.code == Code::W0001).then(|| vec![lsp::DiagnosticTag::UNNECESSARY]),
                    data: None,
                }
            })
            .collect()
    }

    /// Every task, agent, gate and executor name in the document, definitions and
    /// references, in source order.
    pub fn occurrences(&self) -> Vec<Occurrence> {
        let mut out = Vec::new();
        let mut push = |kind, name: &str, span, definition| {
            out.push(Occurrence {
                kind,
                name: name.to_string(),
                span,
                definition,
            });
        };
        for item in &self.compilation.ast.items {
            match item {
                Item::Task(t) => {
                    push(NameKind::Task, &t.name.text, t.name.span, true);
                    for d in &t.dependencies {
                        push(NameKind::Task, &d.text, d.span, false);
                    }
                    block_refs(&t.block, &mut push);
                }
                Item::Agent(a) => {
                    push(NameKind::Agent, &a.name.text, a.name.span, true);
                    block_refs(&a.block, &mut push);
                }
                Item::Executor(e) => push(NameKind::Executor, &e.name.text, e.name.span, true),
                Item::Gate(g) => {
                    push(NameKind::Gate, &g.name.text, g.name.span, true);
                    if let GateBody::Long(b) = &g.body {
                        block_refs(b, &mut push);
                    }
                }
                Item::Defaults(b) => block_refs(b, &mut push),
                Item::Loop(l) => block_refs(&l.block, &mut push),
                // An item being typed still defines the name its header
                // gives (docs/language.md).
                Item::Error(u) => {
                    if let (Some(kind), Some(name), Some(span)) =
                        (unparsed_kind(u.keyword), &u.name, u.name_span)
                    {
                        push(kind, name, span, true);
                    }
                }
                Item::Budget(_) => {}
            }
        }
        out
    }

    /// The name under byte `offset` (a cursor touching either end counts).
    pub fn occurrence_at(&self, offset: usize) -> Option<Occurrence> {
        let all = self.occurrences();
        all.iter()
            .find(|o| o.span.start <= offset && offset < o.span.end)
            .or_else(|| all.iter().find(|o| o.span.end == offset))
            .cloned()
    }

    /// The span of the (first) definition of `name` of `kind`.
    pub fn definition_span(&self, kind: NameKind, name: &str) -> Option<Span> {
        self.occurrences()
            .into_iter()
            .find(|o| o.definition && o.kind == kind && o.name == name)
            .map(|o| o.span)
    }

    /// Go to definition: from a dependency, an `agent = …`, an
    /// `executor = …` or a `gates` entry to the definition's name. `None` on a definition itself or
    /// on an unknown name.
    pub fn definition(&self, uri: &lsp::Uri, offset: usize) -> Option<lsp::Location> {
        let o = self.occurrence_at(offset)?;
        if o.definition {
            return None;
        }
        let span = self.definition_span(o.kind, &o.name)?;
        Some(lsp::Location::new(uri.clone(), self.range(span)))
    }

    /// Tasks, agents, gates and executors as document symbols (hierarchy-free), in
    /// source order; each range is the whole item, the selection its name.
    pub fn symbols(&self) -> Vec<lsp::DocumentSymbol> {
        let mut out = Vec::new();
        for item in &self.compilation.ast.items {
            let (name, detail, kind, name_span) = match item {
                Item::Task(t) => (
                    t.name.text.clone(),
                    t.title
                        .as_ref()
                        .map(|s| one_line(&crate::visible::escape(&s.text, &[]))),
                    lsp::SymbolKind::FUNCTION,
                    t.name.span,
                ),
                Item::Agent(a) => (
                    a.name.text.clone(),
                    Some("agent".to_string()),
                    lsp::SymbolKind::CLASS,
                    a.name.span,
                ),
                Item::Gate(g) => (
                    g.name.text.clone(),
                    Some("gate".to_string()),
                    lsp::SymbolKind::INTERFACE,
                    g.name.span,
                ),
                Item::Executor(e) => (
                    e.name.text.clone(),
                    Some("executor".to_string()),
                    lsp::SymbolKind::OPERATOR,
                    e.name.span,
                ),
                // One being typed, by the name its header gives.
                Item::Error(u) => {
                    let (Some(kind), Some(name), Some(span)) =
                        (unparsed_kind(u.keyword), &u.name, u.name_span)
                    else {
                        continue;
                    };
                    let (detail, symbol) = match kind {
                        NameKind::Task => (None, lsp::SymbolKind::FUNCTION),
                        NameKind::Agent => (Some("agent"), lsp::SymbolKind::CLASS),
                        NameKind::Gate => (Some("gate"), lsp::SymbolKind::INTERFACE),
                        NameKind::Executor => (Some("executor"), lsp::SymbolKind::OPERATOR),
                    };
                    (name.clone(), detail.map(str::to_string), symbol, span)
                }
                _ => continue,
            };
            // Clients reject empty names; a quoted "" task name is an error anyway.
            let name = if name.is_empty() {
                "\"\"".to_string()
            } else {
                name
            };
            #[allow(deprecated)]
            out.push(lsp::DocumentSymbol {
                name,
                detail,
                kind,
                tags: None,
                deprecated: None,
                range: self.range(item.span()),
                selection_range: self.range(name_span),
                children: None,
            });
        }
        out
    }

    /// The names of the fields of the parsed block whose braces hold `offset`.
    fn fields_of_block_at(&self, offset: usize) -> Vec<String> {
        use crate::ast::{GateBody, Item};
        for item in &self.compilation.ast.items {
            let block = match item {
                Item::Task(t) => &t.block,
                Item::Agent(a) | Item::Executor(a) => &a.block,
                Item::Gate(g) => match &g.body {
                    GateBody::Long(b) => b,
                    GateBody::Short(_) => continue,
                },
                Item::Loop(l) => &l.block,
                Item::Budget(b) | Item::Defaults(b) => b,
                Item::Error(_) => continue,
            };
            if block.body.start < offset && offset < block.body.end {
                // The field whose name is under the cursor is the one being
                // completed, not one already set.
                return block
                    .fields
                    .iter()
                    .filter(|f| !(f.name.span.start <= offset && offset <= f.name.span.end))
                    .map(|f| f.name.text.clone())
                    .collect();
            }
        }
        Vec::new()
    }

    /// Completion at byte `offset`: item keywords between items, field names
    /// valid in the current block (those not yet set), task names after a
    /// task header's `:`, agent names for `agent = `, gate names inside
    /// `gates = [ … ]`, and the words `on_fail` and `output` take.
    pub fn completion(&self, offset: usize) -> Vec<lsp::CompletionItem> {
        let (ctx, prefix) = context::at(&self.source, offset);
        let mut out: Vec<lsp::CompletionItem> = Vec::new();
        match ctx {
            Context::TopLevel => {
                for k in crate::syntax::ITEM_KEYWORDS {
                    out.push(item(k, lsp::CompletionItemKind::KEYWORD, "item", None));
                }
            }
            Context::Dependency { own, listed } => {
                for n in self.defined(NameKind::Task) {
                    if own.as_deref() != Some(n.as_str()) && !listed.contains(&n) {
                        let label = literal::print_task_name(&n);
                        let doc = self.task_hover(&n);
                        out.push(item(&label, lsp::CompletionItemKind::FUNCTION, "task", doc));
                    }
                }
            }
            Context::FieldName { block, present } => {
                out = self.field_completions(offset, block, present);
            }
            Context::Value {
                block,
                field,
                in_list,
                listed,
            } => {
                out = self.value_completions(block, &field, in_list);
                // A list names each thing once.
                out.retain(|i| !listed.contains(&i.label));
            }
            Context::None => {}
        }
        if !prefix.is_empty() {
            out.retain(|i| i.label.trim_start_matches('"').starts_with(prefix.as_str()));
        }
        out
    }

    /// The names of the tasks, agents, gates or executors (`kind`)
    /// defined, each once, in order; an item that could not be read
    /// defines the name its header gives, as the checker takes it
    /// (docs/language.md, "Diagnostics"), so it is offered while it is
    /// half typed.
    fn defined(&self, kind: NameKind) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for o in self.occurrences() {
            if o.definition && o.kind == kind && !v.contains(&o.name) {
                v.push(o.name);
            }
        }
        let keyword = match kind {
            NameKind::Task => "task",
            NameKind::Agent => "agent",
            NameKind::Gate => "gate",
            NameKind::Executor => "executor",
        };
        for item in &self.compilation.ast.items {
            if let Item::Error(u) = item
                && u.keyword == Some(keyword)
                && let Some(name) = &u.name
                && !v.contains(name)
            {
                v.push(name.clone());
            }
        }
        v
    }

    /// The field names `block` takes at `offset` that are neither set
    /// (`present`, and those after the cursor) nor in conflict with one set.
    fn field_completions(
        &self,
        offset: usize,
        block: BlockKind,
        mut present: Vec<String>,
    ) -> Vec<lsp::CompletionItem> {
        let mut out = Vec::new();
        // Fields after the cursor count too, when the block parsed.
        present.extend(self.fields_of_block_at(offset));
        let has = |f: &str| present.iter().any(|p| p == f);
        // Fields that would conflict with one already set (E0010).
        let conflicts = |f: &str| match block {
            BlockKind::Task => {
                (f == "run" && (has("prompt") || has("agent")))
                    || ((f == "prompt" || f == "agent") && has("run"))
            }
            BlockKind::Gate => {
                (f == "run" && (has("agent") || has("prompt")))
                    || ((f == "agent" || f == "prompt") && has("run"))
            }
            _ => false,
        };
        for f in block.fields() {
            if !has(f) && !conflicts(f) {
                let detail = format!("{} field", block.keyword());
                let doc = field_doc(block, f).map(str::to_string);
                out.push(item(f, lsp::CompletionItemKind::FIELD, &detail, doc));
            }
        }
        out
    }

    /// The names or words the value of `field` in `block` takes (in a list
    /// with `in_list`).
    fn value_completions(
        &self,
        block: BlockKind,
        field: &str,
        in_list: bool,
    ) -> Vec<lsp::CompletionItem> {
        use BlockKind::*;
        match (field, in_list) {
            ("agent", false) if matches!(block, Task | Defaults | Gate) => self.agent_items(),
            ("resolver" | "answerer", false) if matches!(block, Task | Defaults | Loop) => {
                self.agent_items()
            }
            ("fallback", false) if block == Agent => self.agent_items(),
            ("executor", false) if matches!(block, Agent | Gate | Defaults | Loop) => self
                .defined(NameKind::Executor)
                .into_iter()
                .map(|n| {
                    let doc = self.executor_hover(&n);
                    item(&n, lsp::CompletionItemKind::OPERATOR, "executor", doc)
                })
                .collect(),
            ("gates", true) if matches!(block, Task | Defaults) => self
                .defined(NameKind::Gate)
                .into_iter()
                .map(|n| {
                    let doc = self.gate_hover(&n);
                    item(&n, lsp::CompletionItemKind::INTERFACE, "gate", doc)
                })
                .collect(),
            ("on_fail", false) if block == Gate => word_items(crate::model::OnFail::WORDS, field),
            ("on_fail", false) if block == Task => {
                word_items(crate::model::OnFail::TASK_WORDS, field)
            }
            ("on_change", false) if block == Gate => {
                word_items(crate::model::OnChange::WORDS, field)
            }
            ("output", false) if block == Agent => {
                word_items(crate::model::OutputFormat::WORDS, field)
            }
            // Inside `output = { … }`: the keys of the declarative reader.
            ("output", true) if block == Agent => crate::model::fields::OUTPUT
                .iter()
                .map(|k| {
                    let doc = super::docs::output_key_doc(k).map(str::to_string);
                    item(k, lsp::CompletionItemKind::PROPERTY, "output key", doc)
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Every agent the plan defines, as completions of a field naming one.
    fn agent_items(&self) -> Vec<lsp::CompletionItem> {
        self.defined(NameKind::Agent)
            .into_iter()
            .map(|n| {
                let doc = self.agent_hover(&n);
                item(&n, lsp::CompletionItemKind::CLASS, "agent", doc)
            })
            .collect()
    }

    /// Formatting: one edit replacing the whole document with `loopc fmt`'s
    /// output, no edit when it is already formatted, `None` when the
    /// document has syntax errors (it is not formatted, as with `loopc fmt`).
    pub fn formatting(&self) -> Option<Vec<lsp::TextEdit>> {
        let formatted = crate::fmt::format_source(&self.source).ok()?;
        if formatted == self.source {
            return Some(Vec::new());
        }
        let whole = lsp::Range::new(lsp::Position::new(0, 0), self.position(self.source.len()));
        Some(vec![lsp::TextEdit::new(whole, formatted)])
    }
}

/// Agent, executor and gate references in a block's fields (`agent = NAME`,
/// `fallback = NAME`, `resolver = NAME`, `answerer = NAME`, `executor = NAME`,
/// `gates = [NAME…]`).
fn block_refs(block: &ast::Block, push: &mut impl FnMut(NameKind, &str, Span, bool)) {
    for f in &block.fields {
        match (f.name.text.as_str(), &f.value.kind) {
            ("agent" | "fallback" | "resolver" | "answerer", ValueKind::Name(n)) => {
                push(NameKind::Agent, n, f.value.span, false);
            }
            ("executor", ValueKind::Name(n)) => push(NameKind::Executor, n, f.value.span, false),
            ("gates", ValueKind::List(items)) => {
                for v in items {
                    if let ValueKind::Name(n) = &v.kind {
                        push(NameKind::Gate, n, v.span, false);
                    }
                }
            }
            _ => {}
        }
    }
}

fn item(
    label: &str,
    kind: lsp::CompletionItemKind,
    detail: &str,
    doc: Option<String>,
) -> lsp::CompletionItem {
    lsp::CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail: Some(detail.to_string()),
        documentation: doc.map(|d| {
            lsp::Documentation::MarkupContent(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: d,
            })
        }),
        ..lsp::CompletionItem::default()
    }
}

/// The words a field takes (`on_fail`, `output`, …), as completions.
fn word_items(words: &[&str], field: &str) -> Vec<lsp::CompletionItem> {
    words
        .iter()
        .map(|w| item(w, lsp::CompletionItemKind::ENUM_MEMBER, field, None))
        .collect()
}

/// The kind of name an unparsed item's `keyword` defines, if any.
fn unparsed_kind(keyword: Option<&str>) -> Option<NameKind> {
    match keyword? {
        "task" => Some(NameKind::Task),
        "agent" => Some(NameKind::Agent),
        "gate" => Some(NameKind::Gate),
        "executor" => Some(NameKind::Executor),
        _ => None,
    }
}
