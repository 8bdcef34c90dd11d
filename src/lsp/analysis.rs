//! Everything the language server knows about one document, computed from
//! its text on every change, and the answers to the editor's requests.
//!
//! Offsets inside this module are byte offsets into the document; LSP
//! positions (0-based lines, UTF-16 columns) are converted at the edges with
//! [`LineIndex`]. Nothing here panics on any text: the parser never fails
//! and every lookup tolerates missing or broken items.

use super::context::{self, BlockKind, Context};
use crate::ast::{self, GateBody, Item, ValueKind};
use crate::check::{GateDefKind, Model, Work};
use crate::diagnostic::{self, Code, LineIndex, Severity};
use crate::span::Span;
use crate::{Compilation, plan};
use lsp_types as lsp;
use std::fmt::Write as _;
use std::time::Duration;

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
    /// does not hold it (spec §2: it is ignored, as `loopc check` does), but
    /// the client counts it as one UTF-16 unit on line 0.
    pub bom: bool,
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
        let (source, bom) = strip_bom(source);
        let (compilation, model) = crate::compile_with_model(name, source.clone());
        Analysis {
            index: LineIndex::new(&source),
            source,
            compilation,
            model,
            bom,
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
    /// diagnostics: the primary span is the range, the code is the §4 code,
    /// the message is the headline followed by the primary label and the
    /// notes, and secondary labels become related information in `uri`.
    pub fn diagnostics(&self, uri: &lsp::Uri) -> Vec<lsp::Diagnostic> {
        self.compilation
            .diagnostics
            .iter()
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

    /// Every task, agent and gate name in the document, definitions and
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
                Item::Agent(a) => push(NameKind::Agent, &a.name.text, a.name.span, true),
                Item::Gate(g) => {
                    push(NameKind::Gate, &g.name.text, g.name.span, true);
                    if let GateBody::Long(b) = &g.body {
                        block_refs(b, &mut push);
                    }
                }
                Item::Defaults(b) => block_refs(b, &mut push),
                Item::Loop(_) | Item::Budget(_) | Item::Error(_) => {}
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

    /// Go to definition: from a dependency, an `agent = …` or a `gates`
    /// entry to the definition's name. `None` on a definition itself or
    /// on an unknown name.
    pub fn definition(&self, uri: &lsp::Uri, offset: usize) -> Option<lsp::Location> {
        let o = self.occurrence_at(offset)?;
        if o.definition {
            return None;
        }
        let span = self.definition_span(o.kind, &o.name)?;
        Some(lsp::Location::new(uri.clone(), self.range(span)))
    }

    /// Hover: a summary of the task, agent or gate named under the cursor
    /// (definition or reference), or the documentation of a field name.
    pub fn hover(&self, offset: usize) -> Option<lsp::Hover> {
        let (text, span) = match self.occurrence_at(offset) {
            Some(o) => {
                let text = match o.kind {
                    NameKind::Task => self.task_hover(&o.name),
                    NameKind::Agent => self.agent_hover(&o.name),
                    NameKind::Gate => self.gate_hover(&o.name),
                };
                (text?, o.span)
            }
            None => self.field_hover(offset)?,
        };
        Some(lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: text,
            }),
            range: Some(self.range(span)),
        })
    }

    fn task_hover(&self, name: &str) -> Option<String> {
        let t = self.model.tasks.iter().find(|t| t.name.text == name)?;
        let d = &self.model.defaults;
        let mut s = format!("**task** {}", code(name));
        if let Some(title) = &t.title {
            let _ = write!(s, " — {}", escape(&one_line(title)));
        }
        s.push_str("\n\n");
        let deps: Vec<String> = t.dependencies.iter().map(|d| code(&d.text)).collect();
        let _ = writeln!(
            s,
            "- dependencies: {}",
            if deps.is_empty() {
                "none".to_string()
            } else {
                deps.join(", ")
            }
        );
        let mut agent_timeout = None;
        match &t.work {
            Work::Run(cmd) => {
                let _ = writeln!(s, "- command task: runs {}", code(&one_line(cmd)));
            }
            Work::Prompt(_) | Work::Invalid => {
                let agent = match (&t.agent, &d.agent) {
                    (Some(a), _) => Some((a.name.as_str(), "")),
                    (None, Some(a)) => Some((a.name.as_str(), " (from defaults)")),
                    (None, None) => None,
                };
                match agent {
                    Some((a, from)) => {
                        let _ = writeln!(s, "- agent: {}{from}", code(a));
                        agent_timeout = self
                            .model
                            .agents
                            .iter()
                            .find(|x| x.name.name == a)
                            .and_then(|x| x.timeout);
                    }
                    None => s.push_str("- agent: none (E0013)\n"),
                }
            }
        }
        let gates = match (&t.gates, &d.gates) {
            (Some(g), _) => Some((g, "")),
            (None, Some(g)) => Some((g, " (from defaults)")),
            (None, None) => None,
        };
        match gates {
            Some((g, from)) if !g.is_empty() => {
                let names: Vec<String> = g.iter().map(|r| code(&r.name)).collect();
                let _ = writeln!(s, "- gates: {}{from}", names.join(", "));
            }
            _ => s.push_str("- gates: none\n"),
        }
        if let Some(a) = &t.accept {
            let _ = writeln!(s, "- accept: {}", code(&one_line(a)));
        }
        let attempts = match (t.attempts, d.attempts) {
            (Some(n), _) => format!("{n}"),
            (None, Some(n)) => format!("{n} (from defaults)"),
            (None, None) => format!("{} (default)", plan::DEFAULT_ATTEMPTS),
        };
        let _ = writeln!(s, "- attempts: {attempts}");
        let timeout = match (t.timeout, d.timeout, agent_timeout) {
            (Some(x), _, _) => duration(x),
            (None, Some(x), _) => format!("{} (from defaults)", duration(x)),
            (None, None, Some(x)) => format!("{} (from the agent)", duration(x)),
            (None, None, None) => format!("{} (default)", duration(plan::DEFAULT_TIMEOUT)),
        };
        let _ = writeln!(s, "- timeout: {timeout}");
        if !t.inputs.is_empty() {
            let inputs: Vec<String> = t.inputs.iter().map(|i| code(i)).collect();
            let _ = writeln!(s, "- inputs: {}", inputs.join(", "));
        }
        if let Some(p) = &self.compilation.plan
            && let Some(task) = p.tasks.iter().find(|x| x.name == name)
        {
            let hex = task.key.to_hex();
            let _ = writeln!(s, "- key: {}", code(hex.get(..16).unwrap_or(&hex)));
        }
        Some(s.trim_end().to_string())
    }

    fn agent_hover(&self, name: &str) -> Option<String> {
        let a = self.model.agents.iter().find(|a| a.name.name == name)?;
        let mut s = format!("**agent** {}\n\n", code(name));
        match &a.run {
            Some(run) => {
                let _ = writeln!(s, "- run: {}", code(&one_line(run)));
            }
            None => s.push_str("- run: missing\n"),
        }
        let _ = writeln!(s, "- output: {}", a.output.as_str());
        if let Some(t) = a.timeout {
            let _ = writeln!(s, "- timeout: {}", duration(t));
        }
        if let Some(c) = a.cost {
            let _ = writeln!(s, "- cost cap: {} per attempt", money(c));
        }
        if !a.env.is_empty() {
            let keys: Vec<String> = a.env.keys().map(|k| code(k)).collect();
            let _ = writeln!(s, "- env: {}", keys.join(", "));
        }
        Some(s.trim_end().to_string())
    }

    fn gate_hover(&self, name: &str) -> Option<String> {
        let g = self.model.gates.iter().find(|g| g.name.name == name)?;
        let mut s = format!("**gate** {}\n\n", code(name));
        match &g.kind {
            GateDefKind::Command(cmd) => {
                let _ = writeln!(s, "- command: {}", code(&one_line(cmd)));
            }
            GateDefKind::Agent { agent, prompt } => {
                let _ = writeln!(s, "- agent-judged by {}", code(&agent.name));
                let _ = writeln!(s, "- prompt: {}", escape(&one_line(prompt)));
            }
            GateDefKind::Invalid => s.push_str("- invalid (see diagnostics)\n"),
        }
        let _ = writeln!(s, "- on_fail: {}", g.on_fail.as_str());
        let _ = writeln!(
            s,
            "- timeout: {}",
            g.timeout
                .map(duration)
                .unwrap_or_else(|| format!("{} (default)", duration(plan::DEFAULT_TIMEOUT)))
        );
        Some(s.trim_end().to_string())
    }

    /// The documentation of the field name under `offset`.
    fn field_hover(&self, offset: usize) -> Option<(String, Span)> {
        for item in &self.compilation.ast.items {
            let (kind, block) = match item {
                Item::Loop(l) => (BlockKind::Loop, &l.block),
                Item::Budget(b) => (BlockKind::Budget, b),
                Item::Defaults(b) => (BlockKind::Defaults, b),
                Item::Agent(a) => (BlockKind::Agent, &a.block),
                Item::Gate(g) => match &g.body {
                    GateBody::Long(b) => (BlockKind::Gate, b),
                    GateBody::Short(_) => continue,
                },
                Item::Task(t) => (BlockKind::Task, &t.block),
                Item::Error(_) => continue,
            };
            for f in &block.fields {
                let s = f.name.span;
                if s.start <= offset && offset <= s.end {
                    let doc = field_doc(kind, &f.name.text)?;
                    let text = format!("**{}.{}**\n\n{doc}", kind.keyword(), f.name.text);
                    return Some((text, s));
                }
            }
        }
        None
    }

    /// Tasks, agents and gates as document symbols (hierarchy-free), in
    /// source order; each range is the whole item, the selection its name.
    pub fn symbols(&self) -> Vec<lsp::DocumentSymbol> {
        let mut out = Vec::new();
        for item in &self.compilation.ast.items {
            let (name, detail, kind, name_span) = match item {
                Item::Task(t) => (
                    t.name.text.clone(),
                    t.title.as_ref().map(|s| one_line(&s.text)),
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
                Item::Agent(a) => &a.block,
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
        let names = |kind: NameKind| -> Vec<String> {
            let mut v: Vec<String> = Vec::new();
            for o in self.occurrences() {
                if o.definition && o.kind == kind && !v.contains(&o.name) {
                    v.push(o.name);
                }
            }
            v
        };
        let mut out: Vec<lsp::CompletionItem> = Vec::new();
        match ctx {
            Context::TopLevel => {
                for k in crate::syntax::ITEM_KEYWORDS {
                    out.push(item(k, lsp::CompletionItemKind::KEYWORD, "item", None));
                }
            }
            Context::Dependency { own } => {
                for n in names(NameKind::Task) {
                    if own.as_deref() != Some(n.as_str()) {
                        let label = if n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                            && n.chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                        {
                            n.clone()
                        } else {
                            format!("\"{n}\"")
                        };
                        let doc = self.task_hover(&n);
                        out.push(item(&label, lsp::CompletionItemKind::FUNCTION, "task", doc));
                    }
                }
            }
            Context::FieldName { block, mut present } => {
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
            }
            Context::Value {
                block,
                field,
                in_list,
            } => match (field.as_str(), in_list) {
                ("agent", false)
                    if matches!(
                        block,
                        BlockKind::Task | BlockKind::Defaults | BlockKind::Gate
                    ) =>
                {
                    for n in names(NameKind::Agent) {
                        let doc = self.agent_hover(&n);
                        out.push(item(&n, lsp::CompletionItemKind::CLASS, "agent", doc));
                    }
                }
                ("gates", true) if matches!(block, BlockKind::Task | BlockKind::Defaults) => {
                    for n in names(NameKind::Gate) {
                        let doc = self.gate_hover(&n);
                        out.push(item(&n, lsp::CompletionItemKind::INTERFACE, "gate", doc));
                    }
                }
                ("on_fail", false) if block == BlockKind::Gate => {
                    for w in ["retry", "block", "fail"] {
                        out.push(item(
                            w,
                            lsp::CompletionItemKind::ENUM_MEMBER,
                            "on_fail",
                            None,
                        ));
                    }
                }
                ("output", false) if block == BlockKind::Agent => {
                    for w in ["text", "claude-json", "codex-json"] {
                        out.push(item(
                            w,
                            lsp::CompletionItemKind::ENUM_MEMBER,
                            "output",
                            None,
                        ));
                    }
                }
                _ => {}
            },
            Context::None => {}
        }
        if !prefix.is_empty() {
            out.retain(|i| i.label.trim_start_matches('"').starts_with(prefix.as_str()));
        }
        out
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

/// Agent and gate references in a block's fields (`agent = NAME`, `gates = [NAME…]`).
fn block_refs(block: &ast::Block, push: &mut impl FnMut(NameKind, &str, Span, bool)) {
    for f in &block.fields {
        match (f.name.text.as_str(), &f.value.kind) {
            ("agent", ValueKind::Name(n)) => push(NameKind::Agent, n, f.value.span, false),
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

/// What each field means (spec §3), for hover and completion.
pub fn field_doc(block: BlockKind, field: &str) -> Option<&'static str> {
    use BlockKind::*;
    Some(match (block, field) {
        (Loop, "base") => "Branch to start from (default: the branch checked out).",
        (Loop, "branch") => "Integration branch (default `loop/<name or file stem>`).",
        (Loop, "parallel") => "Tasks at once (default 1; `-j` overrides).",
        (Loop, "setup") => "Command run in every new worktree before the agent.",
        (Budget, "iterations") => "Agent attempts across the whole run.",
        (Budget, "time") => "Wall clock for the whole run (a duration such as `2h`).",
        (Budget, "cost") => "Sum of what agents report, in dollars (`$20`).",
        (Budget, "failures") => "Consecutive failed attempts that stop the run (default 3).",
        (Budget, "wait") => {
            "The most time spent waiting for agents' usage or rate limits to reset, in all (a duration)."
        }
        (Agent, "run") => "Shell command that starts the agent (required); the prompt is on stdin.",
        (Agent, "output") => {
            "`text` (default), `claude-json` (Claude Code's JSON result) or `codex-json` (`codex exec --json` events)."
        }
        (Agent, "timeout") => "Per-attempt timeout (default 30m).",
        (Agent, "cost") => "Per-attempt cost cap, exported as `LOOP_COST_CAP_USD`.",
        (Agent | Defaults | Task, "env") => {
            "Environment map `{ KEY = \"value\" }`; agent, then defaults, then task (later wins)."
        }
        (Gate, "run") => "Command gate: passes on exit status 0.",
        (Gate, "agent") => "Agent-judged gate: the agent reviews the diff read-only.",
        (Gate, "prompt") => "What the reviewing agent is asked (required with `agent`).",
        (Gate, "timeout") => "Timeout of one gate run (default 30m).",
        (Gate, "on_fail") => "`retry` (default), `block` or `fail`.",
        (Defaults, "agent") => "Agent of tasks that set none.",
        (Defaults, "gates") => "Gates of tasks that set none.",
        (Defaults, "attempts") => "Attempts per task (default 3).",
        (Defaults, "timeout") => "Per-attempt timeout of tasks that set none.",
        (Task, "prompt") => "The agent's instructions: makes this an agent task.",
        (Task, "run") => "A shell command: makes this a command task (no agent).",
        (Task, "agent") => "The agent doing this task (default `defaults.agent`).",
        (Task, "accept") => "The task's own acceptance check, run before its gates.",
        (Task, "gates") => "Gates the result must pass (replaces `defaults.gates`).",
        (Task, "attempts") => "Attempts allowed (default `defaults.attempts`, else 3).",
        (Task, "timeout") => "Per-attempt timeout.",
        (Task, "inputs") => {
            "Globs of files (relative to the repo root) that are part of the cache key."
        }
        _ => return None,
    })
}

/// `text` as Markdown inline code (with a fence longer than any backtick run in it).
fn code(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// `text` with Markdown's punctuation backslash-escaped, so a title such
/// as `fix *all* the_things` shows as written.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\`*_{}[]<>()#+-.!|~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The first line of `text`, cut to 80 characters.
fn one_line(text: &str) -> String {
    let first = text.trim().lines().next().unwrap_or("");
    let mut s: String = first.chars().take(80).collect();
    if first.chars().count() > 80 || text.trim().lines().count() > 1 {
        s.push('…');
    }
    s
}

/// A duration the way plans write it (`1h30m`, `500ms`).
pub fn duration(d: Duration) -> String {
    let mut ms = d.as_millis();
    if ms == 0 {
        return "0s".to_string();
    }
    let mut s = String::new();
    for (unit, len) in [
        ("d", 86_400_000u128),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
        ("ms", 1),
    ] {
        if ms >= len {
            let _ = write!(s, "{}{unit}", ms / len);
            ms %= len;
        }
    }
    s
}

/// Micro-dollars as `$1.50`, `$0.000125`.
pub fn money(micros: u64) -> String {
    let whole = micros / 1_000_000;
    let frac = micros % 1_000_000;
    if frac == 0 {
        return format!("${whole}");
    }
    let digits = format!("{frac:06}");
    let digits = digits.trim_end_matches('0');
    let digits = if digits.len() < 2 {
        format!("{digits:0<2}")
    } else {
        digits.to_string()
    };
    format!("${whole}.{digits}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(duration(Duration::from_secs(5400)), "1h30m");
        assert_eq!(duration(Duration::from_millis(500)), "500ms");
        assert_eq!(money(1_500_000), "$1.50");
        assert_eq!(money(125), "$0.000125");
        assert_eq!(money(2_000_000), "$2");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("x"), "`x`");
        assert_eq!(escape("a *b* c_d."), "a \\*b\\* c\\_d\\.");
    }
}
