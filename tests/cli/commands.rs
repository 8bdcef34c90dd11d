//! The commands a user of make, just and cargo expects: `run TASK…`,
//! `list`, `completions`, `clean --cache`, `init`, `-q`/`-v`, and plan
//! discovery that is the same for every command and works from any
//! subdirectory of the repository.

use crate::harness::Test;

/// Three command tasks: `b` needs `a`; `c` stands alone.
const PLAN: &str = r#"
loop "cmds" { }
task a "Make a" { run = "echo a > a.txt" }
task b "Make b": a { run = "echo b > b.txt" }
task c { run = "echo c > c.txt" }
"#;

fn names(state: &serde_json::Value) -> Vec<String> {
    state["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn run_task_runs_it_and_its_dependencies_only() {
    let repo = Test::repo();
    repo.plan(PLAN);
    let dry = repo.loopc(&["run", "b", "--dry-run"]).run();
    assert!(dry.stdout.contains("a: run\nb: run\n"), "{dry:?}");
    assert!(!dry.stdout.contains("c:"), "{dry:?}");
    repo.loopc(&["run", "b"]).run();
    assert_eq!(names(&repo.state()), ["a", "b"]);
    assert_eq!(repo.status_of("b"), "passed");
    let files = repo.files_at("loop/cmds");
    assert!(files.contains(&"b.txt".to_string()), "{files:?}");
    assert!(!files.contains(&"c.txt".to_string()), "{files:?}");
    // The plan named first, then tasks.
    repo.loopc(&["run", "plan.loop", "c"]).run();
    assert_eq!(names(&repo.state()), ["c"]);
}

#[test]
fn an_unknown_task_is_exit_2_with_the_closest_name() {
    let repo = Test::repo();
    repo.plan(PLAN);
    for dry in [false, true] {
        let mut args = vec!["run", "bb"];
        if dry {
            args.push("--dry-run");
        }
        repo.loopc(&args)
            .stderr("error: no task named `bb` in the plan; did you mean `b`?\n")
            .status(2)
            .run();
    }
    assert!(!repo.root.join(".loopc/state.json").exists());
}

#[test]
fn list_shows_tasks_in_topological_order_with_the_last_status() {
    let repo = Test::repo();
    repo.plan(
        r#"
task z "Last": a { run = "echo z > z.txt" }
task a "First" { run = "echo a > a.txt" }
task m { run = "echo m > m.txt" }
"#,
    );
    repo.loopc(&["list"])
        .stdout("task  status  title\na     -       First\nz     -       Last\nm     -\n")
        .run();
    repo.loopc(&["run", "z"]).run();
    repo.loopc(&["list"])
        .stdout("task  status  title\na     passed  First\nz     passed  Last\nm     -\n")
        .run();
    let j = repo.loopc(&["list", "--json"]).run();
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "version": 1,
            "plan": "plan",
            "file": "plan.loop",
            "tasks": [
                {"name": "a", "title": "First", "dependencies": [], "status": "passed"},
                {"name": "z", "title": "Last", "dependencies": ["a"], "status": "passed"},
                {"name": "m", "title": null, "dependencies": [], "status": null},
            ]
        })
    );
}

