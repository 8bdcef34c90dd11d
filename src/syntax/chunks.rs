//! Large files parsed in chunks on the thread pool: [`parse_each`] hands
//! the items to a caller run by run (`loopc check` never holds the whole
//! tree), `parse_parallel` returns one tree (every other command). Both
//! give exactly the sequential parser's items and diagnostics.

use super::{parse_range, recovery_point};
use crate::ast::Item;
use crate::diagnostic::Diagnostic;

/// Parses `source` as [`parse`] does, but hands the items to `take` in
/// source order, a run of them at a time, instead of returning one tree; the
/// comments are not collected. Returns the syntax diagnostics.
///
/// A caller that is done with a run drops it: `loopc check` holds a large
/// plan's tree a few hundred kilobytes at a time. A large file is parsed
/// in chunks on the thread pool, a few chunks ahead of `take` (which runs
/// on the calling thread meanwhile); from the first chunk that reports a
/// diagnostic on (a chunk boundary that fell inside a block string shows
/// as one) the rest is parsed sequentially, so the items and diagnostics
/// are always the sequential parser's.
pub fn parse_each(source: &str, take: &mut dyn FnMut(Vec<Item>)) -> Vec<Diagnostic> {
    use rayon::prelude::*;
    let start = if source.starts_with('\u{FEFF}') { 3 } else { 0 };
    let threads = rayon::current_num_threads();
    if source.len() < PARALLEL_MIN || threads < 2 {
        let (items, diagnostics) = parse_range(source, start, source.len(), true);
        take(items);
        return diagnostics;
    }
    let chunks = (source.len() / STREAM_CHUNK).max(threads * 4);
    let bounds = chunk_bounds(source, start, chunks);
    let ranges: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    // Chunks parsed ahead: one window on the pool, one waiting for `take`.
    let window = threads * 2;
    let (parsed, next) = std::sync::mpsc::sync_channel::<(usize, Vec<Item>, bool)>(window);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for group in ranges.chunks(window) {
                let parts: Vec<_> = group
                    .par_iter()
                    .map(|&(from, to)| (from, parse_range(source, from, to, true)))
                    .collect();
                for (from, (items, diagnostics)) in parts {
                    let clean = diagnostics.is_empty();
                    // A closed channel: the caller went on sequentially.
                    if parsed.send((from, items, clean)).is_err() || !clean {
                        return;
                    }
                }
            }
        });
        for (from, items, clean) in next {
            if !clean {
                drop(items);
                let (items, diagnostics) = parse_range(source, from, source.len(), true);
                take(items);
                return diagnostics;
            }
            take(items);
        }
        Vec::new()
    })
}

/// Files at least this large (bytes) are parsed in chunks on several threads.
const PARALLEL_MIN: usize = 1 << 20;

/// About how many bytes of text [`parse_each`] parses in one chunk: small
/// enough that the chunks in flight are a small part of a large plan's
/// memory, large enough that a chunk's start-up is nothing.
const STREAM_CHUNK: usize = 256 << 10;

/// Where `chunks` chunks of `source[start..]` start, each at a line starting
/// an item, then the end of the source.
fn chunk_bounds(source: &str, start: usize, chunks: usize) -> Vec<usize> {
    let mut bounds = vec![start];
    for k in 1..chunks {
        let b = recovery_point(source, source.len() * k / chunks);
        if bounds.last().is_some_and(|&last| b > last) && b < source.len() {
            bounds.push(b);
        }
    }
    bounds.push(source.len());
    bounds
}

