//! Whole-file checks: one `loop`/`budget`/`defaults` block and unique names
//! (E0004), then everything that needs all definitions: references (E0005),
//! task names in dependencies (E0011), fallback cycles (E0006), agents of
//! agent tasks (E0013) and unused agents, gates and executors (W0001); the
//! warnings about the plan as a whole follow (`warnings`).

use super::Checker;
use super::Unparsed;
use super::names::{Known, TASK_NAME_NOTE, reported_by_parser, task_name_problem};
use crate::ast::{self, Item};
use crate::diagnostic::{Code, Diagnostic};
use crate::model::{Model, Ref, Work};
use crate::origin::{DEFAULTS_FILE, Origin};
use crate::span::Span;
use foldhash::{HashMap, HashSet, HashSetExt};

impl Checker {
    /// Checks `items`, the next items of the file in source order, into
    /// the model.
    pub fn items(&mut self, items: &[Item]) {
        for item in items {
            self.seen.first_item.get_or_insert(item.span().start);
            match item {
                Item::Loop(l) => {
                    if single(
                        &mut self.diagnostics,
                        "loop",
                        l.block.keyword,
                        &mut self.seen.first_loop,
                    ) {
                        self.loop_item(l);
                    }
                }
                Item::Budget(b) => {
                    if single(
                        &mut self.diagnostics,
                        "budget",
                        b.keyword,
                        &mut self.seen.first_budget,
                    ) {
                        self.budget(b);
                    }
                }
                Item::Defaults(b) => {
                    if single(
                        &mut self.diagnostics,
                        "defaults",
                        b.keyword,
                        &mut self.seen.first_defaults,
                    ) {
                        self.defaults(b);
                    }
                }
                Item::Agent(a) => {
                    if unique(
                        &mut self.diagnostics,
                        "agent",
                        &a.name,
                        &mut self.seen.agents,
                    ) {
                        self.agent(a);
                    }
                }
                Item::Executor(e) => {
                    if unique(
                        &mut self.diagnostics,
                        "executor",
                        &e.name,
                        &mut self.seen.executors,
                    ) {
                        self.executor(e);
                    }
                }
                Item::Gate(g) => {
                    if g.name.text == ACCEPT {
                        self.push(accept_gate(g.name.span));
                    }
                    if unique(&mut self.diagnostics, "gate", &g.name, &mut self.seen.gates) {
                        self.gate(g);
                    }
                }
                Item::Task(t) => {
                    self.seen.any_task = true;
                    if let Some(why) = task_name_problem(&t.name.text)
                        && !reported_by_parser(&t.name.text, t.name.quoted)
                    {
                        self.push(
                            Diagnostic::new(
                                Code::E0011,
                                format!("invalid task name `{}`", t.name.text),
                                t.name.span,
                                why,
                            )
                            .with_note(TASK_NAME_NOTE),
                        );
                    }
                    let (tasks, index) = (&self.model.tasks, &self.model.task_index);
                    let hash = index.hash(&t.name.text);
                    match index.find(tasks, &t.name.text, hash) {
                        Some(first) => {
                            let first = tasks[first].name.span;
                            self.push(defined_twice("task", &t.name.text, t.name.span, first));
                        }
                        None => {
                            self.task(t);
                            self.model.task_index.insert_new(&self.model.tasks, hash);
                        }
                    }
                }
                Item::Error(u) => {
                    self.seen.unreadable = true;
                    self.seen.unparsed.add(u);
                }
            }
        }
    }