#[test]
fn completions_for_each_shell() {
    let test = Test::new();
    for (shell, marker) in [
        (
            "bash",
            "complete -o nospace -o bashdefault -o nosort -F _clap_complete_loopc loopc",
        ),
        ("zsh", "#compdef loopc"),
        ("fish", "complete --keep-order --exclusive --command loopc"),
        ("elvish", "set edit:completion:arg-completer[loopc]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let r = test.loopc(&["completions", shell]).run();
        assert!(r.stdout.contains(marker), "{shell}: {r:?}");
        // The shell asks this very binary back at each Tab.
        assert!(r.stdout.contains("LOOPC_COMPLETE"), "{shell}: {r:?}");
    }
    let r = test.loopc(&["completions", "tcsh"]).status(2).run();
    assert!(r.stderr.contains("invalid value 'tcsh'"), "{r:?}");
}

/// What bash offers at a Tab after `loopc WORDS… CURRENT`, in `dir`, with
/// the script `loopc completions bash` prints sourced.
fn bash_completes(dir: &std::path::Path, words: &[&str], current: &str) -> Vec<String> {
    let mut line: Vec<String> = vec!["loopc".into()];
    line.extend(words.iter().map(|w| w.to_string()));
    line.push(current.into());
    let quoted: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        "source <(\"$LOOPC\" completions bash)\n\
         COMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_TYPE=9\n\
         _clap_complete_loopc loopc '{current}' '{}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        quoted.join(" "),
        line.len() - 1,
        line[line.len() - 2],
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .env("LOOPC", crate::harness::loopc_path())
        .current_dir(dir)
        .output()
        .expect("bash");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// `run`, `logs`, `answer` and `--force` complete the task names of the
/// plan found here (bash is the shell tried; the others share the engine).
#[test]
fn completions_offer_the_plans_task_names() {
    let repo = Test::repo();
    repo.plan(
        "loop \"co\" { }\ntask build \"Build it\" { run = \"true\" }\n\
         task bench: build { run = \"true\" }\ntask test: build { run = \"true\" }\n",
    );
    let run = bash_completes(&repo.root, &["run"], "b");
    assert_eq!(run, ["build", "bench"], "{run:?}");
    for words in [&["logs"][..], &["answer"][..], &["run", "--force"][..]] {
        let got = bash_completes(&repo.root, words, "t");
        assert_eq!(got, ["test"], "{words:?}");
    }
    // The subcommands themselves, from the command line's definition.
    assert_eq!(bash_completes(&repo.root, &[], "comp"), ["completions"]);
    // `--stage`: a spec tree's stages, after those already named.
    assert_eq!(
        bash_completes(&repo.root, &["run", "--stage"], "review,a"),
        ["review,active", "review,archived"]
    );
}

/// The tasks the last run added from a plan fragment complete too (`logs
/// design.one`), as `list` shows them.
#[test]
fn completions_offer_the_tasks_a_fragment_added() {
    let repo = Test::repo();
    repo.write(
        "frag.loop",
        "task one { run = \"true\"  changes = optional }\n\
         task two: one { run = \"true\"  changes = optional }\n",
    );
    repo.commit("the fragment");
    repo.plan(
        "task design { run = \"mkdir -p plan && cp frag.loop plan/more.loop\"  \
         expands = \"plan/more.loop\" }\n",
    );
    repo.loopc(&["run", "-q"]).status(0).run();
    let got = bash_completes(&repo.root, &["logs"], "design.");
    assert_eq!(got, ["design.one", "design.two"], "{got:?}");
}

#[test]
fn clean_cache_forgets_every_entry() {
    let repo = Test::repo();
    repo.plan(PLAN);
    repo.loopc(&["run"]).run();
    assert_ne!(repo.git(&["for-each-ref", "refs/loopc/cache/"]), "");
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert!(dry.stdout.contains("3 cached, 0 to run"), "{dry:?}");
    repo.loopc(&["clean", "--cache"])
        .stdout("removed the logs\nremoved 3 cache entries\n")
        .run();
    assert_eq!(repo.git(&["for-each-ref", "refs/loopc/cache/"]), "");
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert!(dry.stdout.contains("0 cached, 3 to run"), "{dry:?}");
    repo.loopc(&["clean", "--cache"])
        .stdout("no worktrees, task branches or logs to remove\nno cache entries to remove\n")
        .run();
    repo.loopc(&["-q", "clean", "--cache"]).stdout("").run();
}

#[test]
fn init_writes_a_starter_plan_that_checks_clean() {
    let repo = Test::repo();
    repo.loopc(&["init"])
        .stderr("wrote plan.loop: check it with `loopc check`, run it with `loopc run`\n")
        .run();
    repo.loopc(&["check"])
        .stderr("ok: 2 tasks, 0 warnings\n")
        .run();
    repo.loopc(&["check", "--deny-warnings", "plan.loop"])
        .stderr("ok: 2 tasks, 0 warnings\n")
        .run();
    repo.loopc(&["fmt", "--check"]).stdout("").run();
    // Its agent has a cost cap, and Claude Code is told it.
    let plan = std::fs::read_to_string(repo.root.join("plan.loop")).unwrap();
    assert!(
        plan.contains("--max-budget-usd \\\"$LOOP_COST_CAP_USD\\\""),
        "{plan}"
    );
    std::fs::write(repo.root.join("plan.loop"), "# mine\n").unwrap();
    repo.loopc(&["init"])
        .stderr(
            "error: plan.loop already exists; left as it is (`loopc init --force` overwrites it)\n",
        )
        .status(2)
        .run();
    assert_eq!(
        std::fs::read_to_string(repo.root.join("plan.loop")).unwrap(),
        "# mine\n"
    );
    repo.loopc(&["-q", "init", "--force"]).stderr("").run();
    repo.loopc(&["-q", "check"]).stderr("").run();
}

#[test]
fn every_command_finds_the_plan_from_a_subdirectory() {
    let repo = Test::repo();
    repo.plan(PLAN);
    let sub = repo.root.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    repo.loopc(&["check"])
        .current_dir(&sub)
        .stderr("ok: 3 tasks, 0 warnings\n")
        .run();
    let g = repo.loopc(&["graph"]).current_dir(&sub).run();
    assert!(g.stdout.starts_with("cmds: 3 tasks"), "{g:?}");
    repo.loopc(&["fmt", "--check"])
        .current_dir(&sub)
        .status(1)
        .stdout("../../plan.loop\n")
        .run();
    repo.loopc(&["-v", "list"])
        .current_dir(&sub)
        .stderr("note: using the plan ../../plan.loop\n")
        .run();
    repo.loopc(&["run", "a"]).current_dir(&sub).run();
    assert_eq!(repo.status_of("a"), "passed");
    assert!(!sub.join(".loopc").exists());
}

#[test]
fn two_candidate_plans_are_both_named() {
    let repo = Test::repo();
    repo.write("one.loop", "task a { run = \"true\" }\n");
    repo.write("two.loop", "task a { run = \"true\" }\n");
    let want =
        "error: no plan given, and 2 plans in .: one.loop, two.loop; name one (e.g. `one.loop`)\n";
    for cmd in ["run", "check", "graph", "fmt", "list"] {
        repo.loopc(&[cmd]).stderr(want).status(2).run();
    }
    let none = Test::repo();
    let r = none.loopc(&["check"]).status(2).run();
    assert!(
        r.stderr
            .starts_with("error: no plan given, and no plan.loop or *.loop file in "),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("`loopc init` writes a starter plan"),
        "{r:?}"
    );
}

#[test]
fn quiet_and_verbose_runs() {
    let repo = Test::repo();
    repo.plan(PLAN);
    // -q: no progress and, for a run that passed, no summary.
    repo.loopc(&["-q", "run"]).stdout("").stderr("").run();
    // -v: the plan found, then one line per event (not a terminal anyway).
    repo.loopc(&["clean", "--cache"]).run();
    let r = repo.loopc(&["run", "-v", "a"]).run();
    assert!(
        r.stderr
            .starts_with("note: using the plan plan.loop\nloopc: running plan cmds"),
        "{r:?}"
    );
    assert!(r.stdout.contains("run passed"), "{r:?}");
    let r = repo.loopc(&["-q", "-v", "run"]).status(2).run();
    assert!(r.stderr.contains("cannot be used with"), "{r:?}");
    // -q leaves out the notes about cleaning up after an earlier run (an
    // empty directory with a worktree's name, as a killed `git worktree
    // add` leaves it); without -q they are said.
    std::fs::create_dir_all(repo.root.join(".loopc/worktrees/a-9")).unwrap();
    repo.loopc(&["-q", "run"]).stdout("").stderr("").run();
    std::fs::create_dir_all(repo.root.join(".loopc/worktrees/a-9")).unwrap();
    repo.loopc(&["run"])
        .stderr_contains("note: removed 1 stale worktree under")
        .run();
}

/// `-q` is errors and the output asked for: a run prints no warnings, the
/// plan's (W0003 here, a gate never used) nor its own (uncommitted
/// changes), though without `-q` it does.
#[test]
fn a_quiet_run_prints_no_warnings() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        "#!/bin/sh\ncat >/dev/null\necho x > \"$LOOP_TASK.txt\"\n",
    );
    repo.plan(
        "loop \"qw\" { }\nagent bot { run = \"sh @BIN@/agent.sh\" }\ngate unused = \"true\"\n\
         task a { agent = bot  prompt = \"x\" }\n",
    );
    repo.write("notes.txt", "not committed\n");
    let loud = repo.loopc(&["run", "--dry-run"]).run();
    for w in ["warning[W0003]", "warning[W0001]", "uncommitted change"] {
        assert!(loud.stderr.contains(w), "{w}: {loud:?}");
    }
    repo.loopc(&["-q", "run"]).stdout("").stderr("").run();
}

