//! The front end of the agent fields of issue 28: `output = { … }`, the
//! declarative reader's map of JSON paths, and `idle`, through the checker
//! (types, unknown keys, paths, diagnostics), the plan (its JSON and cache
//! key), `loopc fmt`, and the language server's completion and hover.

use loopc::lsp::Analysis;

fn codes(source: &str) -> Vec<(&'static str, String)> {
    let c = loopc::compile("plan.loop", source);
    c.diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.message.clone()))
        .collect()
}

const GOOD: &str = r#"agent mine {
  run    = "my-agent --json"
  output = { summary = "[type=result].result"  cost = "usage.cost_usd"  error = "error.message" }
  idle   = 5m
}
budget { iterations = 3 }
task t { agent = mine  prompt = "p" }
"#;

#[test]
fn output_maps_and_idle_check_and_reach_the_plan() {
    assert_eq!(codes(GOOD), vec![]);
    let c = loopc::compile("plan.loop", GOOD);
    let plan = c.plan.expect("a plan");
    let mut out = Vec::new();
    loopc::render::json::render(&plan, None, &mut out).expect("renders");
    let json: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    let agent = &json["tasks"][0]["agent"];
    assert_eq!(agent["output"], "fields", "{json}");
    assert_eq!(
        agent["output_fields"],
        serde_json::json!({"cost": "usage.cost_usd", "error": "error.message", "summary": "[type=result].result"})
    );
    assert_eq!(agent["idle_ms"], 300_000);
    // The paths are in the cache key: another path, another key.
    let other = loopc::compile("plan.loop", &GOOD.replace("usage.cost_usd", "cost"));
    let key = |p: &loopc::plan::Plan| p.tasks[0].key.to_hex();
    assert_ne!(key(&plan), key(&other.plan.expect("a plan")));
}

#[test]
fn output_map_mistakes_have_their_codes() {
    let with = |output: &str| {
        codes(&format!(
            "agent a {{ run = \"x\"  output = {output} }}\nbudget {{ iterations = 1 }}\ntask t {{ agent = a  prompt = \"p\" }}\n"
        ))
    };
    let unknown = with(r#"{ sumary = "result" }"#);
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!(unknown[0].0, "E0002");
    assert!(
        unknown[0].1.contains("unknown key `sumary` in `output`"),
        "{unknown:?}"
    );
    let twice = with(r#"{ cost = "a"  cost = "b" }"#);
    assert_eq!(twice[0].0, "E0003", "{twice:?}");
    let not_string = with(r#"{ cost = 5 }"#);
    assert_eq!(not_string[0].0, "E0007", "{not_string:?}");
    for bad in [r#""a..b""#, r#""[type""#, r#""[type].x""#, r#""""#] {
        let d = with(&format!("{{ summary = {bad} }}"));
        assert!(
            d.iter().any(|(c, m)| *c == "E0009" && m.starts_with("`output.summary` is not a JSON path")),
            "{bad}: {d:?}"
        );
    }
    // A word that is no reader: the readers are listed.
    let word = with("gemeni-json");
    assert_eq!(word[0].0, "E0007");
    assert!(word[0].1.contains("`gemini-json`"), "{word:?}");
    let idle = codes(
        "agent a { run = \"x\"  idle = 0s }\nbudget { iterations = 1 }\ntask t { agent = a  prompt = \"p\" }\n",
    );
    assert_eq!(idle[0].0, "E0009", "{idle:?}");
}

#[test]
fn fmt_keeps_output_maps_and_idle() {
    let once = loopc::fmt::format_source(GOOD).expect("formats");
    assert!(once.contains("idle   = 5m"), "{once}");
    assert!(
        once.contains(r#"summary = "[type=result].result""#),
        "{once}"
    );
    assert_eq!(loopc::fmt::format_source(&once).expect("formats"), once);
    assert_eq!(codes(&once), vec![]);
}

#[test]
fn the_editor_completes_and_explains_output_keys_and_idle() {
    let text = "agent a {\n  run = \"x\"\n  output = { sum";
    let a = Analysis::new("plan.loop", text.to_string());
    let labels: Vec<String> = a
        .completion(text.len())
        .into_iter()
        .map(|i| i.label)
        .collect();
    assert!(labels.contains(&"summary".to_string()), "{labels:?}");
    assert!(!labels.contains(&"cost".to_string()), "{labels:?}");
    let open = "agent a {\n  run = \"x\"\n  output = { \n";
    let all: Vec<String> = Analysis::new("plan.loop", open.to_string())
        .completion(open.len())
        .into_iter()
        .map(|i| i.label)
        .collect();
    assert_eq!(
        all,
        [
            "summary",
            "cost",
            "error",
            "limit",
            "session",
            "input_tokens",
            "output_tokens",
            "activity"
        ]
    );
    let a = Analysis::new("plan.loop", GOOD.to_string());
    let hover = |needle: &str| -> String {
        let at = GOOD.find(needle).expect("needle") + 1;
        let h = a.hover(at).expect("a hover");
        serde_json::to_value(h.contents).unwrap()["value"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        hover("cost =").contains("**output.cost**"),
        "{}",
        hover("cost =")
    );
    assert!(hover("cost =").contains("US dollars"));
    assert!(
        hover("idle").contains("**agent.idle**"),
        "{}",
        hover("idle")
    );
    assert!(hover("idle").contains("stalled"));
}

#[test]
fn an_unknown_fallback_of_the_only_agent_says_no_other_agent() {
    let c = loopc::compile(
        "plan.loop",
        "agent c { run = \"c\"  fallback = codx }\ntask a { agent = c  prompt = \"x\" }\n",
    );
    let d: Vec<_> = c
        .diagnostics
        .iter()
        .filter(|d| d.code.as_str() == "E0005")
        .collect();
    assert_eq!(d.len(), 1, "{:#?}", c.diagnostics);
    assert_eq!(d[0].message, "unknown agent `codx`");
    // `c` is defined; it is only not a fallback of itself.
    assert_eq!(
        d[0].notes,
        vec!["this plan defines no other agent".to_string()]
    );
}

#[test]
fn an_output_named_after_a_cli_or_its_format_says_which_reader() {
    let note = |word: &str| {
        let c = loopc::compile(
            "plan.loop",
            &format!(
                "budget {{ iterations = 1 }}\nagent a {{ run = \"x\"  output = {word} }}\ntask t {{ agent = a  prompt = \"p\" }}\n"
            ),
        );
        let d: Vec<_> = c
            .diagnostics
            .iter()
            .filter(|d| d.code.as_str() == "E0007")
            .collect();
        assert_eq!(d.len(), 1, "{word}: {:#?}", c.diagnostics);
        d[0].notes.join("\n")
    };
    for word in ["claude-stream-json", "claude", "claude-jsonl"] {
        assert!(
            note(word).starts_with("did you mean `claude-json`?"),
            "{word}"
        );
    }
    assert!(note("codex").starts_with("did you mean `codex-json`?"));
    assert!(note("json").contains("`claude-json` for Claude Code's `json` and `stream-json`"));
    assert_eq!(note("clade-json"), "did you mean `claude-json`?");
}
