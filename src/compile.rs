//! The front-end driver: files → source map → parse → check → plan, for a
//! `.loop` plan and for REEL specs alike.
//!
//! A `.loop` file is parsed by [`crate::syntax`]; REEL specs are read by
//! their front-ends and lowered into task items ([`crate::reel`]), after the
//! items of their defaults plan. Either way the items go through the same
//! [`crate::check`] and [`crate::plan`] calls, told where they came from
//! ([`Origin`]) so that the few messages that depend on it are worded
//! right the first time. Files are read here, once: bytes that are not
//! UTF-8 are decoded lossily and reported as E0001 at the first invalid
//! byte (docs/language.md: source is UTF-8). A leading byte-order mark is removed
//! from a `.loop` file before parsing (spans count from after it); in the
//! buffer of REEL specs each file keeps it and its front-end skips it, so
//! that the buffer holds the files' bytes.

use crate::ast::{self, Item};
use crate::check;
use crate::diagnostic::{self, Code, Diagnostic};
use crate::model::{Model, PathPattern};
use crate::origin::Origin;
use crate::plan::{self, Plan};
use crate::reel;
use crate::source_map::SourceMap;
use crate::span::Span;
use crate::syntax;
use std::path::{Path, PathBuf};

mod specs;
pub use specs::{Reel, compile_specs};

/// The result of compiling one plan file: its tree, every diagnostic, and the
/// plan when there were no errors.
#[derive(Debug)]
pub struct Compilation {
    /// The file name as given (used in diagnostics).
    pub name: String,
    /// The source text (lossily decoded if the file was not UTF-8).
    pub source: String,
    /// The syntax tree (unreadable items are error nodes); empty for
    /// [`Goal::Diagnostics`], which drops each chunk of a `.loop` file's
    /// tree once its items are checked (and a REEL spec's tree at the end).
    pub ast: ast::File,
    /// Every diagnostic, errors and warnings, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
    /// The compiled plan; `None` when any error was reported, and always
    /// for [`Goal::Diagnostics`].
    pub plan: Option<Plan>,
    /// How many tasks the items define (whether or not a plan was built).
    pub tasks: usize,
    /// The files behind `source` (one for a `.loop` file; a REEL spec's
    /// defaults plan and spec files otherwise): diagnostics are rendered
    /// through it so that each lands in its own file.
    pub files: SourceMap,
    /// Every `context` path the plan names, with where it is written
    /// (docs/language.md "Context every agent reads"): the command layer
    /// asks [`crate::check::context::missing`] whether each is in the
    /// checkout (`loopc check`) or in the commit a run starts from.
    pub context: Vec<PathPattern>,
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

/// What a compilation is for: how far it goes past the diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// The plan too: defaults resolved and cache keys computed, for every
    /// command that uses it (`run`, `graph`, `list` …).
    Plan,
    /// The diagnostics only (`loopc check`): every diagnostic a [`Goal::Plan`]
    /// compilation reports, the same bytes, but no plan is built
    /// ([`Compilation::plan`] is `None`). Resolving and keying reports
    /// nothing of its own and was a quarter of a large plan's check and
    /// half of its memory. A `.loop` file's tree is never whole: it is
    /// checked chunk by chunk as it is parsed ([`syntax::parse_each`]),
    /// into a model without texts ([`check::Detail::Diagnostics`]).
    Diagnostics,
}

/// What [`compile_loop`] keeps besides the compilation.
#[derive(Clone, Copy)]
struct Want {
    /// The checked model too (the language server).
    model: bool,
    goal: Goal,
}

impl Want {
    const PLAN: Want = Want {
        model: false,
        goal: Goal::Plan,
    };
    const PLAN_AND_MODEL: Want = Want {
        model: true,
        goal: Goal::Plan,
    };
}

/// Why a plan file could not be read.
#[derive(Debug)]
pub struct LoadError {
    /// The path as given.
    pub path: String,
    /// The I/O error, or ([`LoadError::misuse`]) why the path was not read.
    pub error: std::io::Error,
}

