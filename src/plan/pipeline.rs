//! A REEL spec tree's pipeline (`docs/reel.md`, "Spec trees"): which spec
//! file of which stage holds which tasks, and the plan a run works
//! ([`Plan::work`]): the tasks of the specs in the worked stages (and of
//! the defaults plan), with their dependencies on specs in other stages
//! either met (the spec is in a later stage: its work is in the base) or
//! holding the task back (an earlier stage: its work does not exist yet).

pub use super::stages::{Pipeline, StageSpec};
use super::types::Plan;
use crate::check::names::suggest;
use crate::origin::{DEFAULT_STAGES, STAGES, stage_index};

/// A stage name (from `--stage`) that is not one of [`STAGES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStage {
    /// The name as given.
    pub name: String,
}

impl std::fmt::Display for UnknownStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.name.trim().is_empty() {
            // `--stage ''` or `--stage inflight,`: name the mistake.
            return write!(
                f,
                "an empty stage name (the stages are {})",
                STAGES.join(", ")
            );
        }
        write!(
            f,
            "`{}` is not a stage of a spec tree (the stages are {})",
            self.name,
            STAGES.join(", ")
        )?;
        if let Some(s) = suggest(&self.name, STAGES.iter().copied()) {
            write!(f, "; did you mean `{s}`?")?;
        }
        Ok(())
    }
}

impl Plan {
    /// The plan a run of a spec tree works: the tasks of the specs in
    /// `stages` (else `loop.stages`, else `inflight`) and of the defaults
    /// plan. A dependency on a task of a spec in another stage is dropped
    /// when that stage comes after the dependent's (the spec moved on: its
    /// work is in the base), and holds the dependent back otherwise
    /// ([`Pipeline::held`]). A plan that is no spec tree is returned as it
    /// is.
    ///
    /// Errors: a name in `stages` is not a stage.
    pub fn work(&self, stages: Option<&[String]>) -> Result<Plan, UnknownStage> {
        let Some(pipeline) = &self.pipeline else {
            return Ok(self.clone());
        };
        let names: Vec<String> = match stages {
            Some(s) => s.to_vec(),
            None => self
                .settings
                .stages
                .clone()
                .unwrap_or_else(|| DEFAULT_STAGES.iter().map(|s| s.to_string()).collect()),
        };
        let mut worked = Vec::new();
        for name in &names {
            let Some(i) = stage_index(name) else {
                return Err(UnknownStage { name: name.clone() });
            };
            if !worked.contains(&i) {
                worked.push(i);
            }
        }
        worked.sort_unstable();
        let n = self.tasks.len();
        let mut spec_of = vec![None; n];
        for (k, spec) in pipeline.specs.iter().enumerate() {
            for &t in &spec.tasks {
                spec_of[t] = Some(k);
            }
        }
        let stage_of = |t: usize| spec_of[t].map(|k: usize| pipeline.specs[k].stage);
        let keep: Vec<bool> = (0..n)
            .map(|t| stage_of(t).is_none_or(|s| worked.contains(&s)))
            .collect();
        let worked_names = worked
            .iter()
            .map(|&s| format!("{}/", STAGES[s]))
            .collect::<Vec<_>>()
            .join(", ");
        let mut held = Vec::new();
        for t in (0..n).filter(|&t| keep[t]) {
            let blocking = self.tasks[t].dependencies.iter().find(|&&d| {
                !keep[d] && !matches!((stage_of(d), stage_of(t)), (Some(sd), Some(st)) if sd > st)
            });
            if let Some(&d) = blocking {
                let Some(spec) = spec_of[d].map(|k| &pipeline.specs[k]) else {
                    continue;
                };
                let mut both: Vec<&str> = worked.iter().map(|&s| STAGES[s]).collect();
                both.push(spec.stage_name());
                both.sort_by_key(|s| stage_index(s));
                held.push((
                    t,
                    format!(
                        "depends on `{}` of {}, which is in {}/, a stage this run does not work \
                         (it works {worked_names}) and that does not come after this task's: \
                         work it too (`--stage {}`) or wait until that spec has moved on",
                        self.tasks[d].name,
                        spec.path.display(),
                        spec.stage_name(),
                        both.join(","),
                    ),
                ));
            }
        }
        let mut plan = self.subset(&keep);
        if let Some(p) = plan.pipeline.as_mut() {
            p.worked = worked;
            let new_index = new_indices(&keep);
            p.held = held
                .into_iter()
                .map(|(t, why)| (new_index[t], why))
                .collect();
        }
        Ok(plan)
    }

