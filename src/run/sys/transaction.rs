//! Moving several refs at once: one `git update-ref --stdin` transaction
//! (`start`, `update`, `prepare`, `commit`), in which every ref moves or
//! none does. A merge moves the integration branch and writes its task's
//! cache entry this way (docs/running.md step 7): one process, and the
//! entry never points at work the branch does not hold.

use super::git::{Git, why};

/// One ref a transaction moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefMove {
    /// The full ref name (`refs/heads/…`, `refs/loopc/cache/…`).
    pub name: String,
    /// The object id it points at afterwards.
    pub new: String,
    /// What it must point at before (compare-and-swap); `None`: whatever
    /// it points at, if anything.
    pub old: Option<String>,
}

impl Git {
    /// Moves every ref of `moves` in one transaction (`git update-ref
    /// --stdin`), in their order: all of them, or none when one of their
    /// old values does not hold. Returns false when a compare-and-swap
    /// was lost (the first move's ref is not at its `old`: someone moved
    /// it). A git stopped or killed as it ran (Ctrl-C) may have committed
    /// already: then the first ref is read again, and one at its `new` is
    /// a success.
    ///
    /// Errors: git fails for another reason (its standard error, bounded).
    pub fn move_refs(&self, moves: &[RefMove]) -> Result<bool, String> {
        let Some(first) = moves.first() else {
            return Ok(true);
        };
        let mut input = String::from("start\n");
        for m in moves {
            input.push_str(&format!("update {} {}", m.name, m.new));
            if let Some(old) = &m.old {
                input.push_str(&format!(" {old}"));
            }
            input.push('\n');
        }
        input.push_str("prepare\ncommit\n");
        let args = ["update-ref", "-m", "loopc", "--stdin"];
        let landed = || self.commit_of(&first.name).ok().flatten().as_deref() == Some(&first.new);
        let out = match self.try_run_fed(&args, input.as_bytes()) {
            Ok(out) => out,
            Err(_) if landed() => return Ok(true),
            Err(e) => return Err(e),
        };
        if out.code == 0 {
            return Ok(true);
        }
        match self.commit_of(&first.name)?.as_deref() {
            Some(current) if current == first.new => Ok(true),
            current if first.old.is_some() && current != first.old.as_deref() => Ok(false),
            _ => Err(format!("cannot move {}: {}", first.name, why(&out))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Git, String, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = |args: &[&str]| {
            crate::run::sys::testing::git(dir.path(), args)
                .trim()
                .to_string()
        };
        run(&["init", "-q", "-b", "main"]);
        run(&["commit", "-q", "--allow-empty", "-m", "one"]);
        let one = run(&["rev-parse", "HEAD"]);
        run(&["commit", "-q", "--allow-empty", "-m", "two"]);
        let two = run(&["rev-parse", "HEAD"]);
        let git = Git::discover(dir.path()).expect("a repository");
        (dir, git, one, two)
    }

    #[test]
    fn every_ref_moves_or_none_does() {
        let (_dir, git, one, two) = repo();
        let moves = |old: &str| {
            vec![
                RefMove {
                    name: "refs/heads/main".into(),
                    new: one.clone(),
                    old: Some(old.to_string()),
                },
                RefMove {
                    name: "refs/loopc/cache/k".into(),
                    new: one.clone(),
                    old: None,
                },
            ]
        };
        // The branch is not at `one`: nothing moves, and it says so.
        assert_eq!(git.move_refs(&moves(&one)), Ok(false));
        assert_eq!(git.commit_of("refs/loopc/cache/k"), Ok(None));
        assert_eq!(git.move_refs(&moves(&two)), Ok(true));
        assert_eq!(git.commit_of("refs/heads/main"), Ok(Some(one.clone())));
        assert_eq!(git.commit_of("refs/loopc/cache/k"), Ok(Some(one)));
    }
}