    /// E0006 for agents whose `fallback` fields form a cycle (`a` falls back
    /// to `b`, `b` to `a`; or an agent to itself), each cycle once, named
    /// in the order of its fallbacks from its first agent in source order.
    fn fallback_cycles(&mut self) {
        let index: HashMap<&str, usize> = self
            .model
            .agents
            .iter()
            .enumerate()
            .map(|(i, a)| (a.name.name.as_str(), i))
            .collect();
        let next: Vec<Option<usize>> = self
            .model
            .agents
            .iter()
            .map(|a| {
                a.fallback
                    .as_ref()
                    .and_then(|r| index.get(r.name.as_str()).copied())
            })
            .collect();
        // Each agent has at most one fallback, so following them from any
        // agent either ends or runs into a cycle; every agent is walked once.
        let mut seen = vec![0u8; next.len()]; // 0 new, 1 on this walk, 2 done
        let mut cycles: Vec<Vec<usize>> = Vec::new();
        for start in 0..next.len() {
            let mut path = Vec::new();
            let mut at = Some(start);
            while let Some(i) = at {
                if seen[i] == 2 {
                    break;
                }
                if seen[i] == 1 {
                    let from = path.iter().position(|&p| p == i).unwrap_or(0);
                    let mut cycle: Vec<usize> = path[from..].to_vec();
                    // Start the cycle at its first agent in source order.
                    let min = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, a)| **a)
                        .map_or(0, |(k, _)| k);
                    cycle.rotate_left(min);
                    cycles.push(cycle);
                    break;
                }
                seen[i] = 1;
                path.push(i);
                at = next[i];
            }
            for i in path {
                seen[i] = 2;
            }
        }
        for cycle in cycles {
            let agents = &self.model.agents;
            let mut names: Vec<&str> = cycle
                .iter()
                .map(|&i| agents[i].name.name.as_str())
                .collect();
            names.push(names[0]);
            let label = |i: usize| {
                let a = &agents[i];
                let to = a.fallback.as_ref().map_or("", |r| r.name.as_str());
                let span = a.fallback.as_ref().map_or(a.name.span, |r| r.span);
                (span, format!("`{}` falls back to `{to}`", a.name.name))
            };
            let (span, msg) = label(cycle[0]);
            let mut d = Diagnostic::new(
                Code::E0006,
                format!("fallback cycle: {}", names.join(" → ")),
                span,
                msg,
            );
            for &i in &cycle[1..] {
                let (span, msg) = label(i);
                d = d.with_label(span, msg);
            }
            d = d.with_note(
                "a limited agent's fallback takes its attempt; a cycle would never end: remove one `fallback`",
            );
            self.push(d);
        }
    }

    /// E0005, E0006 (fallbacks), E0011, E0013, W0001, W0003, W0004, W0005:
    /// everything that needs all definitions, in this order.
    pub(super) fn references(&mut self, origin: &Origin) {
        // The model is read and the diagnostics written at once: nothing of
        // the model is copied (a large plan has a reference or two a task).
        let m = &self.model;
        // An item that could not be parsed still defines its name: a
        // reference to it is no second mistake.
        let unparsed = &self.seen.unparsed;
        let used = used_names(m, unparsed, &mut self.diagnostics);
        let positions = dependency_positions(m, unparsed, &mut self.diagnostics);
        // W0001: unused agents, gates and executors. A file with an
        // unreadable item may use them there, and a plan whose tasks write
        // plan fragments (`expands`) may use them in those, so the warning
        // would be a guess.
        let unreadable = self.seen.unreadable || m.tasks.iter().any(|t| t.expands.is_some());
        let unused = if unreadable {
            Vec::new()
        } else {
            let named = &self.seen.named_by_unknown;
            let mut u = unused(m, &used);
            // A name an unknown field meant to use (`gate = [t]`) is not unused.
            u.retain(|(name, _, _)| !named.contains(name));
            u
        };

        self.model.dependency_positions = positions;
        self.fallback_cycles();
        self.agentless_tasks(origin);
        self.unused_definitions(unused);
        self.unbounded_budget(origin);
        self.costless_agents();
        self.caps_over_budget();
        self.empty_plan(origin);
    }

    /// E0013: agent tasks need an agent.
    fn agentless_tasks(&mut self, origin: &Origin) {
        let first_agent = self.model.agents.first().map(|a| a.name.name.clone());
        // A `defaults` block that could not be parsed may have given one.
        let default_agent =
            self.model.defaults.agent.is_some() || self.seen.unparsed.has("defaults");
        let missing: Vec<(String, Span)> = self
            .model
            .tasks
            .iter()
            .filter(|t| matches!(t.work, Work::Prompt(_)) && t.agent.is_none() && !default_agent)
            .map(|t| (t.name.text.clone(), t.name.span))
            .collect();
        for (name, span) in missing {
            let mut d = Diagnostic::new(
                Code::E0013,
                format!("agent task `{name}` has no agent"),
                span,
                "no `agent` field and no `defaults.agent`",
            );
            d = match (origin, &first_agent) {
                (Origin::Specs { defaults: false, .. }, _) => d.with_note(format!(
                    "REEL specs take their agent from a `{DEFAULTS_FILE}` beside them or from `--defaults FILE.loop`, e.g. `agent claude {{ run = \"claude -p\" }}  defaults {{ agent = claude }}`"
                )),
                (_, Some(a)) => d.with_note(format!("add `agent = {a}` to the task or to a `defaults` block")),
                (_, None) => d.with_note("define an agent (`agent claude { run = \"claude -p\" }`) and set `agent = claude` in `defaults`"),
            };
            self.push(d);
        }
    }

    /// W0001 for each of `unused`: (name, span, what it is).
    fn unused_definitions(&mut self, unused: Vec<(String, Span, &str)>) {
        for (name, span, what) in unused {
            let hint = if what == "agent" {
                format!("use it with `agent = {name}` in a task or in `defaults`, or remove it")
            } else if what == "executor" {
                format!(
                    "use it with `executor = {name}` in an agent, a gate, `defaults` or `loop`, or remove it"
                )
            } else {
                format!("list it in a task's or the defaults' `gates = [{name}]`, or remove it")
            };
            self.push(
                Diagnostic::new(
                    Code::W0001,
                    format!("{what} `{name}` is defined but never used"),
                    span,
                    "never used",
                )
                .with_note(hint),
            );
        }
    }
}

