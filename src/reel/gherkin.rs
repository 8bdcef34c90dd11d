//! REEL Gherkin specs (`*.feature`).
//!
//! ```gherkin
//! Feature: Auth refactor
//!
//!   @id:a1b2c3d4 @depends-on:b2c3d4e5
//!   @acceptance:pytest -q tests/test_session.py
//!   Scenario: Extract session manager
//!     Given the session handling lives in the route handlers
//!     When it moves into a module of its own
//!     Then every public route behaves as before
//! ```
//!
//! Each `Scenario:` (or `Scenario Outline:`, `Scenario Template:`,
//! `Example:`) is a task: its name is the title and its lines (steps, doc
//! strings, tables, examples), after the `Background:` steps if there are
//! any, are the prompt. The tags on the lines before it carry the metadata:
//! `@id:<8 hex>`, `@depends-on:<id>[,<id>…]` (repeatable) and
//! `@acceptance:<command>`, which runs to the end of its line since commands
//! have spaces. Other tags are ignored. A scenario without `@id:` gets the
//! id of its position in the file: `00000001` for the first scenario,
//! `00000002` for the second, and so on. English keywords only.

use super::text::{self, Line};
use super::{Located, Spec, SpecTask};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;

/// One `@name[:value]` tag.
#[derive(Clone, Debug)]
struct Tag<'a> {
    name: &'a str,
    value: Option<&'a str>,
    span: Span,
    value_span: Span,
}

struct Scenario<'a> {
    ordinal: usize,
    tags: Vec<Tag<'a>>,
    title: Option<Located>,
    keyword: Span,
    start: usize,
    end: usize,
    body: Vec<Line<'a>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Start,
    Description,
    Background,
    Scenario,
}

const SCENARIO_KEYWORDS: [&str; 4] = [
    "Scenario Outline:",
    "Scenario Template:",
    "Scenario:",
    "Example:",
];

/// Reads a Gherkin spec. Diagnostics: E0001 for text before `Feature:`, a
/// second `Feature:` or a malformed tag line; E0003 for a second `@id:` or
/// `@acceptance:` on one scenario; E0008 for a scenario without an
/// acceptance command.
pub fn parse(source: &str) -> (Spec, Vec<Diagnostic>) {
    let mut spec = Spec::default();
    let mut diags = Vec::new();
    let mut mode = Mode::Start;
    let mut feature: Option<Span> = None;
    let mut reported_start = false;
    let mut background: Vec<Line> = Vec::new();
    let mut current: Option<Scenario> = None;
    let mut pending: Vec<(Line, Vec<Tag>)> = Vec::new();
    let mut docstring: Option<&str> = None;
    let mut ordinal = 0usize;
    let lines = text::lines(source);

    for line in lines {
        let t = line.text.trim_start();
        if let Some(delim) = docstring {
            if t.starts_with(delim) {
                docstring = None;
            }
            push(mode, &line, &mut current, &mut background);
            continue;
        }
        if t.starts_with("\"\"\"") || t.starts_with("```") {
            docstring = Some(&t[..3]);
            flush_tags(&mut pending, &mut current);
            push(mode, &line, &mut current, &mut background);
            continue;
        }
        if t.starts_with('#') {
            continue;
        }
        if t.is_empty() {
            if pending.is_empty() {
                push(mode, &line, &mut current, &mut background);
            }
            continue;
        }
        if t.starts_with('@') {
            let tags = tags(&line, t, &mut diags);
            pending.push((line, tags));
            continue;
        }
        let keyword = |k: &str| t.strip_prefix(k);
        if keyword("Feature:").is_some() {
            finish(current.take(), &background, &mut spec, &mut diags);
            if let Some(first) = feature {
                diags.push(
                    Diagnostic::new(Code::E0001, "a second `Feature:` in one file", line.span_of(t), "second feature")
                        .with_label(first, "first feature here")
                        .with_note("a `.feature` file holds one feature; put the other one in a file of its own"),
                );
            }
            feature.get_or_insert(line.span_of(t));
            pending.clear();
            mode = Mode::Description;
            continue;
        }
        if keyword("Background:").is_some() {
            finish(current.take(), &background, &mut spec, &mut diags);
            pending.clear();
            background.clear();
            mode = Mode::Background;
            continue;
        }
        if keyword("Rule:").is_some() {
            finish(current.take(), &background, &mut spec, &mut diags);
            pending.clear();
            mode = Mode::Description;
            continue;
        }
        if let Some((k, name)) = SCENARIO_KEYWORDS
            .iter()
            .find_map(|k| t.strip_prefix(k).map(|n| (*k, n)))
        {
            finish(current.take(), &background, &mut spec, &mut diags);
            if feature.is_none() && !reported_start {
                reported_start = true;
                diags.push(expected_feature(&line, t));
            }
            ordinal += 1;
            let name = name.trim();
            let first = pending.first().map_or(line.start, |(l, _)| l.start);
            current = Some(Scenario {
                ordinal,
                tags: pending.drain(..).flat_map(|(_, tags)| tags).collect(),
                title: (!name.is_empty()).then(|| Located::new(name, line.span_of(name))),
                keyword: line.span_of(&t[..k.len() - 1]),
                start: first,
                end: line.span().end,
                body: Vec::new(),
            });
            mode = Mode::Scenario;
            continue;
        }
        // Tags before `Examples:` or a step belong to the scenario's text.
        flush_tags(&mut pending, &mut current);
        match mode {
            Mode::Start => {
                if !reported_start {
                    reported_start = true;
                    diags.push(expected_feature(&line, t));
                }
            }
            Mode::Description => {}
            Mode::Background | Mode::Scenario => push(mode, &line, &mut current, &mut background),
        }
    }
    finish(current.take(), &background, &mut spec, &mut diags);
    (spec, diags)
}

