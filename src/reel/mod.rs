//! REEL specs as plans: Markdown, JSON and Gherkin task lists (`docs/reel.md`).
//!
//! A REEL spec is a list of tasks, each with an 8-hex id, a title, a
//! description (the prompt), an acceptance command and dependencies. The
//! front-ends ([`markdown`], [`json`], [`gherkin`]) read one file each into a
//! [`Spec`] whose spans are byte offsets into that file. [`lower_spec`]
//! then lowers every task into an ordinary `.loop` task item,
//!
//! ```text
//! task "<id>" "<title>": "<dep>"… { prompt = <description>  accept = <acceptance> }
//! ```
//!
//! and the front-end driver ([`crate::compile::compile_specs`]) merges them
//! with the items of the defaults plan (`--defaults FILE.loop` or a
//! `defaults.loop` beside the specs) and runs the usual checker and plan
//! phase on the result. All files sit in one buffer behind a source map, so
//! the checker's own diagnostics (E0004 duplicate id, E0005 unknown
//! dependency, E0006 cycle, …) point into the original spec at the right
//! line.
//!
//! In a directory (or with several specs) each file's tasks are namespaced by
//! the file's stem (`auth.md` gives `auth.a1b2c3d4`): a dependency without a
//! `.` is a task of the same file, one with a `.` is a qualified name.

pub mod gherkin;
pub mod id;
pub mod json;
pub mod markdown;

use crate::ast;
use crate::diagnostic::{Code, Diagnostic};
use crate::origin::stem_of;
use crate::span::Span;
use std::path::{Path, PathBuf};

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

/// Whether `dir` is a REEL spec tree: a directory with at least one stage
/// directory (`todo/`, `design/`, `inflight/`, `review/`, `active/`,
/// `archived/`; [`crate::origin::STAGES`]).
pub fn is_spec_tree(dir: &Path) -> bool {
    crate::origin::STAGES.iter().any(|s| dir.join(s).is_dir())
}

/// The specs of the spec tree `dir`: each stage directory's specs
/// ([`spec_files`]), stage by stage in pipeline order, each with its
/// stage (an index into [`crate::origin::STAGES`]). A stage directory that
/// does not exist has no specs.
///
/// Errors: a stage directory cannot be read; a spec lies directly in `dir`,
/// outside every stage (it is named in the error, which is `InvalidInput`).
pub fn tree_files(dir: &Path) -> std::io::Result<Vec<(PathBuf, usize)>> {
    if let Some(stray) = spec_files(dir)?.first() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "it is a spec tree (it has stage directories), and the spec {} lies outside \
                 every stage: move it into one (e.g. {}/)",
                stray.display(),
                dir.join("todo").display()
            ),
        ));
    }
    let mut found = Vec::new();
    for (i, stage) in crate::origin::STAGES.iter().enumerate() {
        let stage_dir = dir.join(stage);
        if stage_dir.is_dir() {
            found.extend(spec_files(&stage_dir)?.into_iter().map(|p| (p, i)));
        }
    }
    Ok(found)
}

/// One spec file read and lowered into task items.
#[derive(Debug, Default)]
pub struct LoweredSpec {
    /// The plan name the spec gives itself (JSON `name`), if any.
    pub name: Option<String>,
    /// Its tasks as task items, in file order.
    pub tasks: Vec<ast::TaskItem>,
    /// Its diagnostics (E0001 when it is no spec at all).
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads `text`, the spec file at `path` (its format by its extension), and
/// lowers its tasks into task items. Every span, in the items and the
/// diagnostics, is shifted by `start`: where the file's text begins in the
/// compiled text. With `namespaced`, each task is named `<stem>.<id>` after
/// the file's stem.
pub fn lower_spec(path: &Path, text: &str, start: usize, namespaced: bool) -> LoweredSpec {
    let Some(format) = Format::of(path) else {
        return LoweredSpec {
            diagnostics: vec![
                Diagnostic::new(
                    Code::E0001,
                    format!("`{}` is not a REEL spec", path.display()),
                    Span::at(start),
                    "unknown kind of file",
                )
                .with_note(
                    "REEL specs are `.md`, `.json` or `.feature` files; plans are `.loop` files",
                ),
            ],
            ..LoweredSpec::default()
        };
    };
    let (spec, mut diagnostics) = format.parse(text);
    diagnostics.extend(validate(&spec));
    let mut diagnostics: Vec<Diagnostic> =
        diagnostics.into_iter().map(|d| shifted(d, start)).collect();
    let stem = stem_of(path);
    let namespace = namespaced.then_some(stem.as_str());
    let tasks = spec
        .tasks
        .iter()
        .map(|task| lower(task, namespace, &stem, start, &mut diagnostics))
        .collect();
    LoweredSpec {
        name: spec.name.map(|n| n.text),
        tasks,
        diagnostics,
    }
}

fn shifted(mut d: Diagnostic, by: usize) -> Diagnostic {
    d.primary.span = d.primary.span.shift(by);
    for l in &mut d.secondary {
        l.span = l.span.shift(by);
    }
    d
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
        // REEL writes a dependency on another file's task `auth:a1b2c3d4`;
        // loopc's name for it is `auth.a1b2c3d4`.
        let reel = match dep.rsplit_once(':') {
            Some((file, id)) if !file.is_empty() && is_reel_id(id) => format!("{file}.{id}"),
            _ => dep.to_string(),
        };
        let dep = reel.as_str();
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
            // A stand-in (never run: E0008 is an error) that is not blank,
            // so the checker adds no second diagnostic for the same gap.
            let stand_in = Located::new(task.id.text.clone(), task.header);
            fields.push(string_field("prompt", &stand_in, start));
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
            kind: ast::ValueKind::String(value.text.as_str().into()),
            span,
        },
        span,
    }
}

/// Text helpers shared by the line-based front-ends.
pub(crate) mod text {
    use crate::span::{Span, line_end, next_line};

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

    /// The lines of `text`, a leading byte-order mark skipped. A line ends
    /// at `\n`, `\r\n` or a lone `\r`: loopc's one line model
    /// ([`crate::span::line_end`]), so a spec saved with any of them reads
    /// the same and its diagnostics land on the lines an editor shows.
    pub fn lines(text: &str) -> Vec<Line<'_>> {
        let mut out = Vec::new();
        let mut start = if text.starts_with('\u{feff}') { 3 } else { 0 };
        while start < text.len() {
            let end = line_end(text, start);
            out.push(Line {
                start,
                text: &text[start..end],
            });
            start = next_line(text, end);
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
