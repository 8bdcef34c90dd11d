//! `loopc graph --format mermaid`: a Mermaid `flowchart TD` (docs/graph.md), for
//! Markdown renderers that draw Mermaid code blocks.
//!
//! Node IDs are `t0`, `t1`, … (the task's position in topological order), so
//! no task name can collide with Mermaid's syntax or keywords (`end`,
//! `graph`, …). A node's label is a quoted string of the task's name, title
//! and what does its work, separated by `<br/>`; with `--state`, a fourth
//! line with the status, and a `class` per status colors the node.
//!
//! Escaping ([`label`]): inside the quoted label Mermaid decodes entity codes,
//! so `"` → `#quot;`, `<` → `#lt;`, `>` → `#gt;`, `&` → `#amp;`, and `#`
//! itself → `#35;` (otherwise `#word;` in a title would be decoded); a
//! backtick → `#96;` (a leading one would start a Markdown string), `%` →
//! `#37;` (so no label can look like a `%%` comment or directive). A line
//! break in a title is `<br/>`; other control and format characters are shown as
//! visible escapes (see [`super::visible`]).
//!
//! A task with `expands` gets a `subgraph c<k>` titled with its fragment's
//! path: the tasks the fragment added (`--state`), or a placeholder node
//! `x<k>` between the task and its dependents (dotted edges) while the
//! fragment is still to come.

use super::state::{StateMap, Status};
use super::{kind_label, status_of, visible};
use crate::plan::Plan;
use std::io::{self, Write};

/// Writes `plan` as a Mermaid flowchart to `out`.
///
/// Errors: only those of `out`.
pub fn render(plan: &Plan, statuses: Option<&StateMap>, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "flowchart TD")?;
    let clusters = super::clusters(plan);
    for (i, task) in plan.tasks.iter().enumerate() {
        if task.expanded_from.is_none() {
            node(out, plan, statuses, i, "  ")?;
        }
    }
    // A task with `expands`: a subgraph `c<k>` holding the tasks its
    // fragment added, or a placeholder `x<k>` while it has none.
    for (k, c) in clusters.iter().enumerate() {
        let mut text = String::new();
        label(&mut text, &plan.tasks[c.producer].name);
        text.push_str(" expands ");
        label(&mut text, c.path);
        writeln!(out, "  subgraph c{k} [\"{text}\"]")?;
        for &m in &c.members {
            node(out, plan, statuses, m, "    ")?;
        }
        if c.members.is_empty() {
            text.clear();
            label(&mut text, c.path);
            writeln!(out, "    x{k}[\"{text}<br/>{}\"]", c.empty_note())?;
        }
        writeln!(out, "  end")?;
    }
    for (i, task) in plan.tasks.iter().enumerate() {
        for &d in &task.dependencies {
            writeln!(out, "  t{d} --> t{i}")?;
        }
    }
    for (k, c) in clusters.iter().enumerate() {
        if c.members.is_empty() {
            writeln!(out, "  t{} -.-> x{k}", c.producer)?;
            for d in plan.dependents(c.producer) {
                writeln!(out, "  x{k} -.-> t{d}")?;
            }
        }
    }
    if let Some(statuses) = statuses {
        // One `class` line per status that occurs, in a fixed order.
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); Status::ALL.len()];
        for (i, task) in plan.tasks.iter().enumerate() {
            let s = statuses.status(&task.name);
            if let Some(k) = Status::ALL.iter().position(|&x| x == s) {
                members[k].push(i);
            }
        }
        for (k, s) in Status::ALL.iter().enumerate() {
            if members[k].is_empty() {
                continue;
            }
            let dash = if *s == Status::Skipped {
                ",stroke-dasharray:4 3"
            } else {
                ""
            };
            writeln!(
                out,
                "  classDef {} fill:{},stroke:{}{dash}",
                s.as_str(),
                s.fill(),
                s.stroke()
            )?;
            write!(out, "  class ")?;
            for (j, i) in members[k].iter().enumerate() {
                if j > 0 {
                    write!(out, ",")?;
                }
                write!(out, "t{i}")?;
            }
            writeln!(out, " {}", s.as_str())?;
        }
    }
    Ok(())
}

/// Writes node `t<i>` (with `--state`, its status) indented by `indent`.
fn node(
    out: &mut dyn Write,
    plan: &Plan,
    statuses: Option<&StateMap>,
    i: usize,
    indent: &str,
) -> io::Result<()> {
    let task = &plan.tasks[i];
    let mut text = String::new();
    label(&mut text, &task.name);
    if let Some(title) = &task.title {
        text.push_str("<br/>");
        label(&mut text, title);
    }
    text.push_str("<br/>");
    label(&mut text, kind_label(task));
    if let Some(s) = status_of(statuses, plan, i) {
        text.push_str("<br/>[");
        text.push_str(s.as_str());
        text.push(']');
    }
    writeln!(out, "{indent}t{i}[\"{text}\"]")
}

/// Appends `s` escaped for a quoted Mermaid label to `out`.
pub fn label(out: &mut String, s: &str) {
    for c in visible(s).chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '#' => out.push_str("#35;"),
            '`' => out.push_str("#96;"),
            '%' => out.push_str("#37;"),
            '\n' => out.push_str("<br/>"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_labels() {
        let mut s = String::new();
        super::label(&mut s, "a\"b<c>&#x;`%%\né");
        assert_eq!(s, "a#quot;b#lt;c#gt;#amp;#35;x;#96;#37;#37;<br/>é");
    }
}
