//! `loopc report`: the report of a real run (tasks in parallel, a check
//! that fails once and a retry that passes, a task replayed from the cache,
//! a usage-limit wait) as a page that headless Chromium renders (its DOM
//! has every section, its screenshot is not blank), as JSON, for an
//! earlier run, and the errors a person can cause.
//!
//! Chromium is `/usr/bin/chromium` (`.ci/run` installs it and names it in
//! `LOOPC_REQUIRE`). Where it is missing, the browser test is skipped by
//! the harness's one rule ([`crate::harness::require`]), unless required.

use crate::harness::Test;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";

/// The scripted agent: writes `<task>.txt` ("bad" on `retry`'s first
/// attempt, which its `accept` check rejects) and a handoff.
const FLAKY: &str = r#"#!/bin/sh
cat > /dev/null
if [ "$LOOP_TASK" = retry ] && [ "$LOOP_ATTEMPT" = 1 ]; then word=bad; else word=good; fi
echo "$word" > "$LOOP_TASK.txt"
printf '{"status":"completed","summary":"wrote %s.txt (%s)"}' "$LOOP_TASK" "$word" > "$LOOP_HANDOFF"
"#;

/// A repository after two runs of one plan: run 1 ran `base` alone; run 2
/// replays it from the cache and runs the rest, two at a time: `limited`
/// hits a usage limit once and waits for it, `retry` fails its `accept`
/// check once and passes on its second attempt, `steady` passes, `last`
/// waits for them all. Claude's fixture reports $0.0421 an attempt, above
/// its agent's $0.04 cap; the scripted agent reports nothing and is charged
/// its $0.10 cap.
fn two_runs() -> Test {
    let repo = Test::repo();
    let fix = format!("{}/tests/fixtures/agents", env!("CARGO_MANIFEST_DIR"));
    repo.script("flaky.sh", FLAKY);
    repo.plan(
        &r#"
loop "rep" { parallel = 2 }
budget { iterations = 20  cost = $2  wait = 1m }
agent claude { run = "sh @FIX@/claude -p --output-format json --verbose"  output = claude-json  cost = $0.04 }
agent flaky { run = "sh @BIN@/flaky.sh"  cost = $0.10 }
task base "Lay the base" { agent = flaky  prompt = "base" }
task limited "Hits a usage limit once": base {
  agent = claude
  prompt = "x"
  env = { FIXTURE_LIMIT_ONCE = "@BIN@/limited.once"  FIXTURE_FILE = "limited.txt"  FIXTURE_RESETS_IN = "1" }
}
task retry "Fails its check once": base {
  agent = flaky
  prompt = "y"
  accept = "grep -q good retry.txt || { echo 'retry.txt does not say good'; exit 1; }"
}
task steady "Passes at once": base { agent = claude  prompt = "z"  env = { FIXTURE_FILE = "steady.txt" } }
task last "Needs them all": limited retry steady { agent = flaky  prompt = "w" }
"#
        .replace("@FIX@", &fix),
    );
    repo.loopc(&["run", "plan.loop", "base"]).run();
    let r = repo.loopc(&["run"]).run();
    assert!(
        r.stdout
            .ends_with("report: loopc report -o .loopc/report.html\n"),
        "{r:?}"
    );
    assert!(
        !repo.root.join(".loopc/report.html").exists(),
        "the run wrote a report nobody asked for"
    );
    repo
}

/// `loopc report ARGS` in the repository; its stdout.
fn report(repo: &Test, args: &[&str]) -> String {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    repo.loopc(&all).run().stdout
}

/// The chromium binary, or `None` when it is missing and not required
/// (skipped, saying so: [`crate::harness::require`]).
fn chromium() -> Option<&'static Path> {
    let path = Path::new(CHROMIUM);
    let usable = if path.is_file() {
        Ok(())
    } else {
        Err(format!("{CHROMIUM} is missing"))
    };
    crate::harness::require("chromium", usable).then_some(path)
}

