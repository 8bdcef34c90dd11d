//! The compiled plan: a petgraph DAG of tasks with every default resolved and
//! each task's definition key (docs/language.md "Resolution", docs/cache.md, docs/plan-json.md).
//!
//! Everything after the checker (graph rendering, the interpreter, the cache)
//! works from a [`Plan`] and never looks at the syntax tree again.
//!
//! - `types`: the plan and its tasks, agents and gates;
//! - `graph`: the DAG, topological order, layers, E0006 and W0002;
//! - `resolve`: defaults resolved, agents and gates shared;
//! - [`pipeline`]: a REEL spec tree's stages and the tasks a run works;
//! - [`key`]: everything that goes into a cache key, the definition key
//!   here and the run-time key `loopc run` computes from it.

mod digest;
mod graph;
pub mod key;
pub mod pipeline;
mod resolve;
mod run_key;
mod select;
mod stages;
mod types;

pub use crate::model::{OnFail, OutputFormat};
pub use digest::{Key, KeyParts};
pub use pipeline::UnknownStage;
pub use select::UnknownTask;
pub use stages::{Pipeline, StageSpec};
pub use types::{
    Agent, Budget, DEFAULT_ATTEMPTS, DEFAULT_EXPAND_DEPTH, DEFAULT_FAILURES, DEFAULT_ITERATIONS,
    DEFAULT_REPLANS, DEFAULT_TIMEOUT, Executor, Gate, GateKind, Plan, Settings, SkippedGates, Task,
    TaskKind, shell_quote,
};

use crate::check::names::branch_problem;
use crate::diagnostic::{Code, Diagnostic};
use crate::model::Model;
use crate::origin::{DEFAULTS_FILE, Origin};
use crate::span::Span;

/// Builds the plan from a checked model: the DAG (E0006 for cycles, W0002 for
/// redundant dependencies), resolved defaults, topological order and keys.
///
/// `origin` says where the items came from and gives the default loop
/// name (the file's stem, or the REEL spec's name). Graph diagnostics
/// are computed even when the model had errors; the plan is `None` when the
/// model is incomplete (a task without valid work or agent) or cyclic.
pub fn build(mut model: Model, origin: &Origin) -> (Option<Plan>, Vec<Diagnostic>) {
    build_if(&mut model, origin, true)
}

/// [`build`], with the graph's diagnostics always and the plan itself
/// (resolved defaults, keys) only when `resolve` is true: a caller that
/// already has an error discards the plan anyway, so it need not pay for
/// the keys (the language server, on most keystrokes). Resolving takes the
/// model's tasks (the plan keeps their strings); without it the model is
/// left as it was, for the caller to keep.
pub fn build_if(
    model: &mut Model,
    origin: &Origin,
    resolve: bool,
) -> (Option<Plan>, Vec<Diagnostic>) {
    // deps[i]: (dependency index, span of the reference), in source order;
    // resolved by the checker, and given back below.
    let deps = std::mem::take(&mut model.dependency_positions);
    let (plan, diagnostics) = build_from(model, origin, resolve, &deps);
    model.dependency_positions = deps;
    (plan, diagnostics)
}

/// [`build_if`] with the dependency positions `deps` taken out of `model`.
fn build_from(
    model: &mut Model,
    origin: &Origin,
    resolve: bool,
    deps: &[Vec<(usize, Span)>],
) -> (Option<Plan>, Vec<Diagnostic>) {
    let stem = origin.default_name();
    let mut diagnostics = Vec::new();
    let graph = graph::dag(deps.iter().map(|ds| ds.iter().map(|&(j, _)| j)));

    // The default integration branch comes from the file name (or the REEL
    // spec's) when the plan names neither the loop nor the branch; git must
    // accept it.
    if model.settings.name.is_none()
        && model.settings.branch.is_none()
        && let Some(why) = branch_problem(&format!("loop/{stem}"))
    {
        diagnostics.push(match origin {
            Origin::File { .. } => Diagnostic::new(
                Code::E0009,
                format!("the file name `{stem}` does not make a valid branch name `loop/{stem}`"),
                Span::at(0),
                why,
            )
            .with_note(
                "rename the file, or name the loop: `loop \"name\" { }` (or set its `branch`)",
            ),
            Origin::Specs { first_spec, .. } => Diagnostic::new(
                Code::E0009,
                format!("the plan name `{stem}` does not make a valid branch name `loop/{stem}`"),
                Span::at(first_spec.unwrap_or(0)),
                why,
            )
            .with_note(format!(
                "the plan is named after its spec file or directory; name it with `loop \"NAME\" {{}}` (or set `branch`) in {DEFAULTS_FILE} or the --defaults plan"
            )),
        });
    }
    let order = graph::topological_order(&graph);
    drop(graph);
    if order.len() < deps.len() {
        // The tasks Kahn's algorithm never reached lie on a cycle or after one.
        let mut within = vec![true; deps.len()];
        for &i in &order {
            within[i] = false;
        }
        if graph::cycles(model, deps, &within, &mut diagnostics) {
            return (None, diagnostics);
        }
    }
    graph::redundant(model, deps, &order, &mut diagnostics);

    if !resolve {
        return (None, diagnostics);
    }
    // The plan takes the tasks' strings rather than copying them.
    let task_defs = std::mem::take(&mut model.tasks);
    (
        resolve::resolve(model, task_defs, stem, deps, &order),
        diagnostics,
    )
}
