//! The drawings of `loopc graph` (docs/graph.md): a compiled [`Plan`] in one of
//! five [`Format`]s, written into any writer.
//!
//! Every renderer is a pure function of the plan (and, with `--state`, of the
//! run state): the same input gives byte-identical output on every run and
//! machine. Every renderer runs in time linear in the size of the plan and
//! streams into a writer. Text that comes from the plan (names, titles,
//! commands) is escaped for each format by that format's module.

pub mod dot;
pub mod json;
pub mod mermaid;
pub mod state;
pub mod svg;
pub mod text;

use crate::plan::{Plan, Task, TaskKind};
use state::{StateMap, Status};
use std::io::{self, Write};

/// Graph output formats (docs/graph.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tasks in layers, for a terminal.
    Text,
    /// Graphviz input.
    Dot,
    /// A Mermaid `flowchart`.
    Mermaid,
    /// The compiled plan as one JSON document.
    Json,
    /// An SVG drawing, laid out in-process.
    Svg,
}

/// Renders `plan` in `format` into `out`.
///
/// `statuses` (from `--state`) adds each task's last status; `color` adds
/// ANSI colors to the text format (ignored by the others).
///
/// Errors: only those of `out`.
pub fn render(
    format: Format,
    plan: &Plan,
    statuses: Option<&StateMap>,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Text => text::render(plan, statuses, color, out),
        Format::Dot => dot::render(plan, statuses, out),
        Format::Mermaid => mermaid::render(plan, statuses, out),
        Format::Json => json::render(plan, statuses, out),
        Format::Svg => svg::render(plan, statuses, out),
    }
}

/// Renders `plan` in `format` into a string (no color). Used by tests and
/// by callers that want the text rather than a stream.
pub fn render_to_string(format: Format, plan: &Plan, statuses: Option<&StateMap>) -> String {
    let mut buf = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = render(format, plan, statuses, false, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// What does a task's work, as shown in every format: the agent's name for
/// an agent task, `command` for a command task.
pub fn kind_label(task: &Task) -> &str {
    match &task.kind {
        TaskKind::Agent { agent, .. } => &agent.name,
        TaskKind::Command { .. } => "command",
    }
}

/// A task with `expands` as drawn: the plan fragment it writes and the
/// tasks that fragment added (none yet: a cluster still to be filled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster<'a> {
    /// The producing task's index.
    pub producer: usize,
    /// The fragment's path.
    pub path: &'a str,
    /// The tasks its fragment added, in topological order.
    pub members: Vec<usize>,
    /// Whether the plan was grown by its fragment (which may have added
    /// no task): not a fragment still to come.
    pub expanded: bool,
}

impl Cluster<'_> {
    /// What a cluster without members holds: `(tasks to come)`, or, for a
    /// fragment spliced without tasks, `(no tasks)`.
    pub fn empty_note(&self) -> &'static str {
        if self.expanded {
            "(no tasks)"
        } else {
            "(tasks to come)"
        }
    }
}

/// The clusters of `plan`, one per task with `expands`, in topological
/// order.
pub fn clusters(plan: &Plan) -> Vec<Cluster<'_>> {
    let mut out: Vec<Cluster<'_>> = Vec::new();
    let mut of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, t) in plan.tasks.iter().enumerate() {
        if let Some(path) = &t.expands {
            of.insert(&t.name, out.len());
            out.push(Cluster {
                producer: i,
                path,
                members: Vec::new(),
                expanded: t.expanded,
            });
        }
    }
    for (i, t) in plan.tasks.iter().enumerate() {
        if let Some(&k) = t.expanded_from.as_deref().and_then(|p| of.get(p)) {
            out[k].members.push(i);
        }
    }
    out
}

/// The status of task `index` under `statuses`, if `--state` found one.
fn status_of(statuses: Option<&StateMap>, plan: &Plan, index: usize) -> Option<Status> {
    statuses.map(|s| s.status(&plan.tasks[index].name))
}

/// Makes text from a plan safe to show as one visual unit: every hidden
/// character ([`crate::visible::is_hidden`]: control and format characters,
/// such as bidirectional overrides) except `\n` becomes a visible escape
/// (`\t`, `\u{1b}`, `\u{202e}`), so no format can be broken, no terminal
/// can be driven and no drawing reordered by a title. `\n` is kept; each
/// format decides how to draw a line break.
pub fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    crate::visible::escape(s, &['\n'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_escapes_control_characters_but_keeps_newlines() {
        assert_eq!(visible("a\tb\nc\u{1b}[31m\0"), "a\\tb\nc\\u{1b}[31m\\u{0}");
        assert_eq!(visible("\u{202e}cba\u{2069}"), "\\u{202e}cba\\u{2069}");
        assert!(matches!(visible("plain ✓"), std::borrow::Cow::Borrowed(_)));
    }
}
