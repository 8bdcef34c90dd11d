//! `loopc fmt`: snapshots of ugly inputs, idempotence and same-plan on every
//! plan of the repository, and the command line (`--check`, in-place writes,
//! syntax errors, unreadable files).

use crate::harness::Test;
use loopc::fmt::format_source;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn format(name: &str, source: &str) -> String {
    format_source(source).unwrap_or_else(|d| panic!("{name} was not formatted: {d:#?}"))
}

/// Every `*.loop` file under `dir`, recursively, sorted.
fn loop_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            loop_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "loop") {
            out.push(p);
        }
    }
}

/// The plans the same-plan and idempotence tests run on: every example and
/// every test plan the parser accepts (files with syntax errors are test
/// inputs for diagnostics and are, by design, not formatted).
fn corpus() -> Vec<PathBuf> {
    let mut files = Vec::new();
    loop_files(&root().join("examples"), &mut files);
    loop_files(&root().join("tests"), &mut files);
    files
        .into_iter()
        .filter(|p| format_source(&read(p)).is_ok())
        .collect()
}

#[test]
fn corpus_contains_every_example() {
    let files = corpus();
    let examples = files
        .iter()
        .filter(|p| p.starts_with(root().join("examples")))
        .count();
    assert!(examples >= 3, "examples missing from the corpus: {files:?}");
    assert!(
        files.len() >= examples + 6,
        "fmt fixtures missing from the corpus: {files:?}"
    );
}

/// The examples are what users copy: they are kept in the canonical layout.
#[test]
fn every_example_is_already_formatted() {
    let mut files = Vec::new();
    loop_files(&root().join("examples"), &mut files);
    assert!(!files.is_empty());
    for path in files {
        let source = read(&path);
        let formatted = format(&path.display().to_string(), &source);
        assert!(
            formatted == source,
            "{} is not in the canonical layout: run `loopc fmt {}`",
            path.display(),
            path.display()
        );
    }
}

#[test]
fn formatting_is_idempotent_on_every_plan() {
    for path in corpus() {
        let name = path.display().to_string();
        let once = format(&name, &read(&path));
        let twice = format(&name, &once);
        assert_eq!(once, twice, "formatting {name} twice changed it");
        // CRLF line ends and a byte-order mark give the same canonical text.
        let crlf = format!("\u{feff}{}", read(&path).replace('\n', "\r\n"));
        assert_eq!(format(&name, &crlf), once, "CRLF/BOM variant of {name}");
    }
}

#[test]
fn formatted_plans_compile_to_the_same_plan() {
    let mut compared_keys = 0;
    for path in corpus() {
        let name = path.display().to_string();
        let source = read(&path);
        let formatted = format(&name, &source);
        let before = loopc::compile(&name, &source);
        let after = loopc::compile(&name, &formatted);
        let codes = |c: &loopc::Compilation| -> Vec<(String, String)> {
            c.diagnostics
                .iter()
                .map(|d| (d.code.to_string(), d.message.clone()))
                .collect()
        };
        assert_eq!(codes(&before), codes(&after), "diagnostics of {name}");
        assert_eq!(before.has_errors(), after.has_errors(), "{name}");
        match (&before.plan, &after.plan) {
            (None, None) => assert!(before.has_errors(), "{name} compiled to no plan"),
            (Some(a), Some(b)) => {
                assert_eq!(a.name, b.name, "{name}: loop name");
                assert_eq!(a.settings, b.settings, "{name}: loop settings");
                assert_eq!(a.budget, b.budget, "{name}: budget");
                let keys = |p: &loopc::plan::Plan| -> Vec<(String, String, Vec<usize>)> {
                    p.tasks
                        .iter()
                        .map(|t| (t.name.clone(), t.key.to_hex(), t.dependencies.clone()))
                        .collect()
                };
                assert_eq!(keys(a), keys(b), "{name}: task names, keys, dependencies");
                assert_eq!(a.tasks, b.tasks, "{name}: resolved tasks");
                assert_eq!(
                    a.graph.edge_count(),
                    b.graph.edge_count(),
                    "{name}: graph edges"
                );
                compared_keys += a.tasks.len();
            }
            _ => panic!("{name}: one version compiles and the other does not"),
        }
    }
    assert!(
        compared_keys >= 10,
        "too few tasks compared: {compared_keys}"
    );
}

#[test]
fn formatting_keeps_every_comment_in_order() {
    for path in corpus() {
        let name = path.display().to_string();
        let source = read(&path);
        let formatted = format(&name, &source);
        let texts = |s: &str| -> Vec<String> {
            loopc::syntax::comments(s)
                .iter()
                .map(|c| s[c.range()].trim().to_string())
                .collect()
        };
        assert_eq!(texts(&source), texts(&formatted), "comments of {name}");
    }
}

#[test]
fn snapshots_of_ugly_inputs() {
    // Snapshots live beside their inputs, in tests/fixtures/fmt/snapshots/.
    insta::with_settings!({ snapshot_path => "../fixtures/fmt/snapshots", prepend_module_to_snapshot => false }, {
        insta::glob!("../fixtures/fmt", "*.loop", |path| {
            let source = read(path);
            let formatted = format(&path.display().to_string(), &source);
            insta::assert_snapshot!(formatted);
        });
    });
}

