//! The compiled plan: a petgraph DAG of tasks with every default resolved and
//! each task's definition key (spec §3 "Resolution", §6, §7 `graph --format json`).
//!
//! Everything after the checker (graph rendering, the interpreter, the cache)
//! works from a [`Plan`] and never looks at the syntax tree again.

use crate::check::{AgentDef, GateDef, GateDefKind, Model, Work};
use crate::diagnostic::{Code, Diagnostic};
use crate::key::{Encoder, Key};
use crate::origin::{DEFAULTS_FILE, Origin};
use crate::span::Span;
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// Default per-attempt timeout and gate timeout (spec §3): 30 minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default attempts per task (spec §3).
pub const DEFAULT_ATTEMPTS: u32 = 3;
/// Default consecutive failed attempts that stop a run (spec §3 `budget.failures`).
pub const DEFAULT_FAILURES: u32 = 3;

/// A validated, compiled plan.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The loop's name: `loop "name"`, else the plan file's stem.
    pub name: String,
    /// Settings of the `loop` item, defaults applied.
    pub settings: Settings,
    /// The run's budget, defaults applied.
    pub budget: Budget,
    /// Tasks in topological order (dependencies before dependents; ties in
    /// source order). `tasks[i]` is node `NodeIndex::new(i)` of [`Plan::graph`].
    pub tasks: Vec<Task>,
    /// One node per task (weight: index into `tasks`), an edge from each
    /// dependency to its dependent.
    pub graph: DiGraph<usize, ()>,
}

impl Plan {
    /// The index of the task called `name`.
    pub fn task_index(&self, name: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.name == name)
    }

    /// Indices of the tasks that depend directly on task `index`, ascending.
    pub fn dependents(&self, index: usize) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .graph
            .neighbors_directed(NodeIndex::new(index), petgraph::Direction::Outgoing)
            .map(|n| n.index())
            .collect();
        out.sort_unstable();
        out
    }
}

/// The `loop` item's settings (spec §3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Branch to start from; `None` means the branch checked out.
    pub base: Option<String>,
    /// Integration branch; default `loop/<name>`.
    pub branch: String,
    /// Tasks at once (≥ 1); the CLI's `-j` overrides it.
    pub parallel: u32,
    /// Command run in every new worktree before the agent.
    pub setup: Option<String>,
}

/// The run's budget (spec §3 `budget`). `None` means unbounded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// Agent attempts across the whole run.
    pub iterations: Option<u32>,
    /// Wall clock for the whole run.
    pub time: Option<Duration>,
    /// Sum of what agents report, in micro-dollars.
    pub cost: Option<u64>,
    /// Consecutive failed attempts that stop the run (circuit breaker).
    pub failures: u32,
}

/// One task with every default resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// The task's name (valid as a git branch component and a directory name).
    pub name: String,
    /// The title, if one was written.
    pub title: Option<String>,
    /// Agent task or command task.
    pub kind: TaskKind,
    /// The task's own acceptance check, run before its gates.
    pub accept: Option<String>,
    /// Gates in order: the task's `gates`, else `defaults.gates`, else none
    /// (shared with the other tasks using them).
    pub gates: Vec<Arc<Gate>>,
    /// Attempts allowed (≥ 1).
    pub attempts: u32,
    /// Per-attempt timeout: task, else defaults, else the agent's, else 30m.
    pub timeout: Duration,
    /// Glob patterns relative to the repository root.
    pub inputs: Vec<String>,
    /// Environment: agent, then defaults, then task (later wins).
    pub env: BTreeMap<String, String>,
    /// Indices (into [`Plan::tasks`]) of direct dependencies, ascending.
    pub dependencies: Vec<usize>,
    /// The definition key (spec §6 without the `inputs` part).
    pub key: Key,
    /// Digests of the key's components, so a changed key can say what changed.
    pub key_parts: KeyParts,
    /// The task's layer: 0 without dependencies, else one more than its
    /// deepest dependency.
    pub layer: usize,
}

