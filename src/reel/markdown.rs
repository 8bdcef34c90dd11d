//! REEL Markdown specs (`*.md`).
//!
//! ```markdown
//! # Auth refactor                      <- optional; text before the first task is ignored
//!
//! ## a1b2c3d4: Extract session manager <- a task: `## <id>: <title>`
//!
//! Free text: the description, given to the agent as its prompt.
//!
//! **Depends on:** b2c3d4e5, c3d4e5f6   <- optional, ids separated by commas
//! **Acceptance:** `pytest -q tests/test_session.py`
//! ```
//!
//! The reader is line based: every level-2 ATX heading outside a fenced code
//! block starts a task, and a level-1 heading ends it. `**Acceptance:**` and
//! `**Depends on:**` lines (also written `**Acceptance**:`, after a list
//! marker, or `Depends-on`/`Dependencies`) are fields; every other line is the
//! description. Deeper headings, lists and code blocks belong to the
//! description.

use super::text::{self, Line};
use super::{Located, Spec, SpecTask};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;

/// The task being read.
struct Section<'a> {
    id: Located,
    title: Option<Located>,
    header: Span,
    start: usize,
    end: usize,
    body: Vec<Line<'a>>,
    acceptance: Option<(Located, Span)>,
    acceptance_seen: Option<Span>,
    acceptance_bad: bool,
    depends: Option<Span>,
    deps: Vec<Located>,
}

/// Reads a Markdown spec. Diagnostics: E0001 for a level-2 heading that is
/// not `<id>: <title>` and for an acceptance command not in backticks, E0003
/// for a second acceptance or dependency line, E0008 for a task without an
/// acceptance command.
pub fn parse(source: &str) -> (Spec, Vec<Diagnostic>) {
    let mut spec = Spec::default();
    let mut diags = Vec::new();
    let mut current: Option<Section> = None;
    let mut fence: Option<(u8, usize)> = None;
    for line in text::lines(source) {
        if let Some((ch, len)) = fence {
            if closes_fence(line.text, ch, len) {
                fence = None;
            }
            if let Some(s) = &mut current {
                s.body.push(line);
                s.end = line.span().end;
            }
            continue;
        }
        if let Some(open) = opens_fence(line.text) {
            fence = Some(open);
            if let Some(s) = &mut current {
                s.body.push(line);
                s.end = line.span().end;
            }
            continue;
        }
        if let Some((level, content)) = heading(line.text)
            && level <= 2
        {
            if let Some(s) = current.take() {
                finish(s, &mut spec, &mut diags);
            }
            if level == 2 {
                current = start_task(&line, content, &mut diags);
            }
            continue;
        }
        let Some(s) = &mut current else { continue };
        s.end = line.span().end;
        match field(line.text) {
            Some((Field::Acceptance, label, rest)) => {
                let label = line.span_of(label);
                if let Some(first) = s.acceptance_seen {
                    diags.push(duplicate("acceptance", label, first));
                    continue;
                }
                s.acceptance_seen = Some(label);
                match code_span(rest) {
                    Some(command) if command.trim().is_empty() => {}
                    Some(command) => {
                        s.acceptance = Some((Located::new(command, line.span_of(command)), label));
                    }
                    None if rest.trim().is_empty() => {}
                    None => {
                        s.acceptance_bad = true;
                        diags.push(
                            Diagnostic::new(
                                Code::E0001,
                                "expected the acceptance command in backticks",
                                line.span_of(rest.trim()),
                                format!("found `{}`", rest.trim()),
                            )
                            .with_note("write it as **Acceptance:** `pytest -q tests/test_x.py`"),
                        );
                    }
                }
            }
            Some((Field::Depends, label, rest)) => {
                let label = line.span_of(label);
                if let Some(first) = s.depends {
                    diags.push(duplicate("dependency", label, first));
                    continue;
                }
                s.depends = Some(label);
                for part in rest.split(|c: char| c == ',' || c.is_whitespace()) {
                    let id = part.trim_matches('`');
                    if id.is_empty()
                        || matches!(id.to_ascii_lowercase().as_str(), "none" | "-" | "—")
                    {
                        continue;
                    }
                    s.deps.push(Located::new(id, line.span_of(id)));
                }
            }
            None => s.body.push(line),
        }
    }
    if let Some(s) = current.take() {
        finish(s, &mut spec, &mut diags);
    }
    (spec, diags)
}

fn duplicate(what: &str, second: Span, first: Span) -> Diagnostic {
    Diagnostic::new(
        Code::E0003,
        format!("a second {what} line in one task"),
        second,
        format!("second {what} line"),
    )
    .with_label(first, "first one here")
    .with_note(format!("a task has one {what} line; merge them"))
}

