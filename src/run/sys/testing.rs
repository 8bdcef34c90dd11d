//! What the unit tests of this layer share: git itself, run in a
//! temporary repository with a fixed identity.

use std::path::Path;
use std::process::Command;

/// Runs `git ARGS` in `dir` (as user `t <t@t>`) and returns its standard
/// output; panics when git fails, naming the arguments.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
