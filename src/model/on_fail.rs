//! What a gate's rejection or a task's spent attempts lead to
//! (docs/language.md `on_fail`, "Re-planning").

/// What a gate does when it rejects (docs/language.md `on_fail`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnFail {
    /// Next attempt from a fresh worktree (default).
    Retry,
    /// The task is blocked.
    Block,
    /// The run stops.
    Fail,
    /// The task that wrote the task's plan fragment re-plans it, within its
    /// `replans` (docs/language.md "Re-planning"); else as `retry`.
    Replan,
}

impl OnFail {
    /// The words plan files use, in the order messages list them.
    pub const WORDS: &[&str] = &["retry", "block", "fail", "replan"];

    /// The words a task's own `on_fail` takes: what happens once its
    /// attempts are spent.
    pub const TASK_WORDS: &[&str] = &["retry", "replan"];

    /// The behaviour a plan-file word names.
    pub fn from_word(word: &str) -> Option<OnFail> {
        match word {
            "retry" => Some(OnFail::Retry),
            "block" => Some(OnFail::Block),
            "fail" => Some(OnFail::Fail),
            "replan" => Some(OnFail::Replan),
            _ => None,
        }
    }

    /// The word used in plan files.
    pub fn as_str(self) -> &'static str {
        match self {
            OnFail::Retry => "retry",
            OnFail::Block => "block",
            OnFail::Fail => "fail",
            OnFail::Replan => "replan",
        }
    }
}