/// Starts a task at a `## …` heading whose text is `content`.
fn start_task<'a>(
    line: &Line<'a>,
    content: &'a str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Section<'a>> {
    let Some((id, title)) = content.split_once(':') else {
        let at = if content.is_empty() {
            line.span()
        } else {
            line.span_of(content)
        };
        diags.push(
            Diagnostic::new(
                Code::E0001,
                "expected a task heading `## <id>: <title>`",
                at,
                if content.is_empty() {
                    "found an empty heading".to_string()
                } else {
                    format!("found `{content}`, with no `:` after an id")
                },
            )
            .with_note("in a REEL Markdown spec every level-2 heading is a task; use `###` for other sections"),
        );
        return None;
    };
    let id = id.trim().trim_matches('`');
    let title = title.trim();
    let id_span = if id.is_empty() {
        line.span_of(content)
    } else {
        line.span_of(id)
    };
    Some(Section {
        id: Located::new(id, id_span),
        title: (!title.is_empty()).then(|| Located::new(title, line.span_of(title))),
        header: line.span(),
        start: line.start,
        end: line.span().end,
        body: Vec::new(),
        acceptance: None,
        acceptance_seen: None,
        acceptance_bad: false,
        depends: None,
        deps: Vec::new(),
    })
}

fn finish(mut s: Section<'_>, spec: &mut Spec, diags: &mut Vec<Diagnostic>) {
    // A thematic break closing the section separates tasks; it is not text.
    while s
        .body
        .last()
        .is_some_and(|l| l.is_blank() || thematic_break(l.text))
    {
        s.body.pop();
    }
    let description = text::block(&s.body).map(|(t, span)| Located::new(t, span));
    if s.acceptance.is_none() && !s.acceptance_bad {
        diags.push(match s.acceptance_seen {
            Some(label) => Diagnostic::new(
                Code::E0008,
                format!("task `{}` has an empty acceptance command", s.id.text),
                label,
                "no command in backticks after this",
            )
            .with_note("write it as **Acceptance:** `pytest -q tests/test_x.py`"),
            None => super::missing_acceptance(
                &s.id.text,
                s.header,
                "add a line **Acceptance:** `COMMAND`",
            ),
        });
    }
    spec.tasks.push(SpecTask {
        id: s.id,
        generated_id: false,
        title: s.title,
        description,
        acceptance: s.acceptance.map(|(a, _)| a),
        depends_on: s.deps,
        header: s.header,
        span: Span::new(s.start, s.end),
    });
}

/// `(level, text)` of an ATX heading: up to 3 spaces, 1–6 `#`, then a space
/// or the end of the line; the closing `#` sequence is dropped.
fn heading(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let mut content = after.trim();
    let closing = content.trim_end_matches('#');
    if closing.is_empty() || closing.ends_with([' ', '\t']) {
        content = closing.trim_end();
    }
    Some((level, content))
}

/// A fence opening: up to 3 spaces, then 3 or more `` ` `` or `~`.
fn opens_fence(line: &str) -> Option<(u8, usize)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let ch = *t.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = t.len() - t.trim_start_matches(ch as char).len();
    if len < 3 {
        return None;
    }
    // A backtick fence's info string has no backtick.
    if ch == b'`' && t[len..].contains('`') {
        return None;
    }
    Some((ch, len))
}

fn closes_fence(line: &str, ch: u8, len: usize) -> bool {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return false;
    }
    let run = t.len() - t.trim_start_matches(ch as char).len();
    run >= len && t[run..].trim().is_empty()
}

fn thematic_break(line: &str) -> bool {
    let t = line.trim();
    let Some(c) = t.chars().next() else {
        return false;
    };
    matches!(c, '-' | '*' | '_')
        && t.chars().filter(|&x| x == c).count() >= 3
        && t.chars().all(|x| x == c || x == ' ' || x == '\t')
}

enum Field {
    Acceptance,
    Depends,
}

