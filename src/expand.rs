//! Plans that grow: a task with `expands = "PATH"` writes a plan fragment,
//! a `.loop` file of tasks, and the plan grows by it once the task passes
//! (docs/language.md "Plan fragments", docs/running.md).
//!
//! A fragment is compiled with its plan, never alone: its tasks are added
//! to the plan's syntax tree, named `<producer>.<name>` (dependencies
//! between them renamed alike), each depending on the task that produced
//! it, and every task that depended on the producer also waits for all of
//! them. The grown tree goes through the one checker and plan phase
//! ([`crate::check::check`], [`crate::plan::build`]), so the fragment's tasks
//! use the plan's agents, gates and defaults, and their diagnostics and
//! cache keys are computed as any task's. The fragment's text is its own
//! file in the [`SourceMap`]: diagnostics name the fragment's path and line.

use crate::ast::{self, Item, TaskItem, TaskName, Value, ValueKind};
use crate::check;
use crate::compile::Compilation;
use crate::diagnostic::{Code, Diagnostic};
use crate::origin::Origin;
use crate::plan::{self, Plan};
use crate::source_map::SourceMap;
use crate::span::Span;
use crate::syntax;
use std::collections::{BTreeMap, HashMap, HashSet};

/// What fragments are compiled with: the plan's own syntax tree and
/// source files, as the front end read them.
#[derive(Clone, Debug)]
pub struct Base {
    /// The plan's syntax tree.
    ast: ast::File,
    /// The plan's source buffer (spans are byte offsets into it).
    source: String,
    /// The files behind `source`.
    files: SourceMap,
    /// Where the plan came from (its name when no `loop` item gives one).
    origin: Origin,
    /// The tasks a run was asked for (`loopc run TASK…`); empty: all.
    pub targets: Vec<String>,
}

impl Base {
    /// The base of the compiled plan `compilation`, whose plan is named
    /// `plan_name` (a fragment's tasks take the plan's name, branch and
    /// settings as they are).
    pub fn of(compilation: &Compilation, plan_name: &str) -> Base {
        Base {
            ast: compilation.ast.clone(),
            source: compilation.source.clone(),
            files: compilation.files.clone(),
            origin: Origin::File {
                stem: plan_name.to_string(),
            },
            targets: Vec::new(),
        }
    }
}

impl Base {
    /// The names a fragment's tasks may use: the plan's agents and gates
    /// (each sorted), and its `defaults.agent`, if any.
    pub fn names(&self) -> (Vec<&str>, Vec<&str>, Option<&str>) {
        let mut agents = Vec::new();
        let mut gates = Vec::new();
        let mut default_agent = None;
        for item in &self.ast.items {
            match item {
                Item::Agent(a) => agents.push(a.name.text.as_str()),
                Item::Gate(g) => gates.push(g.name.text.as_str()),
                Item::Defaults(b) => {
                    default_agent =
                        b.fields
                            .iter()
                            .find(|f| f.name.text == "agent")
                            .and_then(|f| match &f.value.kind {
                                ValueKind::Name(n) => Some(n.as_str()),
                                _ => None,
                            });
                }
                _ => {}
            }
        }
        agents.sort_unstable();
        agents.dedup();
        gates.sort_unstable();
        gates.dedup();
        (agents, gates, default_agent)
    }
}

/// A plan fragment as a producing task wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fragment {
    /// The name of the task that wrote it (its `expands`).
    pub producer: String,
    /// Its path relative to the repository's top (the `expands` value).
    pub path: String,
    /// Its text (bytes that are not UTF-8 replaced by U+FFFD).
    pub text: String,
    /// The byte offset of its first byte that is not UTF-8, if any: the
    /// fragment is then E0001 there, as a plan file would be.
    pub invalid_at: Option<usize>,
}

impl Fragment {
    /// The fragment `producer` wrote at `path`, from the file's `bytes`.
    pub fn decode(producer: &str, path: &str, bytes: Vec<u8>) -> Fragment {
        let (text, invalid_at) = match String::from_utf8(bytes) {
            Ok(text) => (text, None),
            Err(e) => (
                String::from_utf8_lossy(e.as_bytes()).into_owned(),
                Some(e.utf8_error().valid_up_to()),
            ),
        };
        Fragment {
            producer: producer.to_string(),
            path: path.to_string(),
            text,
            invalid_at,
        }
    }
}

/// A plan grown by its fragments.
#[derive(Debug)]
pub struct Grown {
    /// The whole plan: the base's tasks and every fragment's.
    pub plan: Plan,
    /// For each task a fragment added: the name of the task that produced
    /// the fragment.
    pub added: BTreeMap<String, String>,
}

