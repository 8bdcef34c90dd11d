//! The editor integrations in `editors/` are well-formed and agree with each
//! other and with the server: JSON parses, the VS Code manifest points at
//! files that exist, and every snippet starts `loopc lsp` for `.loop` files.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn editors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("editors")
}

fn read(rel: &str) -> String {
    let p = editors().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(rel: &str) -> Value {
    serde_json::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn vscode_extension_is_consistent() {
    let package = json("vscode/package.json");
    let language = &package["contributes"]["languages"][0];
    assert_eq!(language["id"], "loop");
    assert_eq!(language["extensions"][0], ".loop");
    let config = language["configuration"].as_str().expect("configuration");
    let lc = json(&format!("vscode/{}", config.trim_start_matches("./")));
    assert_eq!(lc["comments"]["lineComment"], "#");

    let grammar = &package["contributes"]["grammars"][0];
    assert_eq!(grammar["language"], "loop");
    let path = grammar["path"].as_str().expect("grammar path");
    let tm = json(&format!("vscode/{}", path.trim_start_matches("./")));
    assert_eq!(tm["scopeName"], grammar["scopeName"]);
    // Every `#name` the grammar includes is defined in its repository.
    let text = read(&format!("vscode/{}", path.trim_start_matches("./")));
    for include in text.split("\"include\": \"#").skip(1) {
        let name = include.split('"').next().unwrap_or("");
        assert!(
            tm["repository"].get(name).is_some(),
            "grammar includes undefined #{name}"
        );
    }

    let main = package["main"].as_str().expect("main");
    let js = read(&format!("vscode/{}", main.trim_start_matches("./")));
    assert!(
        js.contains("args: ['lsp']"),
        "extension.js must run `loopc lsp`"
    );
    assert!(js.contains("language: 'loop'"));
    assert!(package["dependencies"]["vscode-languageclient"].is_string());
    assert_eq!(package["activationEvents"][0], "onLanguage:loop");
}

#[test]
fn helix_and_neovim_snippets_start_the_server() {
    let helix = read("helix/languages.toml");
    for want in [
        "[language-server.loopc]",
        "command = \"loopc\"",
        "args = [\"lsp\"]",
        "file-types = [\"loop\"]",
        "language-servers = [\"loopc\"]",
        "comment-token = \"#\"",
    ] {
        assert!(helix.contains(want), "helix/languages.toml lacks {want}");
    }
    let nvim = read("nvim/loopc.lua");
    assert!(nvim.contains("{ 'loopc', 'lsp' }"));
    assert!(nvim.contains("'*.loop'"));
}
