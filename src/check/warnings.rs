//! Warnings about the plan as a whole, once every definition is checked:
//! no budget bounds the agents (W0003), a cost budget with an agent whose
//! cost may go unread (W0005), and no tasks (W0004).

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::model::Work;
use crate::origin::Origin;
use crate::span::Span;
use foldhash::{HashMap, HashSet, HashSetExt};

impl Checker {
    /// W0003: agent tasks with no budget bounding iterations, time or cost.
    pub(super) fn unbounded_budget(&mut self) {
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
    }

    /// W0005: a cost budget, and an agent in use whose cost may be
    /// unknown (no `cost` cap, and not an output loopc reads a cost
    /// from): the run would stop at its first attempt.
    pub(super) fn costless_agents(&mut self) {
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
            // So do answerers.
            let resolvers = self.model.tasks.iter().map(|t| t.resolver.as_ref());
            let answerers = self.model.tasks.iter().map(|t| t.answerer.as_ref());
            let resolvers = resolvers.chain(answerers).chain([
                self.model.defaults.resolver.as_ref(),
                self.model.settings.resolver.as_ref(),
                self.model.defaults.answerer.as_ref(),
                self.model.settings.answerer.as_ref(),
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
                        && !a.output.reads_cost()
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