#[test]
fn check_names_changed_files_and_writes_nothing() {
    let ugly = "task a{run=\"x\"}\n";
    let pretty = "task a {\n  run = \"x\"\n}\n";
    let test = Test::new()
        .file("ugly.loop", ugly)
        .file("pretty.loop", pretty);
    test.loopc(&["fmt", "--check", "ugly.loop", "pretty.loop"])
        .stdout("ugly.loop\n")
        .status(1)
        .run();
    assert_eq!(read(&test.root.join("ugly.loop")), ugly);
    test.loopc(&["fmt", "--check", "pretty.loop"])
        .stdout("")
        .run();
    // A full stdout loses the list: said, exit 2.
    let o = test
        .loopc(&["fmt", "--check", "ugly.loop"])
        .output_to_a_full_disk();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: cannot write to stdout: No space left on device (os error 28)\n\
         error: 1 file would be reformatted (run `loopc fmt` without --check)\n"
    );
}

#[test]
fn fmt_rewrites_in_place() {
    let test = Test::new().file("plan.loop", "task a{run=\"x\" attempts=2}");
    test.loopc(&["fmt", "plan.loop"]).run();
    assert_eq!(
        read(&test.root.join("plan.loop")),
        "task a {\n  run      = \"x\"\n  attempts = 2\n}\n"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&test.root)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "temporary files left: {leftovers:?}");
    test.loopc(&["fmt", "--check", "plan.loop"]).run();
}

#[test]
fn syntax_errors_are_reported_and_the_file_is_left_alone() {
    let broken = "task a { prompt = }\n";
    let test = Test::new().file("broken.loop", broken);
    for args in [
        &["fmt", "broken.loop"][..],
        &["fmt", "--check", "broken.loop"][..],
    ] {
        test.loopc(args)
            .stderr_contains("E0001")
            .stderr_contains("not formatted")
            .status(1)
            .run();
        assert_eq!(read(&test.root.join("broken.loop")), broken);
    }
}

#[test]
fn unreadable_files_exit_2() {
    Test::new()
        .loopc(&["fmt", "missing.loop"])
        .stderr_contains("missing.loop")
        .status(2)
        .run();
}

/// Every prefix of every plan (as an editor sees a file being typed): the
/// formatter never panics, and whatever it accepts it formats idempotently
/// and without changing the diagnostics.
#[test]
fn every_prefix_of_every_plan_formats_safely() {
    let mut formatted = 0;
    for path in corpus() {
        let source = read(&path);
        for end in (0..=source.len()).filter(|&i| source.is_char_boundary(i)) {
            let prefix = &source[..end];
            let Ok(once) = format_source(prefix) else {
                continue;
            };
            formatted += 1;
            let twice = format(&path.display().to_string(), &once);
            assert_eq!(once, twice, "{} cut at {end}", path.display());
            let codes = |s: &str| -> Vec<String> {
                loopc::compile("p.loop", s)
                    .diagnostics
                    .iter()
                    .map(|d| format!("{} {}", d.code, d.message))
                    .collect()
            };
            assert_eq!(
                codes(prefix),
                codes(&once),
                "{} cut at {end}",
                path.display()
            );
        }
    }
    assert!(formatted > 50, "only {formatted} prefixes were formattable");
}

/// A comment inserted between any two tokens of any fixture (as a trailing
/// comment, or on a line of its own) survives formatting, in order, and the
/// result is idempotent and means the same as the plan without it.
#[test]
fn a_comment_anywhere_is_kept_and_formats_idempotently() {
    let mut tried = 0;
    let mut files = Vec::new();
    loop_files(&root().join("tests/fixtures/fmt"), &mut files);
    loop_files(&root().join("examples"), &mut files);
    for path in files {
        let source = read(&path);
        let base = loopc::syntax::comments(&source).len();
        let meaning = |s: &str| -> Vec<String> {
            let c = loopc::compile("p.loop", s);
            let mut v: Vec<String> = c
                .diagnostics
                .iter()
                .map(|d| format!("{} {}", d.code, d.message))
                .collect();
            if let Some(p) = &c.plan {
                v.extend(p.tasks.iter().map(|t| format!("{} {}", t.name, t.key)));
            }
            v
        };
        let want = meaning(&source);
        let spots: Vec<usize> = source
            .char_indices()
            .filter(|(_, c)| c.is_whitespace())
            .map(|(i, _)| i)
            .collect();
        for (n, &at) in spots.iter().enumerate() {
            for insert in [" # inserted\n", "\n# inserted\n"] {
                let text = format!("{}{insert}{}", &source[..at], &source[at..]);
                if loopc::syntax::comments(&text).len() != base + 1 {
                    continue; // inside a string
                }
                let Ok(once) = format_source(&text) else {
                    continue;
                };
                tried += 1;
                let name = format!("{} + comment at {at} ({n})", path.display());
                let twice = format(&name, &once);
                assert_eq!(once, twice, "{name}: not idempotent\n{once}");
                let texts = |s: &str| -> Vec<String> {
                    loopc::syntax::comments(s)
                        .iter()
                        .map(|c| s[c.range()].trim().to_string())
                        .collect()
                };
                assert_eq!(texts(&text), texts(&once), "{name}: comments\n{once}");
                assert_eq!(meaning(&once), want, "{name}: meaning\n{once}");
            }
        }
    }
    assert!(tried > 500, "only {tried} insertions tried");
}
