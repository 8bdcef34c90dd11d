//! The output a faster `check` must keep byte for byte: on the bench
//! generator's plan (`bench/gen_plan.rs`), with errors of several kinds
//! mixed in, the human and JSON diagnostics are snapshots, and the compiled
//! plan's JSON (every task's definition key) is pinned by its digest. A
//! rewrite of the front end for speed changes none of them.

#[path = "../../bench/gen_plan.rs"]
mod gen_plan;

use crate::harness::Test;

/// The generator's 300-task plan with mistakes mixed in: an unknown
/// dependency, a bad escape, a duplicate field, a misspelled field, a
/// wrong type, a cycle.
fn broken_plan() -> String {
    break_plan(gen_plan::generate(300).plan)
}

/// `plan` (the generator's, of at least 200 tasks) with the mistakes of
/// [`broken_plan`].
fn break_plan(mut plan: String) -> String {
    // `task t40 "…" {` (no dependencies) becomes `task t40 "…": t999 {`.
    let header = plan.find("\ntask t40 \"").expect("t40");
    let brace = header + plan[header..].find(" {\n").expect("its block");
    plan.insert_str(brace, ": t999");
    plan = plan.replacen(
        "  run    = \"make generate-49\"",
        "  run    = \"make \\q generate-49\"",
        1,
    );
    plan = plan.replacen(
        "  run    = \"make generate-99\"",
        "  run    = \"make generate-99\"\n  attempts = 2\n  attempts = 3",
        1,
    );
    plan = plan.replacen(
        "  run    = \"make generate-149\"",
        "  rnu    = \"make generate-149\"",
        1,
    );
    plan = plan.replacen(
        "  run    = \"make generate-199\"",
        "  run    = \"make generate-199\"\n  timeout = 5",
        1,
    );
    plan.push_str(
        "\ntask loop_a: loop_b { run = \"true\" }\ntask loop_b: loop_a { run = \"true\" }\n",
    );
    plan
}

#[test]
fn check_output_on_the_bench_plan_is_pinned() {
    let t = Test::new().file("bench.loop", broken_plan());
    let human = t.loopc(&["check", "bench.loop"]).status(1).run();
    insta::assert_snapshot!("human", human.stderr);
    let json = t
        .loopc(&["check", "--format", "json", "bench.loop"])
        .status(1)
        .run();
    insta::assert_snapshot!("json", json.stdout);
}

#[test]
fn the_bench_plans_keys_are_pinned() {
    let t = Test::new().file("bench.loop", gen_plan::generate(300).plan);
    let graph = t.loopc(&["graph", "--format", "json", "bench.loop"]).run();
    let doc: serde_json::Value = serde_json::from_str(&graph.stdout).unwrap();
    let tasks = doc["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 300);
    // Every key in order, digested: any change to what goes into a key (or
    // to how it is encoded) changes this line.
    let keys: Vec<&str> = tasks.iter().map(|t| t["key"].as_str().unwrap()).collect();
    let digest = blake3::hash(keys.join("\n").as_bytes())
        .to_hex()
        .to_string();
    insta::assert_snapshot!("keys_digest", digest);
}

/// `check` builds no plan ([`loopc::compile::Goal::Diagnostics`]): what it
/// prints must be what a compilation that builds the plan reports, byte
/// for byte, on a clean plan with warnings and on the broken one.
#[test]
fn check_without_the_plan_reports_what_the_plan_build_reports() {
    let mut clean = gen_plan::generate(300).plan;
    // W0002 (t2 depends on t1, which depends on t0) and W0001.
    clean.push_str("\ntask extra: t0 t2 { run = \"true\" }\ngate unused = \"true\"\n");
    same_diagnostics(&[(clean, 0), (broken_plan(), 1)]);
}

/// As above on plans of more than a megabyte, which `check` parses in
/// chunks and checks chunk by chunk, never holding the whole tree: clean,
/// with mistakes early and late, and with lines that look like items
/// inside block strings (a chunk boundary falls there, and parsing goes on
/// sequentially from it).
#[test]
fn check_of_a_large_plan_reports_what_the_plan_build_reports() {
    let generated = gen_plan::generate(3_000).plan;
    assert!(generated.len() > 1 << 20);
    let mut clean = generated.clone();
    clean.push_str("\ntask extra: t0 t2 { run = \"true\" }\ngate unused = \"true\"\n");
    let mut late = break_plan(generated.clone());
    late = late.replacen("  run    = \"make generate-2999\"", "  rnu = \"x\"", 1);
    late.push_str("\ntask t2998 { run = \"again\" }\ntask late: t9999 { run = \"true\" }\n");
    let mut tricky = clean.replace(
        "\n      \"\"\"\n",
        "\ntask fake { not an item }\n      \"\"\"\n",
    );
    assert_ne!(tricky, clean);
    tricky.push_str("task t17 { run = \"twice\" }\n");
    same_diagnostics(&[(clean, 0), (late, 1), (tricky, 1)]);
}

/// `check`'s human and JSON output on each plan, against what a
/// compilation that builds the plan reports; the status is `check`'s.
fn same_diagnostics(plans: &[(String, i32)]) {
    for (plan, status) in plans {
        let (plan, status) = (plan.clone(), *status);
        let t = Test::new().file("bench.loop", plan.clone());
        let full = loopc::compile::compile("bench.loop", &plan);
        assert_eq!(full.plan.is_some(), status == 0);
        assert!(!full.diagnostics.is_empty());
        let json = t
            .loopc(&["check", "--format", "json", "bench.loop"])
            .status(status)
            .run();
        let want: String = full
            .files
            .to_json_lines(&full.source, &full.diagnostics)
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(json.stdout, want);
        let human = t.loopc(&["check", "bench.loop"]).status(status).run();
        let rendered = full.render_plain(&full.diagnostics);
        assert!(human.stderr.starts_with(&rendered), "{}", human.stderr);
        if status == 0 {
            let warnings = full.diagnostics.len();
            assert_eq!(
                &human.stderr[rendered.len()..],
                format!("ok: {} tasks, {warnings} warnings\n", full.tasks)
            );
        }
    }
}
