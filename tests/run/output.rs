//! Output safety (docs/running.md, subprocess output is read as bytes): an agent
//! that prints 200 MB of bytes that are not UTF-8 and leaves a background
//! child holding its stdout and stderr open neither blocks loopc nor grows
//! its memory; logs are capped; the next attempt's feedback stays within
//! 64 KiB.

use crate::harness::{Test, no_process_with};
use std::time::Duration;

/// Waits for `pid` with `wait4`, returning its exit status and peak
/// resident set size in KiB (the kernel's own accounting of the process
/// and the children it waited for). Gives up (kills it) after `polls`
/// checks 50 ms apart, so that a hang fails the test instead of blocking it.
fn wait_with_peak_rss(pid: u32, polls: u32) -> (Option<i32>, i64) {
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    for i in 0..=polls {
        let flags = if i == polls { 0 } else { libc::WNOHANG };
        if i == polls {
            // SAFETY: kill only sends a signal to our own child.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
        // SAFETY: wait4 on our own child with valid pointers.
        let rc = unsafe { libc::wait4(pid as i32, &mut status, flags, &mut usage) };
        if rc == pid as i32 {
            let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
            return (if i == polls { None } else { code }, usage.ru_maxrss);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (None, usage.ru_maxrss)
}

/// Runs `argv[2:]`, writes its peak resident set size in KiB (`wait4`'s
/// `ru_maxrss`: it and the children it waited for) to `argv[1]` and exits
/// as it did.
const PEAK_RSS: &str = r#"
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"#;

#[test]
fn two_hundred_megabytes_of_non_utf8_with_stdout_held_open_is_safe() {
    // Plain text, and Claude Code's JSON (whose result is searched for at
    // the end of the output).
    for output in ["text", "claude-json"] {
        huge_output(output);
    }
}

fn huge_output(output: &str) {
    let repo = Test::repo();
    let marker = format!("output-marker-{output}-{}", std::process::id());
    let sleeper = repo.marked_sleep(&marker);
    repo.script(
        "loud.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
if [ "$LOOP_ATTEMPT" = 1 ]; then
  # A background child keeps stdout and stderr open after the agent exits.
  {sleeper} 1000 &
  head -c 200000000 /dev/zero | tr '\000' '\377'
  printf 'bad \377 bytes on stderr\n' >&2
  exit 1
fi
echo ok > ok.txt
# What `claude -p --output-format json` prints last (read with claude-json;
# free text to a text agent).
printf '{{"type":"result","subtype":"success","is_error":false,"result":"wrote ok.txt","session_id":"s1","total_cost_usd":0.01}}\n'
"#,
            sleeper = sleeper
        ),
    );
    repo.plan(&format!(
        r#"
loop "out" {{ }}
budget {{ iterations = 5 }}
agent bot {{ run = "sh @BIN@/loud.sh"  output = {output} }}
task t {{ agent = bot  prompt = "x" }}
"#
    ));
    // loopc runs under a small python3 that reports its peak RSS: measured
    // from this test process, a child's peak starts at this process's own
    // (the kernel carries the high-water mark of the memory a child is
    // forked or vforked from over to it at exec), which the other tests of
    // the binary can make 150 MB.
    let invocation = repo.loopc(&["run"]).command();
    let peak_file = repo.bin.join("loopc.peak");
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-c", PEAK_RSS, &peak_file.to_string_lossy()])
        .arg(invocation.get_program())
        .args(invocation.get_args())
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(repo.bin.join("loopc.out")).unwrap())
        .stderr(std::fs::File::create(repo.bin.join("loopc.err")).unwrap());
    if let Some(dir) = invocation.get_current_dir() {
        cmd.current_dir(dir);
    }
    for (k, v) in invocation.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    // Reaped by `wait4` (for the time limit; the peak is python's report).
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("start python3");
    let (code, _) = wait_with_peak_rss(child.id(), 2400);
    assert_eq!(
        code,
        Some(0),
        "loopc did not finish: {}",
        repo.spawned_stderr()
    );
    let peak_kib: i64 = std::fs::read_to_string(&peak_file)
        .expect("the peak RSS report")
        .trim()
        .parse()
        .expect("a number of KiB");
    assert!(
        // Measured: about 12 MB for text, 28 MB for claude-json (a 16 MiB
        // tail is searched); a lossy copy of that tail made it 93 MB.
        peak_kib < 64 * 1024,
        "peak RSS of loopc and what it waited for: {peak_kib} KiB"
    );
    assert_eq!(repo.status_of("t"), "passed");
    assert!(no_process_with(&marker), "the background child survived");

    // The log keeps the raw bytes, head and tail, cut to 64 MiB.
    let log = repo.root.join(".loopc/logs/t/1/agent.stdout");
    let len = std::fs::metadata(&log).unwrap().len();
    assert!(len <= 64 * 1024 * 1024 + 200, "log of {len} bytes");
    assert!(len >= 64 * 1024 * 1024, "log of {len} bytes");
    // The feedback (lossily decoded: each bad byte is 3 bytes of U+FFFD)
    // stays within 64 KiB, and so does its part of the next prompt.
    let feedback = std::fs::read_to_string(repo.root.join(".loopc/logs/t/2/feedback.md")).unwrap();
    assert!(
        feedback.len() <= 64 * 1024,
        "feedback of {} bytes",
        feedback.len()
    );
    assert!(feedback.contains('\u{fffd}'));
    assert!(
        feedback.contains("bad \u{fffd} bytes on stderr"),
        "{}",
        &feedback[..200]
    );
    let prompt = std::fs::metadata(repo.root.join(".loopc/logs/t/2/prompt.md"))
        .unwrap()
        .len();
    assert!(prompt <= 64 * 1024 + 4096, "prompt of {prompt} bytes");
}

#[test]
fn an_agent_that_never_reads_a_large_prompt_and_leaves_stdin_open_does_not_block() {
    let repo = Test::repo();
    let marker = format!("stdin-marker-{}", std::process::id());
    let sleeper = repo.marked_sleep(&marker);
    // Never reads stdin; a background child inherits it (and stdout) and
    // outlives the agent.
    repo.script(
        "deaf.sh",
        &format!("#!/bin/sh\n{} 1000 &\necho done > done.txt\n", sleeper),
    );
    // A prompt far larger than a pipe's buffer.
    let prompt = "y".repeat(300_000);
    repo.plan(&format!(
        r#"
loop "deaf" {{ }}
budget {{ iterations = 2 }}
agent bot {{ run = "sh @BIN@/deaf.sh" }}
task t {{ agent = bot  prompt = "{prompt}" }}
"#
    ));
    // Reaped by `wait4`.
    #[allow(clippy::zombie_processes)]
    let child = repo.loopc(&["run"]).spawn();
    let (code, _) = wait_with_peak_rss(child.id(), 1200);
    assert_eq!(
        code,
        Some(0),
        "loopc did not finish: {}",
        repo.spawned_stderr()
    );
    assert_eq!(repo.status_of("t"), "passed");
    assert!(no_process_with(&marker), "the background child survived");
}

/// A title with line breaks (and a summary with control characters) still
/// makes one progress line per task.
#[test]
fn a_multi_line_title_makes_one_progress_line() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        "#!/bin/sh\ncat >/dev/null\necho d > d.txt\nprintf '{\"status\":\"completed\",\"summary\":\"did\\\\nit\\\\tall\"}' > \"$LOOP_HANDOFF\"\n",
    );
    repo.plan(
        r#"
loop "p" { }
agent bot { run = "sh @BIN@/agent.sh" }
task d "multi\nline\r\ttitle" { agent = bot  prompt = "x" }
task e "next": d { run = "echo e > e.txt" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let progress = std::fs::read_to_string(repo.root.join(".loopc/progress.md")).unwrap();
    assert_eq!(
        progress,
        "- d: multi line title — did it all; d.txt\n- e: next — done; e.txt\n"
    );
}
