//! Default resolution (docs/language.md "Resolution"): each task's agent, gates,
//! attempts, timeout, environment and resolver, and the loop's settings and budget,
//! from the task, else `defaults`, else the agent, else the language's
//! defaults. Executors, agents and gates are resolved once and shared.

use super::graph;
use super::key::{Key, KeyMemo, task_key};
use super::types::{Agent, Budget, Executor, Gate, GateKind, Plan, Settings, Task, TaskKind};
use super::types::{
    DEFAULT_ATTEMPTS, DEFAULT_EXPAND_DEPTH, DEFAULT_FAILURES, DEFAULT_ITERATIONS, DEFAULT_REPLANS,
    DEFAULT_TIMEOUT,
};
use crate::model::{AgentDef, GateDef, GateDefKind, Model, Ref, TaskDef, Work};
use crate::span::Span;
use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Resolves defaults and computes keys; `None` if the model is incomplete.
pub(super) fn resolve(
    model: &Model,
    mut task_defs: Vec<TaskDef>,
    stem: &str,
    deps: &[Vec<(usize, Span)>],
    order: &[usize],
) -> Option<Plan> {
    let shared = Shared::new(model)?;
    // position[i] = where source task i lands in topological order.
    let mut position = vec![0usize; task_defs.len()];
    for (p, &i) in order.iter().enumerate() {
        position[i] = p;
    }
    let layers = graph::layers(deps, order);
    let mut tasks: Vec<Task> = Vec::with_capacity(order.len());
    let mut key_memo = KeyMemo::default();
    for &i in order {
        let mut dependencies: Vec<usize> = deps[i].iter().map(|&(j, _)| position[j]).collect();
        dependencies.sort_unstable();
        dependencies.dedup();
        let dep_keys: Vec<Key> = dependencies.iter().map(|&d| tasks[d].key).collect();
        let task = shared.task(
            &mut task_defs[i],
            dependencies,
            dep_keys,
            layers[i],
            &mut key_memo,
        )?;
        tasks.push(task);
    }
    let graph = graph::dag(tasks.iter().map(|t| t.dependencies.iter().copied()));
    let name = model
        .settings
        .name
        .clone()
        .unwrap_or_else(|| stem.to_string());
    Some(Plan {
        settings: shared.settings(&name)?,
        budget: Budget {
            iterations: model.budget.iterations.or_else(|| {
                let b = &model.budget;
                // Nothing bounds the agents: REEL's default (W0003 says so).
                (!b.bounds_written && b.time.is_none() && b.cost.is_none())
                    .then_some(DEFAULT_ITERATIONS)
            }),
            time: model.budget.time,
            cost: model.budget.cost,
            failures: model.budget.failures.unwrap_or(DEFAULT_FAILURES),
            wait: model.budget.wait,
        },
        name,
        tasks,
        graph,
        pipeline: None,
    })
}

/// The model's executors, agents and gates, each resolved once and shared
/// by the tasks using it (`None`: it did not resolve).
struct Shared<'m> {
    model: &'m Model,
    executors: HashMap<&'m str, Option<Arc<Executor>>>,
    /// `defaults.executor`, resolved.
    default_executor: Option<Arc<Executor>>,
    agents: HashMap<&'m str, Option<Arc<Agent>>>,
    gates: HashMap<&'m str, Option<Arc<Gate>>>,
}

impl<'m> Shared<'m> {
    /// Resolves `model`'s executors, then its agents (with their chains of
    /// fallbacks), then its gates. `None` when `defaults.executor` does not
    /// resolve.
    fn new(model: &'m Model) -> Option<Self> {
        let mut shared = Shared {
            model,
            executors: executors(model),
            default_executor: None,
            agents: HashMap::new(),
            gates: HashMap::new(),
        };
        shared.default_executor = shared.executor(model.defaults.executor.as_ref())?;
        let agents: HashMap<&str, &AgentDef> = model
            .agents
            .iter()
            .map(|a| (a.name.name.as_str(), a))
            .collect();
        shared.agents = shared.agents(&agents);
        shared.fallbacks(&agents);
        shared.gates = shared.gates();
        Some(shared)
    }

    /// The executor `r` names: `Some(None)` for no executor, `None` for a
    /// reference that did not resolve (unknown, or without `run`:
    /// reported), which leaves the plan incomplete.
    fn executor(&self, r: Option<&Ref>) -> Option<Option<Arc<Executor>>> {
        match r {
            None => Some(None),
            Some(r) => self
                .executors
                .get(r.name.as_str())
                .cloned()
                .flatten()
                .map(Some),
        }
    }

    /// [`Shared::executor`], with `defaults.executor` for no reference.
    fn own_or_default(&self, r: Option<&Ref>) -> Option<Option<Arc<Executor>>> {
        match r {
            None => Some(self.default_executor.clone()),
            Some(_) => self.executor(r),
        }
    }