/// Digests of the components of a task's definition key (spec §6), kept so
/// that `run --dry-run` can name the part that changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyParts {
    /// The prompt (agent task) or command (command task).
    pub work: Key,
    /// The agent's `run` and `output`.
    pub agent: Key,
    /// `accept` and the gates' definitions.
    pub gates: Key,
    /// The merged environment.
    pub env: Key,
    /// The dependencies' keys.
    pub dependencies: Key,
}

/// What does a task's work.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskKind {
    /// A fresh agent session given `prompt` on stdin.
    Agent {
        /// The task's prompt.
        prompt: String,
        /// The resolved agent (shared with the other tasks using it).
        agent: Arc<Agent>,
    },
    /// A plain shell command (`sh -c run`).
    Command {
        /// The command.
        run: String,
    },
}

/// How agent output is read (spec §3 `agent.output`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutputFormat {
    /// Free text; only the handoff file is read.
    Text,
    /// Claude Code's `--output-format json` result on stdout (cost, summary).
    ClaudeJson,
}

impl OutputFormat {
    /// The word used in plan files.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Text => "text",
            OutputFormat::ClaudeJson => "claude-json",
        }
    }
}

/// A resolved agent definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Agent {
    /// The agent's name.
    pub name: String,
    /// The shell command that starts it.
    pub run: String,
    /// How its stdout is read.
    pub output: OutputFormat,
    /// The agent's own per-attempt timeout, if set.
    pub timeout: Option<Duration>,
    /// Per-attempt cost cap in micro-dollars (exported as `LOOP_COST_CAP_USD`).
    pub cost: Option<u64>,
    /// The agent's own environment.
    pub env: BTreeMap<String, String>,
}

/// What a gate does when it rejects (spec §3 `on_fail`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnFail {
    /// Next attempt from a fresh worktree (default).
    Retry,
    /// The task is blocked.
    Block,
    /// The run stops.
    Fail,
}

impl OnFail {
    /// The word used in plan files.
    pub fn as_str(self) -> &'static str {
        match self {
            OnFail::Retry => "retry",
            OnFail::Block => "block",
            OnFail::Fail => "fail",
        }
    }
}

/// A resolved gate.
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    /// The gate's name.
    pub name: String,
    /// Command or agent-judged.
    pub kind: GateKind,
    /// Timeout of one gate run (default 30m).
    pub timeout: Duration,
    /// What a rejection does.
    pub on_fail: OnFail,
}

/// What a gate runs.
#[derive(Clone, Debug, PartialEq)]
pub enum GateKind {
    /// Passes on exit status 0.
    Command {
        /// The command (`sh -c`).
        run: String,
    },
    /// An agent run read-only on the diff; passes on a `completed` handoff.
    Agent {
        /// The resolved agent (shared).
        agent: Arc<Agent>,
        /// The review prompt.
        prompt: String,
    },
}

/// Builds the plan from a checked model: the DAG (E0006 for cycles, W0002 for
/// redundant dependencies), resolved defaults, topological order and keys.
///
/// `origin` says where the items came from and gives the default loop
/// name (the file's stem, or the REEL spec's name). Graph diagnostics
/// are computed even when the model had errors; the plan is `None` when the
/// model is incomplete (a task without valid work or agent) or cyclic.
pub fn build(mut model: Model, origin: &Origin) -> (Option<Plan>, Vec<Diagnostic>) {
    let stem = origin.default_name();
    let mut diagnostics = Vec::new();
    let n = model.tasks.len();
    let index: HashMap<&str, usize> = model
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.text.as_str(), i))
        .collect();
    // deps[i]: (dependency index, span of the reference), in source order.
    let deps: Vec<Vec<(usize, Span)>> = model
        .tasks
        .iter()
        .map(|t| {
            t.dependencies
                .iter()
                .filter_map(|d| index.get(d.text.as_str()).map(|&j| (j, d.span)))
                .collect()
        })
        .collect();

    let mut graph: DiGraph<usize, ()> = DiGraph::with_capacity(n, 0);
    for i in 0..n {
        graph.add_node(i);
    }
    for (i, ds) in deps.iter().enumerate() {
        // Deduplicated per task, so `add_edge` (O(1)) can be used: petgraph's
        // `update_edge` scans the source's edges and is quadratic on a task
        // with many dependents.
        let mut seen: Vec<usize> = ds.iter().map(|&(j, _)| j).collect();
        seen.sort_unstable();
        seen.dedup();
        for j in seen {
            graph.add_edge(NodeIndex::new(j), NodeIndex::new(i), ());
        }
    }

    // The default integration branch comes from the file name (or the REEL
    // spec's) when the plan names neither the loop nor the branch; git must
    // accept it.
    if model.settings.name.is_none()
        && model.settings.branch.is_none()
        && let Some(why) = crate::check::branch_problem(&format!("loop/{stem}"))
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
    drop(index);
    let cyclic = cycles(&model, &graph, &deps, &mut diagnostics);
    if cyclic {
        return (None, diagnostics);
    }
    let order = topological_order(&graph);
    redundant(&model, &deps, &order, &mut diagnostics);

    // The plan takes the tasks' strings rather than copying them.
    let task_defs = std::mem::take(&mut model.tasks);
    (resolve(&model, task_defs, stem, &deps, &order), diagnostics)
}

