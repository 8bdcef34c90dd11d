//! Refs read from git's files without starting git: a loose ref is the file
//! `<common dir>/<refname>` holding an object id, the others are lines
//! `<id> <refname>` of `<common dir>/packed-refs`, and a loose ref hides a
//! packed one of the same name. A run reads its task branches, the
//! integration branch and the user's refs (the guard) around every attempt,
//! so reading them costs no process here.
//!
//! Where the files do not say it plainly (the reftable ref store, a
//! symbolic ref, a file that is not a ref) the answer is `None` and the
//! caller asks git instead.

use super::git::Git;
use super::oid::is_oid;
use std::collections::BTreeMap;
use std::path::Path;

/// What a loose ref file says.
enum Loose {
    /// No such file (or a directory of that name: refs below it).
    Absent,
    /// An object id.
    Oid(String),
    /// A symbolic ref (`ref: <target>`) or anything else: ask git.
    Unclear,
}

/// Reads the loose ref file at `path`.
fn loose(path: &Path) -> Loose {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let text = text.trim_end();
            if is_oid(text) {
                Loose::Oid(text.to_string())
            } else {
                Loose::Unclear
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Loose::Absent,
        Err(_) if path.is_dir() => Loose::Absent,
        Err(_) => Loose::Unclear,
    }
}

/// The `(refname, id)` lines of a `packed-refs` text whose name starts
/// with `prefix` (peeled `^` lines and the header left out); `None` when a
/// line is not one git writes. The ids of the lines returned are checked
/// digit by digit, the others' only for their length (a cache of 100,000
/// entries is one such file, read a few times a run).
fn packed_lines<'t>(text: &'t str, prefix: &str) -> Option<Vec<(&'t str, &'t str)>> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.starts_with('^') || line.is_empty() {
            continue;
        }
        let (oid, name) = line.split_once(' ')?;
        if !matches!(oid.len(), 40 | 64) || !name.starts_with("refs/") {
            return None;
        }
        if name.starts_with(prefix) {
            if !is_oid(oid) {
                return None;
            }
            out.push((name, oid));
        }
    }
    Some(out)
}

impl Git {
    /// Whether refs are plain files here (not the reftable store).
    fn files_backend(&self) -> bool {
        !self.common_dir.join("reftable").exists()
    }

    /// The `packed-refs` file's text ("" when there is none); `None` when
    /// it cannot be read.
    fn packed_refs_text(&self) -> Option<String> {
        match std::fs::read_to_string(self.common_dir.join("packed-refs")) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(String::new()),
            Err(_) => None,
        }
    }

    /// The object id the ref `refname` (`refs/…`, a name loopc made or
    /// checked) holds, read from git's files: `Some(Some(id))`, or
    /// `Some(None)` when there is no such ref; `None` when the files do not
    /// say it plainly (ask git).
    pub fn ref_from_files(&self, refname: &str) -> Option<Option<String>> {
        if !refname.starts_with("refs/") || refname.contains("..") || !self.files_backend() {
            return None;
        }
        match loose(&self.common_dir.join(refname)) {
            Loose::Oid(id) => Some(Some(id)),
            Loose::Unclear => None,
            Loose::Absent => {
                let text = self.packed_refs_text()?;
                let lines = packed_lines(&text, refname)?;
                Some(
                    lines
                        .into_iter()
                        .find(|(name, _)| *name == refname)
                        .map(|(_, id)| id.to_string()),
                )
            }
        }
    }

    /// Every ref under `refs/` with the object id it holds, as `git
    /// for-each-ref --format='%(refname) %(objectname)'` lists them, read
    /// from git's files, leaving out the refs below each of `skip`
    /// (`refs/remotes/` …: directories not walked at all). Symbolic refs
    /// are resolved; a broken one is left out, as `for-each-ref` does.
    /// `None` when the files do not say it plainly (ask git).
    pub fn refs_from_files(&self, skip: &[&str]) -> Option<BTreeMap<String, String>> {
        self.refs_under_from_files("refs/", skip)
    }

    /// Like [`Git::refs_from_files`], only the refs under `prefix` (`refs/…/`,
    /// ending in `/`): `git for-each-ref PREFIX`; only that directory is walked.
    pub fn refs_under_from_files(
        &self,
        prefix: &str,
        skip: &[&str],
    ) -> Option<BTreeMap<String, String>> {
        if !self.files_backend()
            || !prefix.starts_with("refs/")
            || !prefix.ends_with('/')
            || prefix.contains("..")
        {
            return None;
        }
        let skipped = |name: &str| skip.iter().any(|s| name.starts_with(s));
        let packed_text = self.packed_refs_text()?;
        let mut refs: BTreeMap<String, String> = packed_lines(&packed_text, prefix)?
            .into_iter()
            .filter(|(name, _)| !skipped(name))
            .map(|(n, id)| (n.to_string(), id.to_string()))
            .collect();
        let mut symbolic: Vec<(String, String)> = Vec::new();
        // Loose refs hide packed ones; walked with a stack, not recursion.
        let root = prefix.trim_end_matches('/');
        let mut dirs = vec![(root.to_string(), self.common_dir.join(root))];
        while let Some((prefix, dir)) = dirs.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return None,
            };
            for entry in entries {
                let entry = entry.ok()?;
                let name = format!("{prefix}/{}", entry.file_name().to_str()?);
                let kind = entry.file_type().ok()?;
                if kind.is_dir() {
                    if !skipped(&format!("{name}/")) {
                        dirs.push((name, entry.path()));
                    }
                    continue;
                }
                if skipped(&name) || name.ends_with(".lock") {
                    continue;
                }
                let text = match std::fs::read_to_string(entry.path()) {
                    Ok(t) => t,
                    // Deleted meanwhile: gone, as git would see it a moment later.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(_) => return None,
                };
                let text = text.trim_end();
                if is_oid(text) {
                    refs.insert(name, text.to_string());
                } else if let Some(target) = text.strip_prefix("ref: ") {
                    symbolic.push((name, target.to_string()));
                } else {
                    // Not a ref (a broken file): for-each-ref leaves it out.
                    refs.remove(&name);
                }
            }
        }
        for (name, target) in symbolic {
            // A chain of symbolic refs is git's to follow.
            let id = match refs.get(&target) {
                Some(id) => Some(id.clone()),
                None => self.ref_from_files(&target)?,
            };
            match id {
                Some(id) => {
                    refs.insert(name, id);
                }
                None => {
                    refs.remove(&name);
                }
            }
        }
        Some(refs)
    }
}