/// Why a path given on the command line was not read: the command line
/// misuses it (`--defaults` with a `.loop` plan).
#[derive(Debug)]
struct Misuse(&'static str);

impl std::fmt::Display for Misuse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Misuse {}

impl LoadError {
    /// `path` was not read because the command line misuses it: `why`.
    pub fn misuse(path: &Path, why: &'static str) -> LoadError {
        LoadError {
            path: path.display().to_string(),
            error: std::io::Error::other(Misuse(why)),
        }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.error.get_ref().is_some_and(|e| e.is::<Misuse>()) {
            return write!(f, "`{}`: {}", self.path, self.error);
        }
        write!(f, "cannot read `{}`: {}", self.path, self.error)
    }
}

/// Compiles `source`, the text of the plan file called `name` (its file stem
/// is the loop's default name).
///
/// A leading byte-order mark is ignored (docs/language.md): it is removed before
/// parsing, so spans and columns count from the first character after it.
pub fn compile(name: &str, source: &str) -> Compilation {
    compile_string(name, source.to_string())
}

/// [`compile`] for a source the caller owns, which becomes
/// [`Compilation::source`] without a copy.
pub fn compile_string(name: &str, source: String) -> Compilation {
    compile_loop(name, Text::valid(source), Want::PLAN, None).0
}

/// [`compile_string`] that also returns the checked model (definitions as far
/// as they resolve, even when the plan has errors), for the language server,
/// which would otherwise check the tree a second time on every keystroke.
pub fn compile_with_model(name: &str, source: String) -> (Compilation, Model) {
    let (compilation, model, _) =
        compile_loop(name, Text::valid(source), Want::PLAN_AND_MODEL, None);
    (compilation, model.unwrap_or_default())
}

/// The text a document had before an edit and the items it parsed into,
/// when that parse reported nothing (see [`compile_edited`]).
pub struct Previous {
    /// The previous text (without a byte-order mark).
    pub source: String,
    /// Its items.
    pub items: Vec<Item>,
}

/// [`compile_with_model`] for an edited document: the items of `previous`
/// that the edit cannot have changed are reused instead of parsed again
/// ([`syntax::reparse`]; the result is the same). Also says whether the
/// parse reported nothing, i.e. whether this version can be a `Previous`.
pub fn compile_edited(
    name: &str,
    source: String,
    previous: Option<Previous>,
) -> (Compilation, Model, bool) {
    let (compilation, model, clean) =
        compile_loop(name, Text::valid(source), Want::PLAN_AND_MODEL, previous);
    (compilation, model.unwrap_or_default(), clean)
}

/// Compiles raw file bytes. Bytes that are not UTF-8 are decoded lossily and
/// reported as E0001 at the first invalid byte (docs/language.md: source is UTF-8).
pub fn compile_bytes(name: &str, bytes: &[u8]) -> Compilation {
    compile_loop(name, Text::decode(bytes.to_vec()), Want::PLAN, None).0
}

/// Reads and compiles the plan file at `path`.
///
/// Errors: the file cannot be read (missing, a directory, no permission).
pub fn compile_file(path: &Path) -> Result<Compilation, LoadError> {
    compile_file_for(path, Goal::Plan)
}

/// [`compile_file`] for `goal`.
fn compile_file_for(path: &Path, goal: Goal) -> Result<Compilation, LoadError> {
    let text = Text::read(path)?;
    let want = Want { model: false, goal };
    let mut compiled = compile_loop(&path.display().to_string(), text, want, None).0;
    if is_reel_defaults(path) {
        drop_no_tasks(&mut compiled.diagnostics);
    }
    Ok(compiled)
}

/// The directory `path`'s file is in: its parent, `.` for a bare file name
/// (whose parent is empty).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The directory a plan given as `path` stands in: `path` itself for a
/// directory (of REEL specs, or a spec tree), else its file's directory
/// ([`parent_dir`]). Its repository is the plan's, whatever the current
/// directory.
pub fn plan_dir(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.to_path_buf()
    } else {
        parent_dir(path).to_path_buf()
    }
}

