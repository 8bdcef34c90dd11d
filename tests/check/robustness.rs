//! Nothing panics on broken input: thousands of mutated and truncated
//! variants of the examples and fixtures (`.loop` plans, and the REEL
//! Markdown, JSON and Gherkin specs), compiled in-process (all of them) and
//! through the real binary (a sample), must give exit 0 or 1, and 1 only
//! with diagnostics.

use crate::harness::Test;
use loopc::diagnostic::{self, LineIndex};
use std::path::{Path, PathBuf};

/// xorshift64*: a fixed-seed generator so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn corpus() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["examples", "tests/fixtures/diagnostics"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "loop"))
            .collect();
        paths.sort();
        for p in paths {
            out.push(std::fs::read(p).unwrap());
        }
    }
    out
}

const INTERESTING: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\"\"\"",
    b"=",
    b":",
    b",",
    b"#",
    b"\\",
    b"$",
    b"\n",
    b"task",
    b"agent",
    b"gate",
    b"0",
    b"1h",
    b"$0.0000001",
    b"\xff",
    b"\xe2\x82",
    b"\r\n",
    "é😀".as_bytes(),
    b"\\u{",
    b"..",
    b"*[",
];

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(4) {
            0 if !v.is_empty() => {
                let end = (at + 1 + rng.below(8)).min(v.len());
                v.drain(at.min(v.len())..end);
            }
            1 => {
                let ins = INTERESTING[rng.below(INTERESTING.len())];
                v.splice(at..at, ins.iter().copied());
            }
            2 if at < v.len() => v[at] = rng.next() as u8,
            _ => v.truncate(at),
        }
    }
    v
}

/// The properties every compilation must have, whatever the input.
fn assert_sound(bytes: &[u8]) {
    let c = loopc::compile_bytes("fuzz.loop", bytes);
    assert_eq!(c.has_errors(), c.plan.is_none(), "plan iff no errors");
    let index = LineIndex::new(&c.source);
    for d in &c.diagnostics {
        assert!(d.primary.span.start <= d.primary.span.end);
        assert!(
            d.primary.span.end <= c.source.len() + 1,
            "span out of bounds: {d:?}"
        );
        let json = diagnostic::to_json_line("fuzz.loop", &c.source, &index, d);
        assert!(json.starts_with('{'));
    }
    let _ = diagnostic::render_plain("fuzz.loop", &c.source, &c.diagnostics);
}

#[test]
fn truncations_at_every_line_never_panic() {
    let mut n = 0;
    for input in corpus() {
        for (i, b) in input.iter().enumerate() {
            if *b == b'\n' {
                assert_sound(&input[..i]);
                assert_sound(&input[..i + 1]);
                n += 2;
            }
        }
    }
    assert!(n > 200, "only {n} truncations");
}

#[test]
fn thousands_of_random_mutations_never_panic() {
    let corpus = corpus();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let input = &corpus[rng.below(corpus.len())];
        let mutated = mutate(&mut rng, input);
        let result = std::panic::catch_unwind(|| assert_sound(&mutated));
        if result.is_err() {
            panic!("failed on input:\n{}", String::from_utf8_lossy(&mutated));
        }
    }
}

/// Whether `check --format json` of `file` in `test` exited as it must: 0
/// with no error line, 1 with one, and nothing on stderr; the status.
fn assert_check_exit(test: &Test, file: &str, input: &[u8]) -> i32 {
    let out = test.loopc(&["check", "--format", "json", file]).output();
    let errors = out
        .stdout
        .lines()
        .filter(|l| l.contains("\"severity\":\"error\""))
        .count();
    match out.status {
        0 => assert_eq!(errors, 0),
        1 => assert!(errors > 0, "exit 1 without an error diagnostic"),
        other => panic!(
            "exit {other} on:\n{}\nstderr: {}",
            String::from_utf8_lossy(input),
            out.stderr
        ),
    }
    assert!(out.stderr.is_empty(), "json mode prints nothing on stderr");
    out.status
}

#[test]
fn the_binary_exits_0_or_1_with_diagnostics() {
    let corpus = corpus();
    let mut rng = Rng(42);
    let test = Test::new();
    for _ in 0..150 {
        let input = &corpus[rng.below(corpus.len())];
        let mutated = mutate(&mut rng, input);
        test.write("plan.loop", &mutated);
        assert_check_exit(&test, "plan.loop", &mutated);
    }
}

// ---------------------------------------------------------------------------
// REEL specs

