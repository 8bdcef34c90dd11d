//! `loopc graph --format svg`: an SVG drawing made in-process (spec §7).
//!
//! A simple layered layout, chosen over the `layout-rs` crate because its
//! output must be byte-identical everywhere and linear in the plan's size:
//! a task's row is its layer (dependencies above dependents); within a row,
//! layer 0 keeps topological order and every later row is ordered by the
//! mean x of each task's dependencies (ties by topological order), packed
//! left to right and centered under those dependencies; rows never overlap.
//! Edges are cubic Béziers from the bottom of a dependency to the top of its
//! dependent, with an arrowhead. Every coordinate is an integer number of
//! pixels computed with integer arithmetic, so no float formatting or
//! platform rounding can change the bytes.
//!
//! Text is measured by an estimate (a fixed width per character), lines
//! longer than a node allows are cut with `…`, and the full name and title
//! are in each node's `<title>` (a tooltip). Every piece of text is escaped
//! for XML ([`xml`]): `& < > " '` as entities, control characters as visible
//! escapes, and the noncharacters U+FFFE/U+FFFF (not allowed in XML) as
//! U+FFFD.

use super::state::{StateMap, Status};
use super::{kind_label, status_of, visible};
use crate::plan::Plan;
use std::io::{self, Write};

/// Font size of node text, px.
const FONT: i64 = 13;
/// Estimated advance of one character at [`FONT`], px.
const CHAR_W: i64 = 8;
/// Height of one text line, px.
const LINE_H: i64 = 17;
/// Padding inside a node, px.
const PAD_X: i64 = 12;
const PAD_Y: i64 = 8;
/// Node width limits, px.
const MIN_W: i64 = 96;
const MAX_W: i64 = 360;
/// Gaps between nodes in a row and between rows, px.
const GAP_X: i64 = 24;
const GAP_Y: i64 = 56;
/// Margin around the drawing, px (the top one also holds the plan's name).
const MARGIN: i64 = 20;
const HEADER: i64 = 28;

/// One node's box and text lines.
struct Node {
    lines: Vec<Line>,
    w: i64,
    h: i64,
    x: i64,
    y: i64,
}

struct Line {
    text: String,
    style: LineStyle,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LineStyle {
    Name,
    Title,
    Kind,
}

/// Writes `plan` as a standalone SVG document to `out`.
///
/// Errors: only those of `out`.
pub fn render(plan: &Plan, statuses: Option<&StateMap>, out: &mut dyn Write) -> io::Result<()> {
    let max_chars = ((MAX_W - 2 * PAD_X) / CHAR_W) as usize;
    let mut nodes: Vec<Node> = plan
        .tasks
        .iter()
        .enumerate()
        .map(|(i, task)| {
            let mut lines = vec![Line {
                text: cut(&visible(&task.name), max_chars),
                style: LineStyle::Name,
            }];
            if let Some(title) = &task.title {
                for l in visible(title).split('\n') {
                    lines.push(Line {
                        text: cut(l, max_chars),
                        style: LineStyle::Title,
                    });
                }
            }
            let mut kind = kind_label(task).to_string();
            if let Some(s) = status_of(statuses, plan, i) {
                kind.push_str(" · ");
                kind.push_str(s.as_str());
            }
            lines.push(Line {
                text: cut(&kind, max_chars),
                style: LineStyle::Kind,
            });
            let widest = lines
                .iter()
                .map(|l| l.text.chars().count() as i64)
                .max()
                .unwrap_or(0);
            Node {
                w: (widest * CHAR_W + 2 * PAD_X).clamp(MIN_W, MAX_W),
                h: lines.len() as i64 * LINE_H + 2 * PAD_Y,
                lines,
                x: 0,
                y: 0,
            }
        })
        .collect();
    let (width, height) = layout(plan, &mut nodes);

    writeln!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"Helvetica, Arial, sans-serif\" \
         font-size=\"{FONT}\">"
    )?;
    writeln!(out, "<title>{}</title>", xml(&plan.name))?;
    writeln!(
        out,
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
         markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\">\
         <path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555555\"/></marker></defs>"
    )?;
    writeln!(
        out,
        "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
    )?;
    writeln!(
        out,
        "<text x=\"{MARGIN}\" y=\"{}\" font-size=\"16\" font-weight=\"bold\">{}</text>",
        MARGIN + 14,
        xml(&cut(&visible(&plan.name).replace('\n', " "), 120))
    )?;
    // Edges first, so that nodes are drawn over them.
    writeln!(
        out,
        "<g fill=\"none\" stroke=\"#555555\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\">"
    )?;
    for (i, task) in plan.tasks.iter().enumerate() {
        let to = &nodes[i];
        let (x2, y2) = (to.x + to.w / 2, to.y);
        for &d in &task.dependencies {
            let from = &nodes[d];
            let (x1, y1) = (from.x + from.w / 2, from.y + from.h);
            let bend = (y2 - y1) / 2;
            writeln!(
                out,
                "<path d=\"M {x1} {y1} C {x1} {} {x2} {} {x2} {y2}\"/>",
                y1 + bend,
                y2 - bend
            )?;
        }
    }
    writeln!(out, "</g>")?;
    for (i, (task, node)) in plan.tasks.iter().zip(&nodes).enumerate() {
        let status = status_of(statuses, plan, i);
        let (fill, stroke) = match status {
            Some(s) => (s.fill(), s.stroke()),
            None => ("#ffffff", "#555555"),
        };
        let dash = if status == Some(Status::Skipped) {
            " stroke-dasharray=\"5 3\""
        } else {
            ""
        };
        let mut tip = visible(&task.name).into_owned();
        if let Some(title) = &task.title {
            tip.push_str(": ");
            tip.push_str(&visible(title));
        }
        if let Some(s) = status {
            tip.push_str(" [");
            tip.push_str(s.as_str());
            tip.push(']');
        }
        writeln!(out, "<g id=\"t{i}\">")?;
        writeln!(out, "<title>{}</title>", xml(&tip))?;
        writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\" fill=\"{fill}\" \
             stroke=\"{stroke}\" stroke-width=\"1.5\"{dash}/>",
            node.x, node.y, node.w, node.h
        )?;
        let cx = node.x + node.w / 2;
        for (k, line) in node.lines.iter().enumerate() {
            // Baseline of line k: top padding, k lines, and most of a line.
            let y = node.y + PAD_Y + k as i64 * LINE_H + LINE_H - 4;
            let attrs = match line.style {
                LineStyle::Name => " font-weight=\"bold\"",
                LineStyle::Title => "",
                LineStyle::Kind => " font-style=\"italic\" fill=\"#444444\"",
            };
            writeln!(
                out,
                "<text x=\"{cx}\" y=\"{y}\" text-anchor=\"middle\"{attrs}>{}</text>",
                xml(&line.text)
            )?;
        }
        writeln!(out, "</g>")?;
    }
    writeln!(out, "</svg>")
}