/// A field line: `**Label:** rest` or `**Label**: rest` (also `__…__`,
/// `*…*`, `_…_`, and a plain `Depends on: rest`), optionally after a list
/// marker. Returns the field, the label text (from
/// the first `*`) and the rest of the line.
fn field(line: &str) -> Option<(Field, &str, &str)> {
    let mut t = line.trim_start();
    for marker in ["- ", "* ", "+ "] {
        if let Some(r) = t.strip_prefix(marker) {
            t = r.trim_start();
            break;
        }
    }
    // Bold, italic or plain: `**Depends on:**`, `*Depends on:*`,
    // `Depends on:`; a dependency line is never dropped for its emphasis.
    let emphasis = ["**", "__", "*", "_"]
        .into_iter()
        .find(|d| t.starts_with(d))
        .unwrap_or("");
    let inner = &t[emphasis.len()..];
    let (label_text, mut rest) = if emphasis.is_empty() {
        let colon = inner.find(':')?;
        (&inner[..=colon], &inner[colon + 1..])
    } else {
        let close = inner.find(emphasis)?;
        (&inner[..close], &inner[close + emphasis.len()..])
    };
    let name = match label_text.trim().strip_suffix(':') {
        Some(n) => n,
        None => {
            rest = rest.strip_prefix(':')?;
            label_text
        }
    };
    let kind = match name.trim().to_ascii_lowercase().as_str() {
        // A plain `Acceptance:` may be prose; only an emphasised one is a field.
        "acceptance" | "accept" | "acceptance command" if !emphasis.is_empty() => Field::Acceptance,
        "depends on" | "depends-on" | "depends" | "dependencies" => Field::Depends,
        _ => return None,
    };
    let label_len = t.len() - rest.len();
    Some((kind, &t[..label_len], rest))
}

/// The text of the first code span in `rest` (CommonMark: a run of n
/// backticks up to the next run of exactly n; one space stripped on both
/// sides when both are spaces).
fn code_span(rest: &str) -> Option<&str> {
    let open = rest.find('`')?;
    let n = rest[open..].len() - rest[open..].trim_start_matches('`').len();
    let after = &rest[open + n..];
    let bytes = after.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = after[i..].len() - after[i..].trim_start_matches('`').len();
            if run == n {
                let content = &after[..i];
                let stripped = match content.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
                    Some(inner) if !content.trim().is_empty() => inner,
                    _ => content,
                };
                return Some(stripped);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_headings_fields_and_description() {
        let src = "# Plan\n\nIntro.\n\n## a1b2c3d4: First task\n\nDo it.\n\n```sh\n## not a heading\n**Acceptance:** `no`\n```\n\n- **Depends on:** `b2c3d4e5`, c3d4e5f6\n**Acceptance**: `` make `x` ``\n\n---\n";
        let (spec, diags) = parse(src);
        assert!(diags.is_empty(), "{diags:?}");
        let t = &spec.tasks[0];
        assert_eq!(t.id.text, "a1b2c3d4");
        assert_eq!(&src[t.id.span.range()], "a1b2c3d4");
        assert_eq!(t.title.as_ref().unwrap().text, "First task");
        assert_eq!(t.acceptance.as_ref().unwrap().text, "make `x`");
        let deps: Vec<&str> = t.depends_on.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(deps, ["b2c3d4e5", "c3d4e5f6"]);
        assert_eq!(&src[t.depends_on[1].span.range()], "c3d4e5f6");
        assert_eq!(
            t.description.as_ref().unwrap().text,
            "Do it.\n\n```sh\n## not a heading\n**Acceptance:** `no`\n```"
        );
    }

    #[test]
    fn a_heading_without_an_id_is_e0001_and_a_missing_command_e0008() {
        let (spec, diags) = parse("## Overview\ntext\n## a1b2c3d4: T\n**Acceptance:**\n");
        let codes: Vec<Code> = diags.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::E0001, Code::E0008]);
        assert_eq!(spec.tasks.len(), 1);
        let (_, diags) = parse("## a1b2c3d4: T\n**Acceptance:** pytest\n");
        let codes: Vec<Code> = diags.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::E0001]);
    }

    #[test]
    fn dependency_lines_are_read_whatever_their_emphasis() {
        for line in [
            "**Depends on:** b2c3d4e5",
            "**Dependencies**: b2c3d4e5",
            "Dependencies: b2c3d4e5",
            "Depends on: b2c3d4e5",
            "*Depends on:* b2c3d4e5",
            "_Depends on_: b2c3d4e5",
            "- depends on: b2c3d4e5",
        ] {
            let src = format!("## a1b2c3d4: T\n\n{line}\n**Acceptance:** `true`\n");
            let (spec, diags) = parse(&src);
            assert!(diags.is_empty(), "{line}: {diags:?}");
            let deps: Vec<&str> = spec.tasks[0]
                .depends_on
                .iter()
                .map(|d| d.text.as_str())
                .collect();
            assert_eq!(deps, ["b2c3d4e5"], "{line}");
        }
        // A plain `Acceptance:` line is prose, not the field.
        let (spec, _) =
            parse("## a1b2c3d4: T\nAcceptance: the user can log in\n**Acceptance:** `true`\n");
        assert_eq!(spec.tasks[0].acceptance.as_ref().unwrap().text, "true");
    }
}