/// The agents, gates and executors the file refers to.
struct Used<'a> {
    agents: HashSet<&'a str>,
    gates: HashSet<&'a str>,
    executors: HashSet<&'a str>,
}

/// E0005 for each reference to an agent, gate or executor that `m` does
/// not define (agents, then gates, then executors); returns the names
/// referred to.
fn used_names<'a>(
    m: &'a Model,
    unparsed: &'a Unparsed,
    diagnostics: &mut Vec<Diagnostic>,
) -> Used<'a> {
    fn with_unparsed<'n>(mut names: Vec<&'n str>, more: &'n [String]) -> Vec<&'n str> {
        names.extend(more.iter().map(String::as_str));
        names
    }
    let agent_names: Vec<&str> = m.agents.iter().map(|a| a.name.name.as_str()).collect();
    let agent_names = with_unparsed(agent_names, &unparsed.agents);
    let gate_names: Vec<&str> = m.gates.iter().map(|g| g.name.name.as_str()).collect();
    let gate_names = with_unparsed(gate_names, &unparsed.gates);
    let executor_names: Vec<&str> = m.executors.iter().map(|e| e.name.name.as_str()).collect();
    let executor_names = with_unparsed(executor_names, &unparsed.executors);
    let agent_refs = m
        .defaults
        .agent
        .iter()
        .chain(&m.defaults.resolver)
        .chain(&m.settings.resolver)
        .chain(&m.defaults.answerer)
        .chain(&m.settings.answerer)
        .chain(m.gates.iter().filter_map(|g| g.agent_ref.as_ref()))
        .chain(
            m.tasks
                .iter()
                .flat_map(|t| t.agent.iter().chain(&t.resolver).chain(&t.answerer)),
        );
    // An agent's fallback: never suggest the agent itself (a cycle).
    let fallbacks = m.agents.iter().filter_map(|a| {
        let r = a.fallback.as_ref()?;
        Some((r, Some(a.name.name.as_str())))
    });
    let agent_refs = agent_refs.map(|r| (r, None)).chain(fallbacks);
    let agents = resolve_refs(diagnostics, "agent", agent_refs, agent_names);
    let gate_refs = m
        .defaults
        .gates
        .iter()
        .flatten()
        .chain(m.tasks.iter().flat_map(|t| t.gates.iter().flatten()));
    let gates = resolve_refs(
        diagnostics,
        "gate",
        gate_refs.map(|r| (r, None)),
        gate_names,
    );
    let executor_refs = m
        .settings
        .executor
        .iter()
        .chain(&m.defaults.executor)
        .chain(m.agents.iter().filter_map(|a| a.executor.as_ref()))
        .chain(m.gates.iter().filter_map(|g| g.executor.as_ref()));
    let executor_refs = executor_refs.map(|r| (r, None));
    let executors = resolve_refs(diagnostics, "executor", executor_refs, executor_names);
    Used {
        agents,
        gates,
        executors,
    }
}

