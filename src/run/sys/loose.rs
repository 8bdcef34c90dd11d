//! Commits written in process, as `git commit-tree` writes them: the
//! commit's text, its object id and its loose object file, with no git
//! process. A run writes two commits for every task it merges (the merge
//! and the cache entry) on the coordinating thread; a process each was a
//! tenth of an attempt's cost.
//!
//! Git stays the reference: the commit's identity lines are git's own
//! (`git var -l`, asked once per handle), and whatever this module does
//! not write exactly as git would (a configured commit encoding, a shared
//! repository's file modes, an identity changed after it was asked) goes
//! to `git commit-tree` instead. The unit tests hold every id to the one
//! `git commit-tree` gives.

use super::git::Git;
use super::oid::object_id;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// The commit identities of a handle, as `git var -l` gave them.
#[derive(Debug)]
pub struct Stamp {
    author: Ident,
    committer: Ident,
    /// The handle's extra environment when git was asked: a handle with
    /// another (a clone with its own identity or dates) asks git.
    env: Vec<(String, String)>,
}

/// One identity line's parts: `Name <email>`, and the date.
#[derive(Debug)]
struct Ident {
    who: String,
    /// The time zone git wrote (`+0100`), used with the current time.
    zone: String,
    /// The date as git wrote it (`<seconds> <zone>`), kept when the date
    /// was given (`GIT_AUTHOR_DATE`, `GIT_COMMITTER_DATE`).
    fixed: Option<String>,
}

impl Ident {
    /// Parses `Name <email> <seconds> <zone>`; `fixed` keeps the date.
    fn parse(line: &str, fixed: bool) -> Option<Ident> {
        let (rest, zone) = line.rsplit_once(' ')?;
        let (who, seconds) = rest.rsplit_once(' ')?;
        let zone_ok = zone.len() == 5
            && matches!(zone.as_bytes()[0], b'+' | b'-')
            && zone[1..].bytes().all(|b| b.is_ascii_digit());
        if !zone_ok || seconds.is_empty() || !seconds.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if !who.ends_with('>') || !who.contains(" <") {
            return None;
        }
        Some(Ident {
            who: who.to_string(),
            zone: zone.to_string(),
            fixed: fixed.then(|| format!("{seconds} {zone}")),
        })
    }

    /// The identity line's value for a commit made at `now` (seconds since
    /// the epoch).
    fn line(&self, now: u64) -> String {
        match &self.fixed {
            Some(date) => format!("{} {date}", self.who),
            None => format!("{} {now} {}", self.who, self.zone),
        }
    }
}

/// The `<name> <value>` of `git var -l`'s line `name=value`, when `line`
/// sets `name`.
fn value<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.strip_prefix(name)?.strip_prefix('=')
}

impl Stamp {
    /// The stamp `git var -l`'s output `listing` gives, for a handle with
    /// extra environment `env`: `None` when loopc would not write a commit
    /// as git would (a commit encoding other than UTF-8, a shared
    /// repository, an identity git did not give).
    fn from_listing(listing: &str, env: &[(String, String)]) -> Option<Stamp> {
        let given = |var: &str| {
            env.iter().any(|(k, v)| k == var && !v.is_empty())
                || std::env::var_os(var).is_some_and(|v| !v.is_empty())
        };
        let mut author = None;
        let mut committer = None;
        for line in listing.lines() {
            if let Some(v) = value(line, "GIT_AUTHOR_IDENT") {
                author = Ident::parse(v, given("GIT_AUTHOR_DATE"));
            } else if let Some(v) = value(line, "GIT_COMMITTER_IDENT") {
                committer = Ident::parse(v, given("GIT_COMMITTER_DATE"));
            } else if let Some(v) = value(line, "i18n.commitencoding") {
                if !v.eq_ignore_ascii_case("utf-8") && !v.eq_ignore_ascii_case("utf8") {
                    return None;
                }
            } else if let Some(v) = value(line, "core.sharedrepository")
                && !matches!(
                    v.to_ascii_lowercase().as_str(),
                    "false" | "umask" | "0" | "no" | "off"
                )
            {
                return None;
            }
        }
        Some(Stamp {
            author: author?,
            committer: committer?,
            env: env.to_vec(),
        })
    }
}

/// The text of a commit of `tree` with `parents`, `author` and `committer`
/// lines and `message`, as `git commit-tree` writes it.
fn commit_text(
    tree: &str,
    parents: &[&str],
    (author, committer): (&str, &str),
    message: &str,
) -> String {
    let mut text = format!("tree {tree}\n");
    for p in parents {
        text.push_str("parent ");
        text.push_str(p);
        text.push('\n');
    }
    text.push_str(&format!(
        "author {author}\ncommitter {committer}\n\n{message}"
    ));
    text
}

