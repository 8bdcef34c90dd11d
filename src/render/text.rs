//! `loopc graph --format text`: the tasks in layers, for a terminal.
//!
//! ```text
//! api-v2: 4 tasks in 3 layers
//!
//! layer 0
//!   schema    command  Regenerate the API schema
//! layer 1
//!   0f3a9b2c  codex    Implement the v2 endpoints  ← schema
//! ```
//!
//! One line per task: (with `--state`, its status,) its name, what does its
//! work (the agent's name or `command`), its title and `← ` its direct
//! dependencies. Columns are aligned over the whole plan. Within a layer,
//! tasks keep the plan's topological order. Control and format characters
//! and line breaks in titles are shown as escapes (`\n`, `\u{1b}`,
//! `\u{202e}`), so a title can neither break the table, nor drive the
//! terminal, nor reorder what is shown. A task with `expands`
//! ends with `┆ ` and the fragment it writes (`(tasks to come)`), or,
//! once a run spliced it (`--state`), the tasks it added.

use super::state::{StateMap, Status};
use super::{kind_label, status_of, visible};
use crate::plan::Plan;
use std::io::{self, Write};

/// Writes the text rendering of `plan` to `out`; `color` adds ANSI colors
/// to the status column.
///
/// Errors: only those of `out`.
pub fn render(
    plan: &Plan,
    statuses: Option<&StateMap>,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let n = plan.tasks.len();
    let layers = plan.tasks.iter().map(|t| t.layer + 1).max().unwrap_or(0);
    writeln!(
        out,
        "{}: {} task{} in {} layer{}",
        one_line(&plan.name),
        n,
        if n == 1 { "" } else { "s" },
        layers,
        if layers == 1 { "" } else { "s" }
    )?;
    if n == 0 {
        return Ok(());
    }
    // Stable bucket sort by layer: linear, and keeps topological order.
    let mut by_layer: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (i, t) in plan.tasks.iter().enumerate() {
        by_layer[t.layer].push(i);
    }
    let widths = Widths::of(plan, statuses);
    let clusters = super::clusters(plan);
    let mut line = String::new();
    for (layer, members) in by_layer.iter().enumerate() {
        writeln!(out, "\nlayer {layer}")?;
        for &i in members {
            line.clear();
            let status = status_of(statuses, plan, i);
            task_line(&mut line, plan, i, status, color, &widths);
            if let Some(c) = clusters.iter().find(|c| c.producer == i) {
                expansion(&mut line, plan, i, c);
                let replans = statuses.map_or(0, |s| s.replans(&plan.tasks[i].name));
                if replans > 0 {
                    line.push_str(&format!(
                        " (re-planned {replans} time{})",
                        if replans == 1 { "" } else { "s" }
                    ));
                }
            }
            writeln!(out, "{}", line.trim_end_matches(' '))?;
        }
    }
    Ok(())
}

/// The widths of the aligned columns, in characters.
struct Widths {
    status: usize,
    name: usize,
    kind: usize,
}

impl Widths {
    /// The widest status word, and the widest name and kind of `plan`'s
    /// tasks. The status column fits every word but `already_satisfied`
    /// and `completed_unreviewed`, and each of those too when a task of
    /// `statuses` has it.
    fn of(plan: &Plan, statuses: Option<&StateMap>) -> Widths {
        let has = |word: Status| {
            (0..plan.tasks.len()).any(|i| status_of(statuses, plan, i) == Some(word))
        };
        let satisfied = has(Status::AlreadySatisfied);
        let unreviewed = has(Status::CompletedUnreviewed);
        Widths {
            status: Status::ALL
                .iter()
                .filter(|&&s| satisfied || s != Status::AlreadySatisfied)
                .filter(|&&s| unreviewed || s != Status::CompletedUnreviewed)
                .map(|s| s.as_str().len())
                .max()
                .unwrap_or(0),
            name: plan
                .tasks
                .iter()
                .map(|t| one_line(&t.name).chars().count())
                .max()
                .unwrap_or(0),
            kind: plan
                .tasks
                .iter()
                .map(|t| kind_label(t).chars().count())
                .max()
                .unwrap_or(0),
        }
    }
}

/// Task `i`'s line up to its dependencies, into `line`: its `status`
/// (colored with `color`), name, kind, title and `← ` dependencies.
fn task_line(
    line: &mut String,
    plan: &Plan,
    i: usize,
    status: Option<Status>,
    color: bool,
    widths: &Widths,
) {
    let task = &plan.tasks[i];
    line.push_str("  ");
    if let Some(status) = status {
        let word = status.as_str();
        if color {
            line.push_str("\x1b[");
            line.push_str(status.ansi());
            line.push('m');
            line.push_str(word);
            line.push_str("\x1b[0m");
        } else {
            line.push_str(word);
        }
        pad(line, word.len(), widths.status + 2);
    }
    let name = one_line(&task.name);
    line.push_str(&name);
    pad(line, name.chars().count(), widths.name + 2);
    let kind = kind_label(task);
    line.push_str(kind);
    pad(line, kind.chars().count(), widths.kind + 2);
    if let Some(title) = &task.title {
        line.push_str(&one_line(title));
        line.push_str("  ");
    }
    if !task.dependencies.is_empty() {
        line.push_str("← ");
        for (k, &d) in task.dependencies.iter().enumerate() {
            if k > 0 {
                line.push_str(", ");
            }
            line.push_str(&one_line(&plan.tasks[d].name));
        }
    }
}

/// The end of task `i`'s line when it expands (`c`): `┆ ` and its
/// fragment, with the tasks it added once a run spliced it.
fn expansion(line: &mut String, plan: &Plan, i: usize, c: &super::Cluster<'_>) {
    if !plan.tasks[i].dependencies.is_empty() {
        line.push_str("  ");
    }
    line.push_str("┆ ");
    let path = one_line(c.path);
    if c.members.is_empty() && c.expanded {
        line.push_str(&format!("expanded {path}: no tasks"));
    } else if c.members.is_empty() {
        line.push_str(&format!("expands {path} (tasks to come)"));
    } else {
        let names: Vec<String> = c
            .members
            .iter()
            .map(|&m| one_line(&plan.tasks[m].name))
            .collect();
        line.push_str(&format!("expanded {path}: {}", names.join(", ")));
    }
}

/// Pads `line` with spaces from a cell of `used` characters to `width`.
fn pad(line: &mut String, used: usize, width: usize) {
    for _ in used..width {
        line.push(' ');
    }
}

/// `s` on one line: control characters and line breaks as escapes.
fn one_line(s: &str) -> String {
    visible(s).replace('\n', "\\n")
}