/// Places every node; returns the drawing's width and height.
fn layout(plan: &Plan, nodes: &mut [Node]) -> (i64, i64) {
    let layers = plan.tasks.iter().map(|t| t.layer + 1).max().unwrap_or(0);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (i, t) in plan.tasks.iter().enumerate() {
        rows[t.layer].push(i);
    }
    let mut y = MARGIN + HEADER;
    let mut min_x = 0i64;
    let mut max_x = 0i64;
    for row in &mut rows {
        // Desired center of each node: the mean center of its dependencies
        // (all in earlier rows, so already placed); row 0 has none.
        let mut desired: Vec<(i64, usize)> = row
            .iter()
            .map(|&i| {
                let deps = &plan.tasks[i].dependencies;
                if deps.is_empty() {
                    return (0, i);
                }
                let sum: i64 = deps.iter().map(|&d| nodes[d].x + nodes[d].w / 2).sum();
                (sum / deps.len() as i64, i)
            })
            .collect();
        desired.sort_unstable();
        let row_w: i64 = desired.iter().map(|&(_, i)| nodes[i].w).sum::<i64>()
            + GAP_X * (desired.len() as i64 - 1).max(0);
        let mean = if desired.is_empty() {
            0
        } else {
            desired.iter().map(|&(c, _)| c).sum::<i64>() / desired.len() as i64
        };
        let mut x = mean - row_w / 2;
        let mut row_h = 0;
        for &(_, i) in &desired {
            nodes[i].x = x;
            nodes[i].y = y;
            x += nodes[i].w + GAP_X;
            row_h = row_h.max(nodes[i].h);
        }
        // Same order, recorded for the next row's barycenters.
        *row = desired.into_iter().map(|(_, i)| i).collect();
        if let (Some(&first), Some(&last)) = (row.first(), row.last()) {
            min_x = min_x.min(nodes[first].x);
            max_x = max_x.max(nodes[last].x + nodes[last].w);
        }
        y += row_h + GAP_Y;
    }
    let shift = MARGIN - min_x;
    for n in nodes.iter_mut() {
        n.x += shift;
    }
    let width = (max_x - min_x + 2 * MARGIN).max(2 * MARGIN + 200);
    let height = if layers == 0 {
        MARGIN + HEADER + MARGIN
    } else {
        y - GAP_Y + MARGIN
    };
    (width, height)
}

/// `s` cut to at most `max` characters, the last one `…` when cut.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` escaped for XML character data and attribute values.
pub fn xml(s: &str) -> String {
    let s = visible(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push(' '),
            '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{cut, xml};

    #[test]
    fn escapes_xml() {
        assert_eq!(
            xml("a&b<c>\"d\"'e'\u{1}\u{FFFF}é"),
            "a&amp;b&lt;c&gt;&quot;d&quot;&apos;e&apos;\\u{1}\u{FFFD}é"
        );
    }

    #[test]
    fn cuts_long_lines() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abcd", 4), "abcd");
    }
}
