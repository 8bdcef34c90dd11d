//! Whole-file checks: one `loop`/`budget`/`defaults` block and unique names
//! (E0004), then everything that needs all definitions: references (E0005),
//! task names in dependencies (E0011), agents of agent tasks (E0013), unused
//! agents, gates and executors (W0001), a missing budget (W0003) and an empty plan (W0004).

use super::Checker;
use super::names::{Known, TASK_NAME_NOTE, reported_by_parser, task_name_problem};
use crate::ast::{self, Item};
use crate::diagnostic::{Code, Diagnostic};
use crate::model::{OutputFormat, Ref, Work};
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

    /// E0005, E0013, W0001, W0003, W0004: everything that needs all definitions.
    pub(super) fn references(&mut self, origin: &Origin) {
        // The model is read and the diagnostics written at once: nothing of
        // the model is copied (a large plan has a reference or two a task).
        let m = &self.model;
        let diagnostics = &mut self.diagnostics;
        // An item that could not be parsed still defines its name: a
        // reference to it is no second mistake.
        let unparsed = &self.seen.unparsed;
        fn with_unparsed<'n>(mut names: Vec<&'n str>, more: &'n [String]) -> Vec<&'n str> {
            names.extend(more.iter().map(String::as_str));
            names
        }
        let agent_names: Vec<&str> = m.agents.iter().map(|a| a.name.name.as_str()).collect();
        let first_agent = agent_names.first().map(|a| a.to_string());
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
            .chain(m.gates.iter().filter_map(|g| g.agent_ref.as_ref()))
            .chain(
                m.tasks
                    .iter()
                    .flat_map(|t| t.agent.iter().chain(&t.resolver)),
            );
        // An agent's fallback: never suggest the agent itself (a cycle).
        let fallbacks = m.agents.iter().filter_map(|a| {
            let r = a.fallback.as_ref()?;
            Some((r, Some(a.name.name.as_str())))
        });
        let agent_refs = agent_refs.map(|r| (r, None)).chain(fallbacks);
        let used_agents = resolve_refs(diagnostics, "agent", agent_refs, agent_names);
        let gate_refs = m
            .defaults
            .gates
            .iter()
            .flatten()
            .chain(m.tasks.iter().flat_map(|t| t.gates.iter().flatten()));
        let used_gates = resolve_refs(
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
        let used_executors = resolve_refs(diagnostics, "executor", executor_refs, executor_names);
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
        // W0001: unused agents, gates and executors. A file with an
        // unreadable item may use them there, and a plan whose tasks write
        // plan fragments (`expands`) may use them in those, so the warning
        // would be a guess.
        let unreadable = self.seen.unreadable || m.tasks.iter().any(|t| t.expands.is_some());
        let named_by_unknown = &self.seen.named_by_unknown;
        let unused: Vec<(String, Span, &str)> = if unreadable {
            Vec::new()
        } else {
            m.agents
                .iter()
                .filter(|a| !used_agents.contains(a.name.name.as_str()))
                .filter(|a| !named_by_unknown.contains(&a.name.name))
                .map(|a| (a.name.name.clone(), a.name.span, "agent"))
                .chain(
                    m.gates
                        .iter()
                        .filter(|g| !used_gates.contains(g.name.name.as_str()))
                        .filter(|g| !named_by_unknown.contains(&g.name.name))
                        .map(|g| (g.name.name.clone(), g.name.span, "gate")),
                )
                .chain(
                    m.executors
                        .iter()
                        .filter(|e| !used_executors.contains(e.name.name.as_str()))
                        .filter(|e| !named_by_unknown.contains(&e.name.name))
                        .map(|e| (e.name.name.clone(), e.name.span, "executor")),
                )
                .collect()
        };

        self.model.dependency_positions = positions;
        self.fallback_cycles();

        // E0013: agent tasks need an agent (which a `defaults` block that
        // could not be parsed may have given).
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

        // W0001, computed above.
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

        // W0003: agent tasks with no budget bounding iterations, time or cost.
        let first_agent_task = self
            .model
            .tasks
            .iter()
            .find(|t| matches!(t.work, Work::Prompt(_)))
            .map(|t| t.name.span);
        let b = &self.model.budget;
        if let Some(task_span) = first_agent_task
            // An item that could not be read may be (or hold) the budget.
            && !self.seen.unreadable
            && !b.bounds_written
            && b.iterations.is_none()
            && b.time.is_none()
            && b.cost.is_none()
        {
            let (span, label) = match b.span {
                Some(s) => (s, "this budget bounds neither iterations, time nor cost"),
                None => (task_span, "agent task without a budget"),
            };
            self.push(
                Diagnostic::new(
                    Code::W0003,
                    "the plan runs agents but no budget bounds iterations, time or cost",
                    span,
                    label,
                )
                .with_note("add e.g. `budget { iterations = 20  time = 2h  cost = $20 }`"),
            );
        }

        // W0005: a cost budget, and an agent in use whose cost may be
        // unknown (no `cost` cap, and not an output loopc reads a cost
        // from): the run would stop at its first attempt.
        if self.model.budget.cost.is_some() {
            let mut in_use: HashSet<&str> = HashSet::new();
            let default_agent = self.model.defaults.agent.as_ref().map(|r| r.name.as_str());
            for t in &self.model.tasks {
                if matches!(t.work, Work::Prompt(_))
                    && let Some(a) = t.agent.as_ref().map(|r| r.name.as_str()).or(default_agent)
                {
                    in_use.insert(a);
                }
            }
            for g in &self.model.gates {
                if let Some(r) = &g.agent_ref {
                    in_use.insert(r.name.as_str());
                }
            }
            // Resolvers run under the budget too.
            let resolvers = self.model.tasks.iter().map(|t| t.resolver.as_ref());
            let resolvers = resolvers.chain([
                self.model.defaults.resolver.as_ref(),
                self.model.settings.resolver.as_ref(),
            ]);
            in_use.extend(resolvers.flatten().map(|r| r.name.as_str()));
            // A task agent's fallbacks may take its attempts (the chain
            // ends at a repeat: a cycle is E0006).
            let fallback_of: HashMap<&str, &str> = self
                .model
                .agents
                .iter()
                .filter_map(|a| Some((a.name.name.as_str(), a.fallback.as_ref()?.name.as_str())))
                .collect();
            let starts: Vec<&str> = in_use.iter().copied().collect();
            for mut a in starts {
                while let Some(&f) = fallback_of.get(a) {
                    if !in_use.insert(f) {
                        break;
                    }
                    a = f;
                }
            }
            let warnings: Vec<Diagnostic> = self
                .model
                .agents
                .iter()
                .filter(|a| {
                    in_use.contains(a.name.name.as_str())
                        && a.cost.is_none()
                        && a.output != OutputFormat::ClaudeJson
                })
                .map(|a| {
                    let name = &a.name.name;
                    Diagnostic::new(
                        Code::W0005,
                        format!("the budget caps cost, but agent `{name}` may report none"),
                        a.name.span,
                        "no `cost` cap",
                    )
                    .with_note(format!(
                        "an attempt whose cost cannot be read stops the run; add `cost = $1` (the cap, counted when it reports none) to agent `{name}`, or have it write `cost_usd` in its handoff"
                    ))
                })
                .collect();
            for d in warnings {
                self.push(d);
            }
        }

        // W0004: no tasks.
        // A file whose items could not all be parsed may well declare tasks.
        let no_tasks = self.model.tasks.is_empty() && !self.seen.unreadable && !self.seen.any_task;
        match origin {
            Origin::Specs {
                unreadable,
                first_spec,
                empty_specs,
                ..
            } => {
                // What could not be read may well declare tasks.
                let plan_empty = no_tasks && !unreadable;
                match first_spec {
                    Some(at) if plan_empty => self.push(
                        Diagnostic::new(
                            Code::W0004,
                            "the plan has no tasks",
                            Span::at(*at),
                            "no task in this spec",
                        )
                        .with_note(SPEC_TASKS),
                    ),
                    // No spec at all (a spec tree's empty stages): the defaults plan's.
                    None if plan_empty => self.no_tasks_in_file(),
                    _ => {}
                }
                // Every other spec without tasks, at its start: in a
                // directory, one empty file among others is as suspect.
                for &at in empty_specs {
                    if plan_empty && Some(at) == *first_spec {
                        continue;
                    }
                    self.push(
                        Diagnostic::new(Code::W0004, "this spec has no tasks", Span::at(at), "no task in this spec")
                            .with_note(SPEC_TASKS)
                            .with_note("in a directory every `.md`, `.markdown`, `.json` and `.feature` file is a spec, except `README*` files"),
                    );
                }
            }
            _ if no_tasks => self.no_tasks_in_file(),
            _ => {}
        }
    }

    /// W0004 for a `.loop` plan without tasks, at its first item.
    fn no_tasks_in_file(&mut self) {
        let span = self.seen.first_item.map_or(Span::at(0), Span::at);
        self.push(
            Diagnostic::new(
                Code::W0004,
                "the plan has no tasks",
                span,
                "no `task` in this file",
            )
            .with_note(
                "declare work with `task NAME { prompt = \"…\" }` or `task NAME { run = \"…\" }`",
            ),
        );
    }
}

/// The note of a REEL W0004: what a task is in each format.
const SPEC_TASKS: &str =
    "a REEL task is a `## <id>: <title>` heading, a JSON `tasks` entry or a Gherkin `Scenario:`";

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
    } else if count == 0 && what == "task" {
        d = d.with_note("this plan defines no other task");
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