/// Why a fragment does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// One line: the fragment, how many errors, and the first with its
    /// file and line.
    pub reason: String,
    /// Every error in the human format without colour, each in its file
    /// (the fragment's path) at its line: the producer's feedback.
    pub report: String,
}

/// Compiles the base plan grown by `fragments`, in order (a later
/// fragment's producer may be a task an earlier one added). `depth_limit`
/// is `loop.expand_depth`: a task of a fragment that many levels deep may
/// not expand again (E0009).
///
/// Errors: any error diagnostic (in a fragment, or in the plan that the
/// fragments make, such as a cycle through them), rendered for the last
/// fragment's producer to read.
pub fn grow(base: &Base, fragments: &[Fragment], depth_limit: u32) -> Result<Grown, Rejected> {
    let mut buffer = base.source.clone();
    let mut map = base.files.clone();
    let mut items = base.ast.items.clone();
    let mut diagnostics = Vec::new();
    let mut added = BTreeMap::new();
    // How deep each fragment task is (base tasks are at depth 0).
    let mut depth: HashMap<String, u32> = HashMap::new();
    for fragment in fragments {
        let start = map.push(&mut buffer, &fragment.path, &fragment.text);
        diagnostics.extend(crate::compile::encoding_error(
            fragment.invalid_at.map(|at| start + at),
            crate::compile::PLAN_ENCODING,
        ));
        let (file, parsed) = syntax::parse(&fragment.text);
        diagnostics.extend(parsed.into_iter().map(|d| shift_diagnostic(d, start)));
        let level = depth.get(&fragment.producer).copied().unwrap_or(0) + 1;
        let tasks = fragment_tasks(file.items, start, &mut diagnostics);
        let local: HashSet<String> = tasks.iter().map(|t| t.name.text.clone()).collect();
        let mut names = Vec::new();
        let mut grown: Vec<Item> = Vec::new();
        for mut t in tasks {
            let producer = &fragment.producer;
            qualify(
                &mut t,
                producer,
                &local,
                level,
                depth_limit,
                &mut diagnostics,
            );
            names.push((t.name.text.clone(), t.name.span));
            depth.insert(t.name.text.clone(), level);
            added.insert(t.name.text.clone(), fragment.producer.clone());
            grown.push(Item::Task(t));
        }
        wait_for(&mut items, &fragment.producer, &names);
        items.extend(grown);
    }
    let tree = ast::File {
        items,
        comments: Vec::new(),
    };
    let (model, more) = check::check(&tree, &base.origin);
    diagnostics.extend(more);
    let (plan, more) = plan::build(model, &base.origin);
    diagnostics.extend(more);
    diagnostics.retain(Diagnostic::is_error);
    for d in &mut diagnostics {
        note_prefixed_name(d, &added);
        suggest_bare(d, &added);
    }
    crate::diagnostic::sort(&mut diagnostics);
    match plan {
        Some(mut plan) if diagnostics.is_empty() => {
            for t in &mut plan.tasks {
                t.expanded_from = added.get(&t.name).cloned();
                t.expanded = fragments.iter().any(|f| f.producer == t.name);
            }
            Ok(Grown { plan, added })
        }
        _ => Err(rejected(&map, &buffer, fragments.last(), &diagnostics)),
    }
}

/// Task `t` of `producer`'s fragment as the plan takes it: named
/// `<producer>.<name>`, its dependencies on the fragment's own tasks
/// (`local`) named so too, and depending on `producer`. E0009 when it
/// expands a fragment although its fragment is `level` deep, as deep as
/// fragments may nest (`limit`).
fn qualify(
    t: &mut TaskItem,
    producer: &str,
    local: &HashSet<String>,
    level: u32,
    limit: u32,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let qualify = |name: &str| format!("{producer}.{name}");
    if level >= limit
        && let Some(f) = t.block.fields.iter().find(|f| f.name.text == "expands")
    {
        diagnostics.push(
            Diagnostic::new(
                Code::E0009,
                format!(
                    "task `{}` would expand a fragment {} levels deep",
                    qualify(&t.name.text),
                    level + 1
                ),
                f.span,
                format!("this fragment is {level} level(s) deep"),
            )
            .with_note(format!(
                "plan fragments nest at most {limit} level(s) deep \
                 (`loop {{ expand_depth = {limit} }}`)"
            )),
        );
    }
    // The name as written must be one (`""` qualified would be `p.`).
    if let Some(why) = check::names::task_name_problem(&t.name.text)
        && !check::names::reported_by_parser(&t.name.text, t.name.quoted)
    {
        diagnostics.push(
            Diagnostic::new(
                Code::E0011,
                format!("invalid task name `{}`", t.name.text),
                t.name.span,
                why,
            )
            .with_note(check::names::TASK_NAME_NOTE),
        );
    }
    // An agent wrote the fragment: its tasks may add protection, never
    // lift the plan's (`may_change`).
    if let Some(f) = t.block.fields.iter().find(|f| f.name.text == "may_change") {
        diagnostics.push(
            Diagnostic::new(
                Code::E0010,
                format!(
                    "task `{}` of a plan fragment sets `may_change`",
                    qualify(&t.name.text)
                ),
                f.span,
                "a plan fragment cannot lift the plan's protected paths",
            )
            .with_note(
                "a fragment is written by an agent; give `may_change` to the task in the plan \
                 itself, or protect less in `loop { protect = [...] }`",
            ),
        );
    }
    t.name.text = qualify(&t.name.text);
    for d in &mut t.dependencies {
        if local.contains(&d.text) {
            d.text = qualify(&d.text);
        }
    }
    t.dependencies.push(TaskName {
        text: producer.to_string(),
        span: t.name.span,
        quoted: false,
    });
}