/// Runs headless Chromium on `page` with `extra` arguments (a fresh
/// profile, nothing fetched) and returns its stdout; kills it after two
/// minutes.
fn headless(chromium: &Path, page: &Path, extra: &[String]) -> String {
    let profile = tempfile::tempdir().expect("profile directory");
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("start chromium");
    let mut stdout = child.stdout.take().expect("chromium's stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait for chromium").is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish with {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().expect("chromium's output")
}

/// The distinct colours of the PNG at `path`, and whether it has a pixel
/// of each of `wanted` (`#rrggbb`).
fn colours(path: &Path, wanted: &[[u8; 3]]) -> (usize, Vec<bool>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(path).expect("open the screenshot"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("its size")];
    let info = reader.next_frame(&mut buf).expect("its pixels");
    let step = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected colour type {other:?}"),
    };
    let mut seen = std::collections::HashSet::new();
    let mut found = vec![false; wanted.len()];
    for px in buf[..info.buffer_size()].chunks_exact(step) {
        let rgb = [px[0], px[1], px[2]];
        seen.insert(rgb);
        for (f, w) in found.iter_mut().zip(wanted) {
            *f |= rgb == *w;
        }
    }
    (seen.len(), found)
}

#[test]
fn the_report_of_a_real_run_renders_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        return;
    };
    let repo = two_runs();
    let printed = report(&repo, &[]);
    let page = PathBuf::from(printed.trim_end());
    assert_eq!(
        page.canonicalize().unwrap(),
        repo.root.join(".loopc/report.html").canonicalize().unwrap()
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing to fetch, no script.
    for never in [
        "<script", "<link", " src=", "https://", "url(http", "@import",
    ] {
        assert!(!html.contains(never), "the page has {never}");
    }
    assert_eq!(
        html.matches("http://").count(),
        html.matches("http://www.w3.org/2000/svg").count(),
        "the page names an address"
    );

    let dom = headless(chromium, &page, &["--dump-dom".to_string()]);
    for id in [
        "summary",
        "graph",
        "timeline",
        "cost",
        "tasks",
        "left",
        "task-base",
        "task-limited",
        "task-retry",
        "task-steady",
        "task-last",
        "task-retry-a1",
        "task-retry-a2",
    ] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "no #{id} in the DOM");
    }
    // The graph's tasks link to their details; the timeline has the
    // tries, the check, the merges and the wait; the money is marked.
    for want in [
        "<a href=\"#task-retry\">\n<g id=\"t",
        "class=\"k-attempt\"",
        "class=\"k-gate\"",
        "class=\"k-merge\"",
        "class=\"k-replay\"",
        "class=\"k-wait\"",
        "limited waits for claude's usage limit",
        "gate `accept` failed",
        "m-over-cap",
        "m-capped",
        "retry.r2-a1",
        "wrote retry.txt (good)",
    ] {
        assert!(dom.contains(want), "the DOM lacks {want}");
    }

    let shot = repo.bin.join("report.png");
    headless(
        chromium,
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".to_string(),
            // The shot waits for the page to be laid out and painted (on
            // a loaded machine it could be taken before).
            "--virtual-time-budget=5000".to_string(),
        ],
    );
    // Passed tasks' green in the graph, the failed try's red on the
    // timeline, and the many shades of text: not a blank page.
    let (distinct, found) = colours(&shot, &[[0xa5, 0xd6, 0xa7], [0xef, 0x9a, 0x9a]]);
    assert!(distinct > 50, "the screenshot has {distinct} colours");
    assert_eq!(
        found,
        [true, true],
        "the graph's green, the failed try's red"
    );
}

/// In a 400 px wide frame the page does not scroll sideways: a wide table
/// scrolls in its own box, the graph and timeline in theirs (measured by a
/// script of the test's own page around the report, which has none).
#[test]
fn the_report_fits_a_narrow_screen() {
    let Some(chromium) = chromium() else {
        return;
    };
    let repo = two_runs();
    let page = PathBuf::from(report(&repo, &[]).trim_end());
    let frame = repo.bin.join("narrow.html");
    std::fs::write(
        &frame,
        format!(
            "<html><body style=\"margin:0\"><iframe id=\"f\" src=\"file://{}\" \
             style=\"width:400px;height:1200px;border:0\"></iframe><script>\
             document.getElementById('f').addEventListener('load', () => {{\
             const d = document.getElementById('f').contentDocument;\
             const p = document.createElement('pre'); p.id = 'probe';\
             const w = d.documentElement.clientWidth; const wide = [];\
             for (const e of d.querySelectorAll('body *')) {{\
             const r = e.getBoundingClientRect();\
             if (r.right > w + 1 && !e.parentElement.closest('.scroll, pre, table'))\
             wide.push(e.tagName + '.' + e.className + ':' + Math.round(r.right)); }}\
             p.textContent = 'view ' + w + ' scroll ' + d.documentElement.scrollWidth + \
             ' wide: ' + wide.slice(0, 5).join(','); document.body.appendChild(p); }});\
             </script></body></html>",
            page.display()
        ),
    )
    .unwrap();
    let dom = headless(
        chromium,
        &frame,
        &[
            "--allow-file-access-from-files".to_string(),
            "--virtual-time-budget=5000".to_string(),
            "--dump-dom".to_string(),
        ],
    );
    let probe = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("no measurement in {dom}"));
    let numbers: Vec<u32> = probe
        .split(" wide:")
        .next()
        .unwrap_or("")
        .split(' ')
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{probe}");
    assert!(numbers[0] > 300, "{probe}");
    assert_eq!(numbers[0], numbers[1], "the page scrolls sideways: {probe}");
}

