//! Reading git's index file without git, for one question: whether any
//! entry carries a flag that changes what git sees in the worktree
//! (`assume-unchanged`, `skip-worktree`, `intent-to-add`). A fresh
//! worktree's index has none; a reused worktree whose index has one would
//! hide changes from the next attempt's commit, so it is not reused
//! ([`super::worktree::reuse_task`]).
//!
//! The index is `DIRC`, a version (2, 3 or 4) and an entry count, then the
//! entries: ten 32-bit stat fields, the object id, 16 bits of flags (bit 15
//! assume-unchanged, bit 14 "extended flags follow", the low 12 bits the
//! name's length), 16 more bits of flags in version 3 and later when bit 14
//! is set, then the name: NUL-padded to a multiple of 8 bytes (versions 2
//! and 3), or prefix-compressed and NUL-terminated (version 4).

/// Bit 15 of an entry's flags: `assume-unchanged`.
const ASSUME_VALID: u16 = 0x8000;
/// Bit 14 of an entry's flags: more flags follow (`skip-worktree`,
/// `intent-to-add`).
const EXTENDED: u16 = 0x4000;

/// Whether the index `bytes`, whose object ids are `hash_len` bytes long
/// (20 for SHA-1, 32 for SHA-256), has no entry with a flag beyond the
/// name's length. `None` when it is not an index this reads (damaged, an
/// unknown version).
pub fn is_plain(bytes: &[u8], hash_len: usize) -> Option<bool> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = u32_at(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = u32_at(8)?;
    let mut at = 12;
    for _ in 0..count {
        let start = at;
        let flags_at = at + 40 + hash_len;
        let flags = u16::from_be_bytes(bytes.get(flags_at..flags_at + 2)?.try_into().ok()?);
        if flags & (ASSUME_VALID | EXTENDED) != 0 {
            return Some(false);
        }
        at = flags_at + 2;
        if version == 4 {
            // A varint (the prefix to strip), then a NUL-terminated name.
            while bytes.get(at)? & 0x80 != 0 {
                at += 1;
            }
            at += 1;
            at += bytes.get(at..)?.iter().position(|&b| b == 0)? + 1;
        } else {
            let name_len = usize::from(flags & 0x0fff);
            // A name of 0xfff bytes or more: its length is where its NUL is.
            let name_len = if name_len == 0x0fff {
                bytes.get(at..)?.iter().position(|&b| b == 0)?
            } else {
                name_len
            };
            let len = at + name_len - start;
            // 1 to 8 NULs, to a multiple of 8 bytes.
            at = start + (len + 8) / 8 * 8;
        }
        if at > bytes.len() {
            return None;
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::is_plain;

    fn git(dir: &std::path::Path, args: &[&str]) {
        crate::run::sys::testing::git(dir, args);
    }

    /// An index git wrote, in `version`, after `extra` ran on it.
    fn index(version: &str, extra: &[&str]) -> Vec<u8> {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        git(d, &["init", "-q"]);
        git(d, &["config", "index.version", version]);
        let long = format!("{}/{}", "x".repeat(150), "y".repeat(150));
        for (name, text) in [("a.txt", "a"), ("dir/b.txt", "b"), (&long, "c")] {
            let p = d.join(name);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        git(d, &["add", "-A"]);
        git(d, &["update-index", "--index-version", version]);
        if !extra.is_empty() {
            git(d, extra);
        }
        std::fs::read(d.join(".git/index")).expect("index")
    }

    #[test]
    fn plain_indexes_of_every_version() {
        for v in ["2", "3", "4"] {
            assert_eq!(is_plain(&index(v, &[]), 20), Some(true), "version {v}");
        }
    }

    #[test]
    fn flags_that_hide_changes() {
        for v in ["2", "4"] {
            let assumed = index(v, &["update-index", "--assume-unchanged", "dir/b.txt"]);
            assert_eq!(is_plain(&assumed, 20), Some(false), "version {v}");
            let skipped = index(v, &["update-index", "--skip-worktree", "dir/b.txt"]);
            assert_eq!(is_plain(&skipped, 20), Some(false), "version {v}");
        }
    }

    #[test]
    fn damaged_indexes() {
        assert_eq!(is_plain(b"", 20), None);
        assert_eq!(is_plain(b"DIRC\0\0\0\x09\0\0\0\0", 20), None);
        let good = index("2", &[]);
        assert_eq!(is_plain(&good[..good.len() / 2], 20), None);
    }
}
