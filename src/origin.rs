//! Where a plan's items and its default name came from: one `.loop` file,
//! or REEL specs lowered into items beside a defaults plan.
//!
//! The checker and the plan phase word a few messages by it (a REEL plan is
//! named after its spec, not after a file the person wrote items in), so the
//! front-end driver ([`mod@crate::compile`]) passes it in instead of rewording
//! their diagnostics afterwards.

use std::path::Path;

/// The file name of the defaults plan looked for beside REEL specs.
pub const DEFAULTS_FILE: &str = "defaults.loop";

/// The stage directories of a REEL spec tree, in pipeline order: a spec
/// whose tasks all passed moves from its stage to the next
/// (`docs/reel.md`, "Spec trees"); `archived` is the last.
pub const STAGES: [&str; 6] = ["todo", "design", "inflight", "review", "active", "archived"];

/// The stages `loopc run` works in a spec tree unless `loop.stages` or
/// `--stage` names others.
pub const DEFAULT_STAGES: [&str; 1] = ["inflight"];

/// The position of stage `name` in [`STAGES`], if it is one.
pub fn stage_index(name: &str) -> Option<usize> {
    STAGES.iter().position(|s| *s == name)
}

/// Where a plan came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// One `.loop` file.
    File {
        /// The file's stem: the plan's name unless a `loop` item names it.
        stem: String,
    },
    /// REEL specs (`docs/reel.md`), after the items of a defaults plan.
    Specs {
        /// The plan's name unless the defaults plan's `loop` item names it:
        /// the JSON spec's `name`, the spec's file stem or the directory's
        /// name.
        name: String,
        /// The byte offset where the first spec file starts in the
        /// compiled text, if any spec was read.
        first_spec: Option<usize>,
        /// Whether a defaults plan was read.
        defaults: bool,
        /// Whether reading the files reported errors: then they may hold
        /// tasks that could not be read, and "no tasks" is not said.
        unreadable: bool,
        /// The byte offsets where the spec files that declare no task start
        /// in the compiled text (those read without error only: a file that
        /// could not be read may well hold tasks). Each gets W0004.
        empty_specs: Vec<usize>,
    },
}

impl Origin {
    /// The origin of the `.loop` file called `name` (a path or a file name).
    pub fn file(name: &str) -> Origin {
        Origin::File {
            stem: stem_of(Path::new(name)),
        }
    }

    /// The plan's name when no `loop` item gives one.
    pub fn default_name(&self) -> &str {
        match self {
            Origin::File { stem } => stem,
            Origin::Specs { name, .. } => name,
        }
    }
}

/// The stem of `path`'s file name (`plan` for `plan.loop`, `auth` for
/// `specs/auth.md`), or `plan` when it has none that is UTF-8.
pub fn stem_of(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("plan")
        .to_string()
}
