//! The tasks section (each task's facts and its tries, folded: outcome,
//! reason, the agent's report and summary, the feedback it was given, its
//! checks' output, its diff) and the section on what the run left.

use super::{anchor, class, esc, ms, outcome_stroke, short, size, text_block};
use crate::render::state::Status;
use crate::run::report::model::{Named, Report, TaskNote, TaskReport, TryReport};
use crate::run::time::dollars;
use std::fmt::Write as _;

/// Writes the tasks section.
pub fn section(out: &mut String, r: &Report) {
    out.push_str("<section id=\"tasks\">\n<h2>Tasks</h2>\n");
    if r.tasks.is_empty() {
        out.push_str("<p class=\"sub\">The run has no tasks.</p>\n");
    }
    for t in &r.tasks {
        task(out, t);
    }
    out.push_str("</section>\n");
}

/// One task's article.
fn task(out: &mut String, t: &TaskReport) {
    let s: Status = t.status;
    let _ = writeln!(
        out,
        "<article class=\"task s-{}\" id=\"{}\" style=\"border-left-color:{}\">\n\
         <h3><span class=\"badge\" style=\"background:{};border-color:{}\">{}</span>{}{}</h3>",
        class(s.as_str()),
        esc(&anchor(&t.name)),
        s.stroke(),
        s.fill(),
        s.stroke(),
        s.as_str(),
        esc(&t.name),
        t.title.as_ref().map_or(String::new(), |x| format!(
            " <span class=\"sub\">{}</span>",
            esc(x)
        ))
    );
    let mut facts: Vec<(&str, String)> = Vec::new();
    let attempts = match t.max_attempts {
        _ if t.attempts == 0 && t.status == Status::Cached => {
            "none: replayed from the cache".into()
        }
        Some(m) => format!("{} of {m}", t.attempts),
        None => t.attempts.to_string(),
    };
    let attempts = match t.earlier_attempts {
        0 => attempts,
        n => format!("{attempts} ({n} in earlier runs)"),
    };
    facts.push(("attempts", attempts));
    if t.duration_ms > 0 {
        facts.push(("time", ms(t.duration_ms)));
    }
    let mut cost = dollars(t.cost_micro_usd);
    if t.cost_unknown {
        cost.push_str("+? <span class=\"mark m-unknown\">unknown</span>");
    }
    facts.push(("cost", cost));
    if !t.dependencies.is_empty() {
        let deps: Vec<String> = t
            .dependencies
            .iter()
            .map(|d| format!("<a href=\"#{}\">{}</a>", esc(&anchor(d)), esc(d)))
            .collect();
        facts.push(("needs", deps.join(", ")));
    }
    if let Some(from) = &t.expanded_from {
        facts.push((
            "added by",
            format!(
                "the plan fragment of <a href=\"#{}\">{}</a>",
                esc(&anchor(from)),
                esc(from)
            ),
        ));
    }
    if let Some(reason) = &t.reason {
        facts.push((
            "reason",
            format!("<span class=\"bad\">{}</span>", esc(reason)),
        ));
    }
    if let Some(q) = &t.question {
        facts.push(("question", esc(q)));
    }
    if !t.not_checked_by.is_empty() {
        let gates: Vec<String> = t
            .not_checked_by
            .iter()
            .map(|g| format!("<code>{}</code>", esc(g)))
            .collect();
        facts.push((
            "not checked",
            format!("in this run by {} (--skip-gate)", gates.join(", ")),
        ));
    }
    if let Some(summary) = &t.summary {
        facts.push(("summary", esc(summary)));
    }
    if let Some(c) = &t.commit {
        facts.push(("commit", format!("<code>{}</code>", short(c))));
    }
    if let Some(k) = &t.cache_key {
        let how = t.cached_how.as_ref().map_or(String::new(), |h| {
            format!(" (replayed: {})", esc(super::super::spans::replay_words(h)))
        });
        facts.push(("cache key", format!("<code>{}</code>{how}", short(k))));
    }
    out.push_str("<dl>\n");
    for (k, v) in facts {
        let _ = writeln!(out, "<dt>{k}</dt><dd>{v}</dd>");
    }
    out.push_str("</dl>\n");
    for r in &t.tries {
        try_details(out, t, r);
    }
    out.push_str("</article>\n");
}

