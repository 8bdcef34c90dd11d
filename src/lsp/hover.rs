//! Hover text: a Markdown summary of the task, agent or gate under the
//! cursor, as the model resolves it (with where each value comes from), and
//! the documentation of each field.

use super::analysis::{Analysis, NameKind};
use super::context::BlockKind;
use super::docs::{field_doc, one_line};
use crate::ast::{GateBody, Item};
use crate::model::{GateDefKind, Work};
use crate::plan;
use crate::span::Span;
use crate::syntax::literal::{self, Money};
use lsp_types as lsp;
use std::fmt::Write as _;

impl Analysis {
    /// Hover: a summary of the task, agent or gate named under the cursor
    /// (definition or reference), or the documentation of a field name.
    pub fn hover(&self, offset: usize) -> Option<lsp::Hover> {
        let (text, span) = match self.occurrence_at(offset) {
            Some(o) => {
                let text = match o.kind {
                    NameKind::Task => self.task_hover(&o.name),
                    NameKind::Agent => self.agent_hover(&o.name),
                    NameKind::Gate => self.gate_hover(&o.name),
                    NameKind::Executor => self.executor_hover(&o.name),
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

    pub(super) fn task_hover(&self, name: &str) -> Option<String> {
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
        let agent_timeout = self.task_work(t, &mut s);
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
        let resolver = match (&t.resolver, &d.resolver, &self.model.settings.resolver) {
            (Some(r), _, _) => Some((r, "")),
            (None, Some(r), _) => Some((r, " (from defaults)")),
            (None, None, Some(r)) => Some((r, " (from loop)")),
            (None, None, None) => None,
        };
        if let Some((r, from)) = resolver {
            let _ = writeln!(s, "- resolver: {}{from}", code(&r.name));
        }
        let attempts = match (t.attempts, d.attempts) {
            (Some(n), _) => format!("{n}"),
            (None, Some(n)) => format!("{n} (from defaults)"),
            (None, None) => format!("{} (default)", plan::DEFAULT_ATTEMPTS),
        };
        let _ = writeln!(s, "- attempts: {attempts}");
        let timeout = match (t.timeout, d.timeout, agent_timeout) {
            (Some(x), _, _) => literal::print_duration(x),
            (None, Some(x), _) => format!("{} (from defaults)", literal::print_duration(x)),
            (None, None, Some(x)) => format!("{} (from the agent)", literal::print_duration(x)),
            (None, None, None) => format!(
                "{} (default)",
                literal::print_duration(plan::DEFAULT_TIMEOUT)
            ),
        };
        let _ = writeln!(s, "- timeout: {timeout}");
        if !t.inputs.is_empty() {
            let inputs: Vec<String> = t.inputs.iter().map(|i| code(i)).collect();
            let _ = writeln!(s, "- inputs: {}", inputs.join(", "));
        }
        let protect: Vec<String> = (self.model.settings.protect.iter())
            .chain(&d.protect)
            .chain(&t.protect)
            .map(|p| code(p))
            .collect();
        if !protect.is_empty() {
            let _ = writeln!(s, "- protect: {}", protect.join(", "));
        }
        if !t.may_change.is_empty() {
            let may: Vec<String> = t.may_change.iter().map(|i| code(i)).collect();
            let _ = writeln!(s, "- may change: {}", may.join(", "));
        }
        if let Some(p) = &self.compilation.plan
            && let Some(task) = p.tasks.iter().find(|x| x.name == name)
        {
            let hex = task.key.to_hex();
            let _ = writeln!(s, "- key: {}", code(hex.get(..16).unwrap_or(&hex)));
        }
        Some(s.trim_end().to_string())
    }

    /// The hover's line of what task `t` runs (its command, or its agent
    /// and where that comes from); returns the agent's `timeout`.
    fn task_work(&self, t: &crate::model::TaskDef, s: &mut String) -> Option<std::time::Duration> {
        let d = &self.model.defaults;
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
        agent_timeout
    }

    pub(super) fn agent_hover(&self, name: &str) -> Option<String> {
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
            let _ = writeln!(s, "- timeout: {}", literal::print_duration(t));
        }
        if let Some(c) = a.cost {
            let _ = writeln!(s, "- cost cap: {} per attempt", Money(c));
        }
        if !a.env.is_empty() {
            let keys: Vec<String> = a.env.keys().map(|k| code(k)).collect();
            let _ = writeln!(s, "- env: {}", keys.join(", "));
        }
        if let Some(f) = &a.fallback {
            let _ = writeln!(s, "- fallback: {}", code(&f.name));
        }
        Some(s.trim_end().to_string())
    }

    pub(super) fn executor_hover(&self, name: &str) -> Option<String> {
        let e = self.model.executors.iter().find(|e| e.name.name == name)?;
        let mut s = format!("**executor** {}\n\n", code(name));
        match &e.run {
            Some(run) => {
                let _ = writeln!(s, "- run: {} `sh -c COMMAND`", code(&one_line(run)));
            }
            None => s.push_str("- run: missing\n"),
        }
        Some(s.trim_end().to_string())
    }

    pub(super) fn gate_hover(&self, name: &str) -> Option<String> {
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
                .map(literal::print_duration)
                .unwrap_or_else(|| format!(
                    "{} (default)",
                    literal::print_duration(plan::DEFAULT_TIMEOUT)
                ))
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
                Item::Executor(e) => (BlockKind::Executor, &e.block),
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
                // The keys of `output = { … }`.
                if let (BlockKind::Agent, "output", crate::ast::ValueKind::Map(entries)) =
                    (kind, f.name.text.as_str(), &f.value.kind)
                {
                    for e in entries {
                        let s = e.key.span;
                        if s.start <= offset && offset <= s.end {
                            let doc = super::docs::output_key_doc(&e.key.text)?;
                            return Some((format!("**output.{}**\n\n{doc}", e.key.text), s));
                        }
                    }
                }
            }
        }
        None
    }
}

/// `text` as Markdown inline code (with a fence longer than any backtick
/// run in it), hidden characters (bidi controls, other format characters)
/// escaped as every human output of loopc shows them.
fn code(text: &str) -> String {
    let text = crate::visible::escape(text, &[]);
    let text = text.as_ref();
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// `text` with hidden characters escaped (`\u{202e}`, as every human
/// output of loopc shows them) and Markdown's punctuation backslash-escaped,
/// so a title such as `fix *all* the_things` shows as written.
fn escape(text: &str) -> String {
    let text = crate::visible::escape(text, &[]);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\`*_{}[]<>()#+-.!|~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("x"), "`x`");
        assert_eq!(escape("a *b* c_d."), "a \\*b\\* c\\_d\\.");
        // A bidi override is shown, not obeyed (its escape's own
        // punctuation escaped for Markdown).
        assert_eq!(escape("x\u{202e}y"), "x\\\\u\\{202e\\}y");
        assert_eq!(code("x\u{202e}"), "`x\\u{202e}`");
    }
}
