//! Re-parsing an edited document, reusing the items of its previous
//! version that the edit cannot have changed (the language server, on every
//! keystroke).
//!
//! The parser reads one item at a time, each from where the previous one
//! ended, and what it reads from a position depends only on the text from
//! there on. So when the previous version parsed without any diagnostic:
//! the items that end before the first changed byte are the same, and once
//! the new parse resumes at a position whose text to the end is the
//! previous version's text after one of its items, every item after that is
//! the previous one moved by the edit's change in length. Only the items in
//! between are parsed. The result is exactly [`super::parse`]'s (a test
//! compares them on many edits).

use super::{comments, parse_until};
use crate::ast::*;
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// Parses `new`, the edited text of `old`, whose items (parsed without any
/// diagnostic) were `old_items`. Same result as [`super::parse`]`(new)`.
pub fn reparse(old: &str, old_items: Vec<Item>, new: &str) -> (File, Vec<Diagnostic>) {
    let start = if new.starts_with('\u{FEFF}') { 3 } else { 0 };
    let old_start = if old.starts_with('\u{FEFF}') { 3 } else { 0 };
    if start != old_start {
        return super::parse(new);
    }
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let prefix = common(
        o.len().min(n.len()),
        |k| o[k],
        |k| n[k],
        |a, b| o[a..b] == n[a..b],
    );
    let max_suffix = o.len().min(n.len()) - prefix;
    let (ol, nl) = (o.len(), n.len());
    let suffix = common(
        max_suffix,
        |k| o[ol - 1 - k],
        |k| n[nl - 1 - k],
        |a, b| o[ol - b..ol - a] == n[nl - b..nl - a],
    );
    // Items are parsed from where the previous one ended.
    let mut kept = 0;
    let mut pos = start;
    for item in &old_items {
        let end = item.span().end;
        if end > prefix {
            break;
        }
        kept += 1;
        pos = end;
    }
    let mut old_items = old_items;
    let mut tail = old_items.split_off(kept);
    let mut items = old_items;
    // Where each remaining old item's parse started (the end of the one
    // before it), for those inside the unchanged suffix.
    let suffix_from = old.len() - suffix;
    let mut starts = Vec::with_capacity(tail.len());
    let mut from = pos;
    for item in &tail {
        starts.push(from);
        from = item.span().end;
    }
    let new_len = new.len() as isize;
    let delta = new_len - old.len() as isize;
    let mut sync = None;
    let mut next = 0;
    let (middle, diagnostics, _) = parse_until(new, pos, new.len(), &mut |at| {
        // The old start this new position corresponds to, if in the suffix.
        let Some(old_at) = at.checked_add_signed(-delta) else {
            return false;
        };
        if old_at < suffix_from {
            return false;
        }
        while next < starts.len() && starts[next] < old_at {
            next += 1;
        }
        if next < starts.len() && starts[next] == old_at {
            sync = Some(next);
            return true;
        }
        false
    });
    items.extend(middle);
    if let Some(k) = sync {
        for mut item in tail.drain(k..) {
            shift_item(&mut item, delta);
            items.push(item);
        }
    }
    let file = File {
        items,
        comments: comments(new),
    };
    (file, diagnostics)
}

/// How many of the first `len` positions agree (`x(k) == y(k)`), compared a
/// block at a time (`same(a, b)`: positions `a..b` agree) and then byte by byte.
fn common(
    len: usize,
    x: impl Fn(usize) -> u8,
    y: impl Fn(usize) -> u8,
    same: impl Fn(usize, usize) -> bool,
) -> usize {
    const BLOCK: usize = 256;
    let mut k = 0;
    while k + BLOCK <= len && same(k, k + BLOCK) {
        k += BLOCK;
    }
    while k < len && x(k) == y(k) {
        k += 1;
    }
    k
}

fn shift(span: &mut Span, delta: isize) {
    span.start = span.start.saturating_add_signed(delta);
    span.end = span.end.saturating_add_signed(delta);
}

