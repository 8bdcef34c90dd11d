//! The report as one self-contained HTML page: styles inline, drawings
//! as inline SVG, no script, nothing fetched. Its sections have fixed ids
//! (docs/report.md): `summary` (the header), `graph`, `timeline`, `cost`,
//! `tasks` (each task `task-<name>`) and `left`. Long text is folded in
//! `<details>` and cut with the rest one click away. Every text from the
//! run is escaped ([`esc`]).

mod cost;
mod tasks;
mod timeline;

use super::model::{Report, Text};
use crate::plan::Plan;
use crate::render::state::Status;
use crate::run::time::{dollars, human_duration};
use crate::state::RunState;
use std::fmt::Write as _;
use std::time::Duration;

/// Lines of a long text shown before "show all".
const PREVIEW_LINES: usize = 30;

/// The page of `report`; `plan` (compiled) draws the graph, coloured by
/// `state`.
pub fn page(report: &Report, plan: Option<&Plan>, state: &RunState) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let run = report.run.map_or(String::new(), |n| format!(" run {n}"));
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"loopc report (format version {})\">\n\
         <title>loopc report: {}{run}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        report.version,
        esc(&report.plan)
    );
    header(&mut out, report);
    out.push_str(
        "<nav><a href=\"#graph\">graph</a><a href=\"#timeline\">timeline</a>\
         <a href=\"#cost\">cost</a><a href=\"#tasks\">tasks</a>\
         <a href=\"#left\">what the run left</a></nav>\n<main>\n",
    );
    graph(&mut out, report, plan, state);
    timeline::section(&mut out, report);
    cost::section(&mut out, report);
    tasks::section(&mut out, report);
    tasks::left(&mut out, report);
    out.push_str("</main>\n<footer>");
    let _ = write!(
        out,
        "written by loopc {} · report format version {} · the same data: <code>loopc report --json{}</code>",
        env!("CARGO_PKG_VERSION"),
        report.version,
        report.run.map_or(String::new(), |n| format!(" --run {n}"))
    );
    out.push_str("</footer>\n</body>\n</html>\n");
    out
}

/// The header: plan, outcome, counts, attempts, cost, time, branch.
fn header(out: &mut String, r: &Report) {
    let run = r.run.map_or(String::new(), |n| format!("run {n}"));
    let _ = write!(
        out,
        "<header id=\"summary\">\n<h1>{} <span class=\"sub\">{run}{}</span></h1>\n",
        esc(&r.plan),
        if r.last { " · the last run" } else { "" }
    );
    let exit = r
        .exit_code
        .map_or(String::new(), |c| format!(", exit status {c}"));
    let _ = writeln!(
        out,
        "<p class=\"outcome o-{}\"><b>{}</b>{exit}{}</p>",
        class(&r.status),
        esc(&r.status),
        r.stop_reason
            .as_ref()
            .map_or(String::new(), |s| format!(": {}", esc(s)))
    );
    let facts = facts(r);
    out.push_str("<dl class=\"facts\">\n");
    for (k, v) in facts {
        let _ = writeln!(out, "<div><dt>{k}</dt><dd>{v}</dd></div>");
    }
    out.push_str("</dl>\n");
    for n in &r.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(n));
    }
    out.push_str("</header>\n");
}