fn expected_feature(line: &Line<'_>, t: &str) -> Diagnostic {
    let shown: String = t.chars().take(40).collect();
    Diagnostic::new(
        Code::E0001,
        "expected `Feature:`",
        line.span_of(t),
        format!("found `{shown}`"),
    )
    .with_note("a `.feature` file starts with `Feature: <name>` (tags and `#` comments may come before it)")
}

fn flush_tags<'a>(pending: &mut Vec<(Line<'a>, Vec<Tag<'a>>)>, current: &mut Option<Scenario<'a>>) {
    if let Some(s) = current {
        for (line, _) in pending.drain(..) {
            s.body.push(line);
            s.end = line.span().end;
        }
    } else {
        pending.clear();
    }
}

fn push<'a>(
    mode: Mode,
    line: &Line<'a>,
    current: &mut Option<Scenario<'a>>,
    background: &mut Vec<Line<'a>>,
) {
    match (mode, current) {
        (Mode::Scenario, Some(s)) => {
            s.body.push(*line);
            if !line.is_blank() {
                s.end = line.span().end;
            }
        }
        (Mode::Background, _) => background.push(*line),
        _ => {}
    }
}

/// The tags of a tag line `t` (the line's text from its first `@`).
fn tags<'a>(line: &Line<'a>, t: &'a str, diags: &mut Vec<Diagnostic>) -> Vec<Tag<'a>> {
    let mut out = Vec::new();
    let mut rest = t;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with('#') {
            break;
        }
        let Some(body) = rest.strip_prefix('@') else {
            let word = rest.split_whitespace().next().unwrap_or(rest);
            diags.push(
                Diagnostic::new(
                    Code::E0001,
                    "expected a tag `@name`",
                    line.span_of(word),
                    format!("found `{word}`"),
                )
                .with_note("a tag line holds only tags; `@acceptance:` takes the rest of its line"),
            );
            break;
        };
        let name_end = body
            .find(|c: char| c == ':' || c.is_whitespace())
            .unwrap_or(body.len());
        let name = &body[..name_end];
        let (value, next) = match body[name_end..].strip_prefix(':') {
            Some(v) if name == "acceptance" => (Some(v.trim()), ""),
            Some(v) => {
                let end = v.find(char::is_whitespace).unwrap_or(v.len());
                (Some(&v[..end]), &v[end..])
            }
            None => (None, &body[name_end..]),
        };
        let whole = &rest[..rest.len() - next.len()];
        let span = line.span_of(whole.trim_end());
        out.push(Tag {
            name,
            value,
            span,
            value_span: value.map_or(span, |v| if v.is_empty() { span } else { line.span_of(v) }),
        });
        rest = next;
    }
    out
}