/// Moves every span of `item` by `delta` bytes. The patterns name every
/// field, so a new field in the tree fails to compile here until it is moved too.
fn shift_item(item: &mut Item, delta: isize) {
    match item {
        Item::Loop(LoopItem { name, block, span }) => {
            if let Some(StrLit { text: _, span }) = name {
                shift(span, delta);
            }
            shift_block(block, delta);
            shift(span, delta);
        }
        Item::Budget(block) | Item::Defaults(block) => shift_block(block, delta),
        Item::Agent(AgentItem { name, block, span })
        | Item::Executor(AgentItem { name, block, span }) => {
            shift_ident(name, delta);
            shift_block(block, delta);
            shift(span, delta);
        }
        Item::Gate(GateItem {
            name,
            body,
            span,
            keyword,
        }) => {
            shift_ident(name, delta);
            match body {
                GateBody::Short(value) => shift_value(value, delta),
                GateBody::Long(block) => shift_block(block, delta),
            }
            shift(span, delta);
            shift(keyword, delta);
        }
        Item::Task(TaskItem {
            name,
            title,
            dependencies,
            block,
            span,
        }) => {
            shift_task_name(name, delta);
            if let Some(StrLit { text: _, span }) = title {
                shift(span, delta);
            }
            for d in dependencies {
                shift_task_name(d, delta);
            }
            shift_block(block, delta);
            shift(span, delta);
        }
        Item::Error(u) => shift(&mut u.span, delta),
    }
}

fn shift_ident(Ident { text: _, span }: &mut Ident, delta: isize) {
    shift(span, delta);
}

fn shift_task_name(
    TaskName {
        text: _,
        span,
        quoted: _,
    }: &mut TaskName,
    delta: isize,
) {
    shift(span, delta);
}

fn shift_block(
    Block {
        span,
        keyword,
        body,
        fields,
    }: &mut Block,
    delta: isize,
) {
    shift(span, delta);
    shift(keyword, delta);
    shift(body, delta);
    for Field { name, value, span } in fields {
        shift_ident(name, delta);
        shift_value(value, delta);
        shift(span, delta);
    }
}

fn shift_value(Value { kind, span }: &mut Value, delta: isize) {
    shift(span, delta);
    match kind {
        ValueKind::List(values) => values.iter_mut().for_each(|v| shift_value(v, delta)),
        ValueKind::Map(entries) => {
            for MapEntry { key, value } in entries {
                shift_ident(key, delta);
                shift_value(value, delta);
            }
        }
        ValueKind::String(_)
        | ValueKind::BlockString(_)
        | ValueKind::Integer(_)
        | ValueKind::Duration(_)
        | ValueKind::Money(_)
        | ValueKind::Bool(_)
        | ValueKind::Name(_)
        | ValueKind::Invalid => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::fast::gen_plan;
    use super::*;

    /// Edits at many places of the bench plan: reusing the previous items
    /// gives exactly what a full parse gives.
    #[test]
    fn reparsing_an_edit_gives_the_full_parse() {
        let old = gen_plan::generate(120).plan;
        let (file, diagnostics) = super::super::parse(&old);
        assert!(diagnostics.is_empty());
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for round in 0..400 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state as usize) % old.len();
            let at = (0..=at)
                .rev()
                .find(|&i| old.is_char_boundary(i))
                .unwrap_or(0);
            let mut new = old.clone();
            match round % 4 {
                0 => new.insert(at, 'x'),
                1 => {
                    let end = (at + 1..=old.len())
                        .find(|&i| old.is_char_boundary(i))
                        .unwrap();
                    new.replace_range(at..end, "");
                }
                2 => new.insert_str(at, "\"{ }\n"),
                _ => new.insert_str(at, "\ntask extra { run = \"y\" }\n"),
            }
            let want = super::super::parse(&new);
            let got = reparse(&old, file.items.clone(), &new);
            assert_eq!(got, want, "edit {round} at {at}");
        }
    }
}
