//! `loopc graph --format svg`: an SVG drawing made in-process (docs/graph.md).
//!
//! A simple layered layout of our own. The `layout-rs` crate was tried on
//! the examples and rejected: it took 35 s for a 5,000-task chain and did
//! not finish 20,000 in 5 minutes (this must stay linear up to 100,000
//! tasks), it writes float coordinates and a font-class table from a
//! `HashMap`, its text overlaps box borders, and it ignores the plan's
//! layers.
//!
//! Here a task's row is its layer (dependencies above dependents). An edge
//! that spans several rows takes a narrow slot in each row between, so it
//! runs between that row's nodes rather than through them. Within a row,
//! layer 0 keeps topological order and every later row is ordered by the
//! mean x of each item's predecessors (ties by topological order, then
//! slots), packed left to right and centered under those predecessors; rows
//! never overlap. Edges are cubic Béziers between rows (straight through a
//! slot), from the bottom of a dependency to the top of its dependent, with
//! an arrowhead. Every coordinate is an integer number of pixels computed
//! with integer arithmetic, so no float formatting or platform rounding can
//! change the bytes.
//!
//! Text is measured by an estimate (a fixed width per character), lines
//! longer than a node allows are cut with `…`, and the full name and title
//! are in each node's `<title>` (a tooltip). Every piece of text is escaped
//! for XML ([`xml`]): `& < > " '` as entities, control and format characters as visible
//! escapes, and the noncharacters U+FFFE/U+FFFF (not allowed in XML) as
//! U+FFFD.

use super::state::{StateMap, Status};
use super::{kind_label, status_of, visible};
use crate::plan::Plan;
use std::io::{self, Write};

/// Font size of node text, px.
const FONT: i64 = 13;
/// Estimated advance of one column (a Latin character; wide characters
/// take two, see [`char_columns`]) at [`FONT`], px.
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
    render_linked(plan, statuses, None, out)
}

/// [`render`], each task's node a link to `link(index)` when given (the
/// report's graph links each task to its details).
///
/// Errors: only those of `out`.
pub fn render_linked(
    plan: &Plan,
    statuses: Option<&StateMap>,
    link: Option<&dyn Fn(usize) -> String>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let clusters = super::clusters(plan);
    let mut nodes: Vec<Node> = (0..plan.tasks.len())
        .map(|i| node(plan, statuses, &clusters, i))
        .collect();
    let placed = layout(plan, &mut nodes);
    header(out, plan, placed.width, placed.height)?;
    // Edges first, so that nodes are drawn over them.
    writeln!(
        out,
        "<g fill=\"none\" stroke=\"#555555\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\">"
    )?;
    let mut d = String::new();
    for route in &placed.routes {
        d.clear();
        path_data(&mut d, route);
        writeln!(out, "<path d=\"{d}\"/>")?;
    }
    writeln!(out, "</g>")?;
    for (i, node) in nodes.iter().enumerate() {
        if let Some(link) = link {
            writeln!(out, "<a href=\"{}\">", xml(&link(i)))?;
        }
        draw_node(out, plan, statuses, i, node)?;
        if link.is_some() {
            writeln!(out, "</a>")?;
        }
    }
    writeln!(out, "</svg>")
}

