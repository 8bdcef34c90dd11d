//! One fixture per diagnostic code (tests/fixtures/diagnostics/<CODE>.loop,
//! and <CODE>-<case>.loop for further cases of a code),
//! snapshot-tested in the human format, plus the JSON format of a few.

use loopc::diagnostic::{self, LineIndex};

fn fixture(path: &std::path::Path) -> (String, String) {
    let name = format!(
        "fixtures/diagnostics/{}",
        path.file_name().unwrap().to_str().unwrap()
    );
    (name, std::fs::read_to_string(path).unwrap())
}

#[test]
fn every_diagnostic_code_renders() {
    insta::glob!("../fixtures/diagnostics", "*.loop", |path| {
        let (name, source) = fixture(path);
        let c = loopc::compile(&name, &source);
        let stem = path.file_stem().unwrap().to_str().unwrap();
        // `E0005.loop` and `E0005-executor.loop` must both produce E0005.
        let code = stem.split('-').next().unwrap();
        if stem.starts_with('E') || stem.starts_with('W') {
            assert!(
                c.diagnostics.iter().any(|d| d.code.as_str() == code),
                "{stem}.loop must produce {code}, got {:?}",
                c.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>()
            );
        }
        insta::assert_snapshot!(diagnostic::render_plain(&name, &source, &c.diagnostics));
    });
}

#[test]
fn several_errors_are_all_reported_in_one_run() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diagnostics/multiple-errors.loop");
    let (name, source) = fixture(&path);
    let c = loopc::compile(&name, &source);
    let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["E0002", "E0005", "E0009", "E0001", "E0012"]);
}

#[test]
fn json_ranges_use_utf16_columns() {
    // "é" is one UTF-16 unit but two bytes; "😀" is two units and four bytes.
    let source = "task \"é😀\" { run = \"x\" }\ntask b: \"é😀\" nope { run = \"y\" }\n";
    let c = loopc::compile("t.loop", source);
    let idx = LineIndex::new(source);
    let lines: Vec<String> = c
        .diagnostics
        .iter()
        .map(|d| diagnostic::to_json_line("t.loop", source, &idx, d))
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
    let v: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(v["code"], "E0005");
    // `task b: "é😀" nope`: `nope` starts at UTF-16 column 14 (byte 17).
    assert_eq!(v["range"]["start"]["character"], 14);
    assert_eq!(v["range"]["start"]["line"], 1);
}
