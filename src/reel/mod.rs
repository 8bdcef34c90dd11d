//! REEL specs as plans: Markdown, JSON and Gherkin task lists (`docs/reel.md`).
//!
//! A REEL spec is a list of tasks, each with an 8-hex id, a title, a
//! description (the prompt), an acceptance command and dependencies. The
//! front-ends ([`markdown`], [`json`], [`gherkin`]) read one file each into a
//! [`Spec`] whose spans are byte offsets into that file. [`compile_paths`]
//! then lowers every task into an ordinary `.loop` task item,
//!
//! ```text
//! task "<id>" "<title>": "<dep>"… { prompt = <description>  accept = <acceptance> }
//! ```
//!
//! merges them with the items of the defaults plan (`--defaults FILE.loop` or
//! a `defaults.loop` beside the specs) and runs the usual checker and plan
//! phase on the result. All files sit in one buffer behind a
//! [`SourceMap`], so the checker's own diagnostics (E0004 duplicate id,
//! E0005 unknown dependency, E0006 cycle, …) point into the original spec
//! at the right line.
//!
//! In a directory (or with several specs) each file's tasks are namespaced by
//! the file's stem (`auth.md` gives `auth.a1b2c3d4`): a dependency without a
//! `.` is a task of the same file, one with a `.` is a qualified name.

pub mod gherkin;
pub mod id;
pub mod import;
pub mod json;
pub mod markdown;

use crate::ast::{self, Item};
use crate::diagnostic::{self, Code, Diagnostic};
use crate::source_map::SourceMap;
use crate::span::Span;
use crate::{Compilation, LoadError};
use std::path::{Path, PathBuf};

/// The file name of the defaults plan looked for beside the specs.
pub const DEFAULTS_FILE: &str = "defaults.loop";

/// The three REEL spec formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `*.md`: one `## <id>: <title>` heading per task.
    Markdown,
    /// `*.json`: `{"name": …, "tasks": [{"id", "description", "acceptance", "depends_on"}]}`.
    Json,
    /// `*.feature`: one Gherkin scenario per task, metadata in tags.
    Gherkin,
}

impl Format {
    /// The format of `path` by its extension (`md`/`markdown`, `json`,
    /// `feature`), if it is a REEL spec's.
    pub fn of(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()? {
            "md" | "markdown" => Some(Format::Markdown),
            "json" => Some(Format::Json),
            "feature" => Some(Format::Gherkin),
            _ => None,
        }
    }

    /// Reads `text` (one whole file) in this format.
    pub fn parse(self, text: &str) -> (Spec, Vec<Diagnostic>) {
        match self {
            Format::Markdown => markdown::parse(text),
            Format::Json => json::parse(text),
            Format::Gherkin => gherkin::parse(text),
        }
    }
}

/// A piece of text read from a spec and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The text (decoded: JSON escapes resolved, Markdown backticks removed).
    pub text: String,
    /// Byte offsets in the spec file.
    pub span: Span,
}

impl Located {
    /// `text` written at `span`.
    pub fn new(text: impl Into<String>, span: Span) -> Located {
        Located {
            text: text.into(),
            span,
        }
    }
}

/// One task of a spec, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecTask {
    /// The id (REEL: 8 lowercase hex characters; checked by [`validate`]).
    pub id: Located,
    /// Whether the id was made up (a Gherkin scenario without `@id:`).
    pub generated_id: bool,
    /// The title, if any.
    pub title: Option<Located>,
    /// The description (the prompt), if not empty.
    pub description: Option<Located>,
    /// The acceptance command, if one was written.
    pub acceptance: Option<Located>,
    /// The ids this task depends on, bare or qualified (`stem.id`).
    pub depends_on: Vec<Located>,
    /// The task's headline: the heading, the scenario line, the JSON id.
    pub header: Span,
    /// The whole task.
    pub span: Span,
}

/// One spec file, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spec {
    /// The plan name the spec gives itself (JSON `name`), if any.
    pub name: Option<Located>,
    /// The tasks in file order.
    pub tasks: Vec<SpecTask>,
}

