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

    /// Merges `theirs` onto `ours` with `base` as their merge base, without
    /// touching any worktree (`git merge-tree --write-tree
    /// --merge-base=BASE`): the change `base..theirs` replayed onto `ours`,
    /// as `git cherry-pick` would; when `base` is the merge base of the
    /// two, the merge [`Git::merge_tree`] makes, without git searching the
    /// history for it.
    pub fn merge_tree_onto(
        &self,
        base: &str,
        ours: &str,
        theirs: &str,
    ) -> Result<MergeTree, String> {
        let merge_base = format!("--merge-base={base}");
        self.merge_tree_with(&[&merge_base], ours, theirs)
    }

    /// Creates a commit of `tree` with `parents` and `message`. The message
    /// goes to git on its standard input, never on the command line (a
    /// cache entry's names every file its task read and wrote: megabytes),
    /// ended by a line break as `-m` would end it, so that a commit made
    /// either way has the same id.
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
        args.extend(["-F", "-"]);
        let mut text = message.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        self.read_fed(&args, text.as_bytes())
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

/// A file in a commit's tree: its mode and blob id (`git ls-tree`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// The mode (`100644`, `100755`).
    pub mode: String,
    /// The blob's id.
    pub blob: String,
}

impl Git {
    /// The file at `path` (relative to the repository's top) in `commit`,
    /// if there is a file there.
    ///
    /// Errors: git fails.
    pub fn file_at(&self, commit: &str, path: &str) -> Result<Option<TreeEntry>, String> {
        let out = self.run_in(&self.root, &["ls-tree", "-z", commit, "--", path])?;
        let Some((meta, name)) = out.stdout.trim_end_matches('\0').split_once('\t') else {
            return Ok(None);
        };
        let mut parts = meta.split(' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(mode), Some("blob"), Some(blob)) if name == path => Ok(Some(TreeEntry {
                mode: mode.to_string(),
                blob: blob.to_string(),
            })),
            _ => Ok(None),
        }
    }

    /// The bytes of the file `path` at `commit` (`git cat-file blob`), as
    /// they are: not decoded, so a caller can tell bytes that are not
    /// UTF-8. `None` when the commit has no such file. Git writes them to a
    /// scratch file in the system's temporary directory (removed at once).
    ///
    /// Errors: git fails to run, or the scratch file cannot be used.
    pub fn file_bytes(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, String> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let scratch = std::env::temp_dir().join(format!("loopc-blob-{}-{n}", std::process::id()));
        let file = std::fs::File::create(&scratch)
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
        let spec = format!("{commit}:{path}");
        let out = self.exec(
            &self.root,
            &[self.git_dir_option()],
            &["cat-file", "blob", &spec],
            None,
            Some(file),
        );
        let bytes = std::fs::read(&scratch);
        let _ = std::fs::remove_file(&scratch);
        if out?.code != 0 {
            return Ok(None);
        }
        bytes
            .map(Some)
            .map_err(|e| format!("cannot read {}: {e}", scratch.display()))
    }

    /// The text of blob `blob` (bytes that are not UTF-8 replaced by
    /// U+FFFD).
    ///
    /// Errors: git fails.
    pub fn blob_text(&self, blob: &str) -> Result<String, String> {
        Ok(self.run_in(&self.root, &["cat-file", "blob", blob])?.stdout)
    }

    /// The tree of `commit` with the file at `from` moved to `to` (both
    /// relative to the repository's top), written with the scratch index
    /// file `index` (removed afterwards): neither the user's index nor any
    /// checkout is touched.
    ///
    /// Errors: git fails; `from` is not a file in `commit`.
    pub fn tree_with_move(
        &self,
        commit: &str,
        from: &str,
        to: &str,
        index: &std::path::Path,
    ) -> Result<String, String> {
        let entry = self
            .file_at(commit, from)?
            .ok_or_else(|| format!("{from} is not a file in {commit}"))?;
        let mut git = self.clone();
        git.env
            .push(("GIT_INDEX_FILE".into(), index.display().to_string()));
        let cacheinfo = format!("{},{},{to}", entry.mode, entry.blob);
        let written = git
            .run_in(&self.root, &["read-tree", commit])
            .and_then(|_| git.run_in(&self.root, &["update-index", "--force-remove", "--", from]))
            .and_then(|_| {
                git.run_in(
                    &self.root,
                    &["update-index", "--add", "--cacheinfo", &cacheinfo],
                )
            })
            .and_then(|_| git.read(&["write-tree"]));
        let _ = std::fs::remove_file(index);
        written
    }
}

impl Git {
    /// The tree of `commit` with each of `paths` as it is in `from` (a
    /// path `from` does not have is left out), written with the scratch
    /// index file `index` (removed afterwards): neither the user's index
    /// nor any checkout is touched.
    ///
    /// Errors: git fails.
    pub fn tree_with_files_of(
        &self,
        commit: &str,
        from: &str,
        paths: &[String],
        index: &std::path::Path,
    ) -> Result<String, String> {
        let mut git = self.clone();
        git.env
            .push(("GIT_INDEX_FILE".into(), index.display().to_string()));
        // One `ls-tree` a path: the paths of one task's work, a few.
        let mut info = Vec::new();
        for p in paths {
            if let Some(e) = self.file_at(from, p)? {
                info.extend_from_slice(format!("{} {}\t{p}\0", e.mode, e.blob).as_bytes());
            }
        }
        let written = git
            .run_in(&self.root, &["read-tree", commit])
            .and_then(|_| {
                // Removed first, then added as `from` has them.
                git.read_fed(
                    &["update-index", "--force-remove", "-z", "--stdin"],
                    &super::git::nul_list(paths.iter()),
                )
            })
            .and_then(|_| git.read_fed(&["update-index", "-z", "--index-info"], &info))
            .and_then(|_| git.read(&["write-tree"]));
        let _ = std::fs::remove_file(index);
        written
    }
}