/// Task `i`'s box: its name, title, kind (and status) and, for a task
/// that expands, its fragment, each line cut to the widest box.
fn node(
    plan: &Plan,
    statuses: Option<&StateMap>,
    clusters: &[super::Cluster<'_>],
    i: usize,
) -> Node {
    let max_columns = ((MAX_W - 2 * PAD_X) / CHAR_W) as usize;
    let task = &plan.tasks[i];
    let mut lines = vec![Line {
        text: cut(&visible(&task.name), max_columns),
        style: LineStyle::Name,
    }];
    if let Some(title) = &task.title {
        for l in visible(title).split('\n') {
            lines.push(Line {
                text: cut(l, max_columns),
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
        text: cut(&kind, max_columns),
        style: LineStyle::Kind,
    });
    // A task that expands says where its fragment is and, once a
    // run spliced it, how many tasks it added.
    if let Some(c) = clusters.iter().find(|c| c.producer == i) {
        let text = match c.members.len() {
            0 if c.expanded => format!("┆ expanded {}: no tasks", visible(c.path)),
            0 => format!("┆ expands {}", visible(c.path)),
            1 => format!("┆ expanded {}: 1 task", visible(c.path)),
            n => format!("┆ expanded {}: {n} tasks", visible(c.path)),
        };
        lines.push(Line {
            text: cut(&text, max_columns),
            style: LineStyle::Kind,
        });
    }
    let widest = lines
        .iter()
        .map(|l| columns(&l.text) as i64)
        .max()
        .unwrap_or(0);
    Node {
        w: (widest * CHAR_W + 2 * PAD_X).clamp(MIN_W, MAX_W),
        h: lines.len() as i64 * LINE_H + 2 * PAD_Y,
        lines,
        x: 0,
        y: 0,
    }
}

/// The document's start: the `<svg>` element, the plan's name as its
/// title and heading, the arrowhead and the background.
fn header(out: &mut dyn Write, plan: &Plan, width: i64, height: i64) -> io::Result<()> {
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
    )
}

/// Draws task `i` as `node`: a box colored by its status, its lines, and
/// a tooltip with its whole name and title.
fn draw_node(
    out: &mut dyn Write,
    plan: &Plan,
    statuses: Option<&StateMap>,
    i: usize,
    node: &Node,
) -> io::Result<()> {
    let task = &plan.tasks[i];
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
    if let Some(p) = &task.expanded_from {
        tip.push_str(" (from the plan fragment of ");
        tip.push_str(&visible(p));
        tip.push(')');
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
    writeln!(out, "</g>")
}

/// Width of the slot a long edge takes in a row it passes through, px.
const LANE_W: i64 = 12;

/// The drawing's size and the route of every edge.
struct Placed {
    width: i64,
    height: i64,
    /// One route per edge, in the order of the tasks and then of their
    /// dependencies: the dependency's bottom center, then for every row the
    /// edge passes through the point where it enters and leaves that row,
    /// then the dependent's top center.
    routes: Vec<Vec<(i64, i64)>>,
}

/// Places every node and routes every edge.
///
/// An edge that spans more than one row gets a slot (a "virtual node",
/// [`LANE_W`] wide) in each row it passes through, so it runs between the
/// nodes of that row instead of through them. Slots take part in ordering
/// like tasks. They are used only while their total stays linear in the
/// plan's size (at most twice the number of tasks, plus 1024); past that,
/// long edges are drawn straight across.
fn layout(plan: &Plan, nodes: &mut [Node]) -> Placed {
    let layers = plan.tasks.iter().map(|t| t.layer + 1).max().unwrap_or(0);
    let items = Items::new(plan, nodes);
    let mut rows = Rows::place(&items, nodes, layers);
    let shift = MARGIN - rows.min_x;
    for v in rows.x.iter_mut() {
        *v += shift;
    }
    for (i, node) in nodes.iter_mut().enumerate() {
        node.x = rows.x[i];
        node.y = rows.top[items.layer[i]];
    }
    let routes = routes(plan, nodes, &items, &rows);
    let width = (rows.max_x - rows.min_x + 2 * MARGIN).max(2 * MARGIN + 200);
    let height = if layers == 0 {
        MARGIN + HEADER + MARGIN
    } else {
        rows.bottom - GAP_Y + MARGIN
    };
    Placed {
        width,
        height,
        routes,
    }
}

/// What is laid out: the tasks (items `0..n`, as in the plan), then the
/// slots of long edges.
struct Items {
    /// Each item's row.
    layer: Vec<usize>,
    /// Each item's width, px.
    width: Vec<i64>,
    /// Each item's predecessors: a task's dependencies (or the slots its
    /// long edges last pass), a slot's previous item on its edge.
    preds: Vec<Vec<usize>>,
    /// chain[e] = (first slot, number of slots) of edge e in route order.
    chain: Vec<(usize, usize)>,
}

impl Items {
    /// The tasks of `plan` (drawn as `nodes`), and the slots of their long
    /// edges while there are not too many.
    fn new(plan: &Plan, nodes: &[Node]) -> Items {
        let n = plan.tasks.len();
        let mut items = Items {
            layer: plan.tasks.iter().map(|t| t.layer).collect(),
            width: nodes.iter().map(|x| x.w).collect(),
            preds: vec![Vec::new(); n],
            chain: Vec::new(),
        };
        let needed: usize = plan
            .tasks
            .iter()
            .map(|t| {
                t.dependencies
                    .iter()
                    .map(|&d| t.layer - plan.tasks[d].layer - 1)
                    .sum::<usize>()
            })
            .sum();
        let use_slots = needed <= 2 * n + 1024;
        for (t, task) in plan.tasks.iter().enumerate() {
            for &d in &task.dependencies {
                let first = items.layer.len();
                let mut prev = d;
                if use_slots {
                    for l in plan.tasks[d].layer + 1..task.layer {
                        let id = items.layer.len();
                        items.layer.push(l);
                        items.width.push(LANE_W);
                        items.preds.push(vec![prev]);
                        prev = id;
                    }
                }
                items.preds[t].push(prev);
                items.chain.push((first, items.layer.len() - first));
            }
        }
        items
    }
}

/// The rows placed, top to bottom.
struct Rows {
    /// Each item's left edge, px.
    x: Vec<i64>,
    /// Each row's top and height, px.
    top: Vec<i64>,
    height: Vec<i64>,
    /// The leftmost and rightmost item edges, px.
    min_x: i64,
    max_x: i64,
    /// One gap below the last row, px.
    bottom: i64,
}

impl Rows {
    /// Places each row of `items` under the one above it: ordered by the
    /// mean center of each item's predecessors, packed left to right and
    /// centered under them. A row is as high as its highest node.
    fn place(items: &Items, nodes: &[Node], layers: usize) -> Rows {
        let (n, width) = (nodes.len(), &items.width);
        let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layers];
        for (i, &l) in items.layer.iter().enumerate() {
            rows[l].push(i);
        }
        let mut x = vec![0i64; items.layer.len()];
        let mut top = vec![0i64; layers];
        let mut height = vec![0i64; layers];
        let mut y = MARGIN + HEADER;
        let mut min_x = i64::MAX;
        let mut max_x = i64::MIN;
        for (l, row) in rows.iter().enumerate() {
            // Desired center of each item: the mean center of its predecessors
            // (all in earlier rows, so already placed); row 0 has none.
            let mut desired: Vec<(i64, usize)> = row
                .iter()
                .map(|&i| {
                    let p = &items.preds[i];
                    if p.is_empty() {
                        return (0, i);
                    }
                    let sum: i64 = p.iter().map(|&j| x[j] + width[j] / 2).sum();
                    (sum / p.len() as i64, i)
                })
                .collect();
            desired.sort_unstable();
            // Packed left to right, the row is placed so that the mean of
            // its items' centers is the mean of their desired centers.
            // (Centering the packed row's extent instead moved a chain
            // beside a long edge's narrow slot by a quarter of their
            // widths' difference in every row: a drawing that drifted
            // sideways as it went down.)
            let (mut offset, mut offsets) = (0i64, 0i64);
            for &(_, i) in &desired {
                offsets += offset + width[i] / 2;
                offset += width[i] + GAP_X;
            }
            let mut cursor = if desired.is_empty() {
                0
            } else {
                let k = desired.len() as i64;
                (desired.iter().map(|&(c, _)| c).sum::<i64>() - offsets) / k
            };
            let mut h = 0;
            for &(_, i) in &desired {
                x[i] = cursor;
                cursor += width[i] + GAP_X;
                if i < n {
                    h = h.max(nodes[i].h);
                }
            }
            if let (Some(&(_, first)), Some(&(_, last))) = (desired.first(), desired.last()) {
                min_x = min_x.min(x[first]);
                max_x = max_x.max(x[last] + width[last]);
            }
            top[l] = y;
            height[l] = h;
            y += h + GAP_Y;
        }
        if items.layer.is_empty() {
            (min_x, max_x) = (0, 0);
        }
        Rows {
            x,
            top,
            height,
            min_x,
            max_x,
            bottom: y,
        }
    }
}

/// The route of every edge (see [`Placed::routes`]) between the placed
/// `nodes`, through the slots of `items` placed in `rows`.
fn routes(plan: &Plan, nodes: &[Node], items: &Items, rows: &Rows) -> Vec<Vec<(i64, i64)>> {
    let center = |i: usize| rows.x[i] + items.width[i] / 2;
    let mut routes = Vec::with_capacity(items.chain.len());
    let mut e = 0;
    for (t, task) in plan.tasks.iter().enumerate() {
        for &d in &task.dependencies {
            let (first, count) = items.chain[e];
            e += 1;
            let mut route = Vec::with_capacity(2 + 2 * count);
            route.push((center(d), nodes[d].y + nodes[d].h));
            for (s, &l) in items.layer.iter().enumerate().skip(first).take(count) {
                route.push((center(s), rows.top[l]));
                route.push((center(s), rows.top[l] + rows.height[l]));
            }
            route.push((center(t), nodes[t].y));
            routes.push(route);
        }
    }
    routes
}

/// SVG path data for `route`: a vertical-tangent cubic Bézier between rows,
/// a straight line through a row.
fn path_data(d: &mut String, route: &[(i64, i64)]) {
    use std::fmt::Write as _;
    let Some(&(x0, y0)) = route.first() else {
        return;
    };
    let _ = write!(d, "M {x0} {y0}");
    for (k, pair) in route.windows(2).enumerate() {
        let ((x1, y1), (x2, y2)) = (pair[0], pair[1]);
        if k % 2 == 0 {
            let bend = (y2 - y1) / 2;
            let _ = write!(d, " C {x1} {} {x2} {} {x2} {y2}", y1 + bend, y2 - bend);
        } else {
            let _ = write!(d, " L {x2} {y2}");
        }
    }
}

/// Display columns of `c`: 2 for East Asian wide characters and emoji
/// (drawn about twice as wide as Latin letters), else 1. An estimate: it
/// only sizes boxes and never changes the text.
fn char_columns(c: char) -> usize {
    match u32::from(c) {
        0x1100..=0x115F
        | 0x2E80..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1FAFF
        | 0x20000..=0x3FFFD => 2,
        _ => 1,
    }
}

/// Display columns of `s` (see [`char_columns`]).
fn columns(s: &str) -> usize {
    s.chars().map(char_columns).sum()
}

/// `s` cut to at most `max` columns, the last one `…` when cut. An escape
/// [`visible`] wrote (`\u{202e}`) is kept whole or left out, never cut
/// in its middle.
fn cut(s: &str, max: usize) -> String {
    if columns(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let unit = rest
            .strip_prefix("\\u{")
            .and_then(|after| after.find('}').filter(|&end| end <= 6))
            .map_or(c.len_utf8(), |end| 3 + end + 1);
        let w = columns(&rest[..unit]);
        if used + w > max.saturating_sub(1) {
            break;
        }
        used += w;
        out.push_str(&rest[..unit]);
        rest = &rest[unit..];
    }
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

    /// A chain beside one long edge is drawn straight down: the drawing's
    /// width does not grow with the chain's length (it drifted sideways by
    /// about 21 px a row).
    #[test]
    fn a_chain_beside_a_long_edge_does_not_drift() {
        let width = |rows: usize| {
            let mut text = String::from("task d0 { run = \"true\" }\n");
            for i in 1..rows {
                text.push_str(&format!("task d{i}: d{} {{ run = \"true\" }}\n", i - 1));
            }
            text.push_str("task skip: d0 { run = \"true\" }\n");
            text.push_str(&format!(
                "task end: skip d{} {{ run = \"true\" }}\n",
                rows - 1
            ));
            let plan = crate::compile("p.loop", &text).plan.expect("a plan");
            let mut out = Vec::new();
            super::render(&plan, None, &mut out).expect("rendered");
            let svg = String::from_utf8(out).expect("UTF-8");
            let at = svg.find("width=\"").expect("a width") + 7;
            svg[at..at + svg[at..].find('"').expect("quoted")].to_string()
        };
        assert_eq!(width(5), width(60));
    }

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
        assert_eq!(cut("日本語です", 6), "日本…");
        assert_eq!(cut("日本語", 6), "日本語");
        // An escape is whole or gone.
        assert_eq!(cut("中文 \\u{202e}rtl", 6), "中文 …");
        assert_eq!(cut("ab\\u{202e}cdefgh", 11), "ab\\u{202e}…");
    }
}