/// Whether `path` is the defaults plan of REEL specs (docs/reel.md): a
/// `defaults.loop` beside specs or at the top of a spec tree. It holds the
/// specs' agents, gates and settings and no task of its own, so checked
/// alone (`loopc check specs/defaults.loop`, an editor) it gets no W0004.
pub fn is_reel_defaults(path: &Path) -> bool {
    if path
        .file_name()
        .is_none_or(|n| n != crate::origin::DEFAULTS_FILE)
    {
        return false;
    }
    let dir = parent_dir(path);
    reel::is_spec_tree(dir) || reel::spec_files(dir).is_ok_and(|f| !f.is_empty())
}

/// Leaves out the W0004 ("the plan has no tasks") of `diagnostics`: that of
/// a REEL defaults plan ([`is_reel_defaults`]).
pub fn drop_no_tasks(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.retain(|d| d.code != crate::diagnostic::Code::W0004);
}

/// Reads and compiles a plan given on the command line: a `.loop` file, or
/// a REEL spec (`.md`, `.json`, `.feature`) or a directory of them, lowered
/// into a plan with the defaults plan `defaults` (else `defaults.loop`
/// beside the specs; see [`compile_specs`] and `docs/reel.md`).
///
/// Errors: a file or directory cannot be read; `defaults` given with a
/// `.loop` plan (it only applies to REEL specs).
pub fn compile_path(path: &Path, defaults: Option<&Path>) -> Result<Compilation, LoadError> {
    compile_path_for(path, defaults, Goal::Plan)
}

/// [`compile_path`] for `goal` ([`Goal::Diagnostics`]: `loopc check`).
///
/// Errors: as [`compile_path`].
pub fn compile_path_for(
    path: &Path,
    defaults: Option<&Path>,
    goal: Goal,
) -> Result<Compilation, LoadError> {
    if path.is_dir() || reel::is_spec(path) {
        return specs::compile_specs_for(&[path.to_path_buf()], defaults, goal)
            .map(|r| r.compilation);
    }
    if defaults.is_some() {
        return Err(LoadError::misuse(
            path,
            "--defaults applies to REEL specs (.md, .json, .feature or a directory of them), \
             not to a .loop plan",
        ));
    }
    compile_file_for(path, goal)
}

/// E0015 for each `context` file of `context` (a compilation's) that is
/// not a file in the checkout of the repository holding the plan at
/// `path` (a file, or a directory of specs), or in the plan's directory
/// outside a repository: what `loopc check` and the language server add
/// to a compilation's diagnostics (docs/language.md "Context every agent
/// reads"; `loopc run` asks the commit it starts from instead).
pub fn missing_context(context: &[PathPattern], path: &Path) -> Vec<Diagnostic> {
    if context.is_empty() {
        return Vec::new();
    }
    let dir = plan_dir(path);
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let root = dir
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(&dir)
        .to_path_buf();
    use check::context::Found;
    let mut found = |p: &str| match root.join(p) {
        f if f.is_file() => Found::File,
        d if d.is_dir() => Found::Directory,
        _ => Found::Missing,
    };
    check::context::missing(context, &mut found, "in the repository's checkout")
}

/// The `*.loop` files directly inside `dir`, sorted by name; `None` when
/// `dir` is not a readable directory.
pub fn loop_files_in(dir: &Path) -> Option<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "loop"))
        .collect();
    files.sort();
    Some(files)
}

/// The note of E0001 for a `.loop` file that is not UTF-8.
pub(crate) const PLAN_ENCODING: &str = "plan files must be UTF-8 encoded";
/// One file's text, decoded.
struct Text {
    /// The text; bytes that are not UTF-8 are replaced by U+FFFD.
    text: String,
    /// The byte offset of the first byte that is not UTF-8, if any.
    invalid_at: Option<usize>,
}

impl Text {
    fn valid(text: String) -> Text {
        Text {
            text,
            invalid_at: None,
        }
    }

    fn decode(bytes: Vec<u8>) -> Text {
        match String::from_utf8(bytes) {
            Ok(text) => Text::valid(text),
            Err(e) => Text {
                invalid_at: Some(e.utf8_error().valid_up_to()),
                text: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            },
        }
    }