/// The attempts' bars on each slot of `timeline` never overlap.
fn slots_hold_one_try_at_a_time(timeline: &Value) {
    let bars = timeline["bars"].as_array().unwrap();
    let mut tries: Vec<(u64, u64, u64)> = bars
        .iter()
        .filter(|b| b["kind"] == "attempt")
        .map(|b| {
            (
                b["lane"].as_u64().unwrap(),
                b["start_ms"].as_u64().unwrap(),
                b["end_ms"].as_u64().unwrap(),
            )
        })
        .collect();
    tries.sort();
    for w in tries.windows(2) {
        if w[0].0 == w[1].0 {
            assert!(w[0].2 <= w[1].1, "{:?} overlaps {:?}", w[0], w[1]);
        }
    }
}

/// The tasks of the second run in its report's JSON `j`: the replayed
/// base, the retried task, the limited one.
fn tasks_are_reported(j: &Value) {
    let task = |name: &str| {
        j["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no task {name}"))
            .clone()
    };
    let base = task("base");
    assert_eq!(base["status"], "cached");
    assert!(base["tries"].as_array().unwrap().is_empty());
    assert!(base["cached_how"].is_string(), "{base}");

    let retry = task("retry");
    assert_eq!(retry["title"], "Fails its check once");
    assert_eq!(retry["dependencies"], serde_json::json!(["base"]));
    let tries = retry["tries"].as_array().unwrap();
    assert_eq!(tries.len(), 2, "{retry}");
    assert_eq!(tries[0]["outcome"], "failed");
    assert!(
        tries[0]["reason"].as_str().unwrap().contains("accept"),
        "{retry}"
    );
    assert_eq!(tries[0]["gates"][0]["name"], "accept");
    assert!(
        tries[0]["worktree"]
            .as_str()
            .unwrap()
            .ends_with("retry.r2-a1")
    );
    assert!(tries[0]["feedback"].is_null(), "{retry}");
    assert!(
        tries[0]["diff"]["text"].as_str().unwrap().contains("+bad"),
        "{retry}"
    );
    assert_eq!(tries[1]["outcome"], "passed");
    assert_eq!(tries[1]["summary"], "wrote retry.txt (good)");
    let feedback = tries[1]["feedback"]["text"].as_str().unwrap_or_default();
    assert!(feedback.contains("retry.txt does not say good"), "{retry}");
    for t in tries {
        assert_eq!(t["cost_micro_usd"], 100_000);
        assert_eq!(t["cost_mark"], "capped");
        assert_eq!(t["agent_name"], "flaky");
    }

    let limited = task("limited");
    let tries = limited["tries"].as_array().unwrap();
    assert_eq!(tries[0]["outcome"], "limited", "{limited}");
    assert_eq!(tries[1]["outcome"], "passed", "{limited}");
    assert_eq!(tries[1]["cost_micro_usd"], 42_100);
    assert_eq!(tries[1]["cost_mark"], "over cap");
    assert_eq!(tries[1]["agent"]["model"], "claude-sonnet-4-5-20250929");
    assert!(tries.iter().all(|t| t["slot"].is_u64()), "{limited}");
}

