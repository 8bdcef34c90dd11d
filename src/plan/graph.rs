//! Graph algorithms on the tasks' dependencies: the DAG, topological order
//! (ties in source order), layers, cycles (E0006) and redundant
//! dependencies (W0002).
//!
//! Tasks are numbered in source order; `deps[i]` holds task `i`'s
//! dependencies as `(index, span of the reference)`, in source order.

use crate::diagnostic::{Code, Diagnostic};
use crate::model::Model;
use crate::span::Span;
use foldhash::{HashMap, HashMapExt, HashSet};
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The DAG of the dependency lists `deps` (list `i` holds the dependencies
/// of task `i`): one node per task (weight: its index), one edge from each
/// dependency to its dependent, a dependency listed twice once.
pub(super) fn dag<I: IntoIterator<Item = usize>>(
    deps: impl ExactSizeIterator<Item = I>,
) -> DiGraph<usize, ()> {
    let mut graph: DiGraph<usize, ()> = DiGraph::with_capacity(deps.len(), 0);
    for i in 0..deps.len() {
        graph.add_node(i);
    }
    for (i, ds) in deps.enumerate() {
        // Deduplicated per task, so `add_edge` (O(1)) can be used: petgraph's
        // `update_edge` scans the source's edges and is quadratic on a task
        // with many dependents.
        let mut seen: Vec<usize> = ds.into_iter().collect();
        seen.sort_unstable();
        seen.dedup();
        for j in seen {
            graph.add_edge(NodeIndex::new(j), NodeIndex::new(i), ());
        }
    }
    graph
}

/// Each task's layer: 0 without dependencies, else one more than its
/// deepest dependency. `order` is a topological order of `deps`.
pub(super) fn layers(deps: &[Vec<(usize, Span)>], order: &[usize]) -> Vec<usize> {
    let mut layer = vec![0usize; deps.len()];
    for &i in order {
        layer[i] = deps[i]
            .iter()
            .map(|&(j, _)| layer[j] + 1)
            .max()
            .unwrap_or(0);
    }
    layer
}

/// Kahn's algorithm, ties broken by source order so the order is deterministic.
pub(super) fn topological_order(graph: &DiGraph<usize, ()>) -> Vec<usize> {
    let n = graph.node_count();
    let mut indegree: Vec<usize> = (0..n)
        .map(|i| {
            graph
                .neighbors_directed(NodeIndex::new(i), Direction::Incoming)
                .count()
        })
        .collect();
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&i| indegree[i] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for m in graph.neighbors_directed(NodeIndex::new(i), Direction::Outgoing) {
            indegree[m.index()] -= 1;
            if indegree[m.index()] == 0 {
                ready.push(Reverse(m.index()));
            }
        }
    }
    order
}