    /// Reads and decodes the file at `path`.
    ///
    /// Errors: the file cannot be read.
    fn read(path: &Path) -> Result<Text, LoadError> {
        read_file(path)
            .map(Text::decode)
            .map_err(|error| LoadError {
                path: path.display().to_string(),
                error,
            })
    }
}

/// The bytes of the plan or spec file at `path`.
///
/// Errors: the file cannot be read, or it is not a regular file (a
/// directory is handled by the callers; a FIFO would block and a device
/// such as `/dev/zero` never ends, so neither is read).
pub fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    std::fs::read(path)
}

/// E0001 at the byte offset `invalid_at` (in the compiled text), if any;
/// `note` says which files must be UTF-8.
pub(crate) fn encoding_error(invalid_at: Option<usize>, note: &str) -> Option<Diagnostic> {
    invalid_at.map(|at| {
        Diagnostic::new(
            Code::E0001,
            "file is not valid UTF-8",
            Span::new(at, at + 1),
            "invalid byte here",
        )
        .with_note(note)
    })
}

/// Compiles the `.loop` file called `name` whose text is `text`; with
/// `want.model`, also returns the checked model; reuses the items of
/// `previous` (an earlier version of the text) where it can. The flag says
/// whether parsing reported nothing.
fn compile_loop(
    name: &str,
    text: Text,
    want: Want,
    previous: Option<Previous>,
) -> (Compilation, Option<Model>, bool) {
    let Text {
        text: mut source,
        invalid_at,
    } = text;
    let bom = if source.starts_with('\u{FEFF}') {
        source.drain(..'\u{FEFF}'.len_utf8());
        '\u{FEFF}'.len_utf8()
    } else {
        0
    };
    let origin = Origin::file(name);
    let (ast, mut diagnostics, plan, model, tasks, clean, context) = match (previous, want.goal) {
        // Only the diagnostics: the tree is checked as it is parsed and
        // dropped run by run; it is never whole.
        (None, Goal::Diagnostics) => {
            // A model kept for the caller keeps its texts.
            let detail = if want.model {
                check::Detail::Full
            } else {
                check::Detail::Diagnostics
            };
            let mut checker = check::Checker::new(detail, task_hint(&source));
            let diagnostics = syntax::parse_each(&source, &mut |items| checker.items(&items));
            let clean = diagnostics.is_empty();
            let (model, more) = checker.finish(&origin);
            let (diagnostics, plan, model, tasks, context) =
                after_check(model, diagnostics, more, &origin, want);
            (
                ast::File::default(),
                diagnostics,
                plan,
                model,
                tasks,
                clean,
                context,
            )
        }
        (previous, _) => {
            let (ast, diagnostics) = match previous {
                Some(p) => syntax::reparse(&p.source, p.items, &source),
                None => syntax::parse(&source),
            };
            let clean = diagnostics.is_empty();
            let (ast, diagnostics, plan, model, tasks, context) =
                analyse(ast, diagnostics, &origin, want);
            (ast, diagnostics, plan, model, tasks, clean, context)
        }
    };
    // The encoding comes first: it may explain every other diagnostic.
    // Offsets count from after a byte-order mark, as the parser's do.
    if let Some(d) = encoding_error(invalid_at.map(|at| at.saturating_sub(bom)), PLAN_ENCODING) {
        diagnostics.insert(0, d);
    }
    let plan = plan_if_clean(plan, &diagnostics);
    let files = SourceMap::single(name, source.len());
    let compilation = Compilation {
        name: name.to_string(),
        source,
        ast,
        diagnostics,
        plan,
        tasks,
        files,
        context,
    };
    (compilation, model, clean)
}