    fn agent(&self, name: &str) -> Option<Arc<Agent>> {
        self.agents.get(name).cloned().flatten()
    }

    fn gate(&self, name: &str) -> Option<Arc<Gate>> {
        self.gates.get(name).cloned().flatten()
    }

    /// Each agent of `defs` resolved, without its fallbacks yet.
    fn agents(
        &self,
        defs: &HashMap<&'m str, &'m AgentDef>,
    ) -> HashMap<&'m str, Option<Arc<Agent>>> {
        let mut resolved = HashMap::new();
        for (name, a) in defs {
            let agent = match (a.run.clone(), self.own_or_default(a.executor.as_ref())) {
                (Some(run), Some(executor)) => Some(Arc::new(Agent {
                    name: a.name.name.clone(),
                    run,
                    output: a.output.clone(),
                    timeout: a.timeout,
                    idle: a.idle,
                    cost: a.cost,
                    env: a.env.clone(),
                    fallbacks: Vec::new(),
                    executor,
                })),
                _ => None,
            };
            resolved.insert(*name, agent);
        }
        resolved
    }

    /// Gives each resolved agent its chain of fallbacks (a cycle was E0006;
    /// the walk stops at a repeat all the same), each of them without
    /// fallbacks of its own.
    fn fallbacks(&mut self, defs: &HashMap<&'m str, &'m AgentDef>) {
        let chains: Vec<(&str, Vec<Arc<Agent>>)> = defs
            .iter()
            .map(|(&name, a)| {
                let mut chain: Vec<Arc<Agent>> = Vec::new();
                let mut next = a.fallback.as_ref();
                while let Some(r) = next {
                    let Some(f) = self.agent(r.name.as_str()) else {
                        break;
                    };
                    if f.name == name || chain.iter().any(|c| c.name == f.name) {
                        break;
                    }
                    chain.push(f);
                    next = defs.get(r.name.as_str()).and_then(|d| d.fallback.as_ref());
                }
                (name, chain)
            })
            .collect();
        for (name, chain) in chains {
            if chain.is_empty() {
                continue;
            }
            if let Some(Some(agent)) = self.agents.get_mut(name) {
                Arc::make_mut(agent).fallbacks = chain;
            }
        }
    }

    /// Each gate resolved, with its agent (fallbacks given) and executor.
    fn gates(&self) -> HashMap<&'m str, Option<Arc<Gate>>> {
        let defs: HashMap<&str, &GateDef> = self
            .model
            .gates
            .iter()
            .map(|g| (g.name.name.as_str(), g))
            .collect();
        let mut resolved = HashMap::new();
        for (name, g) in &defs {
            let kind = match &g.kind {
                GateDefKind::Command(run) => Some(GateKind::Command { run: run.clone() }),
                GateDefKind::Agent { agent, prompt } => {
                    self.agent(&agent.name).map(|agent| GateKind::Agent {
                        agent,
                        prompt: prompt.clone(),
                    })
                }
                GateDefKind::Invalid => None,
            };
            let gate_executor = match (&g.executor, &kind) {
                (Some(r), _) => self.executor(Some(r)),
                (None, Some(GateKind::Agent { agent, .. })) => Some(agent.executor.clone()),
                (None, _) => Some(self.default_executor.clone()),
            };
            let gate = match (kind, gate_executor) {
                (Some(kind), Some(executor)) => Some(Arc::new(Gate {
                    key: super::key::gate_key(&kind, g.on_change, executor.as_deref()),
                    name: g.name.name.clone(),
                    kind,
                    timeout: g.timeout.unwrap_or(DEFAULT_TIMEOUT),
                    on_fail: g.on_fail,
                    on_change: g.on_change,
                    recheck: g.recheck,
                    executor,
                })),
                _ => None,
            };
            resolved.insert(*name, gate);
        }
        resolved
    }

    /// Task `t`'s resolver: its own, else the defaults', else the loop's.
    /// `Some(None)`: it has none; `None`: the named agent did not resolve.
    fn resolver(&self, t: &TaskDef) -> Option<Option<Arc<Agent>>> {
        let m = self.model;
        self.agent_of([&t.resolver, &m.defaults.resolver, &m.settings.resolver])
    }

    /// Task `t`'s answerer: its own, else the defaults', else the loop's.
    /// `Some(None)`: it has none; `None`: the named agent did not resolve.
    fn answerer(&self, t: &TaskDef) -> Option<Option<Arc<Agent>>> {
        let m = self.model;
        self.agent_of([&t.answerer, &m.defaults.answerer, &m.settings.answerer])
    }

    /// The agent the first reference of `refs` that is set names.
    /// `Some(None)`: none is set; `None`: the named agent did not resolve.
    fn agent_of(&self, refs: [&Option<crate::model::Ref>; 3]) -> Option<Option<Arc<Agent>>> {
        match refs.into_iter().find_map(Option::as_ref) {
            Some(r) => Some(Some(self.agent(&r.name)?)),
            None => Some(None),
        }
    }

    /// The paths task `t` must not change: the loop's, the defaults' and
    /// its own `protect` patterns, each once, in that order.
    fn protect(&self, t: &TaskDef) -> Vec<String> {
        let model = self.model;
        let mut protect: Vec<String> = Vec::new();
        for p in model
            .settings
            .protect
            .iter()
            .chain(&model.defaults.protect)
            .chain(&t.protect)
        {
            if !protect.contains(p) {
                protect.push(p.clone());
            }
        }
        protect
    }

    /// Task `t`'s `inputs`: `defaults.inputs`, then its own (each once).
    fn inputs(&self, t: &mut TaskDef) -> Vec<String> {
        let mut inputs = self.model.defaults.inputs.clone();
        for p in std::mem::take(&mut t.inputs) {
            if !inputs.contains(&p) {
                inputs.push(p);
            }
        }
        inputs
    }

    /// Task `t`'s `context` files: `defaults.context`, then its own (each
    /// once; docs/language.md "Context every agent reads").
    fn context(&self, t: &TaskDef) -> Vec<String> {
        let mut context: Vec<String> = Vec::new();
        for p in self.model.defaults.context.iter().chain(&t.context) {
            if !context.contains(&p.pattern) {
                context.push(p.pattern.clone());
            }
        }
        context
    }

    /// Task `t` with every default resolved and its key; its strings are
    /// taken, not copied. `dependencies` are its dependencies' positions in
    /// the plan, `dep_keys` their keys. `None` when something it needs did
    /// not resolve.
    fn task(
        &self,
        t: &mut TaskDef,
        dependencies: Vec<usize>,
        dep_keys: Vec<Key>,
        layer: usize,
        key_memo: &mut KeyMemo,
    ) -> Option<Task> {
        let model = self.model;
        let agent = match &t.work {
            Work::Prompt(_) => {
                let r = t.agent.as_ref().or(model.defaults.agent.as_ref())?;
                Some(self.agent(&r.name)?)
            }
            Work::Run(_) => None,
            Work::Invalid => return None,
        };
        let resolver = self.resolver(t)?;
        let answerer = self.answerer(t)?;
        let gate_refs = t.gates.as_ref().or(model.defaults.gates.as_ref());
        let mut task_gates = Vec::new();
        for r in gate_refs.into_iter().flatten() {
            task_gates.push(self.gate(&r.name)?);
        }
        let mut own_env = model.defaults.env.clone();
        own_env.extend(std::mem::take(&mut t.env));
        let mut env = BTreeMap::new();
        if let Some(a) = &agent {
            env.extend(a.env.clone());
        }
        env.extend(own_env.clone());
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
        let task_executor = self.default_executor.clone();
        let protect = self.protect(t);
        let may_change = std::mem::take(&mut t.may_change);
        let (key, key_parts) = task_key(
            key_memo,
            &name,
            &kind,
            t.expands.as_deref(),
            accept.as_deref(),
            &task_gates,
            (&protect, &may_change),
            &env,
            task_executor.as_deref(),
            dep_keys,
        );
        Some(Task {
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
            inputs: self.inputs(t),
            context: self.context(t),
            changes_optional: t.changes_optional,
            verify: t.verify.or(model.defaults.verify).unwrap_or(false),
            protect,
            may_change,
            expands: t.expands.take(),
            expanded_from: None,
            expanded: false,
            env,
            own_env,
            executor: task_executor,
            resolver,
            on_fail: t.on_fail,
            replans: t.replans.unwrap_or(DEFAULT_REPLANS),
            answerer,
            dependencies,
            key,
            key_parts,
            layer,
        })
    }

    /// The `loop` item's settings, defaults applied, for the loop `name`;
    /// `None` when `setup`'s executor does not resolve.
    fn settings(&self, name: &str) -> Option<Settings> {
        let settings = &self.model.settings;
        Some(Settings {
            base: settings.base.clone(),
            branch: settings
                .branch
                .clone()
                .unwrap_or_else(|| format!("loop/{name}")),
            parallel: settings.parallel.unwrap_or(1),
            setup: settings.setup.clone(),
            copy: settings.copy.clone(),
            link: settings.link.clone(),
            notify: settings.notify.clone(),
            expand_depth: settings.expand_depth.unwrap_or(DEFAULT_EXPAND_DEPTH),
            stages: settings.stages.clone(),
            setup_executor: match &settings.setup {
                Some(_) => self.own_or_default(settings.executor.as_ref())?,
                None => None,
            },
        })
    }
}

/// Each executor of `model` by name (`None`: it has no `run`).
fn executors(model: &Model) -> HashMap<&str, Option<Arc<Executor>>> {
    model
        .executors
        .iter()
        .map(|e| {
            let executor = e.run.clone().map(|run| {
                Arc::new(Executor {
                    name: e.name.name.clone(),
                    run,
                })
            });
            (e.name.name.as_str(), executor)
        })
        .collect()
}
