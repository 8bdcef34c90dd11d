//! `loopc graph PLAN [--format text|dot|mermaid|json|svg] [--state]` (spec §7).
//!
//! Compiles the plan, prints its diagnostics like `loopc check` does, and,
//! when there are no errors, renders the compiled [`Plan`] in one of five
//! formats on stdout. A plan with errors draws nothing and exits 1; a plan
//! that cannot be read exits 2; warnings go to stderr and the graph is drawn.
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

use crate::commands::{GraphArgs, GraphFormat};
use crate::exit;
use crate::plan::{Plan, Task, TaskKind};
use state::{StateMap, Status};
use std::io::{self, IsTerminal, Write};

/// Runs `loopc graph`: returns the process exit status (0 drawn, 1 plan
/// errors, 2 the plan or stdout could not be used).
pub fn run(args: &GraphArgs) -> i32 {
    let compiled = match crate::compile_path(&args.plan, args.defaults.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    if !compiled.diagnostics.is_empty() {
        crate::check_cmd::print_compilation(&compiled, &compiled.diagnostics);
    }
    let plan = match &compiled.plan {
        Some(plan) if !compiled.has_errors() => plan,
        _ => {
            let errors = compiled.diagnostics.iter().filter(|d| d.is_error()).count();
            eprintln!(
                "error: `{}` has {} error{}; no graph drawn",
                compiled.name,
                errors,
                if errors == 1 { "" } else { "s" }
            );
            return exit::FAILURE;
        }
    };
    let statuses = if args.state {
        match state::load_for_cwd(&plan.name) {
            Ok(s) => Some(s),
            Err(warning) => {
                eprintln!("warning: {warning}");
                None
            }
        }
    } else {
        None
    };
    let color = args.format == GraphFormat::Text
        && io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let result =
        render(args.format, plan, statuses.as_ref(), color, &mut out).and_then(|()| out.flush());
    match result {
        Ok(()) => exit::OK,
        // `loopc graph … | head` is a normal end.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            eprintln!("error: cannot write the graph: {e}");
            exit::USAGE
        }
    }
}

/// Renders `plan` in `format` into `out`.
///
/// `statuses` (from `--state`) adds each task's last status; `color` adds
/// ANSI colors to the text format (ignored by the others).
///
/// Errors: only those of `out`.
pub fn render(
    format: GraphFormat,
    plan: &Plan,
    statuses: Option<&StateMap>,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        GraphFormat::Text => text::render(plan, statuses, color, out),
        GraphFormat::Dot => dot::render(plan, statuses, out),
        GraphFormat::Mermaid => mermaid::render(plan, statuses, out),
        GraphFormat::Json => json::render(plan, statuses, out),
        GraphFormat::Svg => svg::render(plan, statuses, out),
    }
}

/// Renders `plan` in `format` into a string (no color). Used by tests and
/// by callers that want the text rather than a stream.
pub fn render_to_string(format: GraphFormat, plan: &Plan, statuses: Option<&StateMap>) -> String {
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

/// The status of task `index` under `statuses`, if `--state` found one.
fn status_of(statuses: Option<&StateMap>, plan: &Plan, index: usize) -> Option<Status> {
    statuses.map(|s| s.status(&plan.tasks[index].name))
}

/// Makes text from a plan safe to show as one visual unit: every control
/// character except `\n` becomes a visible escape (`\t`, `\r`, `\u{1b}`),
/// so no format can be broken and no terminal can be driven by a title.
/// `\n` is kept; each format decides how to draw a line break.
pub fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && c.is_control()) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c != '\n' && c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_escapes_control_characters_but_keeps_newlines() {
        assert_eq!(visible("a\tb\nc\u{1b}[31m\0"), "a\\tb\nc\\u{1b}[31m\\u{0}");
        assert!(matches!(visible("plain ✓"), std::borrow::Cow::Borrowed(_)));
    }
}
