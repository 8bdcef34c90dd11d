//! An agent's `output`: a word naming a reader (`claude-json`, …) or a map
//! of JSON paths, `output = { summary = "result" cost = "total_cost_usd" }`,
//! the declarative reader (docs/language.md "Reading any JSON agent").
//! Unknown keys are E0002, keys set twice E0003, values that are not
//! strings E0007, paths that do not parse E0009.

use super::names::suggest;
use super::{Checker, Fields};
use crate::ast::ValueKind;
use crate::diagnostic::{Code, Diagnostic};
use crate::jsonpath::JsonPath;
use crate::model::{OutputFields, OutputFormat, fields};
use crate::span::Span;
use std::sync::Arc;

impl Checker {
    /// The agent's `output` (`text` when absent or invalid).
    pub(super) fn output(&mut self, f: &Fields<'_>) -> OutputFormat {
        let Some(field) = f.get("output") else {
            return OutputFormat::Text;
        };
        if let ValueKind::Name(n) = &field.value.kind
            && let Some(hint) = reader_hint(n)
        {
            let d = Diagnostic::new(
                Code::E0007,
                format!("`output` expects a reader or a map of JSON paths, found `{n}`"),
                field.value.span,
                "no reader is called so",
            )
            .with_note(hint);
            self.push(d);
            return OutputFormat::Text;
        }
        let ValueKind::Map(entries) = &field.value.kind else {
            return self
                .word(f, "output", OutputFormat::WORDS)
                .and_then(|(w, _)| OutputFormat::from_word(&w))
                .unwrap_or(OutputFormat::Text);
        };
        let mut out = OutputFields::default();
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for e in entries {
            let key = e.key.text.as_str();
            let Some(slot) = out.slot(key) else {
                let mut d = Diagnostic::new(
                    Code::E0002,
                    format!("unknown key `{key}` in `output`"),
                    e.key.span,
                    "unknown key",
                );
                if let Some(s) = suggest(key, fields::OUTPUT.iter().copied()) {
                    d.primary.message = format!("did you mean `{s}`?");
                }
                self.push(d.with_note(format!(
                    "`output = {{ … }}` takes: {}",
                    fields::OUTPUT.join(", ")
                )));
                continue;
            };
            if let Some((_, prev)) = seen.iter().find(|(k, _)| *k == key) {
                self.push(
                    Diagnostic::new(
                        Code::E0003,
                        format!("key `{key}` is set twice in `output`"),
                        e.key.span,
                        "second value",
                    )
                    .with_label(*prev, "first set here"),
                );
                continue;
            }
            seen.push((key, e.key.span));
            let text = match &e.value.kind {
                ValueKind::String(s) | ValueKind::BlockString(s) => s.to_string(),
                ValueKind::Invalid => continue,
                other => {
                    self.push(
                        Diagnostic::new(
                            Code::E0007,
                            format!("`output.{key}` expects a path string, found {}", other.describe()),
                            e.value.span,
                            "expected a string",
                        )
                        .with_note("write where the value is in each JSON message, e.g. `\"usage.input_tokens\"`"),
                    );
                    continue;
                }
            };
            match JsonPath::parse(&text) {
                Ok(p) => *slot = Some(p),
                Err(why) => self.push(
                    Diagnostic::new(
                        Code::E0009,
                        format!("`output.{key}` is not a JSON path: {why}"),
                        e.value.span,
                        "not a path",
                    )
                    .with_note("a path is keys and indices separated by `.`, with `[key=value]` filters: `\"[type=result].usage.input_tokens\"`"),
                ),
            }
        }
        OutputFormat::Fields(Arc::new(out))
    }
}

/// What to write instead of `word`, a likely name for a reader that is
/// not one: a CLI's name or its `--output-format` value (`claude`,
/// `stream-json`, `claude-stream-json`, `json`). `None` for a real reader
/// or a word that looks like none (the plain E0007 lists them all).
fn reader_hint(word: &str) -> Option<String> {
    if OutputFormat::WORDS.contains(&word) {
        return None;
    }
    let stem = word
        .strip_suffix("-stream-json")
        .or_else(|| word.strip_suffix("-jsonl"))
        .unwrap_or(word);
    let reader = format!("{stem}-json");
    if OutputFormat::WORDS.contains(&reader.as_str()) {
        return Some(format!(
            "did you mean `{reader}`? it reads {stem}'s JSON output, one document or a \
             stream of lines alike"
        ));
    }
    matches!(word, "json" | "stream-json" | "jsonl").then(|| {
        "name the agent's reader (`claude-json` for Claude Code's `json` and \
         `stream-json`, `codex-json`, …), or map its JSON with `output = { summary = \"…\" }`"
            .to_string()
    })
}