/// Whether `id` is a REEL id: exactly 8 lowercase hex characters.
pub fn is_reel_id(id: &str) -> bool {
    id.len() == 8
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The checks every format shares: ids are REEL ids (E0011). Missing
/// acceptance commands (E0008) are the front-ends' to report, since only they
/// know how the command was meant to be written.
pub fn validate(spec: &Spec) -> Vec<Diagnostic> {
    spec.tasks
        .iter()
        .filter(|t| !t.generated_id && !is_reel_id(&t.id.text))
        .map(|t| {
            Diagnostic::new(
                Code::E0011,
                format!("invalid task id `{}`", t.id.text),
                t.id.span,
                "not 8 lowercase hex characters",
            )
            .with_note("REEL ids are 8 lowercase hex characters, e.g. `a1b2c3d4`; `loopc id` prints an unused one")
        })
        .collect()
}

/// E0008 for a task without an acceptance command, at `span`; `how` says
/// how to write one in the task's format.
pub fn missing_acceptance(task: &str, span: Span, how: &str) -> Diagnostic {
    Diagnostic::new(
        Code::E0008,
        format!("task `{task}` has no acceptance command"),
        span,
        "no acceptance command for this task",
    )
    .with_note(format!(
        "every REEL task says how its result is checked: {how}"
    ))
}

/// Whether `path` names a REEL spec by its extension.
pub fn is_spec(path: &Path) -> bool {
    Format::of(path).is_some()
}

/// The REEL specs directly inside `dir`, sorted by file name: every `*.md`,
/// `*.markdown`, `*.json` and `*.feature` file except `README*` (a
/// directory's README is documentation, not a spec). Not recursive.
///
/// Errors: `dir` cannot be read.
pub fn spec_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let readme = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.to_ascii_lowercase().starts_with("readme"));
        if is_spec(&path) && !readme && path.is_file() {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

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

fn read(path: &Path) -> Result<(String, Option<Diagnostic>), LoadError> {
    let bytes = std::fs::read(path).map_err(|error| LoadError {
        path: path.display().to_string(),
        error,
    })?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, None)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let d = Diagnostic::new(
                Code::E0001,
                "file is not valid UTF-8",
                Span::new(at, at + 1),
                "invalid byte here",
            )
            .with_note("spec and plan files must be UTF-8 encoded");
            Ok((text, Some(d)))
        }
    }
}

fn shifted(mut d: Diagnostic, by: usize) -> Diagnostic {
    d.primary.span = d.primary.span.shift(by);
    for l in &mut d.secondary {
        l.span = l.span.shift(by);
    }
    d
}

