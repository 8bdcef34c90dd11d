//! Criterion benchmarks of the front-end phases (parse, check, plan building)
//! on generated plans of 1k, 10k and 100k tasks (`bench/gen_plan.rs`).
//!
//! Run: `cargo bench --bench frontend`. Numbers and how to read them:
//! docs/benchmarks.md.

#[path = "../bench/gen_plan.rs"]
mod gen_plan;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn frontend(c: &mut Criterion) {
    let mut group = c.benchmark_group("frontend");
    group.sample_size(10);
    let origin = loopc::origin::Origin::file("bench.loop");
    for n in [1_000usize, 10_000, 100_000] {
        let source = gen_plan::generate(n).plan;
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("parse", n), &source, |b, s| {
            b.iter(|| loopc::syntax::parse(black_box(s)))
        });
        let (ast, _) = loopc::syntax::parse(&source);
        group.bench_with_input(BenchmarkId::new("check", n), &ast, |b, ast| {
            b.iter(|| loopc::check::check(black_box(ast), &origin))
        });
        let (model, _) = loopc::check::check(&ast, &origin);
        group.bench_with_input(BenchmarkId::new("plan", n), &model, |b, m| {
            b.iter_batched(
                || m.clone(),
                |m| loopc::plan::build(black_box(m), &origin),
                criterion::BatchSize::LargeInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("compile", n), &source, |b, s| {
            b.iter(|| loopc::compile("bench.loop", black_box(s)))
        });
    }
    group.finish();
}

criterion_group!(benches, frontend);
criterion_main!(benches);
