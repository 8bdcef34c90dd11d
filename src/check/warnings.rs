//! Warnings about the plan as a whole, once every definition is checked:
//! no budget bounds the agents (W0003), a cost budget with an agent whose
//! cost may go unread (W0005), caps over the cost budget (W0007), and no
//! tasks (W0004).

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::model::{Ref, Work};
use crate::origin::Origin;
use crate::span::Span;
use foldhash::HashMap;

impl Checker {
    /// W0003: agent tasks with no budget bounding iterations, time or cost;
    /// for REEL specs (`origin`), the budget goes in their defaults plan.
    pub(super) fn unbounded_budget(&mut self, origin: &Origin) {
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
                .with_note(format!(
                    "a run then stops after {} agent attempts (REEL's default `iterations`)",
                    crate::model::DEFAULT_ITERATIONS
                ))
                .with_note(match origin {
                    Origin::Specs { defaults: true, .. } => {
                        "a spec holds no budget: add e.g. `budget { iterations = 20  time = 2h  \
                         cost = $20 }` to its defaults plan (`defaults.loop` beside the specs, \
                         or the `--defaults` file)"
                    }
                    Origin::Specs { .. } => {
                        "a spec holds no budget: write a defaults plan, `defaults.loop` beside \
                         the specs, with e.g. `budget { iterations = 20  time = 2h  cost = $20 }`"
                    }
                    _ => "add e.g. `budget { iterations = 20  time = 2h  cost = $20 }`",
                }),
            );
        }
    }

    /// W0005: a cost budget, and an agent in use whose cost may be
    /// unknown (no `cost` cap, and not an output loopc reads a cost
    /// from): the run would stop at its first attempt. Labelled at the
    /// agent, the budget and the agent's first use (a task, a gate, a
    /// resolver, or the `fallback` of an agent in use).
    pub(super) fn costless_agents(&mut self) {
        if self.model.budget.cost.is_none() {
            return;
        }
        let uses = self.agent_uses();
        let budget = self.model.budget.span;
        let warnings: Vec<Diagnostic> = self
            .model
            .agents
            .iter()
            .filter(|a| a.cost.is_none() && !a.output.reads_cost())
            .filter_map(|a| {
                let (use_span, use_label) = uses.get(a.name.name.as_str())?;
                let name = &a.name.name;
                let mut d = Diagnostic::new(
                    Code::W0005,
                    format!("the budget caps cost, but agent `{name}` may report none"),
                    a.name.span,
                    "no `cost` cap, and its output gives no cost",
                )
                .with_label(*use_span, use_label.clone());
                if let Some(at) = budget {
                    d = d.with_label(at, "this budget caps the run's cost");
                }
                Some(d.with_note(format!(
                    "an attempt whose cost cannot be read stops the run; add `cost = $1` (the cap, counted when it reports none) to agent `{name}`, or have it write `cost_usd` in its handoff"
                )))
            })
            .collect();
        for d in warnings {
            self.push(d);
        }
    }

    /// W0007: an agent in use whose per-attempt `cost` cap is more than the
    /// whole `cost` budget: a run starts an attempt only when what is left
    /// covers its cap, so none of it can start. Labelled at the agent, the
    /// budget and the agent's first use.
    pub(super) fn caps_over_budget(&mut self) {
        let Some(budget) = self.model.budget.cost else {
            return;
        };
        let uses = self.agent_uses();
        let at = self.model.budget.span;
        let money = |m: u64| crate::syntax::literal::Money(m).to_string();
        let warnings: Vec<Diagnostic> = self
            .model
            .agents
            .iter()
            .filter_map(|a| {
                let cap = a.cost.filter(|&c| c > budget)?;
                let (use_span, use_label) = uses.get(a.name.name.as_str())?;
                let name = &a.name.name;
                let mut d = Diagnostic::new(
                    Code::W0007,
                    format!(
                        "agent `{name}`'s per-attempt cap {} is more than the whole cost budget {}",
                        money(cap),
                        money(budget)
                    ),
                    a.name.span,
                    "no attempt of it can start",
                )
                .with_label(*use_span, use_label.clone());
                if let Some(at) = at {
                    d = d.with_label(at, "this budget caps the run's cost");
                }
                Some(d.with_note(
                    "a run starts an attempt only when the budget left covers its agent's cap; \
                     raise the budget's `cost` or lower the agent's",
                ))
            })
            .collect();
        for d in warnings {
            self.push(d);
        }
    }

    /// The agents that run under the budget, each with its first use: a
    /// prompt task's (its `agent`, or its name when `defaults` gives it),
    /// an agent gate's, a resolver's, then the `fallback` of one of those
    /// (the chain ends at a repeat: a cycle is E0006).
    fn agent_uses(&self) -> HashMap<&str, (Span, String)> {
        let mut uses: HashMap<&str, (Span, String)> = HashMap::default();
        let default_agent = self.model.defaults.agent.as_ref();
        for t in &self.model.tasks {
            if !matches!(t.work, Work::Prompt(_)) {
                continue;
            }
            let task = &t.name.text;
            let used = match (&t.agent, default_agent) {
                (Some(r), _) => (r, r.span, format!("task `{task}` uses it")),
                (None, Some(r)) => (
                    r,
                    t.name.span,
                    format!("task `{task}` uses it (from `defaults`)"),
                ),
                (None, None) => continue,
            };
            uses.entry(used.0.name.as_str()).or_insert((used.1, used.2));
        }
        for g in &self.model.gates {
            if let Some(r) = &g.agent_ref {
                let label = format!("gate `{}` uses it", g.name.name);
                uses.entry(r.name.as_str()).or_insert((r.span, label));
            }
        }
        // Resolvers run under the budget too.
        let resolvers = self.model.tasks.iter().map(|t| t.resolver.as_ref());
        let resolvers = resolvers.chain([
            self.model.defaults.resolver.as_ref(),
            self.model.settings.resolver.as_ref(),
        ]);
        for r in resolvers.flatten() {
            let label = "it resolves conflicts here".to_string();
            uses.entry(r.name.as_str()).or_insert((r.span, label));
        }
        // So do answerers.
        let answerers = self.model.tasks.iter().map(|t| t.answerer.as_ref());
        let answerers = answerers.chain([
            self.model.defaults.answerer.as_ref(),
            self.model.settings.answerer.as_ref(),
        ]);
        for r in answerers.flatten() {
            let label = "it answers questions here".to_string();
            uses.entry(r.name.as_str()).or_insert((r.span, label));
        }
        // A fallback may take the attempts of the agent it stands in for.
        let fallback_of: HashMap<&str, &Ref> = self
            .model
            .agents
            .iter()
            .filter_map(|a| Some((a.name.name.as_str(), a.fallback.as_ref()?)))
            .collect();
        // In the agents' order, so the label a fallback gets is the same
        // on every run.
        let starts: Vec<&str> = (self.model.agents.iter())
            .map(|a| a.name.name.as_str())
            .filter(|a| uses.contains_key(a))
            .collect();
        for mut a in starts {
            while let Some(&f) = fallback_of.get(a) {
                let label = format!("the fallback of agent `{a}`, which is in use");
                if uses.contains_key(f.name.as_str()) {
                    break;
                }
                uses.insert(f.name.as_str(), (f.span, label));
                a = f.name.as_str();
            }
        }
        uses
    }

    /// W0004: no tasks in the plan, or in a spec of a spec tree.
    pub(super) fn empty_plan(&mut self, origin: &Origin) {
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
