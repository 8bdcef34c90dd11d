//! The `.loop` plan equivalent to REEL specs, for `loopc import`
//! (`docs/reel.md`).
//!
//! The output is the defaults plan's text (comments kept), a `loop` item
//! naming the plan as the specs did, and one task per REEL task, formatted
//! with [`crate::fmt::format_source`]. It compiles to the same plan: the same
//! task names, dependencies and keys (docs/cache.md): [`checked`] makes sure of
//! it, and the command writes nothing else.

use crate::Compilation;
use crate::ast::{Item, ValueKind};
use crate::compile::Reel;
use crate::diagnostic::Diagnostic;
use crate::plan::Plan;
use crate::syntax::literal::{print_string, print_text};

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

/// Why [`checked`] has no text to give: both are bugs of this module.
#[derive(Debug)]
pub enum ImportError {
    /// The generated text does not parse (the diagnostics of `fmt`).
    Unparsable(Vec<Diagnostic>),
    /// The generated text compiles to another plan, or not at all: its
    /// compilation.
    Differs(Box<Compilation>),
}

/// [`to_loop`] for the REEL plan `reel`, whose compiled plan is `plan`,
/// checked to compile (as the file `out_name`) to the same plan: the same
/// name, and the same tasks in order with the same keys and dependencies.
///
/// # Errors
///
/// [`ImportError`] when the text does not parse or compiles to another plan.
pub fn checked(reel: &Reel, plan: &Plan, out_name: &str) -> Result<String, ImportError> {
    let text = to_loop(reel).map_err(ImportError::Unparsable)?;
    // The promise of import: the same plan, task for task and key for key.
    let check = crate::compile(out_name, &text);
    let same = check.plan.as_ref().is_some_and(|p| {
        p.name == plan.name
            && p.tasks.len() == plan.tasks.len()
            && p.tasks.iter().zip(&plan.tasks).all(|(a, b)| {
                a.name == b.name && a.key == b.key && a.dependencies == b.dependencies
            })
    });
    if same {
        Ok(text)
    } else {
        Err(ImportError::Differs(Box::new(check)))
    }
}
