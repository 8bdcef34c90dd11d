//! Plans that grow during a run (docs/running.md "Plan fragments"): a
//! passed task with `expands` has its fragment read from its commit and
//! compiled into the plan ([`crate::expand::grow`]) before it is merged or
//! replayed; a fragment that does not check fails the attempt with the
//! diagnostics as its feedback. Once the task's work is on the integration
//! branch the scheduler swaps in the grown plan, carrying every task's
//! state over by name ([`Growth::carry`]).

use crate::expand::{self, Base, Fragment, Grown, Rejected};
use crate::plan::Plan;
use crate::run::sys::git::Git;
use crate::state::TaskState;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The fragments a run has spliced so far, and what they are compiled with.
#[derive(Debug, Default)]
pub struct Growth {
    /// The plan's syntax tree and sources; `None` when the caller gave
    /// none (then a task that expands fails: nothing to compile against).
    base: Option<Base>,
    /// The fragments spliced so far, in order.
    fragments: Vec<Fragment>,
    /// Each task a fragment added, with the task that produced it.
    pub added: BTreeMap<String, String>,
    /// `loopc run --verify`: every task of a grown plan verifies first
    /// ([`Plan::verify_all`]), its fragments' tasks too.
    pub verify_all: bool,
}

/// A fragment that checked, ready to be spliced once its producer's work
/// is on the integration branch.
#[derive(Debug)]
pub struct Accepted {
    /// The fragment.
    fragment: Fragment,
    /// The plan grown by it (and every fragment before it).
    grown: Grown,
    /// The commit it was read from (the producer's own commit).
    pub commit: String,
}

impl Accepted {
    /// The producing task's name and the fragment's path.
    pub fn describe(&self) -> (String, String) {
        (self.fragment.producer.clone(), self.fragment.path.clone())
    }
}

impl Growth {
    /// Growth of a run whose plan was compiled as `base`; `verify_all`:
    /// `loopc run --verify` was given.
    pub fn new(base: Option<Base>, verify_all: bool) -> Growth {
        Growth {
            base,
            verify_all,
            ..Growth::default()
        }
    }

    /// Judges the fragment that task `i` of `plan` wrote at `commit`, in
    /// the repository of `git`: `None` when the task expands nothing, else
    /// the accepted fragment, or why it was rejected (a missing fragment is
    /// rejected too). `worktree` is the attempt's worktree, if it is still
    /// there (a missing fragment that git ignores there is said to be
    /// ignored). `loopc run --dry-run` judges recorded fragments as the run
    /// would.
    pub fn judge(
        &self,
        git: &Git,
        plan: &Plan,
        i: usize,
        commit: &str,
        worktree: Option<&Path>,
    ) -> Option<Result<Accepted, Rejected>> {
        let task = &plan.tasks[i];
        let path = task.expands.as_ref()?;
        let depth = plan.settings.expand_depth;
        Some(self.judge_at(git, depth, &task.name, path, commit, worktree))
    }

    fn judge_at(
        &self,
        git: &Git,
        depth: u32,
        producer: &str,
        path: &str,
        commit: &str,
        worktree: Option<&Path>,
    ) -> Result<Accepted, Rejected> {
        let Some(base) = &self.base else {
            let why = format!(
                "task `{producer}` expands `{path}`, but this run has no plan source to compile \
                 the fragment with"
            );
            return Err(Rejected {
                reason: why.clone(),
                report: why,
            });
        };
        let bytes = read_blob(git, commit, path, worktree)?;
        let fragment = Fragment::decode(producer, path, bytes);
        let mut all = self.fragments.clone();
        // A producer that runs again (a replay missed, a retry) replaces
        // its earlier fragment.
        all.retain(|f| f.producer != producer);
        all.push(fragment.clone());
        let grown = expand::grow(base, &all, depth)?;
        Ok(Accepted {
            fragment,
            grown,
            commit: commit.to_string(),
        })
    }