/// Writes the object of `kind` with content `raw` and id `id` as a loose
/// object under `objects` (`objects/<2 digits>/<rest>`), as git does: a
/// read-only zlib stream written to a `tmp_obj_` file beside it (which
/// `git gc` removes if a crash leaves it), then linked (or renamed) into
/// place. An object already there is left as it is.
///
/// Errors: the directory or file cannot be written.
fn write_loose(objects: &Path, kind: &str, raw: &[u8], id: &str) -> std::io::Result<()> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = objects.join(&id[..2]);
    let path = dir.join(&id[2..]);
    if path.exists() {
        return Ok(());
    }
    match std::fs::create_dir(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!("tmp_obj_loopc{}_{n}", std::process::id()));
    let written = (|| {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&tmp)?;
        // Git's default for loose objects (`core.looseCompression`).
        let mut z = flate2::write::ZlibEncoder::new(file, flate2::Compression::fast());
        z.write_all(format!("{kind} {}\0", raw.len()).as_bytes())?;
        z.write_all(raw)?;
        z.finish()?;
        match std::fs::hard_link(&tmp, &path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            // A file system without hard links.
            Err(_) => std::fs::rename(&tmp, &path),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    written
}

impl Git {
    /// This handle's commit identities, asked of git (`git var -l`) on the
    /// first call; `None` when commits must go through git (see
    /// [`Stamp::from_listing`]) or git could not be asked.
    fn stamp(&self) -> Option<&Stamp> {
        self.stamp
            .get_or_init(|| {
                let out = self.try_run_in(&self.root, &["var", "-l"]).ok()?;
                if out.code != 0 {
                    return None;
                }
                Stamp::from_listing(&out.stdout, &self.env)
            })
            .as_ref()
            .filter(|s| s.env == self.env)
    }

    /// Creates a commit of `tree` with `parents` and `message`, as
    /// [`Git::commit_tree`] does and with the id it would give, in process:
    /// the loose object is written here. Unlike `git commit-tree` it does
    /// not check that `tree` and `parents` exist: it is for objects git has
    /// just made or read in this run (a merge's tree, a task's commit).
    /// Falls back to `git commit-tree` when git would write the commit
    /// otherwise (see [`Stamp::from_listing`]).
    ///
    /// Errors: the object cannot be written, or git fails.
    pub fn write_commit(
        &self,
        tree: &str,
        parents: &[&str],
        message: &str,
    ) -> Result<String, String> {
        let Some(stamp) = self.stamp() else {
            return self.commit_tree(tree, parents, message);
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut message = message.to_string();
        if !message.ends_with('\n') {
            message.push('\n');
        }
        let text = commit_text(
            tree,
            parents,
            (&stamp.author.line(now), &stamp.committer.line(now)),
            &message,
        );
        let Some(id) = object_id("commit", text.as_bytes(), tree.len()) else {
            return self.commit_tree(tree, parents, &message);
        };
        let objects = self.common_dir.join("objects");
        write_loose(&objects, "commit", text.as_bytes(), &id)
            .map_err(|e| format!("cannot write commit {id} under {}: {e}", objects.display()))?;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::git;
    use super::*;

    /// A repository in `format` with one commit, its handle (dates fixed
    /// through the handle's environment) and its commit's tree and id.
    fn repo(format: &str, dir: &Path, fixed: bool) -> (Git, String, String) {
        git(dir, &["init", "-q", &format!("--object-format={format}")]);
        std::fs::write(dir.join("a"), "a\n").unwrap();
        git(dir, &["add", "a"]);
        git(dir, &["commit", "-q", "-m", "one"]);
        let mut g = Git::discover(dir).unwrap();
        if fixed {
            g.env
                .push(("GIT_AUTHOR_DATE".into(), "1700000000 +0130".into()));
            g.env
                .push(("GIT_COMMITTER_DATE".into(), "1700000100 -0700".into()));
        }
        let tree = git(dir, &["rev-parse", "HEAD^{tree}"]).trim().to_string();
        let head = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
        (g, tree, head)
    }

    /// With the dates fixed, the commit written here is the one `git
    /// commit-tree` writes (the same id), for no, one and two parents and
    /// messages with and without a closing line break, in both object
    /// formats; git reads it back and `git fsck` finds nothing wrong.
    #[test]
    fn commits_are_gits() {
        for format in ["sha1", "sha256"] {
            let dir = tempfile::tempdir().unwrap();
            let (g, tree, head) = repo(format, dir.path(), true);
            let other = g.commit_tree(&tree, &[], "other").unwrap();
            for parents in [
                vec![],
                vec![head.as_str()],
                vec![head.as_str(), other.as_str()],
            ] {
                for message in [
                    "loop: merge t (T)",
                    "subject\n\nbody {\"a\": 1}\n",
                    "ü\n\n\n",
                ] {
                    let ours = g.write_commit(&tree, &parents, message).unwrap();
                    let gits = g.commit_tree(&tree, &parents, message).unwrap();
                    assert_eq!(ours, gits, "{format} {parents:?} {message:?}");
                }
            }
            let written = g.write_commit(&tree, &[&head], "fresh one").unwrap();
            let path = dir
                .path()
                .join(".git/objects")
                .join(&written[..2])
                .join(&written[2..]);
            assert!(path.is_file(), "{format}: written as a loose object");
            assert_eq!(
                git(dir.path(), &["cat-file", "-t", &written]).trim(),
                "commit"
            );
            git(dir.path(), &["fsck", "--strict", "--no-dangling"]);
            let leftovers = std::fs::read_dir(path.parent().unwrap())
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .starts_with("tmp_obj_")
                })
                .count();
            assert_eq!(leftovers, 0, "{format}");
        }
    }

    /// Without fixed dates the commit has git's identity (`git var`) and
    /// a date of now, in git's time zone.
    #[test]
    fn identity_is_gits() {
        let dir = tempfile::tempdir().unwrap();
        let (g, tree, head) = repo("sha1", dir.path(), false);
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let id = g.write_commit(&tree, &[&head], "m").unwrap();
        let text = git(dir.path(), &["cat-file", "commit", &id]);
        let ident = g.read(&["var", "GIT_AUTHOR_IDENT"]).unwrap();
        let (who, date) = ident.rsplit_once(' ').unwrap().0.rsplit_once(' ').unwrap();
        let zone = ident.rsplit_once(' ').unwrap().1;
        let author = text
            .lines()
            .find_map(|l| l.strip_prefix("author "))
            .unwrap();
        assert!(author.starts_with(&format!("{who} ")), "{author} / {ident}");
        assert!(author.ends_with(&format!(" {zone}")), "{author} / {ident}");
        let seconds: u64 = author.rsplit(' ').nth(1).unwrap().parse().unwrap();
        assert!(
            seconds >= before && seconds >= date.parse::<u64>().unwrap(),
            "{author}"
        );
        assert!(text.ends_with("\n\nm\n"), "{text}");
    }

    /// A commit encoding other than UTF-8 (git writes an `encoding` line)
    /// and a handle whose identity changed after git was asked go
    /// through `git commit-tree`: still git's id.
    #[test]
    fn git_writes_what_loopc_would_not() {
        let dir = tempfile::tempdir().unwrap();
        let (mut g, tree, head) = repo("sha1", dir.path(), true);
        git(dir.path(), &["config", "i18n.commitEncoding", "ISO-8859-1"]);
        let id = g.write_commit(&tree, &[&head], "m").unwrap();
        assert_eq!(id, g.commit_tree(&tree, &[&head], "m").unwrap());
        assert!(git(dir.path(), &["cat-file", "commit", &id]).contains("\nencoding ISO-8859-1\n"));

        let dir = tempfile::tempdir().unwrap();
        let (g2, tree, head) = repo("sha1", dir.path(), true);
        g2.write_commit(&tree, &[&head], "asked").unwrap();
        g = g2.clone();
        g.env
            .push(("GIT_AUTHOR_NAME".into(), "someone else".into()));
        let id = g.write_commit(&tree, &[&head], "m").unwrap();
        assert_eq!(id, g.commit_tree(&tree, &[&head], "m").unwrap());
        assert!(git(dir.path(), &["cat-file", "commit", &id]).contains("author someone else <"));
    }

    /// `git var`'s identity lines are read whole; anything else is no
    /// identity.
    #[test]
    fn idents_parse() {
        let i = Ident::parse("A B <a@b> 1700000000 +0100", false).unwrap();
        assert_eq!(i.line(5), "A B <a@b> 5 +0100");
        let i = Ident::parse("A B <a@b> 1700000000 -0030", true).unwrap();
        assert_eq!(i.line(5), "A B <a@b> 1700000000 -0030");
        for bad in [
            "A <a@b> 17 0100",
            "A <a@b> x +0100",
            "A 17 +0100",
            "",
            "<a@b>",
        ] {
            assert!(Ident::parse(bad, false).is_none(), "{bad}");
        }
    }
}