    /// The plan with only the tasks `keep` marks, in the same order;
    /// dependencies on tasks left out are dropped. Settings, budget, keys
    /// and layers are unchanged. Of the pipeline, the specs all of whose
    /// tasks are kept remain (with their tasks renumbered), and so do the
    /// held tasks that are kept.
    pub(super) fn subset(&self, keep: &[bool]) -> Plan {
        let new_index = new_indices(keep);
        let mut tasks = Vec::new();
        for (i, task) in self.tasks.iter().enumerate() {
            if keep[i] {
                let mut t = task.clone();
                t.dependencies = task
                    .dependencies
                    .iter()
                    .filter(|&&d| keep[d])
                    .map(|&d| new_index[d])
                    .collect();
                tasks.push(t);
            }
        }
        let graph = super::graph::dag(tasks.iter().map(|t| t.dependencies.iter().copied()));
        let pipeline = self.pipeline.as_ref().map(|p| Pipeline {
            dir: p.dir.clone(),
            specs: p
                .specs
                .iter()
                .filter(|s| s.tasks.iter().all(|&t| keep[t]))
                .map(|s| StageSpec {
                    tasks: s.tasks.iter().map(|&t| new_index[t]).collect(),
                    ..s.clone()
                })
                .collect(),
            worked: p.worked.clone(),
            held: p
                .held
                .iter()
                .filter(|(t, _)| keep[*t])
                .map(|(t, why)| (new_index[*t], why.clone()))
                .collect(),
        });
        Plan {
            name: self.name.clone(),
            settings: self.settings.clone(),
            budget: self.budget.clone(),
            tasks,
            graph,
            pipeline,
        }
    }

    /// The spec of a tree that task `name` belongs to, in the whole tree
    /// (before [`Plan::work`]), if any.
    pub fn spec_of_task(&self, name: &str) -> Option<&StageSpec> {
        let i = self.task_index(name)?;
        self.pipeline
            .as_ref()?
            .specs
            .iter()
            .find(|s| s.tasks.contains(&i))
    }
}

/// Old index → new index of the tasks `keep` marks (`usize::MAX` for the
/// others).
fn new_indices(keep: &[bool]) -> Vec<usize> {
    let mut next = 0;
    keep.iter()
        .map(|&k| {
            if k {
                next += 1;
                next - 1
            } else {
                usize::MAX
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A plan of tasks `a` (todo), `b` (inflight, depends on a), `c`
    /// (inflight), `d` (active), `e` (inflight, depends on d and c), as a
    /// spec tree would give.
    fn plan() -> Plan {
        let src = "task a { run = \"true\" }\n\
                   task b: a { run = \"true\" }\n\
                   task c { run = \"true\" }\n\
                   task d { run = \"true\" }\n\
                   task e: d c { run = \"true\" }\n";
        let mut p = crate::compile_string("p.loop", src.to_string())
            .plan
            .expect("the test plan compiles");
        let spec = |name: &str, stage: &str, tasks: &[&str]| StageSpec {
            path: PathBuf::from(format!("t/{stage}/{name}.md")),
            stage: stage_index(stage).unwrap(),
            text: String::new(),
            tasks: tasks.iter().map(|t| p.task_index(t).unwrap()).collect(),
        };
        let specs = vec![
            spec("sa", "todo", &["a"]),
            spec("sb", "inflight", &["b", "c"]),
            spec("se", "inflight", &["e"]),
            spec("sd", "active", &["d"]),
        ];
        p.pipeline = Some(Pipeline {
            dir: PathBuf::from("t"),
            specs,
            ..Pipeline::default()
        });
        p
    }

    fn names(p: &Plan) -> Vec<&str> {
        p.tasks.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn inflight_by_default_later_stages_met_earlier_ones_hold() {
        let w = plan().work(None).unwrap();
        assert_eq!(names(&w), ["b", "c", "e"]);
        // `e` depended on `d` (active: later, met) and `c` (kept).
        assert_eq!(w.tasks[2].dependencies, [1]);
        // `b` depends on `a` (todo: earlier, not worked): held.
        let p = w.pipeline.as_ref().unwrap();
        assert_eq!(p.held.len(), 1);
        assert_eq!(p.held[0].0, 0);
        assert!(
            p.held[0].1.contains("`--stage todo,inflight`"),
            "{}",
            p.held[0].1
        );
        assert_eq!(p.worked, [stage_index("inflight").unwrap()]);
        assert_eq!(
            p.specs.iter().map(|s| s.tasks.clone()).collect::<Vec<_>>(),
            [vec![0, 1], vec![2]]
        );
    }

    #[test]
    fn named_stages_and_the_setting() {
        let both = plan()
            .work(Some(&["inflight".into(), "todo".into()]))
            .unwrap();
        assert_eq!(names(&both), ["a", "b", "c", "e"]);
        assert!(both.pipeline.as_ref().unwrap().held.is_empty());
        let mut p = plan();
        p.settings.stages = Some(vec!["active".into()]);
        assert_eq!(names(&p.work(None).unwrap()), ["d"]);
        let err = plan().work(Some(&["reveiw".into()])).unwrap_err();
        assert!(err.to_string().ends_with("did you mean `review`?"), "{err}");
        // `run TASK…` after `work`: a spec is kept only with all its tasks.
        let w = plan().work(None).unwrap().select(&["c".into()]).unwrap();
        assert_eq!(names(&w), ["c"]);
        assert!(w.pipeline.as_ref().unwrap().specs.is_empty());
    }

    #[test]
    fn a_plan_that_is_no_tree_is_worked_whole() {
        let mut p = plan();
        p.pipeline = None;
        assert_eq!(names(&p.work(None).unwrap()), ["a", "b", "c", "d", "e"]);
    }
}