/// One try, folded: its summary line says how it ended.
fn try_details(out: &mut String, t: &TaskReport, r: &TryReport) {
    let head = try_head(r);
    let _ = writeln!(
        out,
        "<details class=\"try\" id=\"{}-a{}{}\">\n<summary>{head}</summary>",
        esc(&anchor(&t.name)),
        r.attempt,
        r.retry.map_or(String::new(), |k| format!("-r{k}"))
    );
    let facts = try_facts(r);
    out.push_str("<dl>\n");
    for (k, v) in facts {
        let _ = writeln!(out, "<dt>{k}</dt><dd>{v}</dd>");
    }
    out.push_str("</dl>\n");
    if let Some(f) = &r.feedback {
        folded(out, "feedback it was given", f.bytes, |out| {
            text_block(out, f)
        });
    }
    for n in r.output.iter().chain(&r.gates) {
        named(out, n);
    }
    if let Some(d) = &r.diff {
        folded(out, "diff", d.bytes, |out| text_block(out, d));
    }
    out.push_str("</details>\n");
}

/// A try's summary line: attempt, outcome, time, cost, slot.
fn try_head(r: &TryReport) -> String {
    let mut head = format!("attempt {}", r.attempt);
    if let Some(k) = r.retry {
        let _ = write!(head, " (retry {k})");
    }
    let _ = write!(
        head,
        " · <span style=\"color:{}\">{}</span>",
        outcome_stroke(&r.outcome),
        esc(&r.outcome)
    );
    if let (Some(a), Some(b)) = (r.start_ms, r.end_ms) {
        let _ = write!(
            head,
            " · {} (+{} to +{})",
            ms(b.saturating_sub(a)),
            ms(a),
            ms(b)
        );
    }
    match (r.cost_micro_usd, r.cost_mark.as_deref()) {
        (Some(c), Some(m)) => {
            let _ = write!(
                head,
                " · {} <span class=\"mark m-{}\">{m}</span>",
                dollars(c),
                class(m)
            );
        }
        (Some(c), None) => {
            let _ = write!(head, " · {}", dollars(c));
        }
        (None, _) => head.push_str(" · <span class=\"mark m-unknown\">cost unknown</span>"),
    }
    if let Some(s) = r.slot {
        let _ = write!(head, " · slot {s}");
    }
    head
}

/// A try's facts: reason, agent, what it reported, summary, resolver,
/// worktree, logs.
fn try_facts(r: &TryReport) -> Vec<(&'static str, String)> {
    let mut facts: Vec<(&str, String)> = Vec::new();
    if let Some(reason) = &r.reason {
        facts.push(("reason", format!("<pre>{}</pre>", esc(reason))));
    }
    if let Some(a) = &r.agent_name {
        let mut who = esc(a);
        if r.fallback.is_some() {
            who.push_str(" (fallback: the task's own agent was limited)");
        }
        facts.push(("agent", who));
    }
    if let Some(a) = &r.agent {
        let mut bits: Vec<String> = Vec::new();
        bits.extend(a.model.as_ref().map(|m| format!("model {}", esc(m))));
        bits.extend(a.num_turns.map(|n| format!("{n} turns")));
        bits.extend(a.usage.input_tokens.map(|n| format!("{n} input tokens")));
        bits.extend(a.usage.output_tokens.map(|n| format!("{n} output tokens")));
        bits.extend(a.cost_micro_usd.map(|c| format!("reported {}", dollars(c))));
        bits.extend(a.error.as_ref().map(|e| format!("error {}", esc(e))));
        bits.extend(
            a.session_id
                .as_ref()
                .map(|s| format!("session <code>{}</code>", esc(s))),
        );
        if !bits.is_empty() {
            facts.push(("agent reported", bits.join(", ")));
        }
    }
    if let Some(s) = &r.summary {
        facts.push(("summary", esc(s)));
    }
    if let Some(res) = &r.resolver {
        let what = if res.resolved {
            "resolved the conflict".to_string()
        } else {
            format!(
                "did not resolve it: {}",
                esc(res.reason.as_deref().unwrap_or("?"))
            )
        };
        facts.push((
            "resolver",
            format!(
                "{} on {}: {what}",
                esc(&res.agent),
                esc(&res.conflicts.join(", "))
            ),
        ));
    }
    if let Some(w) = &r.worktree {
        facts.push(("worktree", format!("<code>{}</code> (kept)", esc(w))));
    }
    if let Some(l) = &r.logs {
        facts.push(("logs", format!("<code>{}</code>", esc(l))));
    }
    facts
}

