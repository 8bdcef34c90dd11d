//! Deep and wide graphs: no code path may recurse as deep as the input is
//! long. A chain, a fan-in (one task depending on all others) and a fan-out
//! of [`N`] tasks go through `check`, `graph --format json`, `fmt --check`,
//! `run --dry-run` and the language server's document symbols, with the
//! main thread's stack cut to 256 KiB (`ulimit -s`) and every other thread's
//! too (`RUST_MIN_STACK`): recursion proportional to the plan overflows at a
//! far smaller size than a real stack would (a million tasks, see
//! `bench/run.sh` and docs/benchmarks.md), so a debug build finds it fast.

use crate::harness::{Test, loopc_path};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// Tasks per plan: with a 256 KiB stack, a recursion of one frame per task
/// overflows well below this.
const N: usize = 20_000;

/// The stack every thread of loopc gets here, in KiB.
const STACK_KIB: usize = 256;

/// The three shapes, in `loopc fmt`'s layout (so `fmt --check` passes).
fn plan(shape: &str) -> String {
    let mut s = String::with_capacity(N * 40);
    let task = |s: &mut String, name: &str, deps: &str| {
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(&format!("task {name}{deps} {{\n  run = \"true\"\n}}\n"));
    };
    match shape {
        "chain" => {
            task(&mut s, "t0", "");
            for i in 1..N {
                task(&mut s, &format!("t{i}"), &format!(": t{}", i - 1));
            }
        }
        "fan-in" => {
            for i in 0..N - 1 {
                task(&mut s, &format!("t{i}"), "");
            }
            let all: Vec<String> = (0..N - 1).map(|i| format!("t{i}")).collect();
            task(&mut s, "sink", &format!(": {}", all.join(" ")));
        }
        _ => {
            task(&mut s, "root", "");
            for i in 1..N {
                task(&mut s, &format!("t{i}"), ": root");
            }
        }
    }
    s
}

/// `loopc ARGS` in `dir` with every thread's stack cut to [`STACK_KIB`].
fn small_stack(dir: &std::path::Path, args: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -s {STACK_KIB} && exec \"$LOOPC\" {args}"))
        .env("LOOPC", loopc_path())
        .env("RUST_MIN_STACK", (STACK_KIB * 1024).to_string())
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
        .env_remove("NO_COLOR")
        .current_dir(dir)
        .stdin(Stdio::null());
    cmd
}

