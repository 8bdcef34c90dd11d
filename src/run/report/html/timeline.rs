//! The timeline section: one row per parallel slot, the coordinator's row
//! and the waits' rows, against the run's wall-clock time, as inline SVG.
//! Each bar has a tooltip and links to its task's details.

use super::{anchor, class, esc, ms, outcome_fill, outcome_stroke};
use crate::run::report::model::{Bar, Report};
use std::fmt::Write as _;

/// Width of the drawing, px.
const WIDTH: u64 = 1180;
/// Width of the lane labels, px.
const LABEL_W: u64 = 96;
/// Right margin, px.
const RIGHT: u64 = 16;
/// Height of a lane, px.
const LANE_H: u64 = 28;
/// Height of the time axis, px.
const AXIS_H: u64 = 26;

/// Fill colour of a bar of `kind`.
pub fn kind_fill(kind: &str) -> &'static str {
    match kind {
        "setup" => "#b0bec5",
        "agent" => "#42a5f5",
        "command" => "#26c6da",
        "commit" => "#78909c",
        "gate" => "#9575cd",
        "queued" => "#eeeeee",
        "merge" => "#26a69a",
        "merge gate" => "#7e57c2",
        "resolve" => "#ff8a65",
        "replay" => "#aed581",
        "advance" => "#81c784",
        "wait" => "#ffe082",
        _ => "#bdbdbd",
    }
}

/// The kinds the legend explains, with what each means.
const LEGEND: &[(&str, &str)] = &[
    ("setup", "setup"),
    ("agent", "agent"),
    ("command", "command"),
    ("commit", "commit"),
    ("gate", "gate"),
    ("queued", "done, waiting to merge"),
    ("merge", "merge"),
    ("merge gate", "checks on the merge"),
    ("resolve", "resolver"),
    ("replay", "cache replay"),
    ("advance", "spec move"),
    ("wait", "usage-limit wait"),
];