/// A check's or an output's log, folded.
fn named(out: &mut String, n: &Named) {
    let what = if n.name == "setup" || n.name.ends_with("output") || n.name.ends_with("check") {
        n.name.clone()
    } else {
        format!("check {}", n.name)
    };
    folded(out, &what, n.log.bytes, |out| text_block(out, &n.log));
}

/// `<details>` titled `what` (and its size) around what `body` writes.
fn folded(out: &mut String, what: &str, bytes: u64, body: impl FnOnce(&mut String)) {
    let _ = writeln!(
        out,
        "<details><summary>{} <span class=\"sub\">({})</span></summary>",
        esc(what),
        size(bytes)
    );
    body(out);
    out.push_str("</details>\n");
}

/// Writes the section on what the run left.
pub fn left(out: &mut String, r: &Report) {
    let l = &r.left;
    out.push_str("<section id=\"left\" class=\"left\">\n<h2>What the run left</h2>\n");
    let nothing = l.kept_worktrees.is_empty()
        && l.questions.is_empty()
        && l.out_of_attempts.is_empty()
        && l.not_passed.is_empty()
        && l.waiting.is_empty()
        && l.warnings.is_empty();
    if nothing {
        out.push_str(
            "<p>Nothing: every task passed, no worktree is kept and there is no warning.</p>\n",
        );
    }
    if !l.questions.is_empty() {
        out.push_str("<h3>Questions waiting for an answer</h3>\n<ul>\n");
        for q in &l.questions {
            let how = if q.answered {
                "answered: the next <code>loopc run</code> gives the task the answer".to_string()
            } else {
                format!(
                    "answer with <code>loopc answer {} \"…\"</code>",
                    esc(&q.task)
                )
            };
            let _ = writeln!(
                out,
                "<li><a href=\"#{}\">{}</a>: {} <span class=\"sub\">({how})</span></li>",
                esc(&anchor(&q.task)),
                esc(&q.task),
                esc(&q.question)
            );
        }
        out.push_str("</ul>\n");
    }
    notes(out, "Tasks out of attempts", &l.out_of_attempts);
    if !l.unreviewed.is_empty() {
        out.push_str("<h3>Work an agent gate did not accept</h3>\n<p class=\"sub\">Every command check passed; only an agent gate rejected the last attempt. The work waits on its task branch: review it, then merge it by hand.</p>\n<ul>\n");
        for u in &l.unreviewed {
            let _ = writeln!(
                out,
                "<li><a href=\"#{}\">{}</a>: <code>{}</code>{}</li>",
                esc(&anchor(&u.task)),
                esc(&u.task),
                esc(&u.merge),
                u.reason
                    .as_ref()
                    .map_or(String::new(), |r| format!(": {}", esc(r)))
            );
        }
        out.push_str("</ul>\n");
    }
    notes(out, "Other tasks that did not pass", &l.not_passed);
    notes(out, "Waiting for a usage limit", &l.waiting);
    if !l.kept_worktrees.is_empty() {
        out.push_str("<h3>Kept worktrees</h3>\n<p class=\"sub\">Failed and blocked tries keep their worktree (and task branch) for inspection until <code>loopc clean</code>.</p>\n<ul>\n");
        for k in &l.kept_worktrees {
            let gone = if k.exists {
                ""
            } else {
                " <span class=\"sub\">(removed since)</span>"
            };
            let _ = writeln!(
                out,
                "<li><a href=\"#{}\">{}</a> attempt {}: <code>{}</code>{gone}</li>",
                esc(&anchor(&k.task)),
                esc(&k.task),
                k.attempt,
                esc(&k.path)
            );
        }
        out.push_str("</ul>\n");
    }
    if !l.warnings.is_empty() {
        out.push_str("<h3>Warnings</h3>\n<ul>\n");
        for w in &l.warnings {
            let _ = writeln!(out, "<li class=\"bad\">{}</li>", esc(w));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// A titled list of tasks and why.
fn notes(out: &mut String, title: &str, notes: &[TaskNote]) {
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h3>{title}</h3>\n<ul>");
    for n in notes {
        let _ = writeln!(
            out,
            "<li><a href=\"#{}\">{}</a> ({}){}</li>",
            esc(&anchor(&n.task)),
            esc(&n.task),
            n.status.as_str(),
            n.reason
                .as_ref()
                .map_or(String::new(), |r| format!(": {}", esc(r)))
        );
    }
    out.push_str("</ul>\n");
}
