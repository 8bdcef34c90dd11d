//! The cost section: the run's total against its `cost` budget, the total
//! over time (each try's cost as its attempt ended), and each task's share;
//! unknown, capped and over-cap costs are marked.

use super::{anchor, class, esc, ms};
use crate::run::report::model::Report;
use crate::run::time::dollars;
use std::fmt::Write as _;

/// Size of the drawing, px.
const WIDTH: u64 = 1180;
const HEIGHT: u64 = 220;
/// Margins: left (the money axis), right, top, bottom (the time axis).
const LEFT: u64 = 72;
const RIGHT: u64 = 16;
const TOP: u64 = 14;
const BOTTOM: u64 = 26;

/// Writes the cost section.
pub fn section(out: &mut String, r: &Report) {
    out.push_str("<section id=\"cost\">\n<h2>Cost</h2>\n");
    let c = &r.cost;
    let unknown = if c.unknown {
        " <span class=\"mark m-unknown\">+? some cost is unknown</span>"
    } else {
        ""
    };
    let budget = match c.budget_micro_usd {
        Some(b) if c.over_budget => format!(
            " against a budget of {}: <span class=\"bad\">over it by {}</span>",
            dollars(b),
            dollars(c.spent_micro_usd.saturating_sub(b))
        ),
        Some(b) => format!(" of a budget of {}", dollars(b)),
        None => ", with no `cost` budget".to_string(),
    };
    let _ = writeln!(
        out,
        "<p>Spent <b>{}</b>{budget}{unknown}.</p>",
        dollars(c.spent_micro_usd)
    );
    chart(out, r);
    table(out, r);
    out.push_str("</section>\n");
}

/// The total over time, with the budget's line and a dot per try.
fn chart(out: &mut String, r: &Report) {
    let points = &r.cost_series;
    if points.is_empty() {
        out.push_str(
            "<p class=\"sub\">No attempt ended in this run, so nothing was charged.</p>\n",
        );
        return;
    }
    let end = r
        .timeline
        .end_ms
        .max(points.iter().map(|p| p.at_ms).max().unwrap_or(0))
        .max(1);
    let total = points.last().map_or(0, |p| p.cumulative_micro_usd);
    // Nothing charged: a $1 scale shows the flat line at $0.
    let top = match total.max(r.cost.budget_micro_usd.unwrap_or(0)) {
        0 => 1_000_000,
        t => t,
    };
    let top = top + top / 10;
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |t: u64| LEFT + t.min(end) * pw / end;
    let y = |m: u64| TOP + ph - m.min(top) * ph / top;
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-size=\"11\" role=\"img\" aria-label=\"cost over time\">\n\
         <rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"#ffffff\"/>\n\
         <line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#9e9e9e\"/>\n\
         <line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{}\" stroke=\"#9e9e9e\"/>",
        TOP + ph,
        LEFT + pw,
        TOP + ph,
        TOP + ph
    );
    axes(out, r, top, end, &y);
    // The total as a step line.
    let mut d = format!("M {} {}", x(0), y(0));
    for p in points {
        let _ = write!(d, " H {} V {}", x(p.at_ms), y(p.cumulative_micro_usd));
    }
    let _ = write!(d, " H {}", x(end));
    let _ = writeln!(
        out,
        "<path d=\"{d}\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2\"/>"
    );
    dots(out, points, &x, &y);
    out.push_str("</svg></div>\n<p class=\"sub\">The run's total as each try ended. \
                  Dots: <span class=\"mark m-unknown\">? unknown</span> not reported, no cap; \
                  <span class=\"mark m-capped\">capped</span> not reported, the agent's <code>cost</code> cap charged; \
                  <span class=\"mark m-over-cap\">over cap</span> reported above the cap; red: the total is past the budget.</p>\n");
}

