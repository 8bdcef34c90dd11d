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
