//! `check` never panics: thousands of mutated and truncated variants of the
//! examples and fixtures, compiled in-process (all of them) and through the
//! real binary (a sample), must give exit 0 or 1, and 1 only with diagnostics.

mod common;

use loopc::diagnostic::{self, LineIndex};

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
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
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

#[test]
fn the_binary_exits_0_or_1_with_diagnostics() {
    let corpus = corpus();
    let mut rng = Rng(42);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.loop");
    for _ in 0..150 {
        let input = &corpus[rng.below(corpus.len())];
        let mutated = mutate(&mut rng, input);
        std::fs::write(&path, &mutated).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_loopc"))
            .args(["check", "--format", "json"])
            .arg(&path)
            .output()
            .unwrap();
        let status = out.status.code();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let errors = stdout
            .lines()
            .filter(|l| l.contains("\"severity\":\"error\""))
            .count();
        match status {
            Some(0) => assert_eq!(errors, 0),
            Some(1) => assert!(errors > 0, "exit 1 without an error diagnostic"),
            other => panic!(
                "exit {other:?} on:\n{}\nstderr: {}",
                String::from_utf8_lossy(&mutated),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
        assert!(out.stderr.is_empty(), "json mode prints nothing on stderr");
    }
}