/// The money axis (five ticks up to `top`), the time axis's ends (`end`)
/// and the budget's line; `y` places an amount.
fn axes(out: &mut String, r: &Report, top: u64, end: u64, y: &dyn Fn(u64) -> u64) {
    let pw = WIDTH - LEFT - RIGHT;
    for k in 0..=4u64 {
        let m = top * k / 4;
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#616161\">{}</text>\
             <line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#f0f0f0\"/>",
            LEFT - 6,
            y(m) + 4,
            dollars(m),
            y(m),
            LEFT + pw,
            y(m)
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"{}\" fill=\"#616161\">+0s</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#616161\">+{}</text>",
        HEIGHT - 8,
        LEFT + pw,
        HEIGHT - 8,
        ms(end)
    );
    if let Some(b) = r.cost.budget_micro_usd {
        let _ = writeln!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#c62828\" stroke-dasharray=\"6 4\"/>\
             <text x=\"{1}\" y=\"{2}\" text-anchor=\"end\" fill=\"#c62828\">budget {3}</text>",
            y(b),
            LEFT + pw,
            y(b).saturating_sub(4),
            dollars(b)
        );
    }
}

/// A dot per try on the total's line, coloured by how its cost is to be
/// read, with a tooltip; `x` and `y` place a time and an amount.
fn dots(
    out: &mut String,
    points: &[crate::run::report::model::CostPoint],
    x: &dyn Fn(u64) -> u64,
    y: &dyn Fn(u64) -> u64,
) {
    for p in points {
        let (fill, stroke) = match (p.cost_mark.as_deref(), p.over_budget) {
            (_, true) => ("#c62828", "#b71c1c"),
            (Some("unknown"), _) => ("#ffffff", "#424242"),
            (Some("capped"), _) => ("#ffb74d", "#e65100"),
            (Some("over cap"), _) => ("#f48fb1", "#ad1457"),
            _ => ("#64b5f6", "#1565c0"),
        };
        let cost = match p.cost_micro_usd {
            Some(c) => dollars(c),
            None => "unknown".into(),
        };
        let mark = p
            .cost_mark
            .as_ref()
            .map_or(String::new(), |m| format!(" ({m})"));
        let over = if p.over_budget {
            ", over the budget"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<a href=\"#{}\"><circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"1.5\">\
             <title>{} #{}: {cost}{mark} at +{}; total {}{over}</title></circle></a>",
            esc(&anchor(&p.task)),
            x(p.at_ms),
            y(p.cumulative_micro_usd),
            esc(&p.task),
            p.attempt,
            ms(p.at_ms),
            dollars(p.cumulative_micro_usd)
        );
        if p.cost_mark.as_deref() == Some("unknown") {
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"9\" pointer-events=\"none\">?</text>",
                x(p.at_ms),
                y(p.cumulative_micro_usd) + 3
            );
        }
    }
}

/// Each task's cost and share of the total.
fn table(out: &mut String, r: &Report) {
    let total = r.tasks.iter().map(|t| t.cost_micro_usd).sum::<u64>().max(1);
    out.push_str(
        "<table class=\"costs\"><thead><tr><th>task</th><th>status</th><th>attempts</th>\
         <th>cost</th><th>share</th><th>marks</th></tr></thead><tbody>\n",
    );
    for t in &r.tasks {
        let mut marks = String::new();
        for m in ["unknown", "capped", "over cap"] {
            let n = t
                .tries
                .iter()
                .filter(|x| x.cost_mark.as_deref() == Some(m))
                .count();
            if n > 0 {
                let _ = write!(marks, "<span class=\"mark m-{}\">{m} ×{n}</span>", class(m));
            }
        }
        let cost = if t.cost_unknown {
            format!("{}+?", dollars(t.cost_micro_usd))
        } else {
            dollars(t.cost_micro_usd)
        };
        let _ = writeln!(
            out,
            "<tr><td><a href=\"#{}\">{}</a></td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{cost}</td><td><span class=\"share\" style=\"width:{}px\"></span></td><td>{marks}</td></tr>",
            esc(&anchor(&t.name)),
            esc(&t.name),
            t.status.as_str(),
            t.attempts,
            t.cost_micro_usd.saturating_mul(200) / total
        );
    }
    out.push_str("</tbody></table>\n");
}
