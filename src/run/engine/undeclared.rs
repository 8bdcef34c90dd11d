//! Inputs that another task writes with no dependency between the two
//! (docs/cache.md "Inputs"): the reader sees the file or not depending on
//! which of them lands first, and so does its cache key, so a rerun may
//! run it again. The run says so once per reading task, when a task's
//! landed work (merged or replayed) changes a file another task's `inputs`
//! match and neither depends on the other.

use crate::plan::Plan;
use crate::plan::key::Produced;
use std::collections::HashSet;

/// At most this many warnings a run: a plan whose every task reads what
/// every other writes would otherwise print a line per task.
const MOST: usize = 10;

/// The `inputs` of a plan's tasks, matched against what other tasks write.
#[derive(Debug)]
pub struct Undeclared {
    /// Every `inputs` glob of the plan.
    globs: globset::GlobSet,
    /// The task of each glob of `globs` (by index).
    owner: Vec<usize>,
    /// The reading tasks warned about.
    warned: HashSet<usize>,
}

impl Undeclared {
    /// The `inputs` of `plan`'s tasks; `None` when no task has any (or a
    /// glob does not compile: the task's key says so itself).
    pub fn new(plan: &Plan) -> Option<Undeclared> {
        let mut builder = globset::GlobSetBuilder::new();
        let mut owner = Vec::new();
        for (i, task) in plan.tasks.iter().enumerate() {
            for pattern in &task.inputs {
                let glob = globset::GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                    .ok()?;
                builder.add(glob);
                owner.push(i);
            }
        }
        if owner.is_empty() {
            return None;
        }
        Some(Undeclared {
            globs: builder.build().ok()?,
            owner,
            warned: HashSet::new(),
        })
    }

    /// The warnings for task `writer`'s landed work, which changed the
    /// paths of `produced`: one per task whose `inputs` match one of them,
    /// with no dependency either way between it and `writer`, not warned
    /// about before (at most [`MOST`] a run; the last one says so).
    pub fn check(&mut self, plan: &Plan, writer: usize, produced: &Produced) -> Vec<String> {
        let mut out = Vec::new();
        for path in produced.keys() {
            for g in self.globs.matches(path) {
                let reader = self.owner[g];
                if reader == writer
                    || self.warned.len() >= MOST
                    || self.warned.contains(&reader)
                    || depends_on(plan, reader, writer)
                    || depends_on(plan, writer, reader)
                {
                    continue;
                }
                self.warned.insert(reader);
                let (r, w) = (&plan.tasks[reader].name, &plan.tasks[writer].name);
                let mut line = format!(
                    "task `{r}`'s inputs match `{path}`, which task `{w}` wrote, but neither \
                     depends on the other: whether `{r}` sees it depends on which lands first, \
                     and so does its cache key (a rerun may run it again); make `{r}` depend \
                     on `{w}` or narrow its `inputs`"
                );
                if self.warned.len() == MOST {
                    line.push_str(" (no more of these are said in this run)");
                }
                out.push(line);
            }
        }
        out
    }
}

/// Whether task `from` depends on task `to`, directly or through others.
fn depends_on(plan: &Plan, from: usize, to: usize) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![from];
    while let Some(i) = stack.pop() {
        for &d in &plan.tasks[i].dependencies {
            if d == to {
                return true;
            }
            if seen.insert(d) {
                stack.push(d);
            }
        }
    }
    false
}
