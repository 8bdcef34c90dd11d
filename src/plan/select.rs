//! `loopc run TASK…`: the part of a plan that some tasks need (those tasks
//! and, transitively, their dependencies), as make, just and cargo build
//! what was named and what it depends on.

use super::types::Plan;
use crate::check::names::suggest;

/// A task named on the command line that the plan does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTask {
    /// The name as given.
    pub name: String,
    /// The plan's closest task name, if one is close enough to suggest.
    pub suggestion: Option<String>,
}

impl std::fmt::Display for UnknownTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no task named `{}` in the plan", self.name)?;
        if let Some(s) = &self.suggestion {
            write!(f, "; did you mean `{s}`?")?;
        }
        Ok(())
    }
}

impl Plan {
    /// The plan cut down to the tasks named in `targets` and everything they
    /// depend on, in the same topological order; settings, budget, keys and
    /// layers are unchanged (a task's dependencies are all kept, so neither
    /// its key nor its layer moves). No targets: the whole plan.
    ///
    /// Errors: the first target that names no task, with the closest name.
    pub fn select(&self, targets: &[String]) -> Result<Plan, UnknownTask> {
        if targets.is_empty() {
            return Ok(self.clone());
        }
        let mut keep = vec![false; self.tasks.len()];
        let mut stack = Vec::new();
        for name in targets {
            let Some(i) = self.task_index(name) else {
                return Err(UnknownTask {
                    name: name.clone(),
                    suggestion: suggest(name, self.tasks.iter().map(|t| t.name.as_str()))
                        .map(str::to_string),
                });
            };
            stack.push(i);
        }
        while let Some(i) = stack.pop() {
            if !keep[i] {
                keep[i] = true;
                stack.extend(self.tasks[i].dependencies.iter().copied());
            }
        }
        Ok(self.subset(&keep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        let src = "task a { run = \"true\" }\n\
                   task b: a { run = \"true\" }\n\
                   task c: b { run = \"true\" }\n\
                   task d { run = \"true\" }\n\
                   task e: d a { run = \"true\" }\n";
        let c = crate::compile_string("p.loop", src.to_string());
        c.plan.expect("the test plan compiles")
    }

    fn names(p: &Plan) -> Vec<&str> {
        p.tasks.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn targets_and_their_dependencies_only() {
        let p = plan();
        let b = p.select(&["b".into()]).unwrap();
        assert_eq!(names(&b), ["a", "b"]);
        assert_eq!(b.tasks[1].dependencies, [0]);
        assert_eq!(b.tasks[1].key, p.tasks[1].key);
        assert_eq!(b.graph.edge_count(), 1);
        let e = p.select(&["e".into(), "b".into()]).unwrap();
        assert_eq!(names(&e), ["a", "b", "d", "e"]);
        assert_eq!(e.dependents(0), [1, 3]);
        assert_eq!(names(&p.select(&[]).unwrap()), names(&p));
    }

    #[test]
    fn an_unknown_target_suggests_the_closest() {
        let err = plan().select(&["bb".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no task named `bb` in the plan; did you mean `b`?"
        );
        let err = plan().select(&["zzzzzz".into()]).unwrap_err();
        assert_eq!(err.to_string(), "no task named `zzzzzz` in the plan");
    }
}
