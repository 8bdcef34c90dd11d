//! `loopc graph --format json`: the compiled plan as one JSON document
//! (docs/graph.md). The schema, version 1, is documented in `docs/plan-json.md`.
//!
//! Every field is always present (absent values are `null`, empty lists and
//! maps are `[]` and `{}`), objects keep a fixed field order, maps are sorted
//! by key, durations are integer milliseconds (`…_ms`) and money is integer
//! micro-dollars (`…_micro_usd`), so the document is byte-identical for the
//! same plan everywhere. Tasks are in the plan's topological order.

use super::state::StateMap;
use crate::plan::Key;
use crate::plan::{Agent, Executor, Gate, GateKind, Plan, Task, TaskKind};
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::Duration;

/// The schema version of this document (`"version"`); bumped on any change
/// that is not a pure addition.
pub const PLAN_JSON_VERSION: u32 = 1;

/// Writes `plan` (and, with `--state`, each task's `"status"`) as pretty
/// JSON followed by a line break.
///
/// Errors: only those of `out`.
pub fn render(plan: &Plan, statuses: Option<&StateMap>, out: &mut dyn Write) -> io::Result<()> {
    let doc = PlanJson {
        version: PLAN_JSON_VERSION,
        name: &plan.name,
        settings: SettingsJson {
            base: plan.settings.base.as_deref(),
            branch: &plan.settings.branch,
            parallel: plan.settings.parallel,
            setup: plan.settings.setup.as_deref(),
            setup_executor: plan.settings.setup_executor.as_deref().map(executor_json),
        },
        budget: BudgetJson {
            iterations: plan.budget.iterations,
            time_ms: plan.budget.time.map(ms),
            cost_micro_usd: plan.budget.cost,
            failures: plan.budget.failures,
            wait_ms: plan.budget.wait.map(ms),
        },
        tasks: TasksJson { plan, statuses },
    };
    // `io::Error::from` keeps an I/O error's kind (a broken pipe stays one).
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(io::Error::from)?;
    writeln!(out)
}

/// A duration in whole milliseconds (saturating; durations in plans are far
/// below the limit).
fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[derive(Serialize)]
struct PlanJson<'a> {
    version: u32,
    name: &'a str,
    settings: SettingsJson<'a>,
    budget: BudgetJson,
    tasks: TasksJson<'a>,
}

#[derive(Serialize)]
struct SettingsJson<'a> {
    base: Option<&'a str>,
    branch: &'a str,
    parallel: u32,
    setup: Option<&'a str>,
    /// Absent without an executor (as every `executor` field: documents of
    /// plans without executors are those of before executors existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    setup_executor: Option<ExecutorJson<'a>>,
}

#[derive(Serialize)]
struct ExecutorJson<'a> {
    name: &'a str,
    run: &'a str,
}

fn executor_json(e: &Executor) -> ExecutorJson<'_> {
    ExecutorJson {
        name: &e.name,
        run: &e.run,
    }
}

#[derive(Serialize)]
struct BudgetJson {
    iterations: Option<u32>,
    time_ms: Option<u64>,
    cost_micro_usd: Option<u64>,
    failures: u32,
    /// Absent when not set (older documents never have it).
    #[serde(skip_serializing_if = "Option::is_none")]
    wait_ms: Option<u64>,
}

/// The task list, serialized one task at a time (no intermediate copy of
/// the plan).
struct TasksJson<'a> {
    plan: &'a Plan,
    statuses: Option<&'a StateMap>,
}

impl Serialize for TasksJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.plan.tasks.len()))?;
        for task in &self.plan.tasks {
            seq.serialize_element(&task_json(self.plan, task, self.statuses))?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct TaskJson<'a> {
    name: &'a str,
    title: Option<&'a str>,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    dependencies: Vec<&'a str>,
    layer: usize,
    key: String,
    key_parts: KeyPartsJson,
    prompt: Option<&'a str>,
    run: Option<&'a str>,
    agent: Option<AgentJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    executor: Option<ExecutorJson<'a>>,
    accept: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    accept_executor: Option<ExecutorJson<'a>>,
    gates: Vec<GateJson<'a>>,
    attempts: u32,
    timeout_ms: u64,
    inputs: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    protect: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    may_change: &'a [String],
    env: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expands: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expanded_from: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resolver: Option<AgentJson<'a>>,
}

