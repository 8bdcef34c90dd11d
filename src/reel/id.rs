//! New REEL ids (8 lowercase hex characters) that no spec in a directory
//! uses yet, for `loopc id` (`docs/reel.md`).

use super::{Format, spec_files};
use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;

/// Every id the specs directly inside `dir` (a spec tree: inside its stage
/// directories) use: task ids (including the made-up ids of Gherkin
/// scenarios without `@id:`) and the ids named as dependencies (the part
/// after the last `.` or `:` of a qualified one). Specs with errors still
/// give the ids that could be read.
///
/// Errors: `dir` or a spec in it cannot be read.
pub fn used_ids(dir: &Path) -> std::io::Result<BTreeSet<String>> {
    let mut used = BTreeSet::new();
    let files = if super::is_spec_tree(dir) {
        super::tree_files(dir)?
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    } else {
        spec_files(dir)?
    };
    for path in files {
        let Some(format) = Format::of(&path) else {
            continue;
        };
        let bytes = std::fs::read(&path)?;
        let text = String::from_utf8_lossy(&bytes);
        let (spec, _) = format.parse(&text);
        for t in &spec.tasks {
            used.insert(t.id.text.clone());
            for d in &t.depends_on {
                let bare = d.text.rsplit(['.', ':']).next().unwrap_or(&d.text);
                used.insert(bare.to_string());
            }
        }
    }
    Ok(used)
}

/// A random REEL id not in `used`. Randomness comes from the standard
/// library's per-process random hasher keys, mixed with the clock and a
/// counter; ids are not secrets, only unlikely to collide.
pub fn new_id(used: &BTreeSet<String>) -> String {
    let state = std::collections::hash_map::RandomState::new();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut counter = 0u64;
    loop {
        let mut h = state.build_hasher();
        h.write_u128(nanos);
        h.write_u32(std::process::id());
        h.write_u64(counter);
        let id = format!("{:08x}", h.finish() as u32);
        if !used.contains(&id) {
            return id;
        }
        counter = counter.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_are_reel_ids_and_avoid_used_ones() {
        let mut used = BTreeSet::new();
        for _ in 0..2000 {
            let id = new_id(&used);
            assert!(super::super::is_reel_id(&id), "{id}");
            assert!(used.insert(id), "an id was given twice");
        }
    }
}
