//! The one runner of every git call loopc makes ([`Git::exec`]), and the
//! calls that hand git what could be long on its standard input instead of
//! its command line: the kernel bounds the arguments of a program (one
//! argument to 128 KiB, all of them with the environment to a few MiB;
//! E2BIG), and a cache entry's message names every file a task read and
//! wrote. Nothing loopc hands git that grows with the repository or the
//! plan (a message, a list of paths or refs) goes on the command line.

use super::{Git, GitOutput, SAFE_CONFIG, output_of, why};
use crate::run::sys::checkout::Checkout;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::time::{Duration, Instant};

/// `--NAME=PATH`, the path as it is (bytes that are not UTF-8 kept).
pub fn path_option(name: &str, path: &Path) -> OsString {
    let mut option = OsString::from(format!("--{name}="));
    option.push(path.as_os_str());
    option
}

impl Git {
    /// Runs `git [SAFE_CONFIG] PRE ARGS` in `dir`, reading `stdin` (none:
    /// `/dev/null`), its stdout captured or into `stdout_file`, in a process
    /// group of its own when bound to a run, killed (SIGTERM, then SIGKILL)
    /// at its timeout or when the run stops. `PRE` are the options that name
    /// the repository, paths as they are (not decoded).
    ///
    /// Errors: git could not be started, or it was killed.
    pub(in crate::run::sys) fn exec(
        &self,
        dir: &Path,
        pre: &[OsString],
        args: &[&str],
        stdin: Option<&[u8]>,
        stdout_file: Option<std::fs::File>,
    ) -> Result<GitOutput, String> {
        let mut full: Vec<OsString> = SAFE_CONFIG.iter().map(OsString::from).collect();
        full.extend_from_slice(pre);
        full.extend(args.iter().map(OsString::from));
        // By absolute path, so that it is spawned, not forked (see `program`).
        let mut expr = duct::cmd(super::super::program::git(), full)
            .dir(dir)
            .stderr_capture()
            .unchecked()
            .env("GIT_TERMINAL_PROMPT", "0");
        expr = match stdin {
            Some(bytes) => expr.stdin_bytes(bytes.to_vec()),
            None => expr.stdin_null(),
        };
        expr = match stdout_file {
            Some(f) => expr.stdout_file(f),
            None => expr.stdout_capture(),
        };
        // loopc's own variables (identity, dates, a scratch index file)
        // are set before the inherited location variables are removed:
        // of duct's nested settings the innermost, the first made, wins.
        for (k, v) in &self.env {
            expr = expr.env(k, v);
        }
        for k in super::super::process::GIT_LOCATION_VARS {
            if !self.env.iter().any(|(set, _)| set == k) {
                expr = expr.env_remove(k);
            }
        }
        let Some(control) = self.control.as_ref() else {
            // Outside a run (status, clean): Ctrl-C ends git with loopc.
            let out = expr.run().map_err(|e| format!("cannot run git: {e}"))?;
            return Ok(output_of(&out));
        };
        let expr = expr.before_spawn(|c| {
            use std::os::unix::process::CommandExt;
            c.process_group(0).arg0("git");
            Ok(())
        });
        let handle = expr.start().map_err(|e| format!("cannot run git: {e}"))?;
        let pgid = handle.pids().first().map(|&p| p as i32).unwrap_or(0);
        control.register(pgid);
        let started = Instant::now();
        // Blocks until git ends (woken by SIGCHLD, so the end is seen at
        // once, not at the next poll) or the pause is over, then looks at
        // the timeout and the kill switch.
        let pause = Duration::from_millis(20);
        let killed = loop {
            match handle.wait_timeout(pause) {
                Ok(Some(out)) => {
                    control.unregister(pgid);
                    return Ok(output_of(out));
                }
                Ok(None) => {}
                Err(e) => {
                    control.unregister(pgid);
                    return Err(format!("cannot wait for git: {e}"));
                }
            }
            if let Some(t) = self.timeout
                && started.elapsed() >= t
            {
                break format!("timed out after {}", crate::run::time::human_duration(t));
            }
            if control.should_stop() || super::super::interrupt::requested() {
                break "was stopped (the run is stopping)".to_string();
            }
        };
        // SIGTERM first: git removes its lock files on SIGTERM.
        super::super::process::signal_group(pgid, libc::SIGTERM);
        let grace = Instant::now() + super::super::process::KILL_GRACE;
        while Instant::now() < grace {
            if let Ok(Some(_)) = handle.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        super::super::process::signal_group(pgid, libc::SIGKILL);
        let _ = handle.kill();
        control.unregister(pgid);
        Err(format!("`git {}` {killed}", args.join(" ")))
    }

    /// The option naming this repository's git directory (`--git-dir=`).
    pub(in crate::run::sys) fn git_dir_option(&self) -> OsString {
        path_option("git-dir", &self.git_dir)
    }

    /// Runs `git ARGS` at the repository root with `input` on its standard
    /// input; any exit status is returned.
    ///
    /// Errors: git could not be started, or it was killed.
    pub fn try_run_fed(&self, args: &[&str], input: &[u8]) -> Result<GitOutput, String> {
        let pre = [self.git_dir_option()];
        self.exec(&self.root, &pre, args, Some(input), None)
    }

    /// [`Git::try_run_fed`], requiring exit status 0; returns trimmed stdout.
    ///
    /// Errors: git failed (its whole standard error, bounded).
    pub fn read_fed(&self, args: &[&str], input: &[u8]) -> Result<String, String> {
        let out = self.try_run_fed(args, input)?;
        if out.code != 0 {
            return Err(format!("`git {}` failed: {}", args.join(" "), why(&out)));
        }
        Ok(out.stdout.trim().to_string())
    }

    /// Runs `git ARGS` for worktree `co` (as [`Git::run_co`]) with `input`
    /// on its standard input, requiring exit status 0.
    ///
    /// Errors: git failed (its whole standard error, bounded).
    pub fn run_co_fed(
        &self,
        co: &Checkout,
        args: &[&str],
        input: &[u8],
    ) -> Result<GitOutput, String> {
        let out = self.try_run_co_fed(co, args, input)?;
        if out.code != 0 {
            return Err(format!("`git {}` failed: {}", args.join(" "), why(&out)));
        }
        Ok(out)
    }
}

/// `items`, each ended by a NUL byte: what `--pathspec-from-file=-
/// --pathspec-file-nul` and `-z` readers of standard input take.
pub fn nul_list<S: AsRef<OsStr>>(items: impl IntoIterator<Item = S>) -> Vec<u8> {
    let mut out = Vec::new();
    for item in items {
        out.extend_from_slice(item.as_ref().as_encoded_bytes());
        out.push(0);
    }
    out
}