/// The header's facts: tasks, attempts, cost, time, branch, plan.
fn facts(r: &Report) -> [(&'static str, String); 6] {
    let c = &r.counts;
    let mut cost = dollars(r.cost.spent_micro_usd);
    if r.cost.unknown {
        cost.push_str("+?");
    }
    let budget = match r.cost.budget_micro_usd {
        Some(b) if r.cost.over_budget => format!(
            " <span class=\"bad\">over the budget of {}</span>",
            dollars(b)
        ),
        Some(b) => format!(" of {}", dollars(b)),
        None => " (no cost budget)".to_string(),
    };
    let attempts = match r.limits.iterations {
        Some(n) => format!("{} of {n}", r.agent_attempts),
        None => r.agent_attempts.to_string(),
    };
    let time = match r.limits.time_ms {
        Some(t) => format!("{} of {}", ms(r.elapsed_ms), ms(t)),
        None => ms(r.elapsed_ms),
    };
    let waited = if r.waited_ms > 0 {
        format!(", {} waiting for usage limits", ms(r.waited_ms))
    } else {
        String::new()
    };
    let now = match &r.branch_now {
        Some(h) if *h == r.head_commit => String::new(),
        Some(h) => format!(" (now at {})", short(h)),
        None => " (deleted since)".to_string(),
    };
    [
        (
            "tasks",
            format!(
                "{} of {}: <b>{}</b> passed, <b>{}</b> cached, <b>{}</b> failed, <b>{}</b> blocked{}{}{}",
                c.passed + c.cached,
                c.tasks,
                c.passed,
                c.cached,
                c.failed,
                c.blocked,
                // Its work waits on a branch for a person: not failed.
                if c.unreviewed > 0 {
                    format!(", {} completed unreviewed", c.unreviewed)
                } else {
                    String::new()
                },
                if c.skipped > 0 {
                    format!(", {} skipped", c.skipped)
                } else {
                    String::new()
                },
                if c.not_run > 0 {
                    format!(", {} not run", c.not_run)
                } else {
                    String::new()
                },
            ),
        ),
        ("agent attempts", attempts),
        ("cost", format!("{cost}{budget}")),
        (
            "time",
            format!(
                "{time}{waited}<br><span class=\"sub\">{} → {}</span>",
                esc(&r.started_at),
                esc(r.finished_at.as_deref().unwrap_or("…"))
            ),
        ),
        (
            "integration branch",
            format!(
                "<code>{}</code> at <code>{}</code>{now}<br><span class=\"sub\">from <code>{}</code></span>",
                esc(&r.integration_branch),
                short(&r.head_commit),
                short(&r.start_commit)
            ),
        ),
        (
            "plan",
            format!(
                "<code>{}</code>{}",
                esc(&r.plan_file),
                r.parallel
                    .map_or(String::new(), |p| format!(", {p} at a time"))
            ),
        ),
    ]
}

/// The task graph section.
fn graph(out: &mut String, r: &Report, plan: Option<&Plan>, state: &RunState) {
    out.push_str("<section id=\"graph\">\n<h2>Task graph</h2>\n");
    match plan {
        Some(p) => {
            out.push_str(
                "<p class=\"sub\">Each task coloured by how it ended; click one for its details. ",
            );
            legend_statuses(out, r);
            out.push_str("</p>\n<div class=\"scroll\">\n");
            out.push_str(&super::graph::svg(p, state, &|name| {
                format!("#{}", anchor(name))
            }));
            out.push_str("</div>\n");
        }
        None => {
            out.push_str("<p class=\"note\">The plan could not be read; see the note above.</p>\n")
        }
    }
    out.push_str("</section>\n");
}

/// Swatches of the statuses the run's tasks have.
fn legend_statuses(out: &mut String, r: &Report) {
    for s in Status::ALL {
        if r.tasks.iter().any(|t| t.status == s) {
            let _ = write!(
                out,
                "<span class=\"swatch\" style=\"background:{};border-color:{}\"></span>{} ",
                s.fill(),
                s.stroke(),
                s.as_str()
            );
        }
    }
}

/// The id of task `name`'s details.
pub fn anchor(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("task-{safe}")
}

/// `s` for HTML text and attribute values: hidden characters as visible
/// escapes ([`crate::visible`]), `& < > " '` as entities.
pub fn esc(s: &str) -> String {
    let s = crate::visible::escape(s, &['\n', '\t']);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A word as a CSS class suffix (`needs-human`, `merge-gate`).
pub fn class(word: &str) -> String {
    word.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Milliseconds for people.
pub fn ms(ms: u64) -> String {
    human_duration(Duration::from_millis(ms))
}

/// A commit's first ten characters.
pub fn short(commit: &str) -> String {
    esc(commit.get(..10).unwrap_or(commit))
}

/// An absolute `path` as the path of a `file://` URL: each byte other than
/// an unreserved character or `/` percent-encoded (RFC 3986), so that a
/// `#`, `?`, `%` or space in it is part of the path, not of the URL.
fn file_url_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A long text: its first lines, then the rest behind "show all"; when
/// the report holds only part of the file, says so and links the file.
pub fn text_block(out: &mut String, t: &Text) {
    let lines: Vec<&str> = t.text.split_inclusive('\n').collect();
    if t.cut {
        let _ = writeln!(
            out,
            "<p class=\"cut\">{} of {} shown; the whole file: <a href=\"file://{}\">{}</a></p>",
            size(t.text.len() as u64),
            size(t.bytes),
            esc(&file_url_path(&t.path)),
            esc(&t.path)
        );
    }
    if lines.len() <= PREVIEW_LINES + 5 {
        let _ = writeln!(out, "<pre>{}</pre>", esc(&t.text));
        return;
    }
    let (head, rest) = lines.split_at(PREVIEW_LINES);
    let _ = writeln!(
        out,
        "<pre>{}</pre>\n<details class=\"more\"><summary>show all {} lines</summary><pre>{}</pre></details>",
        esc(&head.concat()),
        lines.len(),
        esc(&rest.concat())
    );
}

/// A byte count for people.
pub fn size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Fill colour of a try's outcome (and of the run's status).
pub fn outcome_fill(outcome: &str) -> &'static str {
    match outcome {
        "passed" => "#a5d6a7",
        "failed" => "#ef9a9a",
        "blocked" => "#ffcc80",
        "infrastructure" => "#cfd8dc",
        "limited" => "#fff59d",
        "needs-human" => "#fff59d",
        "interrupted" => "#ce93d8",
        _ => "#90caf9",
    }
}

/// Outline colour of a try's outcome.
pub fn outcome_stroke(outcome: &str) -> &'static str {
    match outcome {
        "passed" => "#2e7d32",
        "failed" => "#c62828",
        "blocked" => "#ef6c00",
        "infrastructure" => "#546e7a",
        "limited" | "needs-human" => "#f9a825",
        "interrupted" => "#6a1b9a",
        _ => "#1565c0",
    }
}