/// The timeline `tl`: two slots, the coordinator's row, a row of waits.
fn the_timeline_has_slots_merges_and_the_wait(tl: &Value) {
    let lanes: Vec<&str> = tl["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(lanes, ["slot", "slot", "coordinator", "wait"]);
    slots_hold_one_try_at_a_time(tl);
    let bars = tl["bars"].as_array().unwrap();
    let wait = bars.iter().find(|b| b["kind"] == "wait").expect("a wait");
    assert_eq!(wait["task"], "limited");
    assert!(
        wait["end_ms"].as_u64() > wait["start_ms"].as_u64(),
        "{wait}"
    );
    // The retry started after the wait's limited try, on a slot; the
    // wait ended when `limited` started again.
    let started_again = bars
        .iter()
        .filter(|b| b["kind"] == "attempt" && b["task"] == "limited")
        .nth(1)
        .expect("limited's second try");
    assert!(started_again["start_ms"].as_u64() >= wait["end_ms"].as_u64());
    for kind in ["agent", "gate", "merge", "replay"] {
        assert!(bars.iter().any(|b| b["kind"] == kind), "no {kind} bar");
    }
}

/// Each try's cost as it ended, adding up to what the run spent.
fn money_adds_up(j: &Value) {
    let series = j["cost_series"].as_array().unwrap();
    assert_eq!(series.len(), 6, "{series:?}");
    let mut last = 0;
    for p in series {
        let total = p["cumulative_micro_usd"].as_u64().unwrap();
        assert!(total >= last, "{series:?}");
        last = total;
    }
    assert_eq!(j["cost"]["spent_micro_usd"].as_u64(), Some(last));
    assert_eq!(last, 3 * 100_000 + 2 * 42_100);
    assert_eq!(j["cost"]["budget_micro_usd"], 2_000_000);
    assert_eq!(j["cost"]["over_budget"], false);
}

#[test]
fn the_reports_json_has_the_runs_facts() {
    let repo = two_runs();
    let j: Value = serde_json::from_str(&report(&repo, &["--json"])).unwrap();
    assert_eq!(j["version"], 2);
    assert_eq!(j["run"], 2);
    assert_eq!(j["last"], true);
    assert_eq!(j["source"], "state");
    assert_eq!(j["plan"], "rep");
    assert_eq!(
        (&j["status"], &j["exit_code"]),
        (&"passed".into(), &0.into())
    );
    assert_eq!(j["integration_branch"], "loop/rep");
    assert_eq!(j["head_commit"], repo.git(&["rev-parse", "loop/rep"]));
    assert_eq!(j["parallel"], 2);
    let c = &j["counts"];
    assert_eq!(
        (&c["tasks"], &c["passed"], &c["cached"]),
        (&5.into(), &4.into(), &1.into())
    );
    // Agent attempts: limited 1 (its limited try is not counted), retry 2,
    // steady 1, last 1.
    assert_eq!(j["agent_attempts"], 5);

    tasks_are_reported(&j);
    the_timeline_has_slots_merges_and_the_wait(&j["timeline"]);
    money_adds_up(&j);
    // What it left: the failed try's worktree.
    let kept = j["left"]["kept_worktrees"].as_array().unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        (&kept[0]["task"], &kept[0]["exists"]),
        (&"retry".into(), &true.into())
    );

    // The earlier run, from the state it left with its logs.
    let first: Value = serde_json::from_str(&report(&repo, &["--json", "--run", "1"])).unwrap();
    assert_eq!((&first["run"], &first["last"]), (&1.into(), &false.into()));
    assert_eq!(first["source"], "saved state");
    let tasks = first["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{first}");
    assert_eq!(tasks[0]["status"], "passed");
    let logs = tasks[0]["tries"][0]["logs"].as_str().unwrap();
    assert!(logs.ends_with(".loopc/earlier-logs/1/base/1"), "{logs}");
    assert_eq!(tasks[0]["tries"][0]["summary"], "wrote base.txt (good)");
    // Its page too, written where asked.
    let out = repo.bin.join("first.html");
    let printed = report(&repo, &["--run", "1", "-o", out.to_str().unwrap()]);
    assert_eq!(printed, format!("{}\n", out.display()));
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("id=\"task-base\"")
    );
}

