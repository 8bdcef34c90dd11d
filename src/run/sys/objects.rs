//! Writing git objects without a checkout: merging trees (`git merge-tree
//! --write-tree`) and making commits of them (`git commit-tree`), as the
//! merges and cache replays of a run need.

use super::git::{Git, GitOutput, why};

/// The result of `git merge-tree --write-tree`.
#[derive(Debug, PartialEq, Eq)]
pub enum MergeTree {
    /// The merge is clean; the merged tree's id.
    Clean(String),
    /// The merge conflicts in these paths.
    Conflict(Vec<String>),
}

impl Git {
    /// Merges commits `ours` and `theirs` without touching any worktree
    /// (`git merge-tree --write-tree`).
    pub fn merge_tree(&self, ours: &str, theirs: &str) -> Result<MergeTree, String> {
        self.merge_tree_with(&[], ours, theirs)
    }

    fn merge_tree_with(
        &self,
        options: &[&str],
        ours: &str,
        theirs: &str,
    ) -> Result<MergeTree, String> {
        let mut args = vec!["merge-tree", "--write-tree", "--name-only", "--no-messages"];
        args.extend_from_slice(options);
        args.extend([ours, theirs]);
        let out = self.try_run_in(&self.root, &args)?;
        parse_merge_tree(out)
    }

    /// The tree `git merge-tree --write-tree` makes of `ours` and `theirs`
    /// whether or not they conflict: a conflicted file holds its conflict
    /// markers, in `diff3` style. It is what `git merge` with that style
    /// leaves in a worktree before anyone resolves it.
    ///
    /// Errors: git fails.
    pub fn merge_tree_with_markers(&self, ours: &str, theirs: &str) -> Result<String, String> {
        let args = [
            "-c",
            "merge.conflictStyle=diff3",
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            ours,
            theirs,
        ];
        let out = self.try_run_in(&self.root, &args)?;
        let tree = out.stdout.lines().next().unwrap_or("").trim().to_string();
        if !matches!(out.code, 0 | 1) || tree.is_empty() {
            return Err(format!("`git merge-tree` failed: {}", why(&out)));
        }
        Ok(tree)
    }

    /// Replays the change `base..theirs` onto `ours` without touching any
    /// worktree (`git merge-tree --write-tree --merge-base=BASE`), as
    /// `git cherry-pick` would.
    pub fn merge_tree_onto(
        &self,
        base: &str,
        ours: &str,
        theirs: &str,
    ) -> Result<MergeTree, String> {
        let merge_base = format!("--merge-base={base}");
        self.merge_tree_with(&[&merge_base], ours, theirs)
    }

    /// Creates a commit of `tree` with `parents` and `message`.
    pub fn commit_tree(
        &self,
        tree: &str,
        parents: &[&str],
        message: &str,
    ) -> Result<String, String> {
        let mut args = vec!["commit-tree", tree];
        for p in parents {
            args.extend(["-p", p]);
        }
        args.extend(["-m", message]);
        self.read(&args)
    }

    /// Like [`Git::commit_tree`], with the author and committer (names,
    /// e-mails and dates) of commit `like` instead of now's: the same
    /// tree, parents and message then give the same commit id on every
    /// run (a cache replay is reproducible).
    ///
    /// Errors: git fails or `like` is not a commit.
    pub fn commit_tree_like(
        &self,
        tree: &str,
        parents: &[&str],
        message: &str,
        like: &str,
    ) -> Result<String, String> {
        let who = self.read(&[
            "show",
            "-s",
            "--date=raw",
            "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd",
            like,
        ])?;
        let fields: Vec<&str> = who.split('\0').collect();
        let [an, ae, ad, cn, ce, cd] = fields.as_slice() else {
            return Err(format!("cannot read the identity of commit {like}: {who}"));
        };
        let mut git = self.clone();
        for (k, v) in [
            ("GIT_AUTHOR_NAME", an),
            ("GIT_AUTHOR_EMAIL", ae),
            ("GIT_AUTHOR_DATE", ad),
            ("GIT_COMMITTER_NAME", cn),
            ("GIT_COMMITTER_EMAIL", ce),
            ("GIT_COMMITTER_DATE", cd),
        ] {
            git.env.push((k.to_string(), v.to_string()));
        }
        git.commit_tree(tree, parents, message)
    }
}

/// Reads the output of `git merge-tree --write-tree --name-only`.
fn parse_merge_tree(out: GitOutput) -> Result<MergeTree, String> {
    let mut lines = out.stdout.lines();
    let tree = lines.next().unwrap_or("").trim().to_string();
    match out.code {
        0 => Ok(MergeTree::Clean(tree)),
        1 => {
            let mut paths: Vec<String> = lines
                .take_while(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            paths.dedup();
            Ok(MergeTree::Conflict(paths))
        }
        _ => Err(format!("`git merge-tree` failed: {}", why(&out))),
    }
}