    /// The prompt section that tells the agent of task `i` of `plan`,
    /// which expands, what loopc expects of its plan fragment (empty for
    /// other tasks): where to write it, what it may hold, how its tasks are
    /// named and ordered, and the plan's agents and gates it may use.
    pub fn prompt_section(&self, plan: &Plan, i: usize) -> String {
        let task = &plan.tasks[i];
        let Some(path) = &task.expands else {
            return String::new();
        };
        let (agents, gates, default_agent) =
            self.base.as_ref().map(Base::names).unwrap_or_default();
        let list = |names: &[&str]| match names {
            [] => "none".to_string(),
            _ => names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let default = default_agent.map_or(String::new(), |a| {
            format!(" (a task without `agent` is done by `{a}`)")
        });
        format!(
            "## Plan fragment (required)\n\
             This task writes the plan fragment `{path}` (relative to the repository's top): \
             a loopc `.loop` file that holds only `task` items, such as\n\
             task parser \"Parse the input\" {{ prompt = \"…\" }}\n\
             task counter \"Count the words\": parser {{ prompt = \"…\" }}\n\
             When this task passes, loopc checks the fragment and adds its tasks to the plan, \
             named `{name}.<name>`; they run after this task and before the tasks that depend \
             on it. Name the fragment's own tasks bare, as above (at most {room} characters \
             each: the whole name is at most 64). Task fields: `prompt` or `run`, `agent`, \
             `accept`, `gates`, `attempts`, `timeout`, `inputs`, `changes`, `env`, \
             `resolver`, `on_fail`, `answerer`{expands}. The plan's agents: {agents}{default}; its gates: {gates}. A \
             fragment that does not check fails the attempt, and the next attempt is given \
             the diagnostics.\n\n",
            name = task.name,
            room = 64usize.saturating_sub(task.name.len() + 1),
            expands = if self.level(&task.name) + 1 < plan.settings.expand_depth {
                ", `expands` (a fragment of its own, which nests one level deeper)"
            } else {
                ""
            },
            agents = list(&agents),
            gates = list(&gates),
        )
    }

    /// How deep task `name` is: 0 for the plan's own tasks, 1 for a task a
    /// fragment of one of them added, and so on.
    fn level(&self, name: &str) -> u32 {
        let mut level = 0;
        let mut at = name;
        while let Some(producer) = self.added.get(at) {
            level += 1;
            at = producer;
        }
        level
    }

    /// Records `accepted` as spliced and returns the plan to run now, and
    /// the names of the tasks the fragment added to it: the grown plan, or,
    /// when the run was asked for some tasks (`run TASK…`), those tasks and
    /// what they depend on now (a fragment's tasks only when one of them
    /// waits for the task that wrote it).
    pub fn splice(&mut self, current: &Plan, accepted: Accepted) -> (Plan, Vec<String>) {
        let Accepted {
            fragment, grown, ..
        } = accepted;
        // The fragment's tasks, in the grown plan's order.
        let new: Vec<String> = grown
            .plan
            .tasks
            .iter()
            .filter(|t| {
                grown.added.get(&t.name) == Some(&fragment.producer)
                    && current.task_index(&t.name).is_none()
            })
            .map(|t| t.name.clone())
            .collect();
        let targets = self.base.as_ref().map_or(&[][..], |b| &b.targets[..]);
        // Every target is in the grown plan: select cannot fail.
        let plan = grown.plan.select(targets).unwrap_or(grown.plan);
        let new = new
            .into_iter()
            .filter(|n| plan.task_index(n).is_some())
            .collect();
        self.fragments.retain(|f| f.producer != fragment.producer);
        self.fragments.push(fragment);
        self.added = grown.added;
        let mut plan = plan;
        if self.verify_all {
            plan.verify_all();
        }
        (plan, new)
    }

    /// The state of every task of `plan` (in its order), carried over by
    /// name from `old`; tasks that were not there start pending, marked
    /// with the task whose fragment added them and their dependencies.
    pub fn carry(&self, plan: &Plan, old: Vec<TaskState>) -> Vec<TaskState> {
        let mut by_name: HashMap<String, TaskState> =
            old.into_iter().map(|t| (t.name.clone(), t)).collect();
        plan.tasks
            .iter()
            .map(|t| {
                let mut ts = by_name
                    .remove(&t.name)
                    .unwrap_or_else(|| TaskState::pending(t.name.clone(), t.title.clone()));
                if let Some(producer) = self.added.get(&t.name) {
                    ts.expanded_from = Some(producer.clone());
                    ts.dependencies = t
                        .dependencies
                        .iter()
                        .map(|&d| plan.tasks[d].name.clone())
                        .collect();
                }
                ts
            })
            .collect()
    }
}

/// For each task of `new`, its index in `old` (by name), if it was there.
pub fn old_indices(old: &Plan, new: &Plan) -> Vec<Option<usize>> {
    let index: HashMap<&str, usize> = old
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    new.tasks
        .iter()
        .map(|t| index.get(t.name.as_str()).copied())
        .collect()
}

/// `items` (one per task of the old plan) reordered for the new plan by
/// `from` ([`old_indices`]); new tasks get `T::default()`.
pub fn reorder<T: Default>(items: Vec<T>, from: &[Option<usize>]) -> Vec<T> {
    let mut old: Vec<Option<T>> = items.into_iter().map(Some).collect();
    from.iter()
        .map(|j| {
            j.and_then(|j| old.get_mut(j).and_then(Option::take))
                .unwrap_or_default()
        })
        .collect()
}

/// The bytes of `path` at `commit` (not decoded: [`Fragment::decode`]
/// tells bytes that are not UTF-8).
///
/// Errors: the commit has no such file (the producer did not write its
/// fragment, or did not commit it: when git ignores the path in
/// `worktree`, the reason says so).
fn read_blob(
    git: &Git,
    commit: &str,
    path: &str,
    worktree: Option<&Path>,
) -> Result<Vec<u8>, Rejected> {
    match git.file_bytes(commit, path) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => {
            let ignored = worktree.is_some_and(|dir| {
                git.try_run_in(dir, &["check-ignore", "-q", "--", path])
                    .is_ok_and(|out| out.code == 0)
            });
            let (reason, advice) = if ignored {
                (
                    format!(
                        "plan fragment {path} is missing: the task's commit has no `{path}`, \
                         which git ignores (a `.gitignore` matches it), so it was not committed"
                    ),
                    format!(
                        "Write the plan fragment to a path git does not ignore, or stop \
                         ignoring `{path}`: loopc commits only files git does not ignore."
                    ),
                )
            } else {
                (
                    format!("plan fragment {path} is missing: the task's commit has no `{path}`"),
                    format!(
                        "Write the plan fragment (a `.loop` file of tasks) to `{path}` in the \
                         worktree; loopc commits it with your other changes."
                    ),
                )
            };
            Err(Rejected {
                report: format!("{reason}\n{advice}\n"),
                reason,
            })
        }
        Err(e) => Err(Rejected {
            reason: format!("cannot read plan fragment {path}: {e}"),
            report: format!("cannot read plan fragment {path}: {e}\n"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::reorder;

    #[test]
    fn reorder_by_old_index() {
        let v = reorder(vec![10, 20, 30], &[Some(2), None, Some(0), Some(1)]);
        assert_eq!(v, [30, 0, 10, 20]);
    }
}
