//! `loopc graph [PLAN] [--format text|dot|mermaid|json|svg] [--state]`; no
//! PLAN: the plan `run` would find.
//!
//! Compiles the plan, prints its diagnostics like `loopc check` does, and,
//! when there are no errors, renders the compiled plan with
//! [`loopc::render`] on stdout. A plan with errors draws nothing and exits
//! 1; a plan that cannot be read exits 2; warnings go to stderr and the
//! graph is drawn.

use super::{compile_for_display, exit, output_status, warn};
use clap::ValueEnum;
use loopc::render::{self, state};
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

/// `loopc graph [PLAN] [--format …] [--state]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The plan file (or a REEL spec, or a directory of them); default: the
    /// plan found from the current directory, as `run` finds it.
    #[arg(value_name = "PLAN")]
    pub plan: Option<PathBuf>,
    /// The defaults plan for REEL specs (agent, gates, defaults, budget,
    /// loop); default `defaults.loop` beside the specs.
    #[arg(long, value_name = "FILE.loop")]
    pub defaults: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
    pub format: GraphFormat,
    /// Show each task's last status from `.loopc/state.json`.
    #[arg(long)]
    pub state: bool,
}

/// Graph output formats (docs/graph.md).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    /// Tasks in layers, for a terminal.
    Text,
    /// Graphviz input.
    Dot,
    /// A Mermaid `flowchart`.
    Mermaid,
    /// The compiled plan as one JSON document.
    Json,
    /// An SVG drawing, laid out in-process.
    Svg,
}

impl From<GraphFormat> for render::Format {
    fn from(format: GraphFormat) -> render::Format {
        match format {
            GraphFormat::Text => render::Format::Text,
            GraphFormat::Dot => render::Format::Dot,
            GraphFormat::Mermaid => render::Format::Mermaid,
            GraphFormat::Json => render::Format::Json,
            GraphFormat::Svg => render::Format::Svg,
        }
    }
}

/// `plan` (compiled as `compiled`) grown by the tasks the last run added
/// from plan fragments (`s`, its state): the fragments read at the commits
/// the state records for their producers. `None` when the plan has no
/// task that expands. `dir`: a directory of the plan's repository.
pub(super) fn grown(
    compiled: &loopc::compile::Compilation,
    plan: &loopc::plan::Plan,
    s: &state::StateMap,
    dir: &std::path::Path,
) -> Option<loopc::plan::Plan> {
    if !plan.tasks.iter().any(|t| t.expands.is_some()) {
        return None;
    }
    let base = loopc::expand::Base::of(compiled, &plan.name);
    Some(loopc::expand::regrow(&base, plan.clone(), |task, path| {
        s.fragment_commit(task)
            .and_then(|commit| state::file_at(dir, commit, path))
    }))
}

/// Runs `loopc graph`: returns the process exit status (0 drawn, 1 plan
/// errors, 2 the plan or stdout could not be used).
pub fn run(args: &Args) -> i32 {
    let compiled = match compile_for_display(
        args.plan.as_deref(),
        args.defaults.as_deref(),
        "no graph drawn",
    ) {
        Ok(found) => found,
        Err(status) => return status,
    };
    let (path, compiled) = compiled;
    // `--state`: the last run of the plan's repository, as `run` uses it.
    let dir = loopc::compile::plan_dir(&path);
    let Some(plan) = &compiled.plan else {
        return exit::FAILURE;
    };
    let statuses = if args.state {
        let loaded = state::load_for_dir(&dir, &plan.name);
        match loaded {
            Ok(s) => Some(s),
            Err(warning) => {
                warn(&warning);
                None
            }
        }
    } else {
        None
    };
    let grown = statuses
        .as_ref()
        .and_then(|s| grown(&compiled, plan, s, &dir));
    let plan = grown.as_ref().unwrap_or(plan);
    let color = args.format == GraphFormat::Text && super::color_for(io::stdout().is_terminal());
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = render::render(args.format.into(), plan, statuses.as_ref(), color, &mut out)
        .and_then(|()| out.flush());
    output_status(written, |e| format!("error: cannot write the graph: {e}"))
}