/// Every REEL spec fixture (Markdown, JSON, Gherkin), sorted: its file name
/// and bytes.
fn reel_corpus() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reel");
    let mut paths: Vec<PathBuf> = Vec::new();
    for dir in ["formats", "dir", "bad"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if loopc::reel::Format::of(&p).is_some() && !p.ends_with("README.md") {
                paths.push(p);
            }
        }
    }
    paths.sort();
    let corpus: Vec<(String, Vec<u8>)> = paths
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            (name, std::fs::read(p).unwrap())
        })
        .collect();
    for ext in [".md", ".json", ".feature"] {
        assert!(
            corpus.iter().filter(|(n, _)| n.ends_with(ext)).count() >= 3,
            "too few {ext} fixtures"
        );
    }
    corpus
}

/// Pieces of REEL syntax inserted on top of [`INTERESTING`].
const REEL_PIECES: &[&[u8]] = &[
    b"## ",
    b"## a1b2c3d4: ",
    b"**Acceptance:** `",
    b"**Depends on:** ",
    b"```",
    b"`",
    b"\"tasks\": [",
    b"\"id\": ",
    b"\"depends_on\": ",
    b"\\u",
    b"\\uD800",
    b"null",
    b"@id:",
    b"@depends-on:",
    b"@acceptance:",
    b"Feature:",
    b"Scenario:",
    b"Background:",
    b"\xef\xbb\xbf",
    b"auth.",
];

/// [`mutate`], with REEL syntax among the insertions.
fn mutate_spec(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = mutate(rng, input);
    if rng.below(2) == 0 {
        let at = rng.below(v.len() + 1);
        let ins = REEL_PIECES[rng.below(REEL_PIECES.len())];
        v.splice(at..at, ins.iter().copied());
    }
    v
}

/// The defaults plan written beside every mutated spec.
const DEFAULTS: &str =
    "budget { iterations = 10 }\nagent bot { run = \"sh agent.sh\" }\ndefaults { agent = bot }\n";

/// The properties every compilation of a spec must have, whatever its bytes:
/// a plan exactly when there is no error, every diagnostic located in one
/// of the files, rendered and turned into JSON without a panic. Whether it
/// made a plan.
fn assert_spec_sound(path: &Path) -> bool {
    let c = loopc::compile_path(path, None).expect("the spec and its defaults are readable");
    assert_eq!(c.has_errors(), c.plan.is_none(), "plan iff no errors");
    for d in &c.diagnostics {
        assert!(d.primary.span.start <= d.primary.span.end);
        let (file, _) = c
            .files
            .locate(d.primary.span)
            .unwrap_or_else(|| panic!("span outside every file: {d:?}"));
        assert!(!file.name.is_empty());
        assert!(c.files.to_json_line(&c.source, d).starts_with('{'));
    }
    let _ = c.render_plain(&c.diagnostics);
    c.plan.is_some()
}

#[test]
fn truncated_specs_never_panic() {
    let test = Test::new().file("defaults.loop", DEFAULTS);
    let mut n = 0;
    for (name, input) in reel_corpus() {
        let path = test.root.join(&name);
        for (i, b) in input.iter().enumerate() {
            if *b == b'\n' {
                for end in [i, i + 1] {
                    std::fs::write(&path, &input[..end]).unwrap();
                    assert_spec_sound(&path);
                    n += 1;
                }
            }
        }
        std::fs::remove_file(&path).unwrap();
    }
    assert!(n > 200, "only {n} truncations");
}

#[test]
fn thousands_of_mutated_specs_never_panic() {
    let corpus = reel_corpus();
    let test = Test::new().file("defaults.loop", DEFAULTS);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut plans = 0;
    for _ in 0..3_000 {
        let (name, input) = &corpus[rng.below(corpus.len())];
        let mutated = mutate_spec(&mut rng, input);
        let path = test.root.join(name);
        std::fs::write(&path, &mutated).unwrap();
        let result = std::panic::catch_unwind(|| assert_spec_sound(&path));
        std::fs::remove_file(&path).unwrap();
        match result {
            Ok(plan) => plans += usize::from(plan),
            Err(_) => panic!("failed on {name}:\n{}", String::from_utf8_lossy(&mutated)),
        }
    }
    // Both sides were exercised: mutations that still compile, and errors.
    assert!(plans > 100 && plans < 2_900, "{plans} of 3000 made a plan");
}

#[test]
fn the_binary_exits_0_or_1_on_mutated_specs() {
    let corpus = reel_corpus();
    let test = Test::new().file("defaults.loop", DEFAULTS);
    let mut rng = Rng(7);
    let mut seen = [0; 2];
    for _ in 0..90 {
        let (name, input) = &corpus[rng.below(corpus.len())];
        let mutated = mutate_spec(&mut rng, input);
        test.write(name, &mutated);
        seen[assert_check_exit(&test, name, &mutated) as usize] += 1;
        std::fs::remove_file(test.root.join(name)).unwrap();
    }
    assert!(seen[0] > 0 && seen[1] > 0, "exits 0 and 1: {seen:?}");
}
