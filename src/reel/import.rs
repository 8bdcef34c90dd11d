//! `loopc import SPEC… [-o plan.loop] [--defaults FILE.loop]`: writes the
//! `.loop` plan equivalent to REEL specs (`docs/reel.md`).
//!
//! The output is the defaults plan's text (comments kept), a `loop` item
//! naming the plan as the specs did, and one task per REEL task, formatted
//! with [`crate::fmt::format_source`]. It compiles to the same plan: the same
//! task names, dependencies and keys (spec §6). The command checks that
//! before writing and refuses to write anything else.

use super::Reel;
use crate::ast::{Item, ValueKind};
use crate::commands::ImportArgs;
use crate::diagnostic::Diagnostic;
use crate::exit;
use crate::syntax::literal::{print_string, print_text};
use std::io::Write;

/// The `.loop` text for a compiled REEL plan, formatted.
///
/// Errors: the diagnostics of `fmt` if the generated text does not parse,
/// which would be a bug in this module (spans are into the generated text).
pub fn to_loop(reel: &Reel) -> Result<String, Vec<Diagnostic>> {
    let c = &reel.compilation;
    let mut out = String::new();
    let sources: Vec<String> = reel.files.iter().map(|p| p.display().to_string()).collect();
    out.push_str(&format!(
        "# Imported from {} by `loopc import`.\n\n",
        if sources.is_empty() {
            c.name.clone()
        } else {
            sources.join(", ")
        }
    ));
    let name = c.plan.as_ref().map(|p| p.name.clone());
    let defaults_text = reel
        .defaults
        .and_then(|s| c.source.get(s.range()))
        .unwrap_or("");
    let defaults_text = defaults_text
        .strip_prefix('\u{feff}')
        .unwrap_or(defaults_text);
    let bom = c.source.len() - c.source.trim_start_matches('\u{feff}').len();
    let loop_item = c.ast.items.iter().find_map(|i| match i {
        Item::Loop(l) if reel.defaults.is_some_and(|d| l.span.end <= d.end) => Some(l),
        _ => None,
    });
    let split = loop_item.and_then(|l| {
        l.name.is_none().then_some(())?;
        defaults_text.split_at_checked(l.block.keyword.end.checked_sub(bom)?)
    });
    match (loop_item, &name, split) {
        (Some(_), Some(name), Some((head, tail))) => {
            // Name the loop as the specs did, right after its keyword.
            out.push_str(head);
            out.push_str(&format!(" {}", print_string(name)));
            out.push_str(tail);
        }
        (None, Some(name), _) => {
            out.push_str(&format!("loop {} {{}}\n\n", print_string(name)));
            out.push_str(defaults_text);
        }
        _ => out.push_str(defaults_text),
    }
    out.push_str("\n\n");
    for t in &reel.tasks {
        out.push_str(&format!("task {}", print_string(&t.name.text)));
        if let Some(title) = &t.title {
            out.push_str(&format!(" {}", print_string(&title.text)));
        }
        if !t.dependencies.is_empty() {
            out.push(':');
            for d in &t.dependencies {
                out.push_str(&format!(" {}", print_string(&d.text)));
            }
        }
        out.push_str(" {\n");
        for f in &t.block.fields {
            if let ValueKind::String(s) = &f.value.kind {
                out.push_str(&format!("  {} = {}\n", f.name.text, print_text(s)));
            }
        }
        out.push_str("}\n\n");
    }
    crate::fmt::format_source(&out)
}

/// Runs `loopc import`: exit 0 written, 1 the specs have errors (their
/// diagnostics are printed and nothing is written), 2 a file could not be
/// read or written.
pub fn run(args: &ImportArgs) -> i32 {
    let reel = match super::compile_paths(&args.specs, args.defaults.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let c = &reel.compilation;
    if !c.diagnostics.is_empty() {
        crate::check_cmd::print_compilation(c, &c.diagnostics);
    }
    let Some(plan) = &c.plan else {
        eprintln!("error: `{}` has errors; nothing imported", c.name);
        return exit::FAILURE;
    };
    let text = match to_loop(&reel) {
        Ok(t) => t,
        Err(diags) => {
            eprintln!(
                "error: internal: the generated plan does not parse ({} diagnostics); please report this",
                diags.len()
            );
            return exit::USAGE;
        }
    };
    // The promise of import: the same plan, task for task and key for key.
    let out_name = args
        .output
        .as_ref()
        .map_or_else(|| "plan.loop".to_string(), |p| p.display().to_string());
    let check = crate::compile(&out_name, &text);
    let same = check.plan.as_ref().is_some_and(|p| {
        p.name == plan.name
            && p.tasks.len() == plan.tasks.len()
            && p.tasks.iter().zip(&plan.tasks).all(|(a, b)| {
                a.name == b.name && a.key == b.key && a.dependencies == b.dependencies
            })
    });
    if !same {
        eprintln!(
            "error: internal: the generated plan does not compile to the specs' plan; please report this"
        );
        if !check.diagnostics.is_empty() {
            crate::check_cmd::print_compilation(&check, &check.diagnostics);
        }
        return exit::USAGE;
    }
    match &args.output {
        Some(path) => match std::fs::write(path, &text) {
            Ok(()) => exit::OK,
            Err(e) => {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                exit::USAGE
            }
        },
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => exit::OK,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
                Err(e) => {
                    eprintln!("error: cannot write the plan: {e}");
                    exit::USAGE
                }
            }
        }
    }
}
