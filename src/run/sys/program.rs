//! Where the programs loopc starts (`git`, `sh`) are, looked up on `PATH`
//! once, so that they are started by absolute path.
//!
//! Why it matters: duct hands every child a complete environment, `PATH`
//! included, and the standard library then starts a program given by bare
//! name with `fork` (it must search the child's `PATH` itself), which copies
//! loopc's page tables: slow with dozens of attempt threads, and a run starts
//! about ten processes an attempt. Given a path, it uses `posix_spawn`, which
//! shares the address space until `exec`. The lookup is `execvp`'s (the
//! `which` crate), so the same program runs as before; one that is not
//! found is started by bare name, so the error names it as before.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `name` as found on loopc's own `PATH` (looked up once per name and
/// process), or `name` itself when it is not there.
fn on_own_path(name: &'static str, cell: &'static OnceLock<OsString>) -> &'static OsStr {
    cell.get_or_init(|| {
        which::which(name)
            .map(PathBuf::into_os_string)
            .unwrap_or_else(|_| OsString::from(name))
    })
}

/// The `git` loopc runs: an absolute path, or `git` when it is not on `PATH`.
pub fn git() -> &'static OsStr {
    static GIT: OnceLock<OsString> = OnceLock::new();
    on_own_path("git", &GIT)
}

/// The `sh` that runs every `run` string. `path` is the `PATH` the command
/// gets when the plan's `env` sets one (then `sh` is looked up there, as
/// `execvp` in the child would, relative entries from `dir`); `None`:
/// loopc's own `PATH`, looked up once.
pub fn sh(path: Option<&OsStr>, dir: &Path) -> OsString {
    static SH: OnceLock<OsString> = OnceLock::new();
    match path {
        None => on_own_path("sh", &SH).to_os_string(),
        Some(p) => which::which_in("sh", Some(p), dir)
            .map(PathBuf::into_os_string)
            .unwrap_or_else(|_| OsString::from("sh")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_by_absolute_path() {
        assert!(Path::new(git()).is_absolute());
        assert!(Path::new(&sh(None, Path::new("/"))).is_absolute());
    }

    #[test]
    fn a_path_from_the_plan_is_searched_and_a_missing_sh_keeps_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let fake = bin.join("sh");
        std::fs::write(&fake, "#!/bin/true\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A relative entry counts from the command's directory.
        assert_eq!(
            sh(Some(OsStr::new("bin")), dir.path()),
            fake.into_os_string()
        );
        assert_eq!(
            sh(Some(OsStr::new("/nonexistent")), dir.path()),
            OsString::from("sh")
        );
    }
}