fn stem_of(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("plan")
        .to_string()
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

/// Compiles the REEL specs `inputs` (files, or directories of specs) with
/// their defaults plan into one plan (spec §3 items; `docs/reel.md`).
///
/// One spec file alone keeps bare ids as task names; a directory or several
/// files namespace each file's tasks by its stem. The plan's name is the
/// JSON spec's `name` (when it is a valid task name), else the file's stem,
/// or the directory's name.
///
/// Errors: a spec, a directory or the defaults file cannot be read, or a
/// directory holds no spec. Problems in their contents are diagnostics in the
/// compilation.
pub fn compile_paths(inputs: &[PathBuf], defaults: Option<&Path>) -> Result<Reel, LoadError> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let found = spec_files(input).map_err(|error| LoadError {
                path: input.display().to_string(),
                error,
            })?;
            // A directory without specs is a mistyped path, not an empty plan.
            if found.is_empty() {
                let plans = crate::loop_files_in(input).map_or(0, |f| f.len());
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
        } else {
            files.push(input.clone());
        }
    }
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
        let (text, bad) = read(path)?;
        let start = map.push(&mut buffer, &path.display().to_string(), &text);
        let (file, diags) = crate::syntax::parse(&text);
        // The defaults plan is the first file, at offset 0: its spans need no shift.
        debug_assert_eq!(start, 0);
        items.extend(file.items);
        comments.extend(file.comments);
        diagnostics.extend(diags);
        diagnostics.extend(bad);
        defaults_span = Some(Span::new(start, start + text.len()));
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
    let mut namespaces: std::collections::HashMap<String, (String, Span)> = Default::default();
    for path in &files {
        let (text, bad) = read(path)?;
        let file_name = path.display().to_string();
        let start = map.push(&mut buffer, &file_name, &text);
        diagnostics.extend(bad.map(|d| shifted(d, start)));
        let Some(format) = Format::of(path) else {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0001,
                    format!("`{file_name}` is not a REEL spec"),
                    Span::at(start),
                    "unknown kind of file",
                )
                .with_note(
                    "REEL specs are `.md`, `.json` or `.feature` files; plans are `.loop` files",
                ),
            );
            continue;
        };
        let (spec, diags) = format.parse(&text);
        diagnostics.extend(diags.into_iter().map(|d| shifted(d, start)));
        diagnostics.extend(validate(&spec).into_iter().map(|d| shifted(d, start)));
        let stem = stem_of(path);
        if !namespaced
            && let Some(n) = &spec.name
            && crate::check::names::task_name_problem(&n.text).is_none()
        {
            name = n.text.clone();
        }
        let namespace = namespaced.then_some(stem.as_str());
        if namespaced {
            if let Some((other, _)) = namespaces.get(&stem) {
                diagnostics.push(
                    Diagnostic::new(
                        Code::E0004,
                        format!("two specs have the stem `{stem}`"),
                        Span::at(start),
                        format!("this file's tasks would be named `{stem}.<id>`"),
                    )
                    .with_note(format!(
                        "so would those of `{other}`; rename one of the files"
                    )),
                );
            } else {
                namespaces.insert(stem.clone(), (file_name.clone(), Span::at(start)));
            }
        }
        for task in &spec.tasks {
            let item = lower(task, namespace, &stem, start, &mut diagnostics);
            items.push(Item::Task(item.clone()));
            tasks.push(item);
        }
    }
    if map.files().is_empty() {
        map.push(&mut buffer, &display_name, "");
    }

    let ast = ast::File { items, comments };
    let (model, more) = crate::check::check(&ast);
    // W0004 is about the specs: not when they could not be read, and at
    // the first spec rather than in the defaults plan.
    let front_end_errors = diagnostics.iter().any(Diagnostic::is_error);
    let first_spec = map
        .files()
        .get(usize::from(defaults_span.is_some()))
        .map(|f| f.span.start);
    diagnostics.extend(more.into_iter().filter_map(|mut d| {
        if d.code != Code::W0004 {
            return Some(d);
        }
        if front_end_errors {
            return None;
        }
        if let Some(at) = first_spec {
            d.primary.span = Span::at(at);
            d.primary.message = "no task in this spec".to_string();
            d.notes = vec!["a REEL task is a `## <id>: <title>` heading, a JSON `tasks` entry or a Gherkin `Scenario:`".to_string()];
        }
        Some(d)
    }));
    let (plan, more) = crate::plan::build(model, &name);
    // The plan phase's one E0009 is a default integration branch git refuses:
    // here the name came from a spec's file or directory, so say it there.
    diagnostics.extend(more.into_iter().map(|mut d| {
        if d.code == Code::E0009 {
            d.primary.span = Span::at(first_spec.unwrap_or(0));
            d.message = format!(
                "the plan name `{name}` does not make a valid branch name `loop/{name}`"
            );
            d.notes = vec![format!(
                "the plan is named after its spec file or directory; name it with `loop \"NAME\" {{}}` (or set `branch`) in {DEFAULTS_FILE} or the --defaults plan"
            )];
        }
        d
    }));
    diagnostic::sort(&mut diagnostics);
    // A REEL id problem and the language's own E0011 for the same name say one thing.
    diagnostics.dedup_by(|b, a| a.code == b.code && a.primary.span == b.primary.span);
    if defaults_file.is_none() {
        for d in diagnostics.iter_mut().filter(|d| d.code == Code::E0013) {
            d.notes = vec![format!(
                "REEL specs take their agent from a `{DEFAULTS_FILE}` beside them or from `--defaults FILE.loop`, e.g. `agent claude {{ run = \"claude -p\" }}  defaults {{ agent = claude }}`"
            )];
        }
    }
    let plan = if diagnostics.iter().any(Diagnostic::is_error) {
        None
    } else {
        plan
    };
    Ok(Reel {
        compilation: Compilation {
            name: display_name,
            source: buffer,
            ast,
            diagnostics,
            plan,
            files: map,
        },
        tasks,
        defaults: defaults_span,
        files,
    })
}

