//! Times each front-end phase on one plan (a profiling aid for the benchmarks).
fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let Ok(src) = std::fs::read_to_string(&path) else {
        eprintln!("usage: phase-times PLAN");
        std::process::exit(2);
    };
    let origin = loopc::origin::Origin::file(&path);
    let t = std::time::Instant::now();
    let (ast, d1) = loopc::syntax::parse(&src);
    let t1 = t.elapsed();
    let (model, d2) = loopc::check::check(&ast, &origin);
    let t2 = t.elapsed();
    let (plan, d3) = loopc::plan::build(model, &origin);
    let t3 = t.elapsed();
    println!(
        "parse {:?}  check {:?}  plan {:?}  ({} diagnostics, plan: {})",
        t1,
        t2 - t1,
        t3 - t2,
        d1.len() + d2.len() + d3.len(),
        plan.is_some()
    );
}
