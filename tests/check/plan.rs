//! The compiled plan (spec §3 resolution, §6 definition keys): defaults are
//! resolved, tasks are in topological order, and keys depend on definitions
//! only.

use loopc::plan::{OnFail, OutputFormat, Plan, TaskKind};
use std::time::Duration;

fn plan(source: &str) -> Plan {
    let c = loopc::compile("plan.loop", source);
    assert!(!c.has_errors(), "{:?}", c.diagnostics);
    c.plan.unwrap()
}

fn keys(p: &Plan) -> Vec<(String, String)> {
    let mut k: Vec<_> = p
        .tasks
        .iter()
        .map(|t| (t.name.clone(), t.key.to_hex()))
        .collect();
    k.sort();
    k
}

const BASE: &str = r#"
budget { iterations = 5 }
agent claude { run = "claude -p" output = claude-json timeout = 5m env = { A = "agent" B = "agent" } }
gate tests = "make test"
gate review { agent = claude prompt = "Review." on_fail = block }
defaults { agent = claude gates = [tests] attempts = 4 env = { B = "defaults" C = "defaults" } }
task a "First" { prompt = "Do a." env = { C = "task" } }
task b: a { run = "make b" gates = [tests, review] timeout = 1m attempts = 2 }
task c "Third": a b { prompt = "Do c." }
"#;

#[test]
fn defaults_are_resolved() {
    let p = plan(BASE);
    let names: Vec<&str> = p.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    let a = &p.tasks[0];
    let TaskKind::Agent { agent, prompt } = &a.kind else {
        panic!("a is an agent task")
    };
    assert_eq!(&**prompt, "Do a.");
    assert_eq!(agent.name, "claude");
    assert_eq!(agent.output, OutputFormat::ClaudeJson);
    assert_eq!(a.attempts, 4);
    assert_eq!(a.timeout, Duration::from_secs(300), "agent timeout applies");
    assert_eq!(a.gates.len(), 1);
    let env: Vec<(&str, &str)> = a
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(env, [("A", "agent"), ("B", "defaults"), ("C", "task")]);
    let b = &p.tasks[1];
    assert!(matches!(b.kind, TaskKind::Command { .. }));
    assert_eq!((b.attempts, b.timeout), (2, Duration::from_secs(60)));
    assert_eq!(b.gates[1].on_fail, OnFail::Block);
    assert_eq!(b.gates[1].timeout, Duration::from_secs(30 * 60));
    assert_eq!(b.dependencies, [0]);
    assert_eq!(p.tasks[2].dependencies, [0, 1]);
    assert_eq!(p.tasks[2].layer, 2);
    assert_eq!(p.settings.branch, "loop/plan");
    assert_eq!((p.settings.parallel, p.budget.failures), (1, 3));
}

#[test]
fn topological_order_breaks_ties_in_source_order() {
    let p = plan(
        "task z: y { run = \"z\" }\ntask x { run = \"x\" }\ntask y { run = \"y\" }\ntask w { run = \"w\" }\n",
    );
    let names: Vec<&str> = p.tasks.iter().map(|t| t.name.as_str()).collect();
    // Among ready tasks, the earliest in the file comes first: z (line 1)
    // becomes ready after y and precedes w.
    assert_eq!(names, ["x", "y", "z", "w"]);
}

#[test]
fn keys_ignore_layout_order_comments_titles_budgets_and_timeouts() {
    let reordered = r#"
# comments, different field order, titles, budget and timeouts changed
task c "Another title": b a { prompt = "Do c." timeout = 9m }
defaults { env = { C = "defaults" B = "defaults" } attempts = 1 gates = [tests] agent = claude timeout = 2h }
task b: a { attempts = 9 gates = [tests, review] run = "make b" }
gate review { on_fail = retry prompt = "Review." timeout = 1m agent = claude }
task a { env = { C = "task" } prompt = "Do a." }
gate tests = "make test"
agent claude {
  env     = { B = "agent"  A = "agent" }
  timeout = 50m
  output  = claude-json
  run     = "claude -p"
}
budget { time = 1h cost = $3 }
"#;
    assert_eq!(keys(&plan(BASE)), keys(&plan(reordered)));
}

#[test]
fn keys_change_with_the_definition_and_propagate_to_dependents() {
    let base = keys(&plan(BASE));
    let changed = keys(&plan(&BASE.replace("Do a.", "Do a better.")));
    assert!(
        base.iter().zip(&changed).all(|(x, y)| x.1 != y.1),
        "a and all dependents change"
    );

    let changed = keys(&plan(&BASE.replace("make b", "make bb")));
    assert_eq!(base[0], changed[0], "a is unchanged");
    assert_ne!(base[1], changed[1]);
    assert_ne!(base[2], changed[2], "c depends on b");

    let changed = keys(&plan(&BASE.replace("\"make test\"", "\"make check\"")));
    assert!(
        base.iter().zip(&changed).all(|(x, y)| x.1 != y.1),
        "every task uses tests"
    );

    let changed = keys(&plan(&BASE.replace("C = \"task\"", "C = \"other\"")));
    assert_ne!(base[0], changed[0], "env is in the key");

    let changed = keys(&plan(&BASE.replace("claude -p", "claude -p --model x")));
    assert_ne!(base[0], changed[0], "agent run is in the key");
}