/// From outside the plan's repository, `loopc report` would report another
/// repository (or none): the run's last lines go there first.
#[test]
fn from_outside_the_repository_the_merge_and_report_lines_go_there_first() {
    let repo = Test::repo();
    repo.plan("task a { run = \"echo a > a.txt\" }\n");
    let plan = repo.root.join("plan.loop");
    let r = repo
        .loopc(&["run", plan.to_str().unwrap()])
        .current_dir(&repo.bin)
        .run();
    let top = repo.root.canonicalize().unwrap();
    let line = format!(
        "to bring the work onto your branch: cd {0} && git merge loop/plan\n\
         report: cd {0} && loopc report\n",
        top.display()
    );
    assert!(r.stdout.ends_with(&line), "{r:?}");
}

#[test]
fn report_errors_say_what_to_do_and_exit_2() {
    // Outside a repository, and in one without a run.
    Test::new()
        .loopc(&["report"])
        .status(2)
        .stderr_contains("is not inside a git")
        .run();
    let repo = Test::repo();
    repo.plan(
        r#"
loop "err" { notify = "cat > @BIN@/notify.json; echo \"$LOOP_REPORT\" > @BIN@/notify.env" }
task a { run = "echo a > a.txt" }
"#,
    );
    repo.loopc(&["report"])
        .status(2)
        .stderr_contains("error: no run recorded here")
        .stderr_contains("start one with `loopc run`")
        .run();

    std::fs::create_dir_all(repo.root.join("sub")).unwrap();
    let r = repo
        .loopc(&["run", "../plan.loop"])
        .current_dir(repo.root.join("sub"))
        .run();
    assert!(
        r.stdout
            .ends_with("report: loopc report -o ../.loopc/report.html\n"),
        "{r:?}"
    );

    // The notify command is told where the report would be written.
    let file = repo.root.canonicalize().unwrap().join(".loopc/report.html");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.bin.join("notify.json")).unwrap())
            .unwrap();
    assert_eq!(doc["report"]["file"], file.to_str().unwrap());
    assert_eq!(
        doc["report"]["command"],
        format!("loopc report -o {}", file.display())
    );
    assert_eq!(
        std::fs::read_to_string(repo.bin.join("notify.env")).unwrap(),
        format!("{}\n", file.display())
    );

    repo.loopc(&["report", "--run", "7"])
        .status(2)
        .stderr_contains("error: no run 7 is recorded")
        .stderr_contains("the only one is run 1")
        .run();
    for bad in ["/nonexistent-loopc-dir/r.html", "sub", "sub/"] {
        repo.loopc(&["report", "-o", bad])
            .status(2)
            .stderr_contains(&format!("error: cannot write the report to {bad}"))
            .run();
    }
    // A directory: said as one, with a file name to give instead; nothing
    // is left in it.
    repo.loopc(&["report", "-o", "sub/"])
        .status(2)
        .stderr(
            "error: cannot write the report to sub/: it is a directory; name a file in it \
             (`-o sub/report.html`)\n",
        )
        .run();
    assert!(!repo.root.join("sub/.tmp").exists());
    // From a subdirectory, the page goes to the repository's `.loopc/`.
    let printed = repo
        .loopc(&["report"])
        .current_dir(repo.root.join("sub"))
        .run()
        .stdout;
    assert_eq!(printed, format!("{}\n", file.display()));
    // `--json -o FILE` writes the document there.
    let json = repo.bin.join("r.json");
    repo.loopc(&["report", "--json", "-o", json.to_str().unwrap()])
        .stdout(&format!("{}\n", json.display()))
        .run();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!((&doc["version"], &doc["plan"]), (&2.into(), &"err".into()));
}

/// The names of the tasks the page's graph draws (its first `<svg>`).
fn drawn_tasks(page: &str) -> Vec<String> {
    let start = page.find("<svg").expect("a graph");
    let svg = &page[start..start + page[start..].find("</svg>").unwrap()];
    svg.split("<a href=\"#task-")
        .skip(1)
        .filter_map(|t| t.split_once('"').map(|(name, _)| name.to_string()))
        .collect()
}

