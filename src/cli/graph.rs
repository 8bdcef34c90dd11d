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

/// Runs `loopc graph`: returns the process exit status (0 drawn, 1 plan
/// errors, 2 the plan or stdout could not be used).
pub fn run(args: &Args) -> i32 {
    let compiled = match compile_for_display(
        args.plan.as_deref(),
        args.defaults.as_deref(),
        "no graph drawn",
    ) {
        Ok((_, c)) => c,
        Err(status) => return status,
    };
    let Some(plan) = &compiled.plan else {
        return exit::FAILURE;
    };
    let statuses = if args.state {
        let loaded = std::env::current_dir()
            .map_err(|e| format!("cannot find the current directory ({e}); drawing without status"))
            .and_then(|cwd| state::load_for_dir(&cwd, &plan.name));
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
    // The tasks a run added from plan fragments: the plan grown by the
    // fragments recorded at the producers' commits.
    let grown;
    let plan = match (&statuses, std::env::current_dir()) {
        (Some(s), Ok(cwd)) if plan.tasks.iter().any(|t| t.expands.is_some()) => {
            let base = loopc::expand::Base::of(&compiled, &plan.name);
            grown = loopc::expand::regrow(&base, plan.clone(), |task, path| {
                s.commit(task)
                    .and_then(|commit| state::file_at(&cwd, commit, path))
            });
            &grown
        }
        _ => plan,
    };
    let color = args.format == GraphFormat::Text && super::color_for(io::stdout().is_terminal());
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = render::render(args.format.into(), plan, statuses.as_ref(), color, &mut out)
        .and_then(|()| out.flush());
    output_status(written, |e| format!("error: cannot write the graph: {e}"))
}
