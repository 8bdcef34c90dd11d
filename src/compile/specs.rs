//! REEL specs (files, a directory of them, a spec tree) compiled with their
//! defaults plan into one plan: read, lowered into task items after the
//! defaults plan's, then the same check and plan as a `.loop` file
//! ([`super::analyse`]).

use super::{
    Compilation, Goal, LoadError, Text, Want, analyse, encoding_error, loop_files_in, plan_if_clean,
};
use crate::ast::{self, Item};
use crate::check;
use crate::diagnostic::{Code, Diagnostic};
use crate::origin::{DEFAULTS_FILE, Origin, stem_of};
use crate::plan::{self, Plan};
use crate::reel;
use crate::source_map::SourceMap;
use crate::span::Span;
use crate::syntax;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A compiled REEL plan: the compilation, and the tasks lowered from the
/// specs (for `loopc import`).
#[derive(Debug)]
pub struct Reel {
    /// The compilation of the specs plus the defaults plan.
    pub compilation: Compilation,
    /// The task items made from the specs, in file order (spans into
    /// `compilation.source`).
    pub tasks: Vec<ast::TaskItem>,
    /// Where the defaults plan's text is in `compilation.source`, if one was used.
    pub defaults: Option<Span>,
    /// The spec files read, in order.
    pub files: Vec<PathBuf>,
}

/// Compiles the REEL specs `inputs` (files, or directories of specs) with
/// their defaults plan into one plan (docs/language.md items; `docs/reel.md`).
///
/// One spec file alone keeps bare ids as task names; a directory or several
/// files namespace each file's tasks by its stem. The plan's name is the
/// JSON spec's `name` (when it is a valid task name), else the file's stem,
/// or the directory's name.
///
/// Errors: a spec, a directory or the defaults file cannot be read, or a
/// directory holds no spec. Problems in their contents are diagnostics in the
/// compilation.
pub fn compile_specs(inputs: &[PathBuf], defaults: Option<&Path>) -> Result<Reel, LoadError> {
    compile_specs_for(inputs, defaults, Goal::Plan)
}

/// [`compile_specs`] for `goal`.
pub(super) fn compile_specs_for(
    inputs: &[PathBuf],
    defaults: Option<&Path>,
    goal: Goal,
) -> Result<Reel, LoadError> {
    // The defaults plan is a plan: a spec (or anything else) named there
    // would be parsed as one and fail as a plan.
    if let Some(d) = defaults
        && d.extension().is_none_or(|x| x != "loop")
    {
        return Err(LoadError::misuse(
            d,
            "--defaults names the defaults plan, a .loop file (its agents, gates, defaults, \
             budget and loop); specs are given as the plan",
        ));
    }
    // A spec tree (`docs/reel.md`, "Spec trees"): every stage's specs.
    let tree = match inputs {
        [one] if one.is_dir() && reel::is_spec_tree(one) => Some(one.clone()),
        _ => None,
    };
    let (files, stages): (Vec<PathBuf>, Vec<usize>) = match &tree {
        Some(dir) => reel::tree_files(dir)
            .map_err(|error| LoadError {
                path: dir.display().to_string(),
                error,
            })?
            .into_iter()
            .unzip(),
        None => (spec_files_of(inputs)?, Vec::new()),
    };
    let display_name = inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    let mut read = Gathered {
        namespaced: inputs.len() > 1 || inputs.first().is_some_and(|p| p.is_dir()),
        in_tree: tree.is_some(),
        ..Gathered::default()
    };
    let defaults_file = defaults_path(inputs, defaults);
    let defaults_span = match &defaults_file {
        Some(path) => Some(read.defaults(path)?),
        None => None,
    };
    let mut name = plan_name(inputs);
    for path in &files {
        if let Some(n) = read.spec(path)? {
            name = n;
        }
    }
    if read.map.files().is_empty() {
        read.map.push(&mut read.buffer, &display_name, "");
    }

    let origin = Origin::Specs {
        name,
        first_spec: read
            .map
            .files()
            .get(usize::from(defaults_span.is_some()))
            .map(|f| f.span.start),
        defaults: defaults_file.is_some(),
        unreadable: read.diagnostics.iter().any(Diagnostic::is_error),
        empty_specs: read.empty_specs,
    };
    let in_tree = tree.as_ref().map(|_| fragments_in_tree(&read.items));
    read.diagnostics.extend(in_tree.unwrap_or_default());
    let ast = ast::File {
        items: read.items,
        comments: read.comments,
    };
    let want = Want { model: false, goal };
    let (ast, mut diagnostics, plan, _, task_count, context) =
        analyse(ast, read.diagnostics, &origin, want);
    // A REEL id problem and the language's own E0011 for the same name say one thing.
    diagnostics.dedup_by(|b, a| a.code == b.code && a.primary.span == b.primary.span);
    other_specs(&mut diagnostics, &files);
    let mut plan = plan_if_clean(plan, &diagnostics);
    if let (Some(dir), Some(plan)) = (tree, plan.as_mut()) {
        plan.pipeline = Some(pipeline_of(dir, plan, &files, &stages, read.tree_specs));
    }
    Ok(Reel {
        compilation: Compilation {
            name: display_name,
            source: read.buffer,
            ast,
            diagnostics,
            plan,
            tasks: task_count,
            files: read.map,
            context,
        },
        tasks: read.tasks,
        defaults: defaults_span,
        files,
    })
}