#[test]
fn key_parts_name_the_changed_component() {
    let a = plan(BASE);
    let b = plan(&BASE.replace("Do c.", "Do c twice."));
    let (x, y) = (&a.tasks[2].key_parts, &b.tasks[2].key_parts);
    assert_ne!(x.work, y.work);
    assert_eq!(
        (x.agent, x.gates, x.env, x.dependencies),
        (y.agent, y.gates, y.env, y.dependencies)
    );
}

#[test]
fn block_strings_and_strings_decode_as_the_spec_says() {
    let p = plan(
        "task a {\n  run = \"\"\"\n      line one\n        indented\n\n      last\n      \"\"\"\n}\ntask b { run = \"tab\\there \\u{1F600} \\\"q\\\" \\\\\" }\n",
    );
    let TaskKind::Command { run } = &p.tasks[0].kind else {
        panic!()
    };
    assert_eq!(&**run, "line one\n  indented\n\nlast");
    let TaskKind::Command { run } = &p.tasks[1].kind else {
        panic!()
    };
    assert_eq!(&**run, "tab\there 😀 \"q\" \\");
}

#[test]
fn quoted_task_ids_work_as_names_and_dependencies() {
    let p = plan("task \"0f3a9b2c\" { run = \"x\" }\ntask b: \"0f3a9b2c\" { run = \"y\" }\n");
    assert_eq!(p.tasks[0].name, "0f3a9b2c");
    assert_eq!(p.tasks[1].dependencies, [0]);
}

const EXECUTORS: &str = r#"
budget { iterations = 5 }
executor box { run = "bwrap --ro-bind / / --" }
executor farm { run = "srun --job-name=loopc-$LOOP_TASK" }
agent claude { run = "claude -p" executor = box }
agent codex { run = "codex exec -" }
gate tests { run = "make test" executor = farm }
gate lint = "make lint"
gate review { agent = claude prompt = "Review." }
defaults { agent = codex gates = [lint] executor = farm }
loop { setup = "npm ci" }
task a { prompt = "Do a." agent = claude gates = [tests, lint, review] accept = "make a" }
task b { prompt = "Do b." }
task c { run = "make c" }
"#;

#[test]
fn executors_resolve_from_the_field_else_the_agent_else_defaults() {
    let p = plan(EXECUTORS);
    let name = |e: Option<&std::sync::Arc<loopc::plan::Executor>>| e.map(|e| e.name.clone());
    let task = |n: &str| &p.tasks[p.task_index(n).unwrap()];
    let a = task("a");
    assert_eq!(
        name(a.work_executor()),
        Some("box".into()),
        "the agent's own"
    );
    assert_eq!(
        name(a.executor.as_ref()),
        Some("farm".into()),
        "accept: defaults"
    );
    let gates: Vec<_> = a.gates.iter().map(|g| name(g.executor.as_ref())).collect();
    assert_eq!(
        gates,
        [Some("farm".into()), Some("farm".into()), Some("box".into())],
        "own, defaults, the reviewing agent's"
    );
    assert_eq!(name(task("b").work_executor()), Some("farm".into()));
    assert_eq!(name(task("c").work_executor()), Some("farm".into()));
    assert_eq!(
        name(p.settings.setup_executor.as_ref()),
        Some("farm".into())
    );
    // Without executors nothing is wrapped.
    let q = plan(BASE);
    assert!(q.tasks.iter().all(|t| t.work_executor().is_none()));
    assert!(q.settings.setup_executor.is_none());
}

#[test]
fn a_wrapped_command_reaches_the_launcher_as_one_argument() {
    use loopc::plan::Executor;
    let e = Executor {
        name: "x".into(),
        run: "launch --flag ".into(),
    };
    assert_eq!(Executor::wrap(None, "a 'b' $c"), "a 'b' $c");
    assert_eq!(
        Executor::wrap(Some(&e), "echo 'it''s' \"$HOME\" | wc"),
        r#"launch --flag sh -c 'echo '\''it'\'''\''s'\'' "$HOME" | wc'"#
    );
    // The shell hands exactly the command to the launcher.
    let cmd = "printf '%s|' \"it's\" $HOME; echo \\\\";
    let wrapped = Executor::wrap(
        Some(&Executor {
            name: "x".into(),
            run: "printf '%s\\n'".into(),
        }),
        cmd,
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &wrapped])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("sh\n-c\n{cmd}\n")
    );
}

#[test]
fn the_executors_definition_is_in_the_key_and_its_name_is_not() {
    let base = keys(&plan(EXECUTORS));
    // Renaming an executor changes no key.
    let renamed = keys(&plan(
        &EXECUTORS
            .replace("executor box", "executor sandbox")
            .replace("executor = box", "executor = sandbox"),
    ));
    assert_eq!(base, renamed);
    // Its `run` is in the key of every task it launches something for.
    let changed = keys(&plan(&EXECUTORS.replace("bwrap --ro-bind", "bwrap --bind")));
    assert_ne!(base[0].1, changed[0].1, "a's agent runs in box");
    assert_eq!(base[1], changed[1], "b does not use box");
    assert_eq!(base[2], changed[2], "c does not use box");
    let changed = keys(&plan(&EXECUTORS.replace("loopc-$LOOP_TASK", "x")));
    assert!(
        base.iter().zip(&changed).all(|(x, y)| x.1 != y.1),
        "farm launches something of every task"
    );
    // A plan that does not use executors keeps the keys it had before
    // executors existed: an unused one changes nothing.
    let without = keys(&plan(BASE));
    let with_unused = keys(&plan(&format!(
        "{BASE}\nexecutor unused {{ run = \"x\" }}\n"
    )));
    assert_eq!(without, with_unused);
}