/// Whoever among `items` waited for `producer` waits for its fragment's
/// tasks (`names`) too, written where it names the producer.
fn wait_for(items: &mut [Item], producer: &str, names: &[(String, Span)]) {
    for item in items {
        let Item::Task(t) = item else { continue };
        let Some(at) = t
            .dependencies
            .iter()
            .find(|d| d.text == producer)
            .map(|d| d.span)
        else {
            continue;
        };
        for (name, _) in names {
            t.dependencies.push(TaskName {
                text: name.clone(),
                span: at,
                quoted: false,
            });
        }
    }
}

/// The plan `plan` (compiled as `base`) grown as a run grew it:
/// `fragment_of(task, path)` gives the text of the fragment at `path` that
/// the run spliced for `task`, if it did. Tasks the fragments add may
/// expand in turn. A fragment that does not check with the plan as it is
/// now is left out (with what it would have added), so that `loopc graph
/// --state` draws what it can.
pub fn regrow(base: &Base, plan: Plan, fragment_of: impl Fn(&str, &str) -> Option<String>) -> Plan {
    let depth_limit = plan.settings.expand_depth;
    let mut current = plan;
    let mut fragments: Vec<Fragment> = Vec::new();
    let mut tried: HashSet<String> = HashSet::new();
    loop {
        let next = current
            .tasks
            .iter()
            .filter(|t| !tried.contains(&t.name))
            .find_map(|t| {
                t.expands
                    .as_ref()
                    .map(|path| (t.name.clone(), path.clone()))
            });
        let Some((producer, path)) = next else {
            return current;
        };
        tried.insert(producer.clone());
        let Some(text) = fragment_of(&producer, &path) else {
            continue;
        };
        fragments.push(Fragment {
            producer,
            path,
            text,
            invalid_at: None,
        });
        match grow(base, &fragments, depth_limit) {
            Ok(g) => current = g.plan,
            Err(_) => {
                fragments.pop();
            }
        }
    }
}

/// An unknown dependency in a fragment (E0005) is written as the fragment
/// writes its own tasks, bare (`parsr`): the suggestion is among those
/// bare names (`parser`), not the plan's prefixed ones (`design.parser`),
/// which are too far from it to be suggested.
fn suggest_bare(d: &mut Diagnostic, added: &BTreeMap<String, String>) {
    if d.primary.message.starts_with("did you mean") {
        return;
    }
    let Some(name) = check::unknown_task(d) else {
        return;
    };
    let bare = added.iter().filter_map(|(full, producer)| {
        full.strip_prefix(producer.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
    });
    if let Some(s) = crate::check::names::suggest(name, bare) {
        d.primary.message = format!("did you mean `{s}`?");
    }
}

/// A fragment task's name that is too long (E0011) is the prefixed name:
/// says how much of it the prefix takes.
fn note_prefixed_name(d: &mut Diagnostic, added: &BTreeMap<String, String>) {
    if d.code != Code::E0011 {
        return;
    }
    let Some((name, producer)) = added
        .iter()
        .find(|(name, _)| name.len() > 64 && d.message == format!("invalid task name `{name}`"))
    else {
        return;
    };
    let prefix = producer.len() + 1;
    d.notes.push(format!(
        "a plan fragment's task is named `{producer}.<name>` in the plan, and the limit of 64 \
         characters is that whole name's: `{producer}.` takes {prefix}, so the fragment's own \
         name may have at most {} (this one has {})",
        64usize.saturating_sub(prefix),
        name.len() - prefix
    ));
}

/// The task of `plan` with `expands` whose plan fragment would add a task
/// called `name` (`<producer>.<name>`), if any: a name the plan does not
/// have yet, but a run may add (`run TASK…` and `--force` say so).
pub fn producer_of<'p>(plan: &'p Plan, name: &str) -> Option<&'p str> {
    plan.tasks
        .iter()
        .filter(|t| t.expands.is_some())
        .map(|t| t.name.as_str())
        .filter(|p| {
            name.strip_prefix(p)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|rest| !rest.is_empty())
        })
        .max_by_key(|p| p.len())
}