/// Each task's dependencies as (task index, span of the reference), in
/// source order: E0011 for a dependency that is no valid task name, E0005
/// for one that names no task.
fn dependency_positions(
    m: &Model,
    unparsed: &Unparsed,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Vec<(usize, Span)>> {
    // Dependencies are looked up in the model's index; the names are
    // listed for suggestions only when one names no task.
    let mut tasks: Option<Known<'_>> = None;
    let mut positions = Vec::with_capacity(m.tasks.len());
    for t in &m.tasks {
        let mut found = Vec::new();
        for d in &t.dependencies {
            if let Some(j) = m.task_index.get(&m.tasks, &d.text) {
                if found.is_empty() {
                    found.reserve_exact(t.dependencies.len());
                }
                found.push((j, d.span));
                continue;
            }
            if unparsed.tasks.contains(&d.text) {
                continue;
            }
            if let Some(why) = task_name_problem(&d.text) {
                if !reported_by_parser(&d.text, d.quoted) {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::E0011,
                            format!(
                                "invalid task name `{}` in the dependencies of `{}`",
                                d.text, t.name.text
                            ),
                            d.span,
                            why,
                        )
                        .with_note(TASK_NAME_NOTE),
                    );
                }
                continue;
            }
            let known = tasks.get_or_insert_with(|| {
                Known::new(m.tasks.iter().map(|t| t.name.text.as_str()).collect())
            });
            // Never suggest that a task depend on itself.
            let owner = Some(t.name.text.as_str());
            unknown(diagnostics, "task", &d.text, d.span, known, owner);
        }
        positions.push(found);
    }
    positions
}

/// The agents, gates and executors of `m` that nothing uses (W0001), each
/// as (name, span, what it is), in order.
fn unused(m: &Model, used: &Used<'_>) -> Vec<(String, Span, &'static str)> {
    m.agents
        .iter()
        .filter(|a| !used.agents.contains(a.name.name.as_str()))
        .map(|a| (a.name.name.clone(), a.name.span, "agent"))
        .chain(
            m.gates
                .iter()
                .filter(|g| !used.gates.contains(g.name.name.as_str()))
                .map(|g| (g.name.name.clone(), g.name.span, "gate")),
        )
        .chain(
            m.executors
                .iter()
                .filter(|e| !used.executors.contains(e.name.name.as_str()))
                .map(|e| (e.name.name.clone(), e.name.span, "executor")),
        )
        .collect()
}