fn run_ok(dir: &std::path::Path, args: &str) -> String {
    let out = small_stack(dir, args).output().expect("run loopc");
    assert!(
        out.status.success(),
        "`loopc {args}` exited {:?}\n--- stderr (tail)\n{}",
        out.status,
        tail(&String::from_utf8_lossy(&out.stderr))
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tail(s: &str) -> &str {
    let mut start = s.len().saturating_sub(2000);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// One LSP frame.
fn frame(msg: &Value) -> Vec<u8> {
    let body = msg.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Opens the plan in `loopc lsp` and asks for its document symbols.
fn lsp_symbols(dir: &std::path::Path, text: &str) -> Vec<Value> {
    let mut child = small_stack(dir, "lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start loopc lsp");
    let uri = format!("file://{}/plan.loop", dir.display());
    let mut input = Vec::new();
    for msg in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "loop", "version": 1, "text": text}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/documentSymbol",
            "params": {"textDocument": {"uri": uri}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        json!({"jsonrpc": "2.0", "method": "exit"}),
    ] {
        input.extend(frame(&msg));
    }
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut out)
        .expect("read the server's output");
    let status = child.wait().expect("wait for loopc lsp");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let _ = writer.join();
    assert!(
        status.success(),
        "loopc lsp exited {status:?}: {}",
        tail(&err)
    );
    let text = String::from_utf8_lossy(&out);
    let answer = text
        .split("Content-Length: ")
        .filter_map(|m| m.split_once("\r\n\r\n"))
        .filter_map(|(_, body)| serde_json::from_str::<Value>(body).ok())
        .find(|v| v["id"] == 2)
        .expect("an answer to the document symbol request");
    answer["result"].as_array().cloned().unwrap_or_default()
}

fn shape(name: &str) {
    let test = Test::repo();
    let text = plan(name);
    test.write("plan.loop", &text);
    test.git(&["add", "plan.loop"]);
    test.commit("plan");
    let dir = test.root.as_path();

    run_ok(dir, "check plan.loop");
    let graph: Value =
        serde_json::from_str(&run_ok(dir, "graph --format json plan.loop")).expect("graph JSON");
    let tasks = graph["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), N);
    let deepest = tasks.iter().filter_map(|t| t["layer"].as_u64()).max();
    assert_eq!(
        deepest,
        Some(if name == "chain" { N as u64 - 1 } else { 1 })
    );
    run_ok(dir, "fmt --check plan.loop");
    let dry = run_ok(dir, "run --dry-run plan.loop");
    assert_eq!(dry.lines().count(), N + 1, "{}", tail(&dry));
    assert!(
        dry.ends_with(&format!("0 cached, {N} to run; nothing was started\n")),
        "{}",
        tail(&dry)
    );
    assert_eq!(lsp_symbols(dir, &text).len(), N);
}

#[test]
fn a_long_chain_needs_no_deep_stack() {
    shape("chain");
}

#[test]
fn a_wide_fan_in_needs_no_deep_stack() {
    shape("fan-in");
}

#[test]
fn a_wide_fan_out_needs_no_deep_stack() {
    shape("fan-out");
}

/// The git processes `loopc run` starts per task stay few: a `git` on PATH
/// that logs its arguments and hands over to the real one counts them. 40
/// command tasks, one at a time, no cache: each needs its worktree, the
/// staging and the commit, the changed paths and the diff, the merge and
/// the clean-up; the guard's look at the user's refs, the task branch and
/// the integration branch, and which worktrees exist, are read from git's
/// files (no `for-each-ref`, `rev-parse` or `worktree list` per task);
/// every call turns off automatic maintenance.
/// The git calls of a run (`loopc run ARGS plan.loop`) of `tasks`
/// independent command tasks at `parallel = 1`, one a line.
fn git_calls_of_run(tasks: usize, args: &[&str]) -> Vec<String> {
    let test = Test::repo();
    let mut plan = String::from("loop \"calls\" { parallel = 1 }\n");
    for i in 0..tasks {
        plan.push_str(&format!(
            "task t{i} {{ run = \"echo {i} > out{i}.txt\" }}\n"
        ));
    }
    test.plan(&plan);
    let log = test.bin.join("git-calls.log");
    let path = test.git_wrapper(|real| {
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        )
    });
    let mut run = vec!["run"];
    run.extend_from_slice(args);
    run.push("plan.loop");
    test.loopc(&run).env("PATH", &path).run();
    assert_eq!(test.files_at("loop/calls").len(), tasks + 1);
    let calls = std::fs::read_to_string(&log).expect("the wrapper's log");
    calls.lines().map(str::to_string).collect()
}

/// With the cache on, each merge also records its task's entry.
#[test]
fn git_processes_per_cached_task_are_few() {
    const TASKS: usize = 40;
    let calls = git_calls_of_run(TASKS, &[]);
    // Before: 501 for 40 tasks (12.5 a task: the merge's `update-ref`,
    // `diff-tree` for what it produced, `rev-parse` of its tree,
    // `commit-tree` and `update-ref` of the entry). Then 421 (10.5): the
    // attempt's thread reads its commit's tree and changes (one `diff-tree
    // --stdin`) and the branch and the entry move in one `update-ref
    // --stdin`. Now 381 (9.5): that `diff-tree` is the one the attempt's
    // commit makes anyway (gitlinks, `protect`), not a second one.
    assert!(
        calls.len() <= 11 * TASKS,
        "{} git calls for {TASKS} tasks:\n{}",
        calls.len(),
        calls.join("\n")
    );
    let moves = calls.iter().filter(|c| c.contains("update-ref")).count();
    assert!(moves <= TASKS + 1, "{moves} `git update-ref` calls");
}

#[test]
fn git_processes_per_task_are_few() {
    const TASKS: usize = 40;
    let calls = git_calls_of_run(TASKS, &["--no-cache"]);
    // Before: about 24 a task (four `worktree list`, three `rev-parse` of
    // the task branch, a separate `rev-parse HEAD` and `merge-base`), then
    // 15 (two `for-each-ref` of the guard, `rev-parse` of the task and the
    // integration branch, `symbolic-ref`, `diff --cached`, `for-each-ref
    // --contains`). Now 9 (`branch -D` is one per batch of attempts that
    // ended together: one a task here; the `reset --hard` that fills the
    // worktree is loopc's own call, made outside the worktree lock, where
    // `git worktree add` used to start it itself), and 16 for the run;
    // 340 in all for 40 tasks once the attempt's one `diff-tree` also gave
    // the coordinator its commit's tree (before: a second `diff-tree`).
    assert!(
        calls.len() <= 10 * TASKS,
        "{} git calls for {TASKS} tasks:\n{}",
        calls.len(),
        calls.join("\n")
    );
    // Per run, not per task: `rev-parse` finds the plan's repository and
    // the commit runs start from twice, for the command line's checks
    // before any work (an agent's script in that commit) and for the run.
    for (per_task, most) in [
        ("for-each-ref", 3),
        ("rev-parse", 4),
        ("symbolic-ref", 3),
        ("diff --cached", 3),
    ] {
        let n = calls.iter().filter(|c| c.contains(per_task)).count();
        assert!(
            n <= most,
            "{n} `git {per_task}` calls (read from git's files)"
        );
    }
    let lists = calls.iter().filter(|c| c.contains("worktree list")).count();
    assert!(
        lists <= 3,
        "{lists} `git worktree list` calls (per run, not per task)"
    );
    for c in &calls {
        assert!(
            c.contains("maintenance.auto=false") && c.contains("gc.auto=0"),
            "a git call with automatic maintenance: {c}"
        );
    }
}

#[test]
fn a_cycle_through_a_thousand_tasks_is_said_in_a_few_lines() {
    let n = 1000;
    let mut src = format!("task t0: t{} {{ run = \"x\" }}\n", n - 1);
    for i in 1..n {
        src.push_str(&format!("task t{i}: t{} {{ run = \"x\" }}\n", i - 1));
    }
    let c = loopc::compile("plan.loop", &src);
    assert_eq!(c.diagnostics.len(), 1, "{:#?}", c.diagnostics.len());
    let d = &c.diagnostics[0];
    assert_eq!(d.code.as_str(), "E0006");
    assert!(
        d.message.starts_with("dependency cycle: t0 → t999 → ")
            && d.message.contains(" → … (989 more) → ")
            && d.message.ends_with(" → t1 → t0"),
        "{}",
        d.message
    );
    assert_eq!(1 + d.secondary.len(), 12, "one label per shown dependency");
    assert!(
        d.notes
            .iter()
            .any(|n| n == "988 more dependencies close the cycle (the first 12 are shown)"),
        "{:?}",
        d.notes
    );
}
