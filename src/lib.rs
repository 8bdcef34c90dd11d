//! loopc: declarative, checked and cached loops of coding agents.
//!
//! The crate is shaped like a compiler; data flows one way:
//!
//! source → [`syntax`] (pest → [`ast`] with spans, never fails) →
//! [`check`] (names, fields, types → a resolved model and diagnostics) →
//! [`plan`] (petgraph DAG, defaults resolved, cache keys) →
//! [`render`] (`loopc graph`) or [`run`] (`loopc run`).
//!
//! [`compile`] runs the front-end and the plan phase in one call.

pub mod ast;
pub mod check;
pub mod check_cmd;
pub mod commands;
pub mod diagnostic;
pub mod exit;
pub mod fmt;
pub mod key;
pub mod lsp;
pub mod plan;
pub mod reel;
pub mod render;
pub mod run;
pub mod source_map;
pub mod span;
pub mod state;
pub mod syntax;

use diagnostic::{Code, Diagnostic};
use span::Span;
use std::path::Path;

/// The result of compiling one plan file: its tree, every diagnostic, and the
/// plan when there were no errors.
#[derive(Debug)]
pub struct Compilation {
    /// The file name as given (used in diagnostics).
    pub name: String,
    /// The source text (lossily decoded if the file was not UTF-8).
    pub source: String,
    /// The syntax tree (always present; unreadable items are error nodes).
    pub ast: ast::File,
    /// Every diagnostic, errors and warnings, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
    /// The compiled plan; `None` when any error was reported.
    pub plan: Option<plan::Plan>,
    /// The files behind `source` (one for a `.loop` file; a REEL spec's
    /// defaults plan and spec files otherwise): diagnostics are rendered
    /// through it so that each lands in its own file.
    pub files: source_map::SourceMap,
}

impl Compilation {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// `diagnostics` (this compilation's, possibly with severities changed)
    /// in the human format, each in its own file (see [`Compilation::files`]).
    pub fn render_plain(&self, diagnostics: &[Diagnostic]) -> String {
        self.files.render_plain(&self.source, diagnostics)
    }
}

/// Compiles `source`, the text of the plan file called `name` (its file stem
/// is the loop's default name).
///
/// A leading byte-order mark is ignored (spec §2): it is removed before
/// parsing, so spans and columns count from the first character after it.
pub fn compile(name: &str, source: &str) -> Compilation {
    compile_string(name, source.to_string())
}

/// [`compile`] for a source the caller owns, which becomes
/// [`Compilation::source`] without a copy.
pub fn compile_string(name: &str, source: String) -> Compilation {
    compile_impl(name, source, false).0
}

/// [`compile_string`] that also returns the checked model (definitions as far
/// as they resolve, even when the plan has errors), for the language server,
/// which would otherwise check the tree a second time on every keystroke.
pub fn compile_with_model(name: &str, source: String) -> (Compilation, check::Model) {
    let (compilation, model) = compile_impl(name, source, true);
    (compilation, model.unwrap_or_default())
}

fn compile_impl(
    name: &str,
    mut source: String,
    keep_model: bool,
) -> (Compilation, Option<check::Model>) {
    if source.starts_with('\u{FEFF}') {
        source.drain(..'\u{FEFF}'.len_utf8());
    }
    let stem = Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("plan")
        .to_string();
    let (ast, mut diagnostics) = syntax::parse(&source);
    let (model, more) = check::check(&ast);
    diagnostics.extend(more);
    // The plan takes the model's strings; a caller that keeps the model gets a copy.
    let kept = keep_model.then(|| model.clone());
    let (plan, more) = plan::build(model, &stem);
    diagnostics.extend(more);
    diagnostic::sort(&mut diagnostics);
    let plan = if diagnostics.iter().any(Diagnostic::is_error) {
        None
    } else {
        plan
    };
    let files = source_map::SourceMap::single(name, source.len());
    let compilation = Compilation {
        name: name.to_string(),
        source,
        ast,
        diagnostics,
        plan,
        files,
    };
    (compilation, kept)
}

/// Compiles raw file bytes. Bytes that are not UTF-8 are decoded lossily and
/// reported as E0001 at the first invalid byte (spec §2: source is UTF-8).
pub fn compile_bytes(name: &str, bytes: &[u8]) -> Compilation {
    match std::str::from_utf8(bytes) {
        Ok(text) => compile(name, text),
        Err(e) => {
            let text = String::from_utf8_lossy(bytes);
            let mut c = compile(name, &text);
            // Offsets count from after a byte-order mark, as in `compile`.
            let bom = if bytes.starts_with(b"\xEF\xBB\xBF") {
                3
            } else {
                0
            };
            let at = e.valid_up_to().saturating_sub(bom);
            c.diagnostics.insert(
                0,
                Diagnostic::new(
                    Code::E0001,
                    "file is not valid UTF-8",
                    Span::new(at, at + 1),
                    "invalid byte here",
                )
                .with_note("plan files must be UTF-8 encoded"),
            );
            c.plan = None;
            c
        }
    }
}

/// Why a plan file could not be read.
#[derive(Debug)]
pub struct LoadError {
    /// The path as given.
    pub path: String,
    /// The I/O error.
    pub error: std::io::Error,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read `{}`: {}", self.path, self.error)
    }
}

/// Reads and compiles the plan file at `path`.
///
/// Errors: the file cannot be read (missing, a directory, no permission).
pub fn compile_file(path: &Path) -> Result<Compilation, LoadError> {
    let name = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => Ok(match String::from_utf8(bytes) {
            Ok(text) => compile_string(&name, text),
            Err(e) => compile_bytes(&name, e.as_bytes()),
        }),
        Err(error) => Err(LoadError { path: name, error }),
    }
}

/// The `*.loop` files directly inside `dir`, sorted by name; `None` when
/// `dir` is not a readable directory.
pub fn loop_files_in(dir: &Path) -> Option<Vec<std::path::PathBuf>> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut files: Vec<std::path::PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "loop"))
        .collect();
    files.sort();
    Some(files)
}

/// Reads and compiles a plan given on the command line: a `.loop` file, or
/// a REEL spec (`.md`, `.json`, `.feature`) or a directory of them, lowered
/// into a plan with the defaults plan `defaults` (else `defaults.loop`
/// beside the specs; see [`reel::compile_paths`] and `docs/reel.md`).
///
/// Errors: a file or directory cannot be read; `defaults` given with a
/// `.loop` plan (it only applies to REEL specs).
pub fn compile_path(path: &Path, defaults: Option<&Path>) -> Result<Compilation, LoadError> {
    if path.is_dir() || reel::is_spec(path) {
        return reel::compile_paths(&[path.to_path_buf()], defaults).map(|r| r.compilation);
    }
    if defaults.is_some() {
        return Err(LoadError {
            path: path.display().to_string(),
            error: std::io::Error::other(
                "--defaults applies to REEL specs (.md, .json, .feature or a directory of them), not to a .loop plan",
            ),
        });
    }
    compile_file(path)
}