/// The plan's name before any spec names it: a directory's whole name
/// (`specs.d` is not `specs`; `.` is the current directory's), else the
/// first file's stem.
fn plan_name(inputs: &[PathBuf]) -> String {
    match inputs {
        [one] if one.is_dir() => std::fs::canonicalize(one)
            .ok()
            .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
            .unwrap_or_else(|| stem_of(one)),
        [first, ..] => stem_of(first),
        [] => "plan".to_string(),
    }
}

/// E0010 for each task of a spec tree's plan (its defaults plan's) with
/// `expands`: a grown plan is compiled again from its syntax tree, which
/// would lose the tree's stages, so `loopc run` cannot run it; said by
/// `check` too, before any run.
fn fragments_in_tree(items: &[Item]) -> Vec<Diagnostic> {
    items
        .iter()
        .filter_map(|item| match item {
            Item::Task(t) => t
                .block
                .fields
                .iter()
                .find(|f| f.name.text == "expands")
                .map(|f| (t, f)),
            _ => None,
        })
        .map(|(t, f)| {
            Diagnostic::new(
                Code::E0010,
                format!(
                    "task `{}` has `expands`, which a REEL spec tree does not take",
                    t.name.text
                ),
                f.span,
                "plan fragments are not supported in spec trees",
            )
            .with_note("run the task from a `.loop` plan, or remove `expands`")
        })
        .collect()
}

/// Adds to each E0005 of a qualified dependency (`billing.c3d4e5f6`) on a
/// spec that is not among those read (`files`) what fixes it: reading the
/// specs together (docs/reel.md).
fn other_specs(diagnostics: &mut [Diagnostic], files: &[PathBuf]) {
    let stems: Vec<String> = files.iter().map(|f| stem_of(f)).collect();
    let dir = files.first().map_or_else(
        || ".".to_string(),
        |f| super::parent_dir(f).display().to_string(),
    );
    for d in diagnostics.iter_mut() {
        let Some(name) = check::unknown_task(d) else {
            continue;
        };
        let Some((stem, _)) = name.rsplit_once('.') else {
            continue;
        };
        let name = name.to_string();
        if stems.iter().any(|s| s == stem) {
            continue;
        }
        d.notes.push(format!(
            "`{name}` is a task of the spec `{stem}`, which was not read with this one: check \
             (or import) the specs together, e.g. their directory: `loopc check {dir}`"
        ));
    }
}

