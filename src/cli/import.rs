//! `loopc import SPEC… [-o plan.loop] [--defaults FILE.loop]`: writes the
//! `.loop` plan equivalent to REEL specs (`docs/reel.md`).
//!
//! Exit 0 written, 1 the specs have errors (their diagnostics are printed
//! and nothing is written), 2 a file could not be read or written.

use super::{exit, output_status, print_compilation, print_plan_diagnostics, write_stdout};
use loopc::import::ImportError;
use std::path::PathBuf;

/// `loopc import SPEC… [-o plan.loop] [--defaults FILE.loop]` (`docs/reel.md`)
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// REEL specs (`.md`, `.json`, `.feature`) or directories of them.
    #[arg(required = true, value_name = "SPEC")]
    pub specs: Vec<PathBuf>,
    /// Write the plan here instead of to stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE.loop")]
    pub output: Option<PathBuf>,
    /// The defaults plan for REEL specs (agent, gates, defaults, budget,
    /// loop); default `defaults.loop` beside the specs.
    #[arg(long, value_name = "FILE.loop")]
    pub defaults: Option<PathBuf>,
    /// Overwrite the `-o` file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Runs `loopc import`.
pub fn run(args: &Args) -> i32 {
    if let Some(path) = &args.output
        && !args.force
        && std::fs::symlink_metadata(path).is_ok()
    {
        eline!(
            "error: `{}` exists; nothing imported (pass --force to overwrite it)",
            path.display()
        );
        return exit::USAGE;
    }
    // A plan is not a spec: it would be read as one and fail as a spec.
    if let Some(plan) = args
        .specs
        .iter()
        .find(|p| p.extension().is_some_and(|x| x == "loop"))
    {
        eline!(
            "error: `{}` is a .loop plan, not a REEL spec; `loopc import` converts specs (.md, \
             .json, .feature): name a defaults plan with --defaults",
            plan.display()
        );
        return exit::USAGE;
    }
    let reel = match loopc::compile::compile_specs(&args.specs, args.defaults.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eline!("error: {e}");
            return exit::USAGE;
        }
    };
    let c = &reel.compilation;
    // `-q`: the errors only.
    print_plan_diagnostics(c);
    let Some(plan) = &c.plan else {
        let named: Vec<String> = args
            .specs
            .iter()
            .map(|p| format!("`{}`", p.display()))
            .collect();
        let has = if named.len() == 1 { "has" } else { "have" };
        eline!("error: {} {has} errors; nothing imported", named.join(", "));
        return exit::FAILURE;
    };
    let out_name = args
        .output
        .as_ref()
        .map_or_else(|| "plan.loop".to_string(), |p| p.display().to_string());
    let text = match loopc::import::checked(&reel, plan, &out_name) {
        Ok(text) => text,
        Err(ImportError::Unparsable(diags)) => {
            eline!(
                "error: internal: the generated plan does not parse ({} diagnostics); please report this",
                diags.len()
            );
            return exit::USAGE;
        }
        Err(ImportError::Differs(check)) => {
            eline!(
                "error: internal: the generated plan does not compile to the specs' plan; please report this"
            );
            if !check.diagnostics.is_empty() {
                print_compilation(&check, &check.diagnostics);
            }
            return exit::USAGE;
        }
    };
    match &args.output {
        Some(path) => match write_output(path, &text, args.force) {
            Ok(()) => exit::OK,
            Err(e) => {
                eline!("error: cannot write `{}`: {e}", path.display());
                exit::USAGE
            }
        },
        None => output_status(write_stdout(&text), |e| {
            format!("error: cannot write the plan: {e}")
        }),
    }
}

/// Writes `text` to `path`; without `force`, only if `path` does not exist
/// (checked again at the write, so a file made meanwhile is not lost).
fn write_output(path: &std::path::Path, text: &str, force: bool) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    options.open(path)?.write_all(text.as_bytes())
}