/// Writes the timeline section.
pub fn section(out: &mut String, r: &Report) {
    let tl = &r.timeline;
    out.push_str("<section id=\"timeline\">\n<h2>Timeline</h2>\n");
    if tl.bars.is_empty() {
        out.push_str("<p class=\"sub\">Nothing ran in this run (every task was replayed from the cache, or its events are gone).</p>\n");
    }
    let _ = writeln!(
        out,
        "<p class=\"sub\">Every try on the parallel slot it ran in, from {} on (+0s); merges, the checks \
         run again on them, resolvers and cache replays on the coordinator's row; waits for usage limits \
         below. The outline of a try says how it ended. Hover for details, click for the task.</p>",
        esc(&r.started_at)
    );
    let end = tl.end_ms.max(1);
    let plot = WIDTH - LABEL_W - RIGHT;
    let x = |t: u64| LABEL_W + t.min(end) * plot / end;
    let height = AXIS_H + LANE_H * tl.lanes.len() as u64 + 8;
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-size=\"11\" role=\"img\" aria-label=\"timeline\">\n\
         <defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffe082\"/>\
         <line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#f9a825\" stroke-width=\"2\"/></pattern></defs>\n\
         <rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    // Lanes, alternately shaded.
    for (i, lane) in tl.lanes.iter().enumerate() {
        let y = AXIS_H + LANE_H * i as u64;
        if i % 2 == 0 {
            let _ = writeln!(
                out,
                "<rect x=\"0\" y=\"{y}\" width=\"{WIDTH}\" height=\"{LANE_H}\" fill=\"#f5f5f5\"/>"
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"8\" y=\"{}\" fill=\"#424242\">{}</text>",
            y + LANE_H / 2 + 4,
            esc(&lane.label)
        );
    }
    axis(out, end, height, &x);
    for b in &tl.bars {
        bar(out, b, &x);
    }
    out.push_str("</svg></div>\n<p class=\"sub\">");
    for (kind, what) in LEGEND {
        if tl.bars.iter().any(|b| b.kind == *kind) {
            let _ = write!(
                out,
                "<span class=\"swatch\" style=\"background:{};border-color:#9e9e9e\"></span>{what} ",
                kind_fill(kind)
            );
        }
    }
    out.push_str("</p>\n</section>\n");
}

/// The time axis: ticks at a round step, labelled from the run's start.
fn axis(out: &mut String, end: u64, height: u64, x: &dyn Fn(u64) -> u64) {
    const STEPS: &[u64] = &[
        100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
        600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000,
    ];
    let step = STEPS
        .iter()
        .copied()
        .find(|s| end / s <= 12)
        .unwrap_or(86_400_000);
    let mut t = 0;
    while t <= end {
        let px = x(t);
        let _ = writeln!(
            out,
            "<line x1=\"{px}\" y1=\"{}\" x2=\"{px}\" y2=\"{}\" stroke=\"#e0e0e0\"/>\
             <text x=\"{px}\" y=\"16\" text-anchor=\"middle\" fill=\"#616161\">+{}</text>",
            AXIS_H - 4,
            height - 8,
            tick(t)
        );
        t += step;
    }
}

/// A tick's label: `0s`, `1.5s`, `30s`, `2m`, `1h30m`.
fn tick(ms: u64) -> String {
    match ms {
        0 => "0s".into(),
        m if m < 1_000 => format!("{m}ms"),
        m if m < 60_000 && m % 1_000 != 0 => format!("{:.1}s", m as f64 / 1000.0),
        m if m < 60_000 => format!("{}s", m / 1000),
        m if m < 3_600_000 && m % 60_000 == 0 => format!("{}m", m / 60_000),
        m if m < 3_600_000 => format!("{}m{:02}s", m / 60_000, (m / 1000) % 60),
        m if m % 3_600_000 == 0 => format!("{}h", m / 3_600_000),
        m => format!("{}h{:02}m", m / 3_600_000, (m / 60_000) % 60),
    }
}

/// One bar, with its tooltip, linked to its task.
fn bar(out: &mut String, b: &Bar, x: &dyn Fn(u64) -> u64) {
    let y0 = AXIS_H + LANE_H * b.lane as u64;
    let x0 = x(b.start_ms);
    let w = (x(b.end_ms).saturating_sub(x0)).max(2);
    let (y, h, fill, stroke, extra) = match b.kind.as_str() {
        "attempt" => {
            let o = b.outcome.as_deref().unwrap_or("running");
            (
                y0 + 3,
                LANE_H - 6,
                outcome_fill(o),
                outcome_stroke(o),
                " stroke-width=\"2\"",
            )
        }
        "wait" => (y0 + 6, LANE_H - 12, "url(#hatch)", "#f9a825", ""),
        "queued" => (
            y0 + 9,
            LANE_H - 18,
            kind_fill("queued"),
            "#bdbdbd",
            " stroke-dasharray=\"3 2\"",
        ),
        k if k == "merge"
            || k == "merge gate"
            || k == "resolve"
            || k == "replay"
            || k == "advance" =>
        {
            (y0 + 5, LANE_H - 10, kind_fill(k), "#546e7a", "")
        }
        // A phase: a band inside its try's bar.
        k => (y0 + 14, LANE_H - 19, kind_fill(k), "none", ""),
    };
    let took = b.end_ms.saturating_sub(b.start_ms);
    let tip = format!(
        "{} ({}): +{} to +{}, {}{}",
        b.label,
        b.kind,
        ms(b.start_ms),
        ms(b.end_ms),
        ms(took),
        b.outcome
            .as_ref()
            .map_or(String::new(), |o| format!(", {o}"))
    );
    let _ = writeln!(
        out,
        "<a href=\"#{}\"><rect class=\"k-{}\" x=\"{x0}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"3\" \
         fill=\"{fill}\" stroke=\"{stroke}\"{extra}><title>{}</title></rect></a>",
        esc(&anchor(&b.task)),
        class(&b.kind),
        esc(&tip)
    );
    // Name the try inside its bar when there is room.
    if b.kind == "attempt" && w > 60 {
        let text = short_label(&b.label, (w as usize - 8) / 6);
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" fill=\"#212121\" pointer-events=\"none\">{}</text>",
            x0 + 4,
            y0 + 13,
            esc(&text)
        );
    }
}

/// `label` cut to `max` characters.
fn short_label(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        return label.to_string();
    }
    let mut s: String = label.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels() {
        assert_eq!(tick(0), "0s");
        assert_eq!(tick(500), "500ms");
        assert_eq!(tick(1_500), "1.5s");
        assert_eq!(tick(30_000), "30s");
        assert_eq!(tick(120_000), "2m");
        assert_eq!(tick(90_000), "1m30s");
        assert_eq!(tick(5_400_000), "1h30m");
        assert_eq!(short_label("abcdef", 4), "abc…");
    }
}