/// What to say of `name`, which `plan` does not have, when a plan
/// fragment would add it: that it exists only once its producer has run,
/// and how to run it.
pub fn unknown_task_hint(plan: &Plan, name: &str) -> Option<String> {
    producer_of(plan, name).map(|p| {
        format!(
            "`{name}` would be a task of the plan fragment `{p}` writes (`expands`): it exists \
             only once `{p}` has passed, during a run; run the whole plan, or a task that \
             depends on `{p}`, and it runs with them"
        )
    })
}

/// The fragment's task items, spans shifted to `start`; any other item is
/// E0001 (a fragment holds tasks only).
fn fragment_tasks(items: Vec<Item>, start: usize, out: &mut Vec<Diagnostic>) -> Vec<TaskItem> {
    let mut tasks = Vec::new();
    for item in items {
        let span = item.span().shift(start);
        let what = match item {
            Item::Task(mut t) => {
                shift_task(&mut t, start);
                tasks.push(t);
                continue;
            }
            // Reported by the parser already.
            Item::Error(_) => continue,
            Item::Loop(_) => "a `loop` item",
            Item::Budget(_) => "a `budget` item",
            Item::Defaults(_) => "a `defaults` item",
            Item::Agent(_) => "an `agent` item",
            Item::Executor(_) => "an `executor` item",
            Item::Gate(_) => "a `gate` item",
        };
        out.push(
            Diagnostic::new(
                Code::E0001,
                format!("expected a task, found {what}"),
                Span::new(span.start, span.start.max(span.end.min(span.start + 1))),
                "a plan fragment holds only tasks",
            )
            .with_note(
                "a fragment's tasks use the plan's agents, gates and defaults; define those in the plan",
            ),
        );
    }
    tasks
}

/// The [`Rejected`] of `diagnostics` (errors, sorted) in the buffer
/// `buffer` of `map`; `last` is the fragment being judged.
fn rejected(
    map: &SourceMap,
    buffer: &str,
    last: Option<&Fragment>,
    diagnostics: &[Diagnostic],
) -> Rejected {
    let path = last.map_or("the plan fragment", |f| f.path.as_str());
    let first = diagnostics.first().map(|d| {
        let place = map.locate(d.primary.span).map(|(file, at)| {
            let text = buffer.get(file.span.range()).unwrap_or("");
            let line = text
                .get(..at.start)
                .map_or(1, |t| t.matches('\n').count() + 1);
            format!("{}:{line}", file.name)
        });
        match place {
            Some(p) => format!("{p}: {}", d.message),
            None => d.message.clone(),
        }
    });
    let reason = match (diagnostics.len(), first) {
        (1, Some(first)) => format!("plan fragment {path} does not check: {first}"),
        (n, Some(first)) => format!("plan fragment {path} does not check ({n} errors): {first}"),
        (_, None) => format!("plan fragment {path} does not make a plan"),
    };
    let mut report = map.render_plain(buffer, diagnostics);
    if let Some(f) = last {
        report.push_str(&format!(
            "note: in {path}, name the fragment's own tasks as written (`task a`, `task b: a`); \
             loopc names them `{p}.a`, `{p}.b` in the plan. Other tasks, agents and gates are \
             the plan's, named as in the plan.\n",
            p = f.producer
        ));
    }
    Rejected { reason, report }
}

fn shift_diagnostic(mut d: Diagnostic, by: usize) -> Diagnostic {
    d.primary.span = d.primary.span.shift(by);
    for l in &mut d.secondary {
        l.span = l.span.shift(by);
    }
    d
}

fn shift_task(t: &mut TaskItem, by: usize) {
    t.span = t.span.shift(by);
    t.name.span = t.name.span.shift(by);
    if let Some(title) = &mut t.title {
        title.span = title.span.shift(by);
    }
    for d in &mut t.dependencies {
        d.span = d.span.shift(by);
    }
    let b = &mut t.block;
    b.span = b.span.shift(by);
    b.keyword = b.keyword.shift(by);
    b.body = b.body.shift(by);
    for f in &mut b.fields {
        f.span = f.span.shift(by);
        f.name.span = f.name.span.shift(by);
        shift_value(&mut f.value, by);
    }
}