/// Checks and plans the items of `ast` (which came from `origin`), adding
/// the diagnostics to the front-end's `diagnostics` and sorting them.
/// Returns the tree (empty for [`Goal::Diagnostics`]), them, the plan
/// (`None` when there was an error, or for [`Goal::Diagnostics`]: its keys
/// are not computed), with `want.model` the checked model, and how many
/// tasks the items define, and the `context` files they name
/// ([`Compilation::context`]).
fn analyse(
    ast: ast::File,
    diagnostics: Vec<Diagnostic>,
    origin: &Origin,
    want: Want,
) -> (
    ast::File,
    Vec<Diagnostic>,
    Option<Plan>,
    Option<Model>,
    usize,
    Vec<PathPattern>,
) {
    let (model, more) = check::check(&ast, origin);
    // Nothing after the checker reads the tree: when no one else will
    // either, it is freed while the graph is built (the model shares its
    // long strings; the rest is a third of a large plan's memory, and
    // freeing it item by item a sixth of the check's time).
    let ast = match want.goal {
        Goal::Diagnostics => {
            free_later(ast);
            ast::File::default()
        }
        Goal::Plan => ast,
    };
    let (diagnostics, plan, model, tasks, context) =
        after_check(model, diagnostics, more, origin, want);
    (ast, diagnostics, plan, model, tasks, context)
}

/// What follows the checker: the graph's diagnostics and, with no error and
/// for [`Goal::Plan`], the plan. Adds the checker's diagnostics (`more`) and
/// the graph's to the front end's (`diagnostics`) and sorts them; returns
/// them, the plan, with `want.model` the checked model, how many tasks
/// the items define, and the `context` files they name.
fn after_check(
    mut model: Model,
    mut diagnostics: Vec<Diagnostic>,
    more: Vec<Diagnostic>,
    origin: &Origin,
    want: Want,
) -> (
    Vec<Diagnostic>,
    Option<Plan>,
    Option<Model>,
    usize,
    Vec<PathPattern>,
) {
    let keep_model = want.model;
    let context = context_files(&model);
    diagnostics.extend(more);
    let tasks = model.tasks.len();
    // With an error already, the plan would be discarded: only the
    // graph's diagnostics are computed, not the keys, and the model is
    // kept as it is; so for a caller that wants only the diagnostics.
    // Otherwise the plan takes the model's strings, and a caller that
    // keeps the model gets a copy.
    let errors = diagnostics.iter().any(Diagnostic::is_error);
    let (plan, more, kept) = if errors || want.goal == Goal::Diagnostics {
        let (plan, more) = plan::build_if(&mut model, origin, false);
        let kept = if keep_model {
            Some(model)
        } else {
            free_later(model);
            None
        };
        (plan, more, kept)
    } else {
        let kept = keep_model.then(|| model.clone());
        let (plan, more) = plan::build_if(&mut model, origin, true);
        (plan, more, kept)
    };
    diagnostics.extend(more);
    diagnostic::sort(&mut diagnostics);
    (diagnostics, plan, kept, tasks, context)
}

/// Every `context` path `model` names (`defaults`' first, then each
/// task's, in source order), with where it is written.
fn context_files(model: &Model) -> Vec<PathPattern> {
    model
        .defaults
        .context
        .iter()
        .chain(model.tasks.iter().flat_map(|t| &t.context))
        .cloned()
        .collect()
}

/// About how many tasks `source` defines: its lines that start with
/// `task` (a guess for the checker's room; a block string can hold such
/// lines, and a task need not start its line).
fn task_hint(source: &str) -> usize {
    let lines = memchr::memmem::find_iter(source.as_bytes(), b"\ntask ").count();
    lines + usize::from(source.starts_with("task "))
}

/// Frees `value` on a thread of its own, detached, so that the caller goes
/// on meanwhile (freeing a large plan's tree or model item by item takes a
/// sixth of its check); when no thread can start, here.
fn free_later<T: Send + 'static>(value: T) {
    let _freeing = std::thread::Builder::new().spawn(move || drop(value));
}

/// `plan`, unless `diagnostics` has an error.
fn plan_if_clean(plan: Option<Plan>, diagnostics: &[Diagnostic]) -> Option<Plan> {
    if diagnostics.iter().any(Diagnostic::is_error) {
        None
    } else {
        plan
    }
}