/// The page's styles.
const STYLE: &str = r#"
:root { --fg: #212121; --sub: #616161; --line: #e0e0e0; --bg: #fafafa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--fg); background: var(--bg); }
header, main, footer, nav { max-width: 1240px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 18px; }
h1 { font-size: 26px; margin: 0 0 6px; }
h2 { font-size: 20px; margin: 28px 0 8px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 0 0 6px; }
.sub { color: var(--sub); font-weight: normal; font-size: 13px; }
code, pre { font: 12px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
code { overflow-wrap: anywhere; }
pre { background: #fff; border: 1px solid var(--line); border-radius: 4px; padding: 8px; margin: 4px 0; white-space: pre-wrap; word-break: break-word; max-height: 480px; overflow: auto; }
nav { position: sticky; top: 0; background: var(--bg); border-bottom: 1px solid var(--line); padding-top: 6px; padding-bottom: 6px; z-index: 1; }
nav a { margin-right: 16px; color: #1565c0; text-decoration: none; font-weight: 600; }
.outcome { display: inline-block; padding: 4px 12px; border-radius: 14px; border: 1px solid; margin: 4px 0 12px; }
.o-passed { background: #e8f5e9; border-color: #2e7d32; }
.o-failed { background: #ffebee; border-color: #c62828; }
.o-stopped, .o-killed { background: #fff3e0; border-color: #ef6c00; }
.o-interrupted { background: #f3e5f5; border-color: #6a1b9a; }
.o-running { background: #e3f2fd; border-color: #1565c0; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(360px, 100%), 1fr)); gap: 8px; margin: 0; }
.facts div { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; }
dt { color: var(--sub); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
dd { margin: 2px 0 0; }
.note { background: #fffde7; border-left: 4px solid #f9a825; padding: 6px 10px; }
.bad { color: #c62828; font-weight: 600; }
.scroll { overflow-x: auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
.swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid; border-radius: 2px; margin: 0 4px 0 8px; vertical-align: -1px; }
table { border-collapse: collapse; background: #fff; margin: 8px 0; display: block; max-width: 100%; overflow-x: auto; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
th { font-size: 12px; color: var(--sub); text-transform: uppercase; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.share { display: inline-block; height: 10px; background: #64b5f6; border-radius: 2px; }
.mark { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 8px; margin-left: 4px; border: 1px solid; }
.m-unknown { border-color: #757575; color: #424242; }
.m-capped { border-color: #ef6c00; color: #e65100; }
.m-over-cap { border-color: #ad1457; color: #ad1457; }
.task { background: #fff; border: 1px solid var(--line); border-left: 6px solid #9e9e9e; border-radius: 6px; padding: 10px 14px; margin: 10px 0; }
.task:target { box-shadow: 0 0 0 3px #90caf9; }
.badge { display: inline-block; font-size: 12px; padding: 1px 8px; border-radius: 10px; border: 1px solid; margin-right: 6px; vertical-align: 1px; }
.task dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; margin: 6px 0; }
.task dt { text-transform: none; letter-spacing: 0; font-size: 13px; }
.task dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
details { margin: 4px 0; }
details > summary { cursor: pointer; }
details.try { border: 1px solid var(--line); border-radius: 4px; padding: 4px 8px; margin: 6px 0; }
details.try > summary { font-weight: 600; }
details.more > summary, p.cut { color: #1565c0; font-size: 12px; }
.left li { margin: 4px 0; }
footer { color: var(--sub); font-size: 12px; padding: 24px 20px; }
svg text { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_text_and_names() {
        assert_eq!(
            esc("<a href='x'>&\u{1b}"),
            "&lt;a href=&#39;x&#39;&gt;&amp;\\u{1b}"
        );
        assert_eq!(anchor("auth.a1b2 c"), "task-auth.a1b2_c");
        assert_eq!(class("merge gate"), "merge-gate");
    }

    #[test]
    fn long_text_is_cut_with_the_rest_behind_show_all() {
        let t = Text {
            path: "/l/gate-tests.log".into(),
            bytes: 10_000,
            text: (1..=100).map(|n| format!("line {n}\n")).collect(),
            cut: true,
        };
        let mut out = String::new();
        text_block(&mut out, &t);
        assert!(out.contains("show all 100 lines"), "{out}");
        assert!(out.contains("line 30\n</pre>"), "{out}");
        assert!(out.contains("<pre>line 31\n"), "{out}");
        assert!(out.contains("file:///l/gate-tests.log"), "{out}");
        assert_eq!(
            file_url_path("/r/a b#c?d%e/ü.log"),
            "/r/a%20b%23c%3Fd%25e/%C3%BC.log"
        );
    }
}