/// Kahn's algorithm, ties broken by source order so the order is deterministic.
fn topological_order(graph: &DiGraph<usize, ()>) -> Vec<usize> {
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

/// Reports every dependency cycle (E0006); true if there was one.
fn cycles(
    model: &Model,
    graph: &DiGraph<usize, ()>,
    deps: &[Vec<(usize, Span)>],
    out: &mut Vec<Diagnostic>,
) -> bool {
    let mut any = false;
    let mut sccs = petgraph::algo::tarjan_scc(graph);
    for scc in &mut sccs {
        scc.sort_unstable_by_key(|n| n.index());
    }
    sccs.sort_by_key(|scc| scc.first().map(|n| n.index()));
    for scc in sccs {
        let members: HashSet<usize> = scc.iter().map(|n| n.index()).collect();
        let Some(&start) = scc.first().map(|n| n.index()).as_ref() else {
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
        };
        let names: Vec<&str> = path
            .iter()
            .map(|&i| model.tasks[i].name.text.as_str())
            .collect();
        let mut labels: Vec<(Span, String)> = Vec::new();
        for w in path.windows(2) {
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
            format!("dependency cycle: {}", names.join(" → ")),
            first_span,
            first_msg,
        );
        for (span, msg) in labels.into_iter().skip(1) {
            d = d.with_label(span, msg);
        }
        if members.len() > path.len() - 1 {
            let mut others: Vec<&str> = members
                .iter()
                .filter(|i| !path.contains(i))
                .map(|&i| model.tasks[i].name.text.as_str())
                .collect();
            others.sort_unstable();
            d = d.with_note(format!("also in this cycle: {}", others.join(", ")));
        }
        d = d.with_note("a plan's dependencies must form a DAG: remove one of these dependencies");
        out.push(d);
    }
    any
}

/// Reports dependencies already implied through another dependency (W0002).
///
/// The walk from a task's dependencies back through their ancestors is pruned
/// at tasks that come before the earliest direct dependency in topological
/// order (they cannot reach it), so typical plans cost about O(V + E).
fn redundant(
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
    let mut direct: Vec<usize> = Vec::new();
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for (t, ds) in deps.iter().enumerate() {
        if ds.len() < 2 {
            // A dependency listed once cannot be implied by another one.
            continue;
        }
        // Dependency lists are short: small vectors beat hash sets here.
        direct.clear();
        direct.extend(ds.iter().map(|&(j, _)| j));
        let floor = ds.iter().map(|&(j, _)| position[j]).min().unwrap_or(0);
        for (k, &(j, span)) in ds.iter().enumerate() {
            let earlier = ds[..k].iter().filter(|&&(x, _)| x == j).count();
            if earlier == 1 {
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
            let first = !ds[..k].iter().any(|&(x, _)| x == j);
            if stamp[j] == t && direct.contains(&via[j]) && via[j] != j && first {
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

/// Resolves defaults and computes keys; `None` if the model is incomplete.
fn resolve(
    model: &Model,
    mut task_defs: Vec<crate::check::TaskDef>,
    stem: &str,
    deps: &[Vec<(usize, Span)>],
    order: &[usize],
) -> Option<Plan> {
    let agents: HashMap<&str, &AgentDef> = model
        .agents
        .iter()
        .map(|a| (a.name.name.as_str(), a))
        .collect();
    let gates: HashMap<&str, &GateDef> = model
        .gates
        .iter()
        .map(|g| (g.name.name.as_str(), g))
        .collect();
    // Each agent and gate is resolved once and shared by the tasks using it.
    let mut resolved_agents: HashMap<&str, Option<Arc<Agent>>> = HashMap::new();
    for (name, a) in &agents {
        let agent = a.run.clone().map(|run| {
            Arc::new(Agent {
                name: a.name.name.clone(),
                run,
                output: a.output,
                timeout: a.timeout,
                cost: a.cost,
                env: a.env.clone(),
            })
        });
        resolved_agents.insert(name, agent);
    }
    let resolve_agent =
        |name: &str| -> Option<Arc<Agent>> { resolved_agents.get(name).cloned().flatten() };
    let mut resolved_gates: HashMap<&str, Option<Arc<Gate>>> = HashMap::new();
    for (name, g) in &gates {
        let kind = match &g.kind {
            GateDefKind::Command(run) => Some(GateKind::Command { run: run.clone() }),
            GateDefKind::Agent { agent, prompt } => {
                resolve_agent(&agent.name).map(|agent| GateKind::Agent {
                    agent,
                    prompt: prompt.clone(),
                })
            }
            GateDefKind::Invalid => None,
        };
        let gate = kind.map(|kind| {
            Arc::new(Gate {
                name: g.name.name.clone(),
                kind,
                timeout: g.timeout.unwrap_or(DEFAULT_TIMEOUT),
                on_fail: g.on_fail,
            })
        });
        resolved_gates.insert(name, gate);
    }
    let resolve_gate =
        |name: &str| -> Option<Arc<Gate>> { resolved_gates.get(name).cloned().flatten() };

    // position[i] = where source task i lands in topological order.
    let mut position = vec![0usize; task_defs.len()];
    for (p, &i) in order.iter().enumerate() {
        position[i] = p;
    }
    let mut tasks: Vec<Task> = Vec::with_capacity(order.len());
    for &i in order {
        let t = &mut task_defs[i];
        let agent = match &t.work {
            Work::Prompt(_) => {
                let r = t.agent.as_ref().or(model.defaults.agent.as_ref())?;
                Some(resolve_agent(&r.name)?)
            }
            Work::Run(_) => None,
            Work::Invalid => return None,
        };
        let gate_refs = t.gates.as_ref().or(model.defaults.gates.as_ref());
        let mut task_gates = Vec::new();
        for r in gate_refs.into_iter().flatten() {
            task_gates.push(resolve_gate(&r.name)?);
        }
        let mut env = BTreeMap::new();
        if let Some(a) = &agent {
            env.extend(a.env.clone());
        }
        env.extend(model.defaults.env.clone());
        env.extend(std::mem::take(&mut t.env));
        let timeout = t
            .timeout
            .or(model.defaults.timeout)
            .or(agent.as_ref().and_then(|a| a.timeout))
            .unwrap_or(DEFAULT_TIMEOUT);
        let kind = match (std::mem::replace(&mut t.work, Work::Invalid), agent) {
            (Work::Prompt(prompt), Some(agent)) => TaskKind::Agent { prompt, agent },
            (Work::Run(run), _) => TaskKind::Command { run },
            _ => return None,
        };
        let name = std::mem::take(&mut t.name.text);
        let accept = t.accept.take();
        let mut dependencies: Vec<usize> = deps[i].iter().map(|&(j, _)| position[j]).collect();
        dependencies.sort_unstable();
        dependencies.dedup();
        let layer = dependencies
            .iter()
            .map(|&d| tasks[d].layer + 1)
            .max()
            .unwrap_or(0);
        let dep_keys: Vec<Key> = dependencies.iter().map(|&d| tasks[d].key).collect();
        let (key, key_parts) =
            task_key(&name, &kind, accept.as_deref(), &task_gates, &env, dep_keys);
        tasks.push(Task {
            name,
            title: t.title.take(),
            kind,
            accept,
            gates: task_gates,
            attempts: t
                .attempts
                .or(model.defaults.attempts)
                .unwrap_or(DEFAULT_ATTEMPTS),
            timeout,
            inputs: std::mem::take(&mut t.inputs),
            env,
            dependencies,
            key,
            key_parts,
            layer,
        });
    }
    let mut graph: DiGraph<usize, ()> = DiGraph::with_capacity(tasks.len(), 0);
    for i in 0..tasks.len() {
        graph.add_node(i);
    }
    for (i, t) in tasks.iter().enumerate() {
        for &d in &t.dependencies {
            graph.add_edge(NodeIndex::new(d), NodeIndex::new(i), ());
        }
    }
    let name = model
        .settings
        .name
        .clone()
        .unwrap_or_else(|| stem.to_string());
    Some(Plan {
        settings: Settings {
            base: model.settings.base.clone(),
            branch: model
                .settings
                .branch
                .clone()
                .unwrap_or_else(|| format!("loop/{name}")),
            parallel: model.settings.parallel.unwrap_or(1),
            setup: model.settings.setup.clone(),
        },
        budget: Budget {
            iterations: model.budget.iterations,
            time: model.budget.time,
            cost: model.budget.cost,
            failures: model.budget.failures.unwrap_or(DEFAULT_FAILURES),
        },
        name,
        tasks,
        graph,
    })
}

/// A task's definition key (spec §6 without `inputs`) and its components.
///
/// In the key: the format version, the task name, the prompt or command, the
/// agent's `run` and `output`, `accept`, each gate's definition (command, or
/// agent `run`/`output`/`env` and prompt), the merged environment, and the
/// dependencies' keys (sorted). Not in it: titles, timeouts, attempts,
/// budgets, `on_fail`, gate names, comments and layout.
fn task_key(
    name: &str,
    kind: &TaskKind,
    accept: Option<&str>,
    gates: &[Arc<Gate>],
    env: &BTreeMap<String, String>,
    mut dep_keys: Vec<Key>,
) -> (Key, KeyParts) {
    let work = match kind {
        TaskKind::Agent { prompt, .. } => Encoder::new().str("prompt", prompt).finish(),
        TaskKind::Command { run } => Encoder::new().str("run", run).finish(),
    };
    let agent = match kind {
        TaskKind::Agent { agent, .. } => Encoder::new()
            .str("run", &agent.run)
            .str("output", agent.output.as_str())
            .finish(),
        TaskKind::Command { .. } => Encoder::new().str("agent", "").finish(),
    };
    let mut g = Encoder::new();
    g.opt("accept", accept);
    for gate in gates {
        match &gate.kind {
            GateKind::Command { run } => g.str("gate.run", run),
            GateKind::Agent { agent, prompt } => g
                .str("gate.agent.run", &agent.run)
                .str("gate.agent.output", agent.output.as_str())
                .map("gate.agent.env", agent.env.iter())
                .str("gate.prompt", prompt),
        };
    }
    let gates = g.finish();
    let env = Encoder::new().map("env", env.iter()).finish();
    dep_keys.sort_unstable();
    let mut d = Encoder::new();
    for k in &dep_keys {
        d.key("dependency", k);
    }
    let dependencies = d.finish();
    let parts = KeyParts {
        work,
        agent,
        gates,
        env,
        dependencies,
    };
    let key = Encoder::new()
        .str("version", crate::key::KEY_FORMAT_VERSION)
        .str("task", name)
        .key("work", &parts.work)
        .key("agent", &parts.agent)
        .key("gates", &parts.gates)
        .key("env", &parts.env)
        .key("dependencies", &parts.dependencies)
        .finish();
    (key, parts)
}
