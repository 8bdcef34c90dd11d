//! Default resolution (docs/language.md "Resolution"): each task's agent, gates,
//! attempts, timeout, environment and resolver, and the loop's settings and budget,
//! from the task, else `defaults`, else the agent, else the language's
//! defaults. Executors, agents and gates are resolved once and shared.

use super::graph;
use super::key::{Key, KeyMemo, task_key};
use super::types::{Agent, Budget, Executor, Gate, GateKind, Plan, Settings, Task, TaskKind};
use super::types::{DEFAULT_ATTEMPTS, DEFAULT_EXPAND_DEPTH, DEFAULT_FAILURES, DEFAULT_TIMEOUT};
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
    // Each executor, agent and gate is resolved once and shared by the
    // tasks using it. A reference to an executor that did not resolve
    // (unknown, or without `run`: reported) leaves the plan incomplete.
    let executors: HashMap<&str, Option<Arc<Executor>>> = model
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
        .collect();
    // `Some(None)`: no executor; `None`: a reference that did not resolve.
    let executor = |r: Option<&Ref>| -> Option<Option<Arc<Executor>>> {
        match r {
            None => Some(None),
            Some(r) => executors.get(r.name.as_str()).cloned().flatten().map(Some),
        }
    };
    let default_executor = executor(model.defaults.executor.as_ref())?;
    let own_or_default = |r: Option<&Ref>| -> Option<Option<Arc<Executor>>> {
        match r {
            None => Some(default_executor.clone()),
            Some(_) => executor(r),
        }
    };
    let mut resolved_agents: HashMap<&str, Option<Arc<Agent>>> = HashMap::new();
    for (name, a) in &agents {
        let agent = match (a.run.clone(), own_or_default(a.executor.as_ref())) {
            (Some(run), Some(executor)) => Some(Arc::new(Agent {
                name: a.name.name.clone(),
                run,
                output: a.output,
                timeout: a.timeout,
                cost: a.cost,
                env: a.env.clone(),
                fallbacks: Vec::new(),
                executor,
            })),
            _ => None,
        };
        resolved_agents.insert(name, agent);
    }
    // Then each agent's chain of fallbacks (a cycle was E0006; the walk
    // stops at a repeat all the same).
    let chains: Vec<(&str, Vec<Arc<Agent>>)> = agents
        .iter()
        .map(|(&name, a)| {
            let mut chain: Vec<Arc<Agent>> = Vec::new();
            let mut next = a.fallback.as_ref();
            while let Some(r) = next {
                let Some(f) = resolved_agents.get(r.name.as_str()).cloned().flatten() else {
                    break;
                };
                if f.name == name || chain.iter().any(|c| c.name == f.name) {
                    break;
                }
                chain.push(f);
                next = agents
                    .get(r.name.as_str())
                    .and_then(|d| d.fallback.as_ref());
            }
            (name, chain)
        })
        .collect();
    for (name, chain) in chains {
        if chain.is_empty() {
            continue;
        }
        if let Some(Some(agent)) = resolved_agents.get_mut(name) {
            Arc::make_mut(agent).fallbacks = chain;
        }
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
        let gate_executor = match (&g.executor, &kind) {
            (Some(r), _) => executor(Some(r)),
            (None, Some(GateKind::Agent { agent, .. })) => Some(agent.executor.clone()),
            (None, _) => Some(default_executor.clone()),
        };
        let gate = match (kind, gate_executor) {
            (Some(kind), Some(executor)) => Some(Arc::new(Gate {
                name: g.name.name.clone(),
                kind,
                timeout: g.timeout.unwrap_or(DEFAULT_TIMEOUT),
                on_fail: g.on_fail,
                on_change: g.on_change,
                executor,
            })),
            _ => None,
        };
        resolved_gates.insert(name, gate);
    }
    let resolve_gate =
        |name: &str| -> Option<Arc<Gate>> { resolved_gates.get(name).cloned().flatten() };

    // position[i] = where source task i lands in topological order.
    let mut position = vec![0usize; task_defs.len()];
    for (p, &i) in order.iter().enumerate() {
        position[i] = p;
    }
    let layers = graph::layers(deps, order);
    let mut tasks: Vec<Task> = Vec::with_capacity(order.len());
    let mut key_memo = KeyMemo::default();
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
        let resolver = match t
            .resolver
            .as_ref()
            .or(model.defaults.resolver.as_ref())
            .or(model.settings.resolver.as_ref())
        {
            Some(r) => Some(resolve_agent(&r.name)?),
            None => None,
        };
        let gate_refs = t.gates.as_ref().or(model.defaults.gates.as_ref());
        let mut task_gates = Vec::new();
        for r in gate_refs.into_iter().flatten() {
            task_gates.push(resolve_gate(&r.name)?);
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
        let mut dependencies: Vec<usize> = deps[i].iter().map(|&(j, _)| position[j]).collect();
        dependencies.sort_unstable();
        dependencies.dedup();
        let layer = layers[i];
        let dep_keys: Vec<Key> = dependencies.iter().map(|&d| tasks[d].key).collect();
        let task_executor = default_executor.clone();
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
        let may_change = std::mem::take(&mut t.may_change);
        let (key, key_parts) = task_key(
            &mut key_memo,
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
            changes_optional: t.changes_optional,
            protect,
            may_change,
            expands: t.expands.take(),
            expanded_from: None,
            expanded: false,
            env,
            own_env,
            executor: task_executor,
            resolver,
            dependencies,
            key,
            key_parts,
            layer,
        });
    }
    let graph = graph::dag(tasks.iter().map(|t| t.dependencies.iter().copied()));
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
            copy: model.settings.copy.clone(),
            link: model.settings.link.clone(),
            notify: model.settings.notify.clone(),
            expand_depth: model.settings.expand_depth.unwrap_or(DEFAULT_EXPAND_DEPTH),
            stages: model.settings.stages.clone(),
            setup_executor: match &model.settings.setup {
                Some(_) => own_or_default(model.settings.executor.as_ref())?,
                None => None,
            },
        },
        budget: Budget {
            iterations: model.budget.iterations,
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