fn shift_value(v: &mut Value, by: usize) {
    // Lists and maps nest; walked with a stack, not recursion.
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        v.span = v.span.shift(by);
        match &mut v.kind {
            ValueKind::List(items) => stack.extend(items.iter_mut()),
            ValueKind::Map(entries) => {
                for e in entries {
                    e.key.span = e.key.span.shift(by);
                    stack.push(&mut e.value);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = "agent a { run = \"true\" }\n\
        defaults { agent = a }\n\
        budget { iterations = 10 }\n\
        task arch { prompt = \"plan\" expands = \"plan/f.loop\" }\n\
        task after: arch { prompt = \"after\" }\n";

    fn base() -> Base {
        let c = crate::compile("plan.loop", PLAN);
        assert!(!c.has_errors(), "{:?}", c.diagnostics);
        Base::of(&c, "plan")
    }

    fn fragment(text: &str) -> Fragment {
        Fragment::decode("arch", "plan/f.loop", text.as_bytes().to_vec())
    }

    #[test]
    fn tasks_are_namespaced_and_spliced() {
        let g = grow(
            &base(),
            &[fragment(
                "task one { prompt = \"1\" }\ntask two: one { prompt = \"2\" }\n",
            )],
            3,
        )
        .unwrap();
        let names: Vec<&str> = g.plan.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["arch", "arch.one", "arch.two", "after"]);
        let deps = |n: &str| {
            let t = &g.plan.tasks[g.plan.task_index(n).unwrap()];
            let mut d: Vec<&str> = t
                .dependencies
                .iter()
                .map(|&d| g.plan.tasks[d].name.as_str())
                .collect();
            d.sort();
            d
        };
        assert_eq!(deps("arch.one"), ["arch"]);
        assert_eq!(deps("arch.two"), ["arch", "arch.one"]);
        assert_eq!(deps("after"), ["arch", "arch.one", "arch.two"]);
        assert_eq!(g.added.get("arch.two").map(String::as_str), Some("arch"));
    }

    #[test]
    fn errors_point_into_the_fragment() {
        let e = grow(
            &base(),
            &[fragment(
                "task one { prompt = \"1\" }\n\ntask two: onee { prompt = \"2\" }\n",
            )],
            3,
        )
        .unwrap_err();
        assert!(
            e.reason
                .starts_with("plan fragment plan/f.loop does not check: plan/f.loop:3:"),
            "{}",
            e.reason
        );
        assert!(e.report.contains("E0005"), "{}", e.report);
        assert!(e.report.contains("plan/f.loop:3:11"), "{}", e.report);
        // The suggestion is the fragment's own task as it writes it, bare.
        assert!(e.report.contains("did you mean `one`?"), "{}", e.report);
    }

    #[test]
    fn a_fragment_cannot_lift_protection_nor_name_a_task_with_nothing() {
        let e = grow(
            &base(),
            &[fragment(
                "task cheat { prompt = \"x\"  may_change = [\"verify.sh\"] }\n",
            )],
            3,
        )
        .unwrap_err();
        assert!(e.report.contains("E0010"), "{}", e.report);
        assert!(
            e.report.contains("cannot lift the plan's protected paths"),
            "{}",
            e.report
        );
        let e = grow(&base(), &[fragment("task \"\" { prompt = \"x\" }\n")], 3).unwrap_err();
        assert!(e.report.contains("E0011"), "{}", e.report);
        assert!(
            e.report.contains("a task name cannot be empty"),
            "{}",
            e.report
        );
        // Protection a fragment adds is taken.
        assert!(
            grow(
                &base(),
                &[fragment("task t { prompt = \"x\"  protect = [\"a\"] }\n")],
                3
            )
            .is_ok()
        );
    }

    #[test]
    fn only_tasks_and_depth_limit() {
        let e = grow(&base(), &[fragment("agent b { run = \"x\" }\n")], 3).unwrap_err();
        assert!(e.report.contains("expected a task, found an `agent` item"));
        let e = grow(
            &base(),
            &[fragment(
                "task deeper { prompt = \"1\" expands = \"plan/g.loop\" }\n",
            )],
            1,
        )
        .unwrap_err();
        assert!(e.report.contains("E0009"), "{}", e.report);
        assert!(e.report.contains("expand_depth = 1"), "{}", e.report);
    }
}
