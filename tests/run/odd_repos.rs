//! Repositories unlike the usual (issue 29, items 6 and 8): SHA-256 object
//! ids (`git init --object-format=sha256`: the zero id is 64 zeros), a
//! repository whose path holds a line break, one whose path is not UTF-8,
//! and one so deep that git's own paths would pass the system's limit.
//! Each works, or the run names the real cause (exit 2, nothing changed).

use crate::harness::Test;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs git in `dir`; panics on failure; returns trimmed stdout.
fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Makes `dir` a repository on `main` with one commit (`git init ARGS`).
fn init(dir: &Path, args: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut init = vec!["init", "-q", "-b", "main"];
    init.extend_from_slice(args);
    git_in(dir, &init);
    git_in(dir, &["config", "user.email", "test@example.com"]);
    git_in(dir, &["config", "user.name", "Test"]);
    std::fs::write(dir.join("README"), "odd\n").unwrap();
    git_in(dir, &["add", "README"]);
    git_in(dir, &["commit", "-q", "-m", "initial"]);
}

/// A plan of two parallel agent tasks, one after both, and a command task
/// that fails (its worktree is kept): merges, the pool, kept worktrees.
const PLAN: &str = r#"
loop "odd" { parallel = 2 }
budget { iterations = 9 }
agent bot { run = "sh -c 'cat > /dev/null; echo $LOOP_TASK > $LOOP_TASK.txt'" }
gate readme = "test -f README"
defaults { agent = bot  gates = [readme] }
task a { prompt = "a" }
task b { prompt = "b" }
task c: a b { prompt = "c" }
task broken { run = "exit 1"  attempts = 1 }
"#;

/// Runs [`PLAN`] in the repository at `dir`, reruns it on a moved base
/// (replays), and cleans up: every task that can pass passes, each time.
fn runs_replays_and_cleans(test: &Test, dir: &Path) {
    std::fs::write(dir.join("plan.loop"), PLAN).unwrap();
    test.loopc(&["run"]).current_dir(dir).status(1).run();
    for f in ["a.txt", "b.txt", "c.txt", "README"] {
        let spec = format!("loop/odd:{f}");
        git_in(dir, &["cat-file", "-e", &spec]);
    }
    std::fs::write(dir.join("more.txt"), "more\n").unwrap();
    git_in(dir, &["add", "more.txt"]);
    git_in(dir, &["commit", "-q", "-m", "move the base"]);
    let r = test
        .loopc(&["run", "-v", "--retry-failed"])
        .current_dir(dir)
        .status(1)
        .run();
    for t in ["a", "b", "c"] {
        assert!(
            r.stderr
                .contains(&format!("loopc: {t}: replayed from the cache")),
            "{t} was not replayed:\n{}",
            r.stderr
        );
    }
    git_in(dir, &["cat-file", "-e", "loop/odd:more.txt"]);
    let clean = test.loopc(&["clean"]).current_dir(dir).run();
    assert!(
        clean
            .stdout
            .starts_with("removed 2 worktrees, 2 task branches"),
        "{}",
        clean.stdout
    );
    assert_eq!(
        git_in(dir, &["worktree", "list", "--porcelain", "-z"])
            .matches("worktree ")
            .count(),
        1
    );
}

#[test]
fn a_sha256_repository_runs_merges_replays_and_cleans() {
    let test = Test::new();
    let dir = test.root.join("sha256");
    init(&dir, &["--object-format=sha256"]);
    assert_eq!(git_in(&dir, &["rev-parse", "HEAD"]).len(), 64);
    runs_replays_and_cleans(&test, &dir);
}

#[test]
fn a_repository_whose_path_holds_a_line_break_works() {
    let test = Test::new();
    let dir = test.root.join("two\nlines");
    init(&dir, &[]);
    runs_replays_and_cleans(&test, &dir);
}

#[test]
fn a_repository_whose_path_is_not_utf8_is_refused_naming_that() {
    use std::os::unix::ffi::OsStrExt;
    let test = Test::new();
    let dir = test
        .root
        .join(std::ffi::OsStr::from_bytes(b"latin1-caf\xe9"));
    init(&dir, &[]);
    std::fs::write(dir.join("plan.loop"), PLAN).unwrap();
    let r = test
        .loopc(&["run"])
        .current_dir(&dir)
        .status(2)
        .stderr_contains("has a path that is not UTF-8")
        .run();
    assert!(!r.stderr.contains("cannot run git"), "{}", r.stderr);
    assert!(!dir.join(".loopc").exists());
}

/// A directory below `root` whose path is `len` bytes long.
fn deep_dir(root: &Path, len: usize) -> PathBuf {
    let mut dir = root.to_path_buf();
    while len - dir.as_os_str().len() - 1 > 255 {
        dir.push("d".repeat(200));
    }
    let rest = len - dir.as_os_str().len() - 1;
    dir.push("e".repeat(rest));
    assert_eq!(dir.as_os_str().len(), len);
    dir
}

#[test]
fn a_repository_too_deep_for_gits_paths_names_the_cause() {
    let test = Test::new();
    // Deep enough that git still works in the checkout itself, but not
    // for what a run makes below it (task branches' logs, worktrees).
    let dir = deep_dir(&test.root, 4040);
    init(&dir, &[]);
    std::fs::write(dir.join("plan.loop"), PLAN).unwrap();
    let r = test
        .loopc(&["run"])
        .current_dir(&dir)
        .status(2)
        .stderr_contains("is too deep for git: its path is 4040 bytes long")
        .stderr_contains("(PATH_MAX); move the repository to a shorter path")
        .run();
    assert!(
        !r.stderr.contains("no commit to start from"),
        "{}",
        r.stderr
    );
    // Deeper still, git itself finds no repository there: said so too.
    let deeper = deep_dir(&test.root, 4070);
    std::fs::create_dir_all(&deeper).unwrap();
    std::fs::rename(dir.join(".git"), deeper.join(".git")).unwrap();
    std::fs::write(deeper.join("plan.loop"), PLAN).unwrap();
    test.loopc(&["run"])
        .current_dir(&deeper)
        .status(2)
        .stderr_contains("is too deep for git: its path is 4070 bytes long")
        .run();
}