#[derive(Serialize)]
struct KeyPartsJson {
    work: String,
    agent: String,
    gates: String,
    env: String,
    dependencies: String,
}

#[derive(Serialize)]
struct AgentJson<'a> {
    name: &'a str,
    run: &'a str,
    output: &'static str,
    /// `output = { … }`: each key's path.
    #[serde(skip_serializing_if = "Option::is_none")]
    output_fields: Option<BTreeMap<&'static str, &'a str>>,
    timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idle_ms: Option<u64>,
    cost_micro_usd: Option<u64>,
    env: &'a BTreeMap<String, String>,
}

#[derive(Serialize)]
struct GateJson<'a> {
    name: &'a str,
    kind: &'static str,
    run: Option<&'a str>,
    agent: Option<AgentJson<'a>>,
    prompt: Option<&'a str>,
    timeout_ms: u64,
    on_fail: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    on_change: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    executor: Option<ExecutorJson<'a>>,
}

fn hex(k: &Key) -> String {
    k.to_hex()
}

fn agent_json(a: &Agent) -> AgentJson<'_> {
    AgentJson {
        name: &a.name,
        run: &a.run,
        output: a.output.as_str(),
        output_fields: match &a.output {
            crate::plan::OutputFormat::Fields(f) => {
                Some(f.named().map(|(k, p)| (k, p.text.as_str())).collect())
            }
            _ => None,
        },
        timeout_ms: a.timeout.map(ms),
        idle_ms: a.idle.map(ms),
        cost_micro_usd: a.cost,
        env: &a.env,
    }
}

fn gate_json(g: &Gate) -> GateJson<'_> {
    let (kind, run, agent, prompt) = match &g.kind {
        GateKind::Command { run } => ("command", Some(run.as_str()), None, None),
        GateKind::Agent { agent, prompt } => (
            "agent",
            None,
            Some(agent_json(agent)),
            Some(prompt.as_str()),
        ),
    };
    GateJson {
        name: &g.name,
        kind,
        run,
        agent,
        prompt,
        timeout_ms: ms(g.timeout),
        on_fail: g.on_fail.as_str(),
        on_change: (g.on_change != crate::model::OnChange::Fail).then(|| g.on_change.as_str()),
        executor: g.executor.as_deref().map(executor_json),
    }
}

fn task_json<'a>(plan: &'a Plan, task: &'a Task, statuses: Option<&StateMap>) -> TaskJson<'a> {
    let (kind, prompt, run, agent) = match &task.kind {
        TaskKind::Agent { prompt, agent } => {
            ("agent", Some(&**prompt), None, Some(agent_json(agent)))
        }
        TaskKind::Command { run } => ("command", None, Some(&**run), None),
    };
    TaskJson {
        name: &task.name,
        title: task.title.as_deref(),
        kind,
        status: statuses.map(|s| s.status(&task.name).as_str()),
        dependencies: task
            .dependencies
            .iter()
            .map(|&d| plan.tasks[d].name.as_str())
            .collect(),
        layer: task.layer,
        key: hex(&task.key),
        key_parts: KeyPartsJson {
            work: hex(&task.key_parts.work),
            agent: hex(&task.key_parts.agent),
            gates: hex(&task.key_parts.gates),
            env: hex(&task.key_parts.env),
            dependencies: hex(&task.key_parts.dependencies),
        },
        prompt,
        run,
        agent,
        executor: task.work_executor().map(|e| executor_json(e)),
        accept: task.accept.as_deref(),
        accept_executor: task
            .accept
            .as_ref()
            .and(task.executor.as_deref())
            .map(executor_json),
        gates: task.gates.iter().map(|g| gate_json(g)).collect(),
        attempts: task.attempts,
        timeout_ms: ms(task.timeout),
        inputs: &task.inputs,
        protect: &task.protect,
        may_change: &task.may_change,
        env: &task.env,
        expands: task.expands.as_deref(),
        expanded_from: task.expanded_from.as_deref(),
        resolver: task.resolver.as_deref().map(agent_json),
    }
}