#[cfg(test)]
mod tests {
    use super::packed_lines;
    use crate::run::sys::git::Git;
    use crate::run::sys::oid::{is_oid, zero_oid};
    use crate::run::sys::testing::git;

    /// The files say what `git for-each-ref` says: packed and loose refs, a
    /// loose ref hiding a packed one, annotated tags, a symbolic ref, a
    /// deleted packed ref; skipped prefixes are left out.
    #[test]
    fn files_agree_with_for_each_ref() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        git(d, &["commit", "-q", "--allow-empty", "-m", "one"]);
        git(d, &["branch", "packed-then-moved"]);
        git(d, &["branch", "gone"]);
        git(d, &["tag", "-a", "-m", "t", "v1"]);
        git(d, &["branch", "loopc/p/t/r1-a1"]);
        git(d, &["pack-refs", "--all"]);
        git(d, &["commit", "-q", "--allow-empty", "-m", "two"]);
        git(d, &["branch", "-f", "packed-then-moved", "HEAD"]);
        git(d, &["branch", "-D", "gone"]);
        git(d, &["branch", "loose"]);
        git(d, &["symbolic-ref", "refs/heads/alias", "refs/heads/loose"]);
        let g = Git::discover(d).unwrap();
        let listed = git(d, &["for-each-ref", "--format=%(refname) %(objectname)"]);
        let from_git: Vec<String> = listed
            .lines()
            .filter(|l| !l.starts_with("refs/heads/loopc/"))
            .map(str::to_string)
            .collect();
        let from_files: Vec<String> = g
            .refs_from_files(&["refs/heads/loopc/"])
            .unwrap()
            .into_iter()
            .map(|(n, id)| format!("{n} {id}"))
            .collect();
        assert_eq!(from_files, from_git);
        let head = git(d, &["rev-parse", "HEAD"]).trim().to_string();
        assert_eq!(
            g.ref_from_files("refs/heads/packed-then-moved"),
            Some(Some(head))
        );
        assert_eq!(g.ref_from_files("refs/heads/gone"), Some(None));
        assert!(
            g.ref_from_files("refs/heads/loopc/p/t/r1-a1")
                .is_some_and(|r| r.is_some())
        );
        // A symbolic ref is git's to resolve.
        assert_eq!(g.ref_from_files("refs/heads/alias"), None);
    }

    #[test]
    fn packed_refs_lines() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let text = format!(
            "# pack-refs with: peeled fully-peeled sorted \n{a} refs/heads/main\n{b} refs/tags/v1\n^{a}\n"
        );
        assert_eq!(
            packed_lines(&text, "refs/"),
            Some(vec![
                ("refs/heads/main", a.as_str()),
                ("refs/tags/v1", b.as_str())
            ])
        );
        assert_eq!(
            packed_lines(&text, "refs/tags/"),
            Some(vec![("refs/tags/v1", b.as_str())])
        );
        assert_eq!(packed_lines("garbage\n", "refs/"), None);
        // A line not one git writes, whatever the prefix.
        let odd = format!("{} refs/heads/x\n{b} refs/tags/v1\n", "g".repeat(40));
        assert_eq!(packed_lines(&odd, "refs/heads/"), None);
        assert_eq!(packed_lines(&format!("{a} HEAD\n"), "refs/tags/"), None);
        assert!(is_oid(&"0".repeat(64)));
        assert!(!is_oid("ref: refs/heads/main"));
    }

    #[test]
    fn zero_ids_follow_the_object_format() {
        assert_eq!(zero_oid(&"a".repeat(40)), "0".repeat(40));
        assert_eq!(zero_oid(&"b".repeat(64)), "0".repeat(64));
        assert_eq!(zero_oid("HEAD"), "");
    }
}