/// The defaults plan and the specs read so far, as one text.
#[derive(Default)]
struct Gathered {
    /// Every file's text, one after the other.
    buffer: String,
    map: SourceMap,
    items: Vec<Item>,
    comments: Vec<Span>,
    diagnostics: Vec<Diagnostic>,
    /// The task items made from the specs, in file order.
    tasks: Vec<ast::TaskItem>,
    /// Each spec's tasks are named `<stem>.<id>` (a directory or several files).
    namespaced: bool,
    /// The specs are a spec tree's.
    in_tree: bool,
    /// Per spec file of a tree: its text and the names of its tasks.
    tree_specs: Vec<(String, Vec<String>)>,
    /// Each spec stem taken, with the file that took it.
    namespaces: HashMap<String, String>,
    /// Where each spec without tasks starts.
    empty_specs: Vec<usize>,
}

impl Gathered {
    /// Reads and parses the defaults plan at `path`, the first file;
    /// returns where its text is.
    fn defaults(&mut self, path: &Path) -> Result<Span, LoadError> {
        let text = Text::read(path)?;
        let start = self
            .map
            .push(&mut self.buffer, &path.display().to_string(), &text.text);
        let (file, diags) = syntax::parse(&text.text);
        // The defaults plan is the first file, at offset 0: its spans need no shift.
        debug_assert_eq!(start, 0);
        self.items.extend(file.items);
        self.comments.extend(file.comments);
        self.diagnostics.extend(diags);
        self.diagnostics.extend(encoding_error(
            text.invalid_at.map(|at| start + at),
            SPEC_ENCODING,
        ));
        Ok(Span::new(start, start + text.text.len()))
    }

    /// Reads the spec at `path` and lowers its tasks; returns the plan name
    /// it gives itself, when that counts (a spec alone) and is valid.
    fn spec(&mut self, path: &Path) -> Result<Option<String>, LoadError> {
        let diagnostics_before = self.diagnostics.len();
        let text = Text::read(path)?;
        let file_name = path.display().to_string();
        let start = self.map.push(&mut self.buffer, &file_name, &text.text);
        self.diagnostics.extend(encoding_error(
            text.invalid_at.map(|at| start + at),
            SPEC_ENCODING,
        ));
        let stem = stem_of(path);
        let namespaced = self.namespaced && reel::is_spec(path);
        if namespaced {
            self.take_stem(&stem, start, file_name);
        }
        let mut spec = reel::lower_spec(path, &text.text, start, self.namespaced);
        self.diagnostics.append(&mut spec.diagnostics);
        if namespaced {
            self.check_stem(&stem, start, &mut spec.tasks);
        }
        let name = spec
            .name
            .filter(|n| !self.namespaced && check::names::task_name_problem(n).is_none());
        // W0004 for a spec without tasks, unless what kept it from
        // declaring any was an error of its own (said instead).
        let own = self
            .diagnostics
            .get(diagnostics_before..)
            .unwrap_or_default();
        if spec.tasks.is_empty() && !own.iter().any(Diagnostic::is_error) {
            self.empty_specs.push(start);
        }
        if self.in_tree {
            let names = spec.tasks.iter().map(|t| t.name.text.clone()).collect();
            self.tree_specs.push((text.text, names));
        }
        self.items
            .extend(spec.tasks.iter().cloned().map(Item::Task));
        self.tasks.extend(spec.tasks);
        Ok(name)
    }

    /// E0004 when another spec (`file_name`'s, starting at `start`) has
    /// taken `stem` already: both files' tasks would be `<stem>.<id>`.
    fn take_stem(&mut self, stem: &str, start: usize, file_name: String) {
        let Some(other) = self.namespaces.get(stem) else {
            self.namespaces.insert(stem.to_string(), file_name);
            return;
        };
        self.diagnostics.push(
            Diagnostic::new(
                Code::E0004,
                format!("two specs have the stem `{stem}`"),
                Span::at(start),
                format!("this file's tasks would be named `{stem}.<id>`"),
            )
            .with_note(if self.in_tree {
                format!(
                    "so would those of `{other}`; a spec is in one stage at a time: \
                     remove or rename one of the files"
                )
            } else {
                format!("so would those of `{other}`; rename one of the files")
            }),
        );
    }