fn finish(
    s: Option<Scenario<'_>>,
    background: &[Line<'_>],
    spec: &mut Spec,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(s) = s else { return };
    let mut id: Option<(Located, Span)> = None;
    let mut acceptance: Option<(Located, Span)> = None;
    let mut deps = Vec::new();
    for tag in &s.tags {
        let value = tag.value.unwrap_or("");
        match tag.name {
            "id" => {
                if let Some((_, first)) = &id {
                    diags.push(duplicate("id", tag.span, *first));
                } else {
                    id = Some((Located::new(value, tag.value_span), tag.span));
                }
            }
            "acceptance" => {
                if let Some((_, first)) = &acceptance {
                    diags.push(duplicate("acceptance", tag.span, *first));
                } else {
                    acceptance = Some((Located::new(value, tag.value_span), tag.span));
                }
            }
            "depends-on" | "depends_on" | "depends" => {
                let v = tag.value.unwrap_or("");
                for part in v.split(',') {
                    let part = part.trim();
                    if !part.is_empty() {
                        // `part` is a slice of the tag's value, itself of the line.
                        let at = part.as_ptr() as usize - v.as_ptr() as usize;
                        let start = tag.value_span.start + at;
                        deps.push(Located::new(part, Span::new(start, start + part.len())));
                    }
                }
            }
            _ => {}
        }
    }
    let (id, generated_id) = match id {
        Some((id, _)) => (id, false),
        None => (Located::new(format!("{:08x}", s.ordinal), s.keyword), true),
    };
    let acceptance = match acceptance {
        Some((a, _)) if !a.text.trim().is_empty() => Some(a),
        Some((_, tag)) => {
            diags.push(
                Diagnostic::new(
                    Code::E0008,
                    format!("task `{}` has an empty acceptance command", id.text),
                    tag,
                    "no command after `@acceptance:`",
                )
                .with_note("write it as `@acceptance:pytest -q tests/test_x.py` on its own line"),
            );
            None
        }
        None => {
            diags.push(super::missing_acceptance(
                &id.text,
                s.keyword,
                "tag the scenario with `@acceptance:COMMAND` on the line above it",
            ));
            None
        }
    };
    // The background's steps come first: they set the scene of every scenario.
    let description = match (text::block(background), text::block(&s.body)) {
        (Some((bg, _)), Some((own, span))) => Some(Located::new(format!("{bg}\n{own}"), span)),
        (None, Some((own, span))) => Some(Located::new(own, span)),
        (Some((bg, span)), None) => Some(Located::new(bg, span)),
        (None, None) => None,
    };
    spec.tasks.push(SpecTask {
        id,
        generated_id,
        title: s.title,
        description,
        acceptance,
        depends_on: deps,
        header: s.keyword,
        span: Span::new(s.start, s.end),
    });
}

fn duplicate(what: &str, second: Span, first: Span) -> Diagnostic {
    Diagnostic::new(
        Code::E0003,
        format!("a second `@{what}:` tag on one scenario"),
        second,
        format!("second `@{what}:`"),
    )
    .with_label(first, "first one here")
    .with_note(format!("a scenario has one `@{what}:` tag"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scenarios_tags_and_steps() {
        let src = "# comment\n@wip\nFeature: F\n  Some text.\n\n  Background:\n    Given a repo\n\n  @id:a1b2c3d4 @depends-on:b2c3d4e5,c3d4e5f6\n  @acceptance:pytest -q tests/x.py\n  Scenario: First\n    When it runs\n    Then it passes\n\n  Scenario: Second\n    Given nothing\n";
        let (spec, diags) = parse(src);
        assert_eq!(diags.len(), 1, "{diags:?}"); // the second scenario has no acceptance
        assert_eq!(diags[0].code, Code::E0008);
        let t = &spec.tasks[0];
        assert_eq!(t.id.text, "a1b2c3d4");
        assert_eq!(&src[t.id.span.range()], "a1b2c3d4");
        assert_eq!(t.acceptance.as_ref().unwrap().text, "pytest -q tests/x.py");
        assert_eq!(
            &src[t.acceptance.as_ref().unwrap().span.range()],
            "pytest -q tests/x.py"
        );
        let deps: Vec<&str> = t.depends_on.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(deps, ["b2c3d4e5", "c3d4e5f6"]);
        assert_eq!(&src[t.depends_on[1].span.range()], "c3d4e5f6");
        assert_eq!(
            t.description.as_ref().unwrap().text,
            "Given a repo\nWhen it runs\nThen it passes"
        );
        let second = &spec.tasks[1];
        assert!(second.generated_id);
        assert_eq!(second.id.text, "00000002");
        assert_eq!(&src[second.id.span.range()], "Scenario");
    }
}