#[test]
fn status_says_when_the_integration_branch_is_gone() {
    let repo = Test::repo();
    repo.plan(PLAN);
    repo.loopc(&["run", "a"]).run();
    let before = repo.loopc(&["status"]).run();
    assert!(!before.stdout.contains("is gone"), "{before:?}");
    repo.git(&["branch", "-D", "loop/cmds"]);
    let after = repo.loopc(&["status"]).run();
    assert!(
        after.stdout.ends_with(
            "the integration branch loop/cmds is gone: it was deleted after this run (the next \
             `loopc run` creates it again from the base, replaying the passed tasks the cache still holds)\n"
        ),
        "{after:?}"
    );
    // The next run does so.
    repo.loopc(&["run", "a"]).run();
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loop/cmds"]));
}

/// The README's plans are what `loopc fmt` writes, and its example plan
/// checks clean: a new user copies them.
#[test]
fn the_readme_plans_are_in_fmt_layout() {
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let test = Test::new();
    let mut blocks = 0;
    for (i, block) in readme.split("```loop\n").skip(1).enumerate() {
        let plan = block.split("```").next().unwrap();
        let name = format!("readme{i}.loop");
        test.write(&name, plan);
        test.loopc(&["fmt", "--check", &name]).stdout("").run();
        blocks += 1;
    }
    assert!(blocks >= 2, "{blocks} loop blocks in README.md");
    test.loopc(&["check", "readme0.loop"])
        .stderr("ok: 2 tasks, 0 warnings\n")
        .run();
}

