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
    // Per spec file of a tree: its text and the names of its tasks.
    let mut tree_specs: Vec<(String, Vec<String>)> = Vec::new();
    let namespaced = inputs.len() > 1 || inputs.first().is_some_and(|p| p.is_dir());
    let display_name = inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");

    let mut buffer = String::new();
    let mut map = SourceMap::default();
    let mut items = Vec::new();
    let mut comments = Vec::new();
    let mut diagnostics = Vec::new();
    let mut tasks = Vec::new();

    let defaults_file = defaults_path(inputs, defaults);
    let mut defaults_span = None;
    if let Some(path) = &defaults_file {
        let text = Text::read(path)?;
        let start = map.push(&mut buffer, &path.display().to_string(), &text.text);
        let (file, diags) = syntax::parse(&text.text);
        // The defaults plan is the first file, at offset 0: its spans need no shift.
        debug_assert_eq!(start, 0);
        items.extend(file.items);
        comments.extend(file.comments);
        diagnostics.extend(diags);
        diagnostics.extend(encoding_error(
            text.invalid_at.map(|at| start + at),
            SPEC_ENCODING,
        ));
        defaults_span = Some(Span::new(start, start + text.text.len()));
    }

    let mut name = match inputs {
        // A directory's whole name (`specs.d` is not `specs`); `.` is the
        // current directory's.
        [one] if one.is_dir() => std::fs::canonicalize(one)
            .ok()
            .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
            .unwrap_or_else(|| stem_of(one)),
        [first, ..] => stem_of(first),
        [] => "plan".to_string(),
    };
    let mut namespaces: HashMap<String, String> = HashMap::new();
    let mut empty_specs = Vec::new();
    for path in &files {
        let diagnostics_before = diagnostics.len();
        let text = Text::read(path)?;
        let file_name = path.display().to_string();
        let start = map.push(&mut buffer, &file_name, &text.text);
        diagnostics.extend(encoding_error(
            text.invalid_at.map(|at| start + at),
            SPEC_ENCODING,
        ));
        let stem = stem_of(path);
        if namespaced && reel::is_spec(path) {
            match namespaces.get(&stem) {
                Some(other) => diagnostics.push(
                    Diagnostic::new(
                        Code::E0004,
                        format!("two specs have the stem `{stem}`"),
                        Span::at(start),
                        format!("this file's tasks would be named `{stem}.<id>`"),
                    )
                    .with_note(if tree.is_some() {
                        format!(
                            "so would those of `{other}`; a spec is in one stage at a time: \
                             remove or rename one of the files"
                        )
                    } else {
                        format!("so would those of `{other}`; rename one of the files")
                    }),
                ),
                None => {
                    namespaces.insert(stem.clone(), file_name);
                }
            }
        }
        let mut spec = reel::lower_spec(path, &text.text, start, namespaced);
        diagnostics.append(&mut spec.diagnostics);
        // A file name that cannot start a task name is one problem, said
        // once at the file, not once per task (its tasks get a stand-in
        // namespace so that nothing else is reported about them).
        if namespaced
            && reel::is_spec(path)
            && let Some(why) = check::names::task_name_problem(&format!("{stem}.a1b2c3d4"))
        {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0011,
                    format!("the spec file name `{stem}` cannot start its tasks' names"),
                    Span::at(start),
                    format!("this file's tasks would be named `{stem}.<id>`"),
                )
                .with_note(format!("{why}; rename the file")),
            );
            let stand_in = format!("spec{}", map.files().len());
            let rename = |n: &mut ast::TaskName| {
                if let Some(rest) = n.text.strip_prefix(&format!("{stem}.")) {
                    n.text = format!("{stand_in}.{rest}");
                }
            };
            for t in &mut spec.tasks {
                rename(&mut t.name);
                t.dependencies.iter_mut().for_each(rename);
            }
        }
        if !namespaced
            && let Some(n) = spec.name
            && check::names::task_name_problem(&n).is_none()
        {
            name = n;
        }
        // W0004 for a spec without tasks, unless what kept it from
        // declaring any was an error of its own (said instead).
        let own = diagnostics.get(diagnostics_before..).unwrap_or_default();
        if spec.tasks.is_empty() && !own.iter().any(Diagnostic::is_error) {
            empty_specs.push(start);
        }
        if tree.is_some() {
            let names = spec.tasks.iter().map(|t| t.name.text.clone()).collect();
            tree_specs.push((text.text.clone(), names));
        }
        items.extend(spec.tasks.iter().cloned().map(Item::Task));
        tasks.extend(spec.tasks);
    }
    if map.files().is_empty() {
        map.push(&mut buffer, &display_name, "");
    }

    let origin = Origin::Specs {
        name,
        first_spec: map
            .files()
            .get(usize::from(defaults_span.is_some()))
            .map(|f| f.span.start),
        defaults: defaults_file.is_some(),
        unreadable: diagnostics.iter().any(Diagnostic::is_error),
        empty_specs,
    };
    let ast = ast::File { items, comments };
    let want = Want { model: false, goal };
    let (ast, mut diagnostics, plan, _, task_count) = analyse(ast, diagnostics, &origin, want);
    // A REEL id problem and the language's own E0011 for the same name say one thing.
    diagnostics.dedup_by(|b, a| a.code == b.code && a.primary.span == b.primary.span);
    let mut plan = plan_if_clean(plan, &diagnostics);
    if let (Some(dir), Some(plan)) = (tree, plan.as_mut()) {
        plan.pipeline = Some(pipeline_of(dir, plan, &files, &stages, tree_specs));
    }
    Ok(Reel {
        compilation: Compilation {
            name: display_name,
            source: buffer,
            ast,
            diagnostics,
            plan,
            tasks: task_count,
            files: map,
        },
        tasks,
        defaults: defaults_span,
        files,
    })
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
    let first = inputs.first()?;
    let dir = if first.is_dir() {
        first.clone()
    } else {
        match first.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    };
    let candidate = dir.join(DEFAULTS_FILE);
    candidate.is_file().then_some(candidate)
}