/// Parses a large file in chunks that start at lines starting an item, one
/// chunk per rayon task. Any diagnostic in any chunk (a chunk boundary that
/// fell inside a block string shows as one) makes it give up, so that
/// `parse` falls back to the sequential parser: the result is always the
/// sequential parser's.
pub(super) fn parse_parallel(source: &str, start: usize) -> Option<(Vec<Item>, Vec<Diagnostic>)> {
    use rayon::prelude::*;
    let threads = rayon::current_num_threads();
    if source.len() < PARALLEL_MIN || threads < 2 {
        return None;
    }
    let bounds = chunk_bounds(source, start, threads * 4);
    let parts: Vec<(Vec<Item>, Vec<Diagnostic>)> = bounds
        .par_windows(2)
        .map(|w| parse_range(source, w[0], w[1], true))
        .collect();
    if parts.iter().any(|(_, d)| !d.is_empty()) {
        return None;
    }
    // One vector of the exact size: collecting a `flat_map` grows one by
    // doubling, up to twice the tree's item array while the parts live.
    let mut items = Vec::with_capacity(parts.iter().map(|(items, _)| items.len()).sum());
    for (part, _) in parts {
        items.extend(part);
    }
    Some((items, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    #[test]
    fn parallel_parsing_gives_the_sequential_tree_or_declines() {
        let plan = |inner: &str| {
            let mut src = String::new();
            for i in 0..20_000 {
                src.push_str(&format!(
                    "# task {i}\ntask t{i} \"T {i}\" {{\n  prompt = \"\"\"\n      {inner}\n      \"\"\"\n  inputs = [\"src/**\"]\n}}\n"
                ));
            }
            src
        };
        // A clean file is parsed in parallel, item for item the same.
        let clean = plan("Do the work.");
        assert!(clean.len() >= PARALLEL_MIN);
        let sequential = parse_range(&clean, 0, clean.len(), true);
        assert!(sequential.1.is_empty());
        if rayon::current_num_threads() >= 2 {
            let (items, diags) = parse_parallel(&clean, 0).expect("parsed in parallel");
            assert!(diags.is_empty());
            assert_eq!(items, sequential.0);
        }
        assert_eq!(parse(&clean).0.items, sequential.0);
        // Lines inside block strings that look like items can be chosen as
        // chunk boundaries; a chunk then reports errors and parsing falls
        // back to the sequential parser.
        let tricky = plan("task x { inside a block string }");
        assert!(parse_parallel(&tricky, 0).is_none());
        let sequential = parse_range(&tricky, 0, tricky.len(), true);
        assert!(sequential.1.is_empty());
        assert_eq!(parse(&tricky).0.items, sequential.0);
    }

    /// [`parse_each`]'s runs, joined, against the sequential parser, on a
    /// pool of four threads (so that the file is parsed in chunks on any
    /// machine).
    fn parse_each_matches_sequential(src: &str) {
        assert!(src.len() >= PARALLEL_MIN);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let mut runs = 0;
        let mut items = Vec::new();
        let diagnostics = pool.install(|| {
            parse_each(src, &mut |run| {
                runs += 1;
                items.extend(run);
            })
        });
        let (want, want_diagnostics) = parse_range(src, 0, src.len(), true);
        assert!(runs > 1);
        assert_eq!(items, want);
        assert_eq!(diagnostics, want_diagnostics);
    }

    #[test]
    fn parsing_run_by_run_gives_the_sequential_tree() {
        let plan = |inner: &dyn Fn(usize) -> String| {
            let mut src = String::new();
            for i in 0..20_000 {
                let inner = inner(i);
                src.push_str(&format!(
                    "# task {i}\ntask t{i} \"T {i}\" {{\n  prompt = \"\"\"\n      {inner}\n      \"\"\"\n  inputs = [\"src/**\"]\n}}\n"
                ));
            }
            src
        };
        // Clean: every chunk is parsed on the pool.
        parse_each_matches_sequential(&plan(&|_| "Do the work.".into()));
        // Chunk boundaries inside block strings (lines that look like
        // items): the rest is parsed sequentially from the first bad chunk.
        parse_each_matches_sequential(&plan(&|i| {
            if i > 5_000 {
                "task x { inside a block string }".into()
            } else {
                "Work.".into()
            }
        }));
        // Real errors in late chunks, after clean ones.
        parse_each_matches_sequential(&plan(&|i| match i {
            12_000 => "\"\"\"\n}\ntask broken {".into(),
            17_000 => "bad \\q escape".into(),
            _ => "Work.".into(),
        }));
    }
}