#[test]
fn a_report_draws_the_plan_its_run_ran_not_the_plan_as_edited_since() {
    let repo = Test::repo();
    repo.plan("loop \"ed\" { }\ntask a { run = \"echo a > a.txt\" }\n");
    repo.commit("plan with a");
    repo.loopc(&["run"]).status(0).run();
    repo.plan(
        "loop \"ed\" { }\ntask a { run = \"echo a > a.txt\" }\n\
         task b: a { run = \"echo b > b.txt\" }\n",
    );
    repo.commit("plan with b");
    repo.loopc(&["run"]).status(0).run();
    // Edited again, not run: the last run's report still draws a and b.
    repo.plan(
        "loop \"ed\" { }\ntask a { run = \"echo a > a.txt\" }\n\
         task b: a { run = \"echo b > b.txt\" }\ntask c: b { run = \"echo c > c.txt\" }\n",
    );
    let page = |args: &[&str]| {
        let out = repo.bin.join("page.html");
        let mut all = args.to_vec();
        all.extend(["-o", out.to_str().unwrap()]);
        report(&repo, &all);
        std::fs::read_to_string(&out).unwrap()
    };
    assert_eq!(drawn_tasks(&page(&[])), ["a", "b"]);
    assert_eq!(drawn_tasks(&page(&["--run", "1"])), ["a"]);
}

/// A cost the handoff reports is what was charged, not the cap: the try
/// is not marked `capped`; one that reports nothing is (`capped` in its
/// history entry, as the report reads it).
#[test]
fn a_cost_the_handoff_reports_is_not_marked_capped() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        "cat > /dev/null\necho x > \"$LOOP_TASK.txt\"\n\
         if [ \"$LOOP_TASK\" = told ]; then c=',\"cost_usd\":0.01'; fi\n\
         printf '{\"status\":\"completed\",\"summary\":\"s\"%s}' \"$c\" > \"$LOOP_HANDOFF\"\n",
    );
    repo.plan(
        "budget { cost = $5 }\n\
         agent bot { run = \"sh @BIN@/agent.sh\"  cost = $0.50 }\n\
         task told { agent = bot  prompt = \"x\" }\n\
         task silent { agent = bot  prompt = \"y\" }\n",
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.task("told")["history"][0]["cost_micro_usd"], 10_000);
    assert!(repo.task("told")["history"][0].get("capped").is_none());
    assert_eq!(repo.task("silent")["history"][0]["capped"], true);
    let out = repo.loopc(&["report", "--json"]).status(0).run().stdout;
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mark = |name: &str| {
        report["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["tries"][0]["cost_mark"]
            .clone()
    };
    assert_eq!(mark("told"), serde_json::Value::Null);
    assert_eq!(mark("silent"), "capped");
}

#[test]
fn an_earlier_run_that_was_killed_is_reported_killed() {
    let repo = Test::repo();
    let started = repo.bin.join("started");
    let release = repo.bin.join("release");
    repo.plan(&format!(
        "loop \"k\" {{ }}\ntask a {{ run = \"touch {s}; while [ ! -e {r} ]; do sleep 0.02; done; echo a > a.txt\" }}\n",
        s = started.display(),
        r = release.display()
    ));
    let mut first = repo.loopc(&["run"]).spawn();
    assert!(
        repo.wait_for(4000, || started.exists()),
        "the task never started"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    std::fs::write(&release, "").unwrap();
    assert!(repo.wait_for(4000, || !repo.has_processes_inside()));
    repo.loopc(&["run"]).status(0).run();
    let earlier: Value = serde_json::from_str(&report(&repo, &["--json", "--run", "1"])).unwrap();
    assert_eq!(earlier["status"], "killed", "{earlier}");
    let last: Value = serde_json::from_str(&report(&repo, &["--json"])).unwrap();
    assert_eq!(last["status"], "passed", "{last}");
}

#[test]
fn the_report_says_which_gates_skip_gate_left_unchecked() {
    let repo = Test::repo();
    repo.plan(
        "loop \"s\" { }\ngate g = \"true\"\ntask a { run = \"echo a > a.txt\"  gates = [g] }\n",
    );
    repo.loopc(&["run", "-q", "--skip-gate", "g"])
        .status(0)
        .run();
    let j: Value = serde_json::from_str(&report(&repo, &["--json"])).unwrap();
    assert_eq!(
        j["tasks"][0]["not_checked_by"],
        serde_json::json!(["g"]),
        "{j}"
    );
    assert!(j["tasks"][0].get("earlier_attempts").is_none(), "{j}");
    let page = repo.loopc(&["report", "-o", "-"]).run().stdout;
    assert!(
        page.contains("<dt>not checked</dt><dd>in this run by <code>g</code> (--skip-gate)</dd>")
    );
}
