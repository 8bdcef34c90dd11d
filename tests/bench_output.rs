//! The output a faster `check` must keep byte for byte: on the bench
//! generator's plan (`bench/gen_plan.rs`), with errors of several kinds
//! mixed in, the human and JSON diagnostics are snapshots, and the compiled
//! plan's JSON (every task's definition key) is pinned by its digest. A
//! rewrite of the front end for speed changes none of them.

#[path = "../bench/gen_plan.rs"]
mod gen_plan;

use crate::harness::Test;

/// The generator's 300-task plan with mistakes mixed in: an unknown
/// dependency, a bad escape, a duplicate field, a misspelled field, a
/// wrong type, a cycle.
fn broken_plan() -> String {
    let mut plan = gen_plan::generate(300).plan;
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
    for (plan, status) in [(clean, 0), (broken_plan(), 1)] {
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
                format!("ok: 301 tasks, {warnings} warnings\n")
            );
        }
    }
}