/// A commit's tree and the files that differ from another commit's
/// ([`Git::commit_changes`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitChanges {
    /// The commit's tree.
    pub tree: String,
    /// Whether the commit's only parent is known to be the commit the
    /// files are compared with: loopc made it of an attempt's changes on
    /// the attempt's base ([`Git::commit_all`]). `false` when not known.
    pub child_of_from: bool,
    /// Each file that differs, with `<mode> <object id>` in the commit
    /// (as [`Git::changed_files`] gives them).
    pub files: Vec<(String, String)>,
}

impl CommitChanges {
    /// Every path that differs, in git's order.
    pub fn paths(&self) -> Vec<String> {
        self.files.iter().map(|(path, _)| path.clone()).collect()
    }

    /// The gitlinks (submodules, nested repositories) the commit adds or
    /// changes: `(path, commit)`.
    pub fn gitlinks(&self) -> Vec<(String, String)> {
        self.files
            .iter()
            .filter_map(|(path, entry)| {
                let (mode, id) = entry.split_once(' ')?;
                (mode == "160000").then(|| (path.clone(), id.to_string()))
            })
            .collect()
    }
}

impl Git {
    /// For each `(commit, from)` of `pairs`, `commit`'s tree and the files
    /// that differ between `from` and `commit` ([`Git::changed_files`]),
    /// all read by one `git diff-tree --stdin` (the pairs on its standard
    /// input): a merge's cache entry needs both, and a batch of merges asks
    /// once.
    ///
    /// Errors: git fails, or its output does not answer every pair.
    pub fn commit_changes(&self, pairs: &[(&str, &str)]) -> Result<Vec<CommitChanges>, String> {
        let mut input = String::new();
        for (commit, from) in pairs {
            input.push_str(&format!("{commit} {from}\n"));
        }
        let args = [
            "diff-tree",
            "--stdin",
            "-r",
            "-z",
            "--no-renames",
            "--always",
            "--format=%H %T",
        ];
        let out = self.try_run_fed(&args, input.as_bytes())?;
        if out.code != 0 {
            return Err(format!("`git diff-tree --stdin` failed: {}", why(&out)));
        }
        let answers = parse_commit_changes(&out.stdout)?;
        let answered = answers.len() == pairs.len()
            && answers.iter().zip(pairs).all(|((c, _), (p, _))| c == p);
        if !answered {
            return Err(format!(
                "`git diff-tree --stdin` answered {} of {} commits",
                answers.len(),
                pairs.len()
            ));
        }
        Ok(answers.into_iter().map(|(_, c)| c).collect())
    }
}

/// Reads `git diff-tree --stdin -r -z --format='%H %T'`: per commit a
/// header `<commit> <tree>`, then `:<meta>` and path fields (NUL-ended;
/// a line break before each record after a header).
fn parse_commit_changes(text: &str) -> Result<Vec<(String, CommitChanges)>, String> {
    let mut answers: Vec<(String, CommitChanges)> = Vec::new();
    let mut fields = text.split('\0').map(|f| f.trim_start_matches('\n'));
    while let Some(field) = fields.next() {
        if field.is_empty() {
            continue;
        }
        if let Some(meta) = field.strip_prefix(':') {
            // `<old mode> <new mode> <old id> <new id> <status>`, then the path.
            let parts: Vec<&str> = meta.split(' ').collect();
            let (Some(mode), Some(oid), Some(path), Some((_, last))) = (
                parts.get(1),
                parts.get(3),
                fields.next(),
                answers.last_mut(),
            ) else {
                return Err(format!("unexpected `git diff-tree` output: {field}"));
            };
            last.files.push((path.to_string(), format!("{mode} {oid}")));
            continue;
        }
        let Some((commit, tree)) = field.split_once(' ') else {
            return Err(format!("unexpected `git diff-tree` output: {field}"));
        };
        answers.push((
            commit.to_string(),
            CommitChanges {
                tree: tree.trim().to_string(),
                ..CommitChanges::default()
            },
        ));
    }
    Ok(answers)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One `git diff-tree --stdin` answers every pair, an empty diff too,
    /// as `git diff-tree` and `git rev-parse` answer each alone.
    #[test]
    fn commit_changes_answer_every_pair() {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        let git = |args: &[&str]| crate::run::sys::testing::git(d, args).trim().to_string();
        git(&["init", "-q", "-b", "main"]);
        git(&["commit", "-q", "--allow-empty", "-m", "one"]);
        let one = git(&["rev-parse", "HEAD"]);
        std::fs::write(d.join("a b.txt"), "a").expect("write");
        std::fs::write(d.join("c"), "c").expect("write");
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "two"]);
        let two = git(&["rev-parse", "HEAD"]);
        let g = Git::discover(d).expect("a repository");
        let got = g
            .commit_changes(&[(&two, &one), (&one, &one), (&two, &two)])
            .expect("diff-tree");
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].tree, g.tree_of(&two).expect("tree"));
        assert_eq!(got[0].files, g.changed_files(&one, &two).expect("diff"));
        assert_eq!(got[0].files.len(), 2);
        assert_eq!(got[1].tree, g.tree_of(&one).expect("tree"));
        assert!(got[1].files.is_empty() && got[2].files.is_empty());
    }
}