/// The task item for `task` of the file at buffer offset `start`.
fn lower(
    task: &SpecTask,
    namespace: Option<&str>,
    stem: &str,
    start: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> ast::TaskItem {
    let qualify = |id: &str| match namespace {
        Some(ns) => format!("{ns}.{id}"),
        None => id.to_string(),
    };
    let dependency = |dep: &str| {
        if !dep.contains('.') {
            return qualify(dep);
        }
        // A file may name its own tasks qualified; alone, they are bare.
        match (
            namespace,
            dep.strip_prefix(stem).and_then(|r| r.strip_prefix('.')),
        ) {
            (None, Some(bare)) if !bare.contains('.') => bare.to_string(),
            _ => dep.to_string(),
        }
    };
    let name = qualify(&task.id.text);
    let prompt = task.description.as_ref().or(task.title.as_ref());
    let mut fields = Vec::new();
    match prompt {
        Some(p) => fields.push(string_field("prompt", p, start)),
        None => {
            diagnostics.push(
                Diagnostic::new(
                    Code::E0008,
                    format!("task `{name}` has neither a description nor a title"),
                    task.header.shift(start),
                    "nothing to give the agent as its prompt",
                )
                .with_note("the description (or, without one, the title) is the agent's prompt"),
            );
            let empty = Located::new("", task.header);
            fields.push(string_field("prompt", &empty, start));
        }
    }
    if let Some(a) = &task.acceptance {
        fields.push(string_field("accept", a, start));
    }
    let span = task.span.shift(start);
    ast::TaskItem {
        name: ast::TaskName {
            text: name,
            span: task.id.span.shift(start),
            quoted: true,
        },
        title: task.title.as_ref().map(|t| ast::StrLit {
            text: t.text.clone(),
            span: t.span.shift(start),
        }),
        dependencies: task
            .depends_on
            .iter()
            .map(|d| ast::TaskName {
                text: dependency(&d.text),
                span: d.span.shift(start),
                quoted: true,
            })
            .collect(),
        block: ast::Block {
            span,
            keyword: task.header.shift(start),
            body: span,
            fields,
        },
        span,
    }
}

fn string_field(name: &str, value: &Located, start: usize) -> ast::Field {
    let span = value.span.shift(start);
    ast::Field {
        name: ast::Ident {
            text: name.to_string(),
            span,
        },
        value: ast::Value {
            kind: ast::ValueKind::String(value.text.clone()),
            span,
        },
        span,
    }
}

/// Text helpers shared by the line-based front-ends.
pub(crate) mod text {
    use crate::span::Span;

    /// One line of a file: its text without the line break (and without a
    /// `\r` before it) and the byte offset where it starts.
    #[derive(Clone, Copy, Debug)]
    pub struct Line<'a> {
        /// Byte offset of the line's first byte in the file.
        pub start: usize,
        /// The line's text.
        pub text: &'a str,
    }

    impl<'a> Line<'a> {
        /// The span of `sub`, which must be a slice of this line's text.
        pub fn span_of(&self, sub: &str) -> Span {
            let at = (sub.as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize);
            let at = at.min(self.text.len());
            Span::new(
                self.start + at,
                self.start + (at + sub.len()).min(self.text.len()),
            )
        }

        /// The span of the whole line (without its line break).
        pub fn span(&self) -> Span {
            Span::new(self.start, self.start + self.text.len())
        }

        /// Whether the line is empty or whitespace only.
        pub fn is_blank(&self) -> bool {
            self.text.trim().is_empty()
        }
    }

    /// The lines of `text`, a leading byte-order mark skipped.
    pub fn lines(text: &str) -> Vec<Line<'_>> {
        let mut out = Vec::new();
        let mut start = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let body = text.get(start..).unwrap_or("");
        for raw in body.split_inclusive('\n') {
            let line = raw.strip_suffix('\n').unwrap_or(raw);
            let line = line.strip_suffix('\r').unwrap_or(line);
            out.push(Line { start, text: line });
            start += raw.len();
        }
        out
    }

    /// The text of `lines` as one prompt: leading and trailing blank lines
    /// dropped, the common leading whitespace of the non-blank lines removed,
    /// trailing whitespace of each line removed, lines joined by `\n`; with
    /// the span from the first to the last non-blank line. `None` when every
    /// line is blank.
    pub fn block(lines: &[Line<'_>]) -> Option<(String, Span)> {
        let first = lines.iter().position(|l| !l.is_blank())?;
        let last = lines.iter().rposition(|l| !l.is_blank())?;
        let lines = &lines[first..=last];
        let indent = lines
            .iter()
            .filter(|l| !l.is_blank())
            .map(|l| l.text.len() - l.text.trim_start_matches([' ', '\t']).len())
            .min()
            .unwrap_or(0);
        let text = lines
            .iter()
            .map(|l| l.text.get(indent..).unwrap_or("").trim_end())
            .collect::<Vec<_>>()
            .join("\n");
        let span = Span::new(lines[0].start, lines[lines.len() - 1].span().end);
        Some((text, span))
    }
}