/// The strongly connected components of the dependency graph `deps`
/// restricted to the tasks `within` says (Tarjan's algorithm with an explicit
/// stack: a chain of a million tasks must not need a million stack frames).
fn strongly_connected(deps: &[Vec<(usize, Span)>], within: &[bool]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = deps.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    // The depth-first path: (task, how many of its dependencies were visited).
    let mut path: Vec<(usize, usize)> = Vec::new();
    let mut next = 0usize;
    let mut sccs = Vec::new();
    for root in 0..n {
        if !within[root] || index[root] != UNSEEN {
            continue;
        }
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        path.push((root, 0));
        while let Some(&mut (v, ref mut k)) = path.last_mut() {
            if let Some(&(w, _)) = deps[v].get(*k) {
                *k += 1;
                if !within[w] {
                    continue;
                }
                if index[w] == UNSEEN {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    path.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut scc = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                sccs.push(scc);
            }
        }
    }
    sccs
}

/// Reports every dependency cycle (E0006) among the tasks `within` says (those
/// a topological order could not reach); true if there was one.
pub(super) fn cycles(
    model: &Model,
    deps: &[Vec<(usize, Span)>],
    within: &[bool],
    out: &mut Vec<Diagnostic>,
) -> bool {
    let mut any = false;
    let mut sccs = strongly_connected(deps, within);
    for scc in &mut sccs {
        scc.sort_unstable();
    }
    sccs.sort_by_key(|scc| scc.first().copied());
    for scc in sccs {
        let members: HashSet<usize> = scc.iter().copied().collect();
        let Some(&start) = scc.first() else {
            continue;
        };
        let self_loop = deps[start].iter().any(|&(j, _)| j == start);
        if members.len() < 2 && !self_loop {
            continue;
        }
        any = true;
        // Shortest "depends on" path from start back to start within the SCC.
        let path = if self_loop {
            vec![start, start]
        } else {
            shortest_cycle(deps, &members, start)
        };
        out.push(cycle_diagnostic(model, deps, &path, &members));
    }
    any
}

/// The shortest "depends on" path from `start` back to `start` through
/// the tasks of its strongly connected component `members` (two or more).
fn shortest_cycle(
    deps: &[Vec<(usize, Span)>],
    members: &HashSet<usize>,
    start: usize,
) -> Vec<usize> {
    let mut prev: HashMap<usize, usize> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    let mut found = false;
    while let Some(u) = queue.pop_front() {
        for &(v, _) in &deps[u] {
            if !members.contains(&v) {
                continue;
            }
            if v == start {
                prev.insert(usize::MAX, u);
                found = true;
                break;
            }
            if let std::collections::hash_map::Entry::Vacant(e) = prev.entry(v) {
                e.insert(u);
                queue.push_back(v);
            }
        }
        if found {
            break;
        }
    }
    let mut rev = vec![start];
    let mut cur = prev.get(&usize::MAX).copied().unwrap_or(start);
    while cur != start {
        rev.push(cur);
        cur = prev.get(&cur).copied().unwrap_or(start);
    }
    rev.push(start);
    rev.reverse();
    rev
}

/// The most task names an E0006 message lists (half from each end).
const CYCLE_NAMES: usize = 12;

/// The most dependencies of a cycle an E0006 labels.
const CYCLE_LABELS: usize = 12;

/// E0006 for the cycle `path` (its first task again at its end) in the
/// strongly connected component `members`: a label on each dependency
/// of the path, a note naming the component's other tasks.
fn cycle_diagnostic(
    model: &Model,
    deps: &[Vec<(usize, Span)>],
    path: &[usize],
    members: &HashSet<usize>,
) -> Diagnostic {
    // A cycle through thousands of tasks is said in a few lines: its first
    // and last tasks, a label on its first dependencies, and how many more.
    let names: Vec<&str> = path
        .iter()
        .map(|&i| model.tasks[i].name.text.as_str())
        .collect();
    let shown = if names.len() > CYCLE_NAMES {
        let head = &names[..CYCLE_NAMES / 2];
        let tail = &names[names.len() - CYCLE_NAMES / 2..];
        format!(
            "{} → … ({} more) → {}",
            head.join(" → "),
            names.len() - head.len() - tail.len(),
            tail.join(" → ")
        )
    } else {
        names.join(" → ")
    };
    let mut labels: Vec<(Span, String)> = Vec::new();
    for w in path.windows(2).take(CYCLE_LABELS) {
        let (a, b) = (w[0], w[1]);
        let span = deps[a]
            .iter()
            .find(|&&(j, _)| j == b)
            .map_or(model.tasks[a].name.span, |&(_, s)| s);
        labels.push((
            span,
            format!(
                "`{}` depends on `{}`",
                model.tasks[a].name.text, model.tasks[b].name.text
            ),
        ));
    }
    let (first_span, first_msg) = labels[0].clone();
    let mut d = Diagnostic::new(
        Code::E0006,
        format!("dependency cycle: {shown}"),
        first_span,
        first_msg,
    );
    for (span, msg) in labels.into_iter().skip(1) {
        d = d.with_label(span, msg);
    }
    let edges = path.len() - 1;
    if edges > CYCLE_LABELS {
        d = d.with_note(format!(
            "{} more dependencies close the cycle (the first {CYCLE_LABELS} are shown)",
            edges - CYCLE_LABELS
        ));
    }
    if members.len() > edges {
        let on_path: HashSet<usize> = path.iter().copied().collect();
        let mut others: Vec<&str> = members
            .iter()
            .filter(|i| !on_path.contains(i))
            .map(|&i| model.tasks[i].name.text.as_str())
            .collect();
        others.sort_unstable();
        let more = others.len().saturating_sub(CYCLE_NAMES);
        others.truncate(CYCLE_NAMES);
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        d = d.with_note(format!("also in this cycle: {}{tail}", others.join(", ")));
    }
    d.with_note("a plan's dependencies must form a DAG: remove one of these dependencies")
}

/// Reports dependencies already implied through another dependency (W0002).
///
/// The walk from a task's dependencies back through their ancestors is pruned
/// at tasks that come before the earliest direct dependency in topological
/// order (they cannot reach it), so typical plans cost about O(V + E).
pub(super) fn redundant(
    model: &Model,
    deps: &[Vec<(usize, Span)>],
    order: &[usize],
    out: &mut Vec<Diagnostic>,
) {
    let mut position = vec![0usize; deps.len()];
    for (p, &i) in order.iter().enumerate() {
        position[i] = p;
    }
    let mut stamp = vec![usize::MAX; deps.len()];
    let mut via = vec![usize::MAX; deps.len()];
    // listed[j] == t: task t lists j; times[j] how often (so far), first[j]
    // where first. Arrays, not scans of the list: one task may depend on
    // a hundred thousand others.
    let mut listed = vec![usize::MAX; deps.len()];
    let mut times = vec![0usize; deps.len()];
    let mut first = vec![0usize; deps.len()];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for (t, ds) in deps.iter().enumerate() {
        if ds.len() < 2 {
            // A dependency listed once cannot be implied by another one.
            continue;
        }
        let floor = ds.iter().map(|&(j, _)| position[j]).min().unwrap_or(0);
        for (k, &(j, span)) in ds.iter().enumerate() {
            if listed[j] != t {
                listed[j] = t;
                times[j] = 0;
                first[j] = k;
            }
            times[j] += 1;
            if times[j] == 2 {
                out.push(
                    Diagnostic::new(
                        Code::W0002,
                        format!(
                            "task `{}` lists dependency `{}` twice",
                            model.tasks[t].name.text, model.tasks[j].name.text
                        ),
                        span,
                        "listed again here",
                    )
                    .with_note("remove the repeated dependency"),
                );
            }
        }
        // Walk the ancestors of every direct dependency, remembering which
        // direct dependency reached them first.
        stack.clear();
        for &(j, _) in ds {
            for &(k, _) in &deps[j] {
                stack.push((k, j));
            }
        }
        while let Some((u, from)) = stack.pop() {
            if stamp[u] == t || position[u] < floor {
                continue;
            }
            stamp[u] = t;
            via[u] = from;
            for &(k, _) in &deps[u] {
                if stamp[k] != t {
                    stack.push((k, from));
                }
            }
        }
        for (k, &(j, span)) in ds.iter().enumerate() {
            if stamp[j] == t && listed[via[j]] == t && via[j] != j && first[j] == k {
                out.push(
                    Diagnostic::new(
                        Code::W0002,
                        format!(
                            "dependency `{}` of task `{}` is redundant",
                            model.tasks[j].name.text, model.tasks[t].name.text
                        ),
                        span,
                        format!(
                            "already implied through `{}`",
                            model.tasks[via[j]].name.text
                        ),
                    )
                    .with_note(format!(
                        "`{}` depends on `{}` already; remove it from this list",
                        model.tasks[via[j]].name.text, model.tasks[j].name.text
                    )),
                );
            }
        }
    }
}