#[test]
fn a_task_named_like_a_directory_gets_a_hint_to_name_the_plan_first() {
    let repo = Test::repo();
    repo.plan("loop \"dn\" { }\ntask check { run = \"echo ok > ok.txt\" }\n");
    std::fs::create_dir_all(repo.root.join("check")).unwrap();
    let r = repo.loopc(&["run", "check", "--dry-run"]).status(2).run();
    assert!(
        r.stderr.contains(
            "hint: `check` is also a task of plan.loop; to run the task, name the plan first: \
             `loopc run plan.loop check`"
        ),
        "{r:?}"
    );
    repo.loopc(&["run", "plan.loop", "check", "--dry-run"])
        .run();
}

/// The one rule for a test that needs an outside program: without it the
/// test is skipped with one line that plain `cargo test` shows (no
/// `--nocapture`) and a summary when the tests end; with `LOOPC_REQUIRE`
/// naming it (as `.ci/run` sets it), the test fails. Tried on a graph test
/// that needs `dot`, run by this very test binary with a `PATH` without it.
#[test]
fn a_test_whose_program_is_missing_says_it_is_skipped() {
    let empty = tempfile::tempdir().unwrap();
    let test = "cli::graph::dot_escaping_round_trips_through_graphviz";
    let run = |require: Option<&str>| {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", test, "--test-threads", "2"])
            .env("PATH", empty.path())
            .env_remove("LOOPC_REQUIRE");
        if let Some(r) = require {
            cmd.env("LOOPC_REQUIRE", r);
        }
        cmd.output().unwrap()
    };
    let out = run(None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "SKIPPED {test}: what needs dot is left out: `dot` cannot be run"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "SKIPPED 1 test(s) whose outside programs are not usable here: dot 1 (install: graphviz)"
        ),
        "{stderr}"
    );
    for require in ["dot", "nvim,dot", "all"] {
        let out = run(Some(require));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{require}: {stdout}");
        assert!(
            stdout.contains("needs dot, which LOOPC_REQUIRE requires"),
            "{stdout}"
        );
    }
    // Another program required does not make this one so.
    assert!(run(Some("nvim")).status.success());
}
