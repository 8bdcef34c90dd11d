//! Object ids as git writes them, in either object format (SHA-1: 40 hex
//! digits; SHA-256: 64).

/// Whether `text` is an object id as git writes them (SHA-1 or SHA-256 hex).
pub fn is_oid(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The all-zero object id of the object format `like` is written in: 40
/// zeros for SHA-1, 64 for SHA-256 (`git init --object-format=sha256`).
/// What git means by "no object" (`git update-ref REF NEW ZERO`: the ref
/// must not exist yet). `like` that is no object id gives the empty
/// string, which `git update-ref` reads the same way in either format.
pub fn zero_oid(like: &str) -> String {
    if is_oid(like) {
        "0".repeat(like.len())
    } else {
        String::new()
    }
}

/// The object id git gives an object of `kind` (`commit`, `tree`, `blob`)
/// whose content is `raw`: the SHA-1 (an id of `id_len` 40 hex digits) or
/// SHA-256 (64) of `<kind> <length>\0` and the content, in hex; `None` for
/// another id length.
pub fn object_id(kind: &str, raw: &[u8], id_len: usize) -> Option<String> {
    use sha2::Digest as _;
    let header = format!("{kind} {}\0", raw.len());
    let hex = |bytes: &[u8]| {
        bytes
            .iter()
            .fold(String::with_capacity(id_len), |mut s, b| {
                use std::fmt::Write as _;
                let _ = write!(s, "{b:02x}");
                s
            })
    };
    match id_len {
        40 => Some(hex(&sha1::Sha1::new()
            .chain_update(header.as_bytes())
            .chain_update(raw)
            .finalize())),
        64 => Some(hex(&sha2::Sha256::new()
            .chain_update(header.as_bytes())
            .chain_update(raw)
            .finalize())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::object_id;

    /// Runs git in `dir`; its standard output, untrimmed.
    fn git(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=n", "-c", "user.email=n@e"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        out.stdout
    }

    /// The id computed from `git cat-file commit`'s text is the id git
    /// gave the commit, in both object formats; any other text has another.
    #[test]
    fn object_ids_are_gits() {
        for format in ["sha1", "sha256"] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            git(root, &["init", "-q", &format!("--object-format={format}")]);
            git(
                root,
                &[
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    "loopc run entry x\n\n{}",
                ],
            );
            let id = String::from_utf8(git(root, &["rev-parse", "HEAD"])).unwrap();
            let id = id.trim();
            let raw = git(root, &["cat-file", "commit", id]);
            assert_eq!(
                object_id("commit", &raw, id.len()).as_deref(),
                Some(id),
                "{format}"
            );
            let mut changed = raw.clone();
            changed.push(b' ');
            assert_ne!(
                object_id("commit", &changed, id.len()).as_deref(),
                Some(id),
                "{format}"
            );
            assert_ne!(
                object_id("blob", &raw, id.len()).as_deref(),
                Some(id),
                "{format}"
            );
        }
        assert_eq!(object_id("commit", b"x", 12), None);
    }
}
