//! A REEL spec tree's stages as the plan holds them (`docs/reel.md`, "Spec
//! trees"): which spec file of which stage holds which tasks. A leaf: the
//! plan's types hold a [`Pipeline`], [`super::pipeline`] cuts plans by it.

use crate::origin::STAGES;
use std::path::PathBuf;

/// The specs of a REEL spec tree, by stage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pipeline {
    /// The tree's directory, as given on the command line.
    pub dir: PathBuf,
    /// Its spec files, stage by stage in pipeline order, then by file name.
    /// In a plan cut down by [`Plan::work`](super::Plan::work) or [`Plan::select`](super::Plan::select), only the
    /// specs all of whose tasks it has.
    pub specs: Vec<StageSpec>,
    /// The stages the run works (indices into [`STAGES`], ascending);
    /// empty until [`Plan::work`](super::Plan::work) chose them.
    pub worked: Vec<usize>,
    /// Tasks that cannot start, and why: they depend on a task of a spec
    /// in a stage that is not worked and does not come after theirs.
    pub held: Vec<(usize, String)>,
}

/// One spec file of a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageSpec {
    /// The file as read (`specs/inflight/auth.md`).
    pub path: PathBuf,
    /// Its stage: an index into [`STAGES`].
    pub stage: usize,
    /// The file's text as it was compiled (its tasks are this text's).
    pub text: String,
    /// Its tasks: indices into [`Plan::tasks`](super::Plan::tasks), ascending.
    pub tasks: Vec<usize>,
}

impl StageSpec {
    /// The name of the spec's stage (`inflight`).
    pub fn stage_name(&self) -> &'static str {
        STAGES.get(self.stage).copied().unwrap_or("")
    }

    /// The stage a fully passed spec moves to: the next in [`STAGES`];
    /// `None` for `archived`, the last.
    pub fn next_stage(&self) -> Option<&'static str> {
        STAGES.get(self.stage + 1).copied()
    }
}
