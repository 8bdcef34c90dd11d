//! A small fluent builder for end-to-end tests of the `loopc` binary, in the
//! style of just's test suite: set files and arguments, then assert the exact
//! stdout, stderr and exit status.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// One invocation of the real `loopc` binary in a fresh temporary directory.
pub struct Test {
    dir: tempfile::TempDir,
    args: Vec<String>,
    env: Vec<(String, String)>,
    stdout: Option<String>,
    stderr: Option<String>,
    stderr_contains: Vec<String>,
    status: i32,
}

/// What a finished invocation printed.
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: i32,
    pub dir: tempfile::TempDir,
}

impl Test {
    pub fn new() -> Self {
        Test {
            dir: tempfile::tempdir().unwrap(),
            args: Vec::new(),
            env: Vec::new(),
            stdout: None,
            stderr: None,
            stderr_contains: Vec::new(),
            status: 0,
        }
    }

    /// Writes `contents` to `name` inside the test directory.
    pub fn file(self, name: &str, contents: &str) -> Self {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, contents).unwrap();
        self
    }

    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|s| s.to_string()));
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn stdout(mut self, s: &str) -> Self {
        self.stdout = Some(s.into());
        self
    }

    pub fn stderr(mut self, s: &str) -> Self {
        self.stderr = Some(s.into());
        self
    }

    pub fn stderr_contains(mut self, s: &str) -> Self {
        self.stderr_contains.push(s.into());
        self
    }

    pub fn status(mut self, status: i32) -> Self {
        self.status = status;
        self
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Runs and asserts everything that was set.
    pub fn run(self) -> Output {
        let out = Command::new(env!("CARGO_BIN_EXE_loopc"))
            .args(&self.args)
            .current_dir(self.dir.path())
            .env_remove("NO_COLOR")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let status = out.status.code().unwrap_or(-1);
        if let Some(want) = &self.stdout {
            assert_eq!(&stdout, want, "stdout differs; stderr:\n{stderr}");
        }
        if let Some(want) = &self.stderr {
            assert_eq!(&stderr, want, "stderr differs");
        }
        for want in &self.stderr_contains {
            assert!(
                stderr.contains(want.as_str()),
                "stderr lacks {want:?}:\n{stderr}"
            );
        }
        assert_eq!(
            status, self.status,
            "exit status; stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        Output {
            stdout,
            stderr,
            status,
            dir: self.dir,
        }
    }
}

/// The repository's `examples/` directory.
pub fn examples_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/examples"))
}

/// Temporary git repositories and scripted agents for the `loopc run` tests.
pub mod repo;
