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
    let mut r = Reader {
        spec: Spec::default(),
        diags: Vec::new(),
        mode: Mode::Start,
        feature: None,
        reported_start: false,
        background: Vec::new(),
        current: None,
        pending: Vec::new(),
        docstring: None,
        ordinal: 0,
    };
    for line in text::lines(source) {
        r.line(line);
    }
    r.finish();
    (r.spec, r.diags)
}

/// What [`parse`] has read so far.
struct Reader<'a> {
    spec: Spec,
    diags: Vec<Diagnostic>,
    mode: Mode,
    /// The first `Feature:` line's.
    feature: Option<Span>,
    /// Text before `Feature:` was reported (once a file).
    reported_start: bool,
    background: Vec<Line<'a>>,
    /// The scenario being read.
    current: Option<Scenario<'a>>,
    /// Tag lines not given to a scenario yet, with their tags.
    pending: Vec<(Line<'a>, Vec<Tag<'a>>)>,
    /// Inside a doc string: the delimiter that ends it.
    docstring: Option<&'a str>,
    /// The scenarios started.
    ordinal: usize,
}

impl<'a> Reader<'a> {
    /// Reads the next line.
    fn line(&mut self, line: Line<'a>) {
        let t = line.text.trim_start();
        if let Some(delim) = self.docstring {
            if t.starts_with(delim) {
                self.docstring = None;
            }
            self.push(&line);
            return;
        }
        if t.starts_with("\"\"\"") || t.starts_with("```") {
            self.docstring = Some(&t[..3]);
            flush_tags(&mut self.pending, &mut self.current);
            self.push(&line);
            return;
        }
        if t.starts_with('#') {
            return;
        }
        if t.is_empty() {
            if self.pending.is_empty() {
                self.push(&line);
            }
            return;
        }
        if t.starts_with('@') {
            let tags = tags(&line, t, &mut self.diags);
            self.pending.push((line, tags));
            return;
        }
        if self.keyword_line(&line, t) {
            return;
        }
        // Tags before `Examples:` or a step belong to the scenario's text.
        flush_tags(&mut self.pending, &mut self.current);
        match self.mode {
            Mode::Start => {
                if !self.reported_start {
                    self.reported_start = true;
                    self.diags.push(expected_feature(&line, t));
                }
            }
            Mode::Description => {}
            Mode::Background | Mode::Scenario => self.push(&line),
        }
    }

    /// Reads `line` (text `t`) when it starts a feature, background, rule
    /// or scenario; false when it does none of these.
    fn keyword_line(&mut self, line: &Line<'a>, t: &'a str) -> bool {
        let keyword = |k: &str| t.strip_prefix(k);
        if keyword("Feature:").is_some() {
            self.finish();
            if let Some(first) = self.feature {
                self.diags.push(
                    Diagnostic::new(Code::E0001, "a second `Feature:` in one file", line.span_of(t), "second feature")
                        .with_label(first, "first feature here")
                        .with_note("a `.feature` file holds one feature; put the other one in a file of its own"),
                );
            }
            self.feature.get_or_insert(line.span_of(t));
            self.pending.clear();
            self.mode = Mode::Description;
            return true;
        }
        if keyword("Background:").is_some() {
            self.finish();
            self.pending.clear();
            self.background.clear();
            self.mode = Mode::Background;
            return true;
        }
        if keyword("Rule:").is_some() {
            self.finish();
            self.pending.clear();
            self.mode = Mode::Description;
            return true;
        }
        let Some((k, name)) = SCENARIO_KEYWORDS
            .iter()
            .find_map(|k| t.strip_prefix(k).map(|n| (*k, n)))
        else {
            return false;
        };
        self.finish();
        if self.feature.is_none() && !self.reported_start {
            self.reported_start = true;
            self.diags.push(expected_feature(line, t));
        }
        self.ordinal += 1;
        let name = name.trim();
        let first = self.pending.first().map_or(line.start, |(l, _)| l.start);
        self.current = Some(Scenario {
            ordinal: self.ordinal,
            tags: self.pending.drain(..).flat_map(|(_, tags)| tags).collect(),
            title: (!name.is_empty()).then(|| Located::new(name, line.span_of(name))),
            keyword: line.span_of(&t[..k.len() - 1]),
            start: first,
            end: line.span().end,
            body: Vec::new(),
        });
        self.mode = Mode::Scenario;
        true
    }

    /// `line` added to the scenario or background being read, if any.
    fn push(&mut self, line: &Line<'a>) {
        push(self.mode, line, &mut self.current, &mut self.background);
    }

    /// Ends the scenario being read, if any.
    fn finish(&mut self) {
        finish(
            self.current.take(),
            &self.background,
            &mut self.spec,
            &mut self.diags,
        );
    }
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