    /// E0011 when `stem`, the file name of the spec at `start`, cannot
    /// start a task name: one problem, said once at the file, not once per
    /// task. Its `tasks` get a stand-in namespace so that nothing else is
    /// reported about them.
    fn check_stem(&mut self, stem: &str, start: usize, tasks: &mut [ast::TaskItem]) {
        let Some(why) = check::names::task_name_problem(&format!("{stem}.a1b2c3d4")) else {
            return;
        };
        self.diagnostics.push(
            Diagnostic::new(
                Code::E0011,
                format!("the spec file name `{stem}` cannot start its tasks' names"),
                Span::at(start),
                format!("this file's tasks would be named `{stem}.<id>`"),
            )
            .with_note(format!("{why}; rename the file")),
        );
        let stand_in = format!("spec{}", self.map.files().len());
        let rename = |n: &mut ast::TaskName| {
            if let Some(rest) = n.text.strip_prefix(&format!("{stem}.")) {
                n.text = format!("{stand_in}.{rest}");
            }
        };
        for t in tasks {
            rename(&mut t.name);
            t.dependencies.iter_mut().for_each(rename);
        }
    }
}

/// The pipeline of the spec tree `dir` compiled into `plan`: each of
/// `files` with its stage (`stages`, alike), its text and its tasks'
/// indices (`specs`: text and task names per file).
fn pipeline_of(
    dir: PathBuf,
    plan: &Plan,
    files: &[PathBuf],
    stages: &[usize],
    specs: Vec<(String, Vec<String>)>,
) -> plan::Pipeline {
    let index: HashMap<&str, usize> = plan
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let specs = files
        .iter()
        .zip(stages)
        .zip(specs)
        .map(|((path, &stage), (text, names))| {
            let mut tasks: Vec<usize> = names
                .iter()
                .filter_map(|n| index.get(n.as_str()).copied())
                .collect();
            tasks.sort_unstable();
            plan::StageSpec {
                path: path.clone(),
                stage,
                text,
                tasks,
            }
        })
        .collect();
    plan::Pipeline {
        dir,
        specs,
        ..plan::Pipeline::default()
    }
}

/// The note of E0001 for a REEL spec or its defaults plan.
const SPEC_ENCODING: &str = "spec and plan files must be UTF-8 encoded";

/// The spec files `inputs` stand for: each file as given, each directory's
/// specs ([`reel::spec_files`]).
///
/// Errors: a directory cannot be read or holds no spec (a mistyped path,
/// not an empty plan).
fn spec_files_of(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    let mut files = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            files.push(input.clone());
            continue;
        }
        let found = reel::spec_files(input).map_err(|error| LoadError {
            path: input.display().to_string(),
            error,
        })?;
        if found.is_empty() {
            let plans = loop_files_in(input).map_or(0, |f| f.len());
            let why = if plans > 0 {
                format!(
                    "a directory of {plans} .loop plan(s) and no REEL spec (.md, .json, .feature): name the plan file"
                )
            } else {
                "a directory with no REEL spec (.md, .json, .feature) and no .loop plan in it"
                    .to_string()
            };
            return Err(LoadError {
                path: input.display().to_string(),
                error: std::io::Error::new(std::io::ErrorKind::NotFound, why),
            });
        }
        files.extend(found);
    }
    Ok(files)
}

/// The defaults plan for `inputs`: `given`, else `defaults.loop` in the
/// first input's directory (or in the first input, when it is a directory).
fn defaults_path(inputs: &[PathBuf], given: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = given {
        return Some(p.to_path_buf());
    }
    let candidate = super::plan_dir(inputs.first()?).join(DEFAULTS_FILE);
    candidate.is_file().then_some(candidate)
}
