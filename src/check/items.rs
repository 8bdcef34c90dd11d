//! Per-item checks: each item's fields read into the model, with the rules
//! of that item alone (required and conflicting fields, branch names,
//! `inputs` globs).

use super::names::{branch_problem, glob_problem};
use super::{Checker, Detail, Fields};
use crate::ast::{self, Block, GateBody, ValueKind};
use crate::diagnostic::{Code, Diagnostic};
use crate::model::{
    AgentDef, BudgetDef, CHANGES_WORDS, DefaultsDef, ExecutorDef, GateDef, GateDefKind, LoopDef,
    OnChange, OnFail, PathPattern, Recheck, Ref, TaskDef, Work, fields,
};
use crate::span::Span;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Checker {
    pub(super) fn loop_item(&mut self, l: &ast::LoopItem) {
        let f = self.fields(&l.block, "`loop`", fields::LOOP);
        self.model.settings = LoopDef {
            name: l.name.as_ref().map(|n| n.text.clone()),
            base: self.string(&f, "base"),
            branch: self.string(&f, "branch"),
            parallel: self.positive_int(&f, "parallel"),
            setup: self.string(&f, "setup"),
            copy: self.path_patterns(&f, "copy"),
            link: self.path_patterns(&f, "link"),
            notify: self.string(&f, "notify"),
            executor: self.reference(&f, "executor", "an executor"),
            expand_depth: self.positive_int(&f, "expand_depth"),
            resolver: self.reference(&f, "resolver", "an agent"),
            stages: self.stages(&f),
            protect: self.protect_globs(&f, "protect"),
            answerer: self.reference(&f, "answerer", "an agent"),
        };
        // The integration branch must be a name git accepts, or the run fails
        // late; check the explicit one, or the default made from the name.
        if let Some(field) = f.get("branch")
            && let Some(branch) = &self.model.settings.branch
            && (branch == "loopc" || branch.starts_with("loopc/"))
        {
            self.push(
                Diagnostic::new(
                    Code::E0009,
                    format!("`{branch}` is inside loopc's own branch namespace"),
                    field.value.span,
                    "task branches live under `loopc/`",
                )
                .with_note("choose another integration branch, e.g. `loop/…`"),
            );
        } else if let Some(field) = f.get("branch")
            && let Some(branch) = &self.model.settings.branch
            && let Some(short) = branch.strip_prefix("refs/")
        {
            // git itself takes `refs/heads/x` as a branch of that name
            // (`refs/heads/refs/heads/x`): never what was meant.
            let short = short.strip_prefix("heads/").unwrap_or(short);
            self.push(
                Diagnostic::new(
                    Code::E0009,
                    format!("`{branch}` is a ref name, not a branch name"),
                    field.value.span,
                    "a branch is named without `refs/heads/`",
                )
                .with_note(format!("write `branch = \"{short}\"`")),
            );
        } else if let Some(field) = f.get("branch")
            && let Some(branch) = &self.model.settings.branch
            // An empty `branch` is already E0009 (an empty value).
            && !branch.trim().is_empty()
            && let Some(why) = branch_problem(branch)
        {
            self.push(
                Diagnostic::new(
                    Code::E0009,
                    format!("`{branch}` is not a valid git branch name"),
                    field.value.span,
                    why,
                )
                .with_note("see `git check-ref-format --branch`"),
            );
        } else if f.get("branch").is_none()
            && let Some(name) = &l.name
            && let Some(why) = branch_problem(&format!("loop/{}", name.text))
        {
            self.push(
                Diagnostic::new(
                    Code::E0009,
                    format!(
                        "the loop name `{}` does not make a valid branch name `loop/{}`",
                        name.text, name.text
                    ),
                    name.span,
                    why,
                )
                .with_note("set `branch = \"loop/…\"` explicitly, or use a name without spaces or special characters"),
            );
        }
    }

    pub(super) fn budget(&mut self, b: &Block) {
        let f = self.fields(b, "`budget`", fields::BUDGET);
        self.model.budget = BudgetDef {
            span: Some(b.keyword),
            iterations: self.positive_int(&f, "iterations"),
            time: self.duration(&f, "time"),
            cost: self.money(&f, "cost"),
            failures: self.positive_int(&f, "failures"),
            wait: self.duration(&f, "wait"),
            bounds_written: ["iterations", "time", "cost"]
                .iter()
                .any(|n| f.get(n).is_some()),
        };
    }

    pub(super) fn defaults(&mut self, b: &Block) {
        let f = self.fields(b, "`defaults`", fields::DEFAULTS);
        self.model.defaults = DefaultsDef {
            agent: self.reference(&f, "agent", "an agent"),
            gates: self.gate_list(&f),
            attempts: self.positive_int(&f, "attempts"),
            timeout: self.duration(&f, "timeout"),
            env: self.env(&f),
            executor: self.reference(&f, "executor", "an executor"),
            resolver: self.reference(&f, "resolver", "an agent"),
            protect: self.protect_globs(&f, "protect"),
            answerer: self.reference(&f, "answerer", "an agent"),
            context: self.context_paths(&f),
            inputs: self.input_globs(&f),
            verify: self.boolean(&f, "verify"),
        };
    }

    pub(super) fn executor(&mut self, e: &ast::AgentItem) {
        let what = format!("executor `{}`", e.name.text);
        let f = self.fields(&e.block, &what, fields::EXECUTOR);
        // A blank `run` is E0009, as every blank command is (`string`).
        let run = self.string(&f, "run");
        if f.get("run").is_none() && !f.had_unknown {
            self.push(
                Diagnostic::new(
                    Code::E0008,
                    format!("{what} has no `run` field"),
                    e.name.span,
                    "missing `run`",
                )
                .with_label(e.block.body, "this block needs `run = \"…\"`")
                .with_note("`run` is the launcher the command is handed to as `sh -c COMMAND`, e.g. `run = \"bwrap --ro-bind / / --\"`"),
            );
        }
        self.model.executors.push(ExecutorDef {
            name: Ref {
                name: e.name.text.clone(),
                span: e.name.span,
            },
            run,
        });
    }

    pub(super) fn agent(&mut self, a: &ast::AgentItem) {
        let f = self.fields(&a.block, &format!("agent `{}`", a.name.text), fields::AGENT);
        let run = self.string(&f, "run");
        if f.get("run").is_none() && !f.had_unknown {
            self.push(
                Diagnostic::new(
                    Code::E0008,
                    format!("agent `{}` has no `run` field", a.name.text),
                    a.name.span,
                    "missing `run`",
                )
                .with_label(a.block.body, "this block needs `run = \"…\"`")
                .with_note(
                    "`run` is the shell command that starts the agent, e.g. `run = \"claude -p\"`",
                ),
            );
        }
        let output = self.output(&f);
        let def = AgentDef {
            name: Ref {
                name: a.name.text.clone(),
                span: a.name.span,
            },
            run,
            output,
            timeout: self.duration(&f, "timeout"),
            cost: self.money(&f, "cost"),
            env: self.env(&f),
            executor: self.reference(&f, "executor", "an executor"),
            fallback: self.reference(&f, "fallback", "an agent"),
            idle: self.duration(&f, "idle"),
        };
        self.model.agents.push(def);
    }

    pub(super) fn gate(&mut self, g: &ast::GateItem) {
        let name = Ref {
            name: g.name.text.clone(),
            span: g.name.span,
        };
        let def = match &g.body {
            GateBody::Short(v) => GateDef {
                name,
                kind: self.short_gate(g, v),
                timeout: None,
                on_fail: OnFail::Retry,
                on_change: OnChange::Fail,
                recheck: Recheck::Attempt,
                agent_ref: None,
                executor: None,
            },
            GateBody::Long(b) => self.long_gate(g, b, name),
        };
        self.model.gates.push(def);
    }

    /// The command of `gate NAME = "command"` (`v`).
    fn short_gate(&mut self, g: &ast::GateItem, v: &ast::Value) -> GateDefKind {
        match &v.kind {
            ValueKind::String(s) | ValueKind::BlockString(s) => {
                self.not_blank(&format!("the command of gate `{}`", g.name.text), s, v.span);
                GateDefKind::Command(s.to_string())
            }
            ValueKind::Invalid => GateDefKind::Invalid,
            other => {
                self.push(
                    Diagnostic::new(
                        Code::E0007,
                        format!("gate `{}` expects a command string, found {}", g.name.text, other.describe()),
                        v.span,
                        "expected a string",
                    )
                    .with_note("the short form is `gate NAME = \"command\"`; use `gate NAME { … }` for more"),
                );
                GateDefKind::Invalid
            }
        }
    }

    /// The gate `gate NAME { … }` (block `b`).
    fn long_gate(&mut self, g: &ast::GateItem, b: &Block, name: Ref) -> GateDef {
        let f = self.fields(b, &format!("gate `{}`", g.name.text), fields::GATE);
        let run = self.string(&f, "run");
        let agent = self.reference(&f, "agent", "an agent");
        let agent_ref = agent.clone();
        let prompt = self.string(&f, "prompt");
        let kind = self.gate_kind(g, b, &f, run, agent.zip(prompt));
        let on_fail = self
            .word(&f, "on_fail", OnFail::WORDS)
            .and_then(|(w, _)| OnFail::from_word(&w))
            .unwrap_or(OnFail::Retry);
        let on_change = self
            .word(&f, "on_change", OnChange::WORDS)
            .and_then(|(w, _)| OnChange::from_word(&w))
            .unwrap_or_default();
        let recheck = self
            .word(&f, "recheck", Recheck::WORDS)
            .and_then(|(w, _)| Recheck::from_word(&w))
            .unwrap_or_default();
        let timeout = self.duration(&f, "timeout");
        let executor = self.reference(&f, "executor", "an executor");
        GateDef {
            name,
            kind,
            timeout,
            on_fail,
            on_change,
            recheck,
            agent_ref,
            executor,
        }
    }

    /// What the gate with fields `f` (block `b`) runs: its command `run`, or
    /// its agent and prompt (`judge`), when it has one but not both.
    fn gate_kind(
        &mut self,
        g: &ast::GateItem,
        b: &Block,
        f: &Fields<'_>,
        run: Option<String>,
        judge: Option<(Ref, String)>,
    ) -> GateDefKind {
        match (f.get("run"), f.get("agent")) {
            (Some(r), Some(a)) => {
                let (first, second) = if r.span.start < a.span.start {
                    (r, a)
                } else {
                    (a, r)
                };
                self.push(
                    Diagnostic::new(
                        Code::E0010,
                        format!("gate `{}` has both `run` and `agent`", g.name.text),
                        second.name.span,
                        "conflicts with the other field",
                    )
                    .with_label(first.name.span, "first set here")
                    .with_note(
                        "a gate is either a command (`run`) or agent-judged (`agent` + `prompt`)",
                    ),
                );
                GateDefKind::Invalid
            }
            (Some(_), None) => {
                if let Some(p) = f.get("prompt") {
                    self.push(
                        Diagnostic::new(
                            Code::E0010,
                            format!("gate `{}` has a `prompt` but runs a command", g.name.text),
                            p.name.span,
                            "`prompt` is only used with `agent`",
                        )
                        .with_label(
                            f.get("run").map_or(b.body, |r| r.name.span),
                            "this gate is a command",
                        ),
                    );
                }
                run.map_or(GateDefKind::Invalid, GateDefKind::Command)
            }
            (None, Some(_)) => match judge {
                Some((agent, prompt)) => GateDefKind::Agent { agent, prompt },
                None if f.get("prompt").is_none() => {
                    self.push(
                        Diagnostic::new(
                            Code::E0008,
                            format!("agent-judged gate `{}` has no `prompt`", g.name.text),
                            g.name.span,
                            "missing `prompt`",
                        )
                        .with_label(b.body, "add `prompt = \"…\"` here")
                        .with_note("an agent gate needs a prompt that says what to review"),
                    );
                    GateDefKind::Invalid
                }
                None => GateDefKind::Invalid,
            },
            (None, None) if f.had_unknown => GateDefKind::Invalid,
            (None, None) => {
                self.push(
                    Diagnostic::new(
                        Code::E0008,
                        format!("gate `{}` has neither `run` nor `agent`", g.name.text),
                        g.name.span,
                        "missing `run` or `agent`",
                    )
                    .with_label(b.body, "add `run = \"…\"` or `agent = …` with `prompt`"),
                );
                GateDefKind::Invalid
            }
        }
    }

    pub(super) fn task(&mut self, t: &ast::TaskItem) {
        let what = format!("task `{}`", t.name.text);
        let f = self.fields(&t.block, &what, fields::TASK);
        let prompt = self.text(&f, "prompt");
        let run = self.text(&f, "run");
        let agent = self.reference(&f, "agent", "an agent");
        let work = self.work(t, &what, &f, prompt, run);
        let inputs = self.input_globs(&f);
        if let Some(title) = &t.title {
            self.no_nul("the title", &title.text, title.span);
        }
        let mut def = TaskDef {
            name: t.name.clone(),
            title: t.title.as_ref().map(|s| s.text.clone()),
            dependencies: t.dependencies.clone(),
            work,
            agent,
            accept: self.string(&f, "accept"),
            gates: self.gate_list(&f),
            attempts: self.positive_int(&f, "attempts"),
            timeout: self.duration(&f, "timeout"),
            inputs,
            changes_optional: self
                .word(&f, "changes", CHANGES_WORDS)
                .is_some_and(|(w, _)| w == "optional"),
            expands: self.fragment_path(&f),
            protect: self.protect_globs(&f, "protect"),
            may_change: self.protect_globs(&f, "may_change"),
            context: self.context_paths(&f),
            verify: self.boolean(&f, "verify"),
            env: self.env(&f),
            resolver: self.reference(&f, "resolver", "an agent"),
            on_fail: self.task_on_fail(t, &f),
            replans: self.count(&f, "replans"),
            answerer: self.reference(&f, "answerer", "an agent"),
            span: t.span,
        };
        if self.detail == Detail::Diagnostics {
            // Checked above; no later rule reads them (see `Detail`). The
            // texts are most of a large plan's model.
            def.work = match def.work {
                Work::Prompt(_) => Work::Prompt(Arc::clone(&self.empty)),
                Work::Run(_) => Work::Run(Arc::clone(&self.empty)),
                Work::Invalid => Work::Invalid,
            };
            def.title = None;
            def.accept = None;
            def.inputs = Vec::new();
            def.env = BTreeMap::new();
        }
        self.model.tasks.push(def);
    }

    /// Task `t`'s own `on_fail` (fields `f`). W0006 for `replan` on a
    /// task without `expands`: a task of the plan's files has no producer
    /// to re-plan it, so it is `retry` (docs/language.md "Re-planning").
    /// A fragment's task has one, and the warning is not said for it (a
    /// fragment is judged by its errors alone).
    fn task_on_fail(&mut self, t: &ast::TaskItem, f: &Fields<'_>) -> Option<OnFail> {
        let (word, span) = self.word(f, "on_fail", OnFail::TASK_WORDS)?;
        let on_fail = OnFail::from_word(&word)?;
        if on_fail == OnFail::Replan && f.get("expands").is_none() {
            self.push(
                Diagnostic::new(
                    Code::W0006,
                    format!("task `{}` has no task to re-plan it", t.name.text),
                    span,
                    "no plan fragment adds this task",
                )
                .with_note(
                    "`on_fail = replan` sends a plan fragment's task back to the task that wrote \
                     the fragment; here it is `retry`: the task fails once its attempts are spent",
                )
                .with_note(
                    "remove it, or set it on the task that `expands` (the default of every task \
                     its fragment writes)",
                ),
            );
        }
        Some(on_fail)
    }

    /// What task `t` (`what`, with fields `f`) does: its `prompt` or its
    /// command `run`, when it has one but not both.
    fn work(
        &mut self,
        t: &ast::TaskItem,
        what: &str,
        f: &Fields<'_>,
        prompt: Option<Arc<str>>,
        run: Option<Arc<str>>,
    ) -> Work {
        match (f.get("prompt"), f.get("run")) {
            (Some(p), Some(r)) => {
                let (first, second) = if p.span.start < r.span.start {
                    (p, r)
                } else {
                    (r, p)
                };
                self.push(
                    Diagnostic::new(
                        Code::E0010,
                        format!("{what} has both `prompt` and `run`"),
                        second.name.span,
                        "conflicts with the other field",
                    )
                    .with_label(first.name.span, "first set here")
                    .with_note("an agent task has a `prompt`; a command task has `run`; not both"),
                );
                Work::Invalid
            }
            (Some(_), None) => prompt.map_or(Work::Invalid, Work::Prompt),
            (None, Some(r)) => {
                if let Some(a) = f.get("agent") {
                    self.push(
                        Diagnostic::new(
                            Code::E0010,
                            format!("{what} is a command task but sets `agent`"),
                            a.name.span,
                            "a command task runs no agent",
                        )
                        .with_label(r.name.span, "this makes it a command task")
                        .with_note("remove `agent`, or replace `run` with a `prompt`"),
                    );
                }
                run.map_or(Work::Invalid, Work::Run)
            }
            (None, None) if f.had_unknown => Work::Invalid,
            (None, None) => {
                self.push(
                    Diagnostic::new(
                        Code::E0008,
                        format!("{what} has neither `prompt` nor `run`"),
                        t.name.span,
                        "missing `prompt` or `run`",
                    )
                    .with_label(
                        t.block.body,
                        "add `prompt = \"…\"` (agent task) or `run = \"…\"` (command task)",
                    ),
                );
                Work::Invalid
            }
        }
    }

    /// The valid glob strings of the list field `name` with their spans;
    /// a bad glob is E0014 (with `note`), a value that is not a string E0007.
    fn globs(&mut self, f: &Fields<'_>, name: &str, note: &str) -> Vec<(String, Span)> {
        let mut out = Vec::new();
        let Some(items) = self.list(f, name, "a list of glob strings") else {
            return out;
        };
        for v in items {
            match &v.kind {
                ValueKind::String(s) | ValueKind::BlockString(s) => {
                    if let Some(why) = glob_problem(s) {
                        self.push(
                            Diagnostic::new(
                                Code::E0014,
                                format!("invalid glob `{s}` in `{name}`"),
                                v.span,
                                why,
                            )
                            .with_note(note),
                        );
                    } else {
                        out.push((s.to_string(), v.span));
                    }
                }
                ValueKind::Invalid => {}
                other => self.push(Diagnostic::new(
                    Code::E0007,
                    format!("`{name}` lists glob strings, found {}", other.describe()),
                    v.span,
                    "expected a string",
                )),
            }
        }
        out
    }

    /// `inputs` (of a task or `defaults`): globs of repository paths
    /// (E0014, E0007).
    fn input_globs(&mut self, f: &Fields<'_>) -> Vec<String> {
        self.globs(
            f,
            "inputs",
            "inputs are globs relative to the repository root, e.g. `src/**/*.rs`",
        )
        .into_iter()
        .map(|(pattern, _)| pattern)
        .collect()
    }

    /// `protect` or `may_change`: globs of repository paths (E0014, E0007
    /// as `inputs`).
    fn protect_globs(&mut self, f: &Fields<'_>, name: &str) -> Vec<String> {
        let note = format!(
            "`{name}` lists globs of paths relative to the repository root, \
             e.g. `[\"tests/**\", \"verify.sh\"]`"
        );
        self.globs(f, name, &note)
            .into_iter()
            .map(|(pattern, _)| pattern)
            .collect()
    }

    /// A task's `expands`: the path of the plan fragment it writes, relative
    /// to the repository's top, ending in `.loop`, without `..` (E0009).
    fn fragment_path(&mut self, f: &Fields<'_>) -> Option<String> {
        let path = self.string(f, "expands")?;
        let span = f.get("expands")?.value.span;
        // An empty value is already E0009 (an empty value).
        if path.trim().is_empty() {
            return None;
        }
        let first = path
            .trim_start_matches("./")
            .split('/')
            .next()
            .unwrap_or("");
        let why = if path.starts_with('/') {
            Some("the path is absolute")
        } else if path.split(['/', '\\']).any(|c| c == "..") {
            Some("the path leaves the repository (`..`)")
        } else if !path.ends_with(".loop") || path.ends_with("/.loop") || path == ".loop" {
            Some("a plan fragment is a `.loop` file")
        } else if path.contains('\\') {
            Some("paths use `/`")
        } else if first == ".git" || first == ".loopc" {
            Some("git's and loopc's own directories are never part of a commit")
        } else {
            None
        };
        match why {
            Some(why) => {
                self.push(
                    Diagnostic::new(
                        Code::E0009,
                        format!("`expands` cannot be `{path}`"),
                        span,
                        why,
                    )
                    .with_note(
                        "`expands` names the plan fragment the task writes, relative to the \
                         repository's top, e.g. `expands = \"plan/features.loop\"`",
                    ),
                );
                None
            }
            None => Some(path.trim_start_matches("./").to_string()),
        }
    }

    /// `loop.copy` or `loop.link`: globs of files in the main checkout.
    fn path_patterns(&mut self, f: &Fields<'_>, name: &str) -> Vec<PathPattern> {
        let note = format!(
            "`{name}` lists globs of files in the main checkout (relative to its top level) \
             to bring into every new worktree, e.g. `[\".env\", \"config/*.local.toml\"]`"
        );
        self.globs(f, name, &note)
            .into_iter()
            .map(|(pattern, span)| PathPattern { pattern, span })
            .collect()
    }

    /// `loop.stages`: a non-empty list of stage names of a REEL spec tree,
    /// each once (E0007 for a name that is no stage, E0009 for an empty
    /// list or a name given twice).
    fn stages(&mut self, f: &Fields<'_>) -> Option<Vec<String>> {
        let field = f.get("stages")?;
        let items = self.list(f, "stages", "a list of stage names (e.g. `[\"inflight\"]`)")?;
        let known = crate::origin::STAGES;
        let quoted = known
            .iter()
            .map(|s| format!("`\"{s}\"`"))
            .collect::<Vec<_>>()
            .join(", ");
        if items.is_empty() {
            self.push(
                Diagnostic::new(
                    Code::E0009,
                    "`stages` is empty",
                    field.value.span,
                    "no stage would be worked",
                )
                .with_note(format!("name at least one of {quoted}")),
            );
            return None;
        }
        let mut out: Vec<String> = Vec::new();
        let mut seen: Vec<(String, Span)> = Vec::new();
        for v in items {
            let name = match &v.kind {
                ValueKind::String(s) | ValueKind::BlockString(s) => s,
                ValueKind::Invalid => continue,
                other => {
                    self.push(Diagnostic::new(
                        Code::E0007,
                        format!("`stages` lists stage names, found {}", other.describe()),
                        v.span,
                        "expected a string such as `\"inflight\"`",
                    ));
                    continue;
                }
            };
            if !known.contains(&&**name) {
                let mut d = Diagnostic::new(
                    Code::E0007,
                    format!("`{name}` is not a stage of a spec tree"),
                    v.span,
                    format!("expected one of {quoted}"),
                );
                if let Some(s) = super::names::suggest(name, known.iter().copied()) {
                    d = d.with_note(format!("did you mean `\"{s}\"`?"));
                }
                self.push(d);
                continue;
            }
            if let Some((_, first)) = seen.iter().find(|(n, _)| **n == **name) {
                self.push(
                    Diagnostic::new(
                        Code::E0009,
                        format!("stage `{name}` is listed twice in `stages`"),
                        v.span,
                        "listed again here",
                    )
                    .with_label(*first, "first listed here"),
                );
                continue;
            }
            seen.push((name.to_string(), v.span));
            out.push(name.to_string());
        }
        Some(out)
    }
}
