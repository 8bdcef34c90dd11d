//! `loopc graph --format dot`: Graphviz input (docs/graph.md).
//!
//! Nodes are the tasks, with quoted IDs (the task name) and a label of
//! three lines: name, title, and what does the work (agent or `command`);
//! with `--state`, a fourth line with the status and a fill color. An edge
//! runs from each dependency to its dependent, so `dot` draws dependencies
//! above their dependents. Nodes are written in topological order, and each
//! node's incoming edges in dependency order, so the output is deterministic.
//!
//! Escaping ([`quote`]): every ID and label is a double-quoted DOT string, in
//! which `"` and `\` are backslash-escaped and a line break in a title is
//! written as `\n` (a centered line break in a label). Angle brackets and
//! non-ASCII characters need no escaping in a quoted (non-HTML) string; the
//! output is UTF-8 and says so (`charset="UTF-8"`).
//!
//! A task with `expands` gets a dashed cluster `cluster_<task>` labelled
//! with its fragment's path: the tasks the fragment added (`--state`), or
//! a dashed placeholder node `<task> …` between the task and its
//! dependents while the fragment is still to come.

use super::state::{StateMap, Status};
use super::{kind_label, status_of, visible};
use crate::plan::Plan;
use std::io::{self, Write};

/// Writes `plan` as a Graphviz `digraph` to `out`.
///
/// Errors: only those of `out`.
pub fn render(plan: &Plan, statuses: Option<&StateMap>, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "digraph {} {{", quote(&plan.name))?;
    writeln!(
        out,
        "  graph [charset=\"UTF-8\", rankdir=TB, label={}, labelloc=t, fontname=\"Helvetica\"];",
        quote(&plan.name)
    )?;
    writeln!(
        out,
        "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\"];"
    )?;
    writeln!(out, "  edge [color=\"#555555\"];")?;
    let clusters = super::clusters(plan);
    for (i, task) in plan.tasks.iter().enumerate() {
        if task.expanded_from.is_none() {
            node(out, plan, statuses, i, "  ")?;
        }
    }
    // A task with `expands`: a dashed cluster holding the tasks its
    // fragment added, or a placeholder while it has none.
    for c in &clusters {
        let producer = &plan.tasks[c.producer].name;
        writeln!(
            out,
            "  subgraph {} {{",
            quote(&format!("cluster_{producer}"))
        )?;
        writeln!(
            out,
            "    label={}; style=\"dashed,rounded\"; color=\"#777777\";",
            quote(&format!("{producer} expands {}", c.path))
        )?;
        for &m in &c.members {
            node(out, plan, statuses, m, "    ")?;
        }
        if c.members.is_empty() {
            writeln!(
                out,
                "    {} [label={}, style=\"rounded,dashed\", color=\"#777777\"];",
                quote(&placeholder(producer)),
                quote(&format!("{}\n{}", c.path, c.empty_note()))
            )?;
        }
        writeln!(out, "  }}")?;
    }
    for task in &plan.tasks {
        for &d in &task.dependencies {
            writeln!(
                out,
                "  {} -> {};",
                quote(&plan.tasks[d].name),
                quote(&task.name)
            )?;
        }
    }
    for c in clusters.iter().filter(|c| c.members.is_empty()) {
        let producer = &plan.tasks[c.producer].name;
        let hole = quote(&placeholder(producer));
        writeln!(out, "  {} -> {hole} [style=dashed];", quote(producer))?;
        for d in plan.dependents(c.producer) {
            writeln!(
                out,
                "  {hole} -> {} [style=dashed];",
                quote(&plan.tasks[d].name)
            )?;
        }
    }
    writeln!(out, "}}")
}

/// The ID of the placeholder node of an unexpanded task (no task name
/// has a space).
fn placeholder(producer: &str) -> String {
    format!("{producer} …")
}

/// Writes node `i` (its label, and with `--state` its status) indented by
/// `indent`.
fn node(
    out: &mut dyn Write,
    plan: &Plan,
    statuses: Option<&StateMap>,
    i: usize,
    indent: &str,
) -> io::Result<()> {
    let task = &plan.tasks[i];
    let mut label = String::new();
    label.push_str(&task.name);
    if let Some(title) = &task.title {
        label.push('\n');
        label.push_str(title);
    }
    label.push('\n');
    label.push_str(kind_label(task));
    let status = status_of(statuses, plan, i);
    if let Some(s) = status {
        label.push_str("\n[");
        label.push_str(s.as_str());
        label.push(']');
    }
    write!(
        out,
        "{indent}{} [label={}",
        quote(&task.name),
        quote(&label)
    )?;
    if let Some(s) = status {
        write_status_attrs(out, s)?;
    }
    writeln!(out, "];")
}

fn write_status_attrs(out: &mut dyn Write, s: Status) -> io::Result<()> {
    write!(
        out,
        ", fillcolor=\"{}\", color=\"{}\"",
        s.fill(),
        s.stroke()
    )?;
    if s == Status::Skipped {
        write!(out, ", style=\"rounded,filled,dashed\"")?;
    }
    Ok(())
}

/// `s` as a double-quoted DOT string: `"` → `\"`, `\` → `\\`, `&` →
/// `&amp;` (Graphviz decodes HTML entities in labels: a title that says
/// `&lt;` must not be drawn `<`), line break → `\n`, other control and
/// format characters as visible escapes (see [`super::visible`]).
pub fn quote(s: &str) -> String {
    let s = visible(s);
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '&' => out.push_str("&amp;"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(quote("a\"b\\c\nd<e>é"), "\"a\\\"b\\\\c\\nd<e>é\"");
        assert_eq!(quote("tab\there"), "\"tab\\\\there\"");
        assert_eq!(
            quote("x &lt;b&gt; &#65;"),
            "\"x &amp;lt;b&amp;gt; &amp;#65;\""
        );
    }
}