/// E0005 for `name`, with a "did you mean" among `known` (never
/// `exclude`) or else a note listing what is known.
fn unknown(
    diagnostics: &mut Vec<Diagnostic>,
    what: &str,
    name: &str,
    span: Span,
    known: &mut Known<'_>,
    exclude: Option<&str>,
) {
    let mut d = Diagnostic::new(
        Code::E0005,
        format!("unknown {what} `{name}`"),
        span,
        format!("no {what} is called `{name}`"),
    );
    let (sorted, suggester) = known.lists();
    let excluded = exclude.map_or(0, |e| {
        sorted.partition_point(|n| *n <= e) - sorted.partition_point(|n| *n < e)
    });
    let count = sorted.len() - excluded;
    if let Some(s) = suggester.suggest(name, exclude) {
        d.primary.message = format!("did you mean `{s}`?");
    } else if count == 0 && (what == "task" || excluded > 0) {
        // An agent's `fallback` never names the agent itself.
        d = d.with_note(format!("this plan defines no other {what}"));
    } else if count == 0 {
        d = d.with_note(format!("this plan defines no {what}s"));
    } else {
        // The sorted names are shared by every E0005 of a kind, so each
        // diagnostic costs the eight names it shows, not a sort.
        let list: Vec<&str> = sorted
            .iter()
            .copied()
            .filter(|n| Some(*n) != exclude)
            .take(8)
            .collect();
        let more = count - list.len();
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        d = d.with_note(format!("known {what}s: {}{tail}", list.join(", ")));
    }
    diagnostics.push(d);
}

/// E0005 for each reference (with the name it must not be suggested, if
/// any) to a `what` (agent, gate, executor) that is not among `names`, in
/// order; returns the names referred to.
fn resolve_refs<'a>(
    diagnostics: &mut Vec<Diagnostic>,
    what: &str,
    refs: impl Iterator<Item = (&'a Ref, Option<&'a str>)>,
    names: Vec<&'a str>,
) -> HashSet<&'a str> {
    let mut known = Known::new(names);
    let mut used = HashSet::new();
    for (r, exclude) in refs {
        if !known.set.contains(r.name.as_str()) {
            unknown(diagnostics, what, &r.name, r.span, &mut known, exclude);
        }
        used.insert(r.name.as_str());
    }
    used
}

/// Reports a second `loop`/`budget`/`defaults` (`what`) block at
/// `keyword`; true for the first one, whose keyword `first` then holds.
fn single(
    diagnostics: &mut Vec<Diagnostic>,
    what: &str,
    keyword: Span,
    first: &mut Option<Span>,
) -> bool {
    match first {
        Some(prev) => {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0004,
                    format!("a plan has at most one `{what}` block"),
                    keyword,
                    format!("second `{what}` block"),
                )
                .with_label(*prev, format!("first `{what}` block here"))
                .with_note(format!("merge the fields into the first `{what}` block")),
            );
            false
        }
        None => {
            *first = Some(keyword);
            true
        }
    }
}

/// Reports a second definition of the agent, gate or executor (`what`)
/// `name`; true for the first one, which `seen` then holds.
fn unique(
    diagnostics: &mut Vec<Diagnostic>,
    what: &str,
    name: &ast::Ident,
    seen: &mut HashMap<String, Span>,
) -> bool {
    if let Some(&first) = seen.get(name.text.as_str()) {
        diagnostics.push(defined_twice(what, &name.text, name.span, first));
        return false;
    }
    seen.insert(name.text.clone(), name.span);
    true
}

/// The name a task's own `accept` check goes by in its attempt's lines,
/// logs (`gate-accept.log`) and verdicts: no gate may take it.
const ACCEPT: &str = "accept";

/// E0004: a gate named `accept` (at `span`) would be told apart from no
/// task's own `accept` check.
fn accept_gate(span: Span) -> Diagnostic {
    Diagnostic::new(
        Code::E0004,
        "gate `accept` has the name of every task's own `accept` check",
        span,
        "named like the `accept` field's check",
    )
    .with_note(
        "the two would share their lines, log (gate-accept.log) and verdicts; rename the gate",
    )
}

/// E0004: the `what` called `name` at `span` was defined first at `first`.
fn defined_twice(what: &str, name: &str, span: Span, first: Span) -> Diagnostic {
    Diagnostic::new(
        Code::E0004,
        format!("{what} `{name}` is defined twice"),
        span,
        format!("second definition of `{name}`"),
    )
    .with_label(first, "first defined here")
    .with_note(format!("rename one of them; {what} names must be unique"))
}
