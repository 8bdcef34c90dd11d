//! `cargo run --release --example gen-plan -- N [DIR]`: writes `plan.loop`,
//! `build.ninja` and `Makefile` for a generated graph of N tasks into DIR
//! (default: the current directory). See `bench/gen_plan.rs`.

#[path = "../bench/gen_plan.rs"]
mod gen_plan;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(n) = args
        .next()
        .and_then(|a| a.replace('_', "").parse::<usize>().ok())
    else {
        eprintln!("usage: gen-plan N [DIR]");
        return ExitCode::from(2);
    };
    let dir = PathBuf::from(args.next().unwrap_or_else(|| ".".into()));
    let g = gen_plan::generate(n);
    for (name, text) in [
        ("plan.loop", &g.plan),
        ("build.ninja", &g.ninja),
        ("Makefile", &g.makefile),
    ] {
        let path = dir.join(name);
        if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, text)) {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    println!("wrote {n} tasks to {}", dir.display());
    ExitCode::SUCCESS
}
