//! `loopc lsp` with a real editor: Neovim, headless, with its built-in LSP
//! client attached to the built `loopc lsp` on a plan with a known error.
//!
//! Without `nvim` the tests are skipped, saying so ([`harness::require`]),
//! unless `LOOPC_REQUIRE` names `nvim` (`.ci/run` installs Debian's
//! `neovim` and does).

use crate::harness;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Opens `$LOOP_PLAN`, attaches loopc's server (with `vim.lsp.start` on
/// Neovim ≥ 0.8, `start_client` + `buf_attach_client` on Debian 12's 0.7),
/// waits for diagnostics, then edits the buffer (a `didChange`) and waits for
/// the new diagnostics, stops the client (shutdown + exit) and writes what
/// it saw as JSON to `$LOOP_OUT`. Neovim reports columns in bytes.
const SCRIPT: &str = r#"
local plan, out, loopc = vim.env.LOOP_PLAN, vim.env.LOOP_OUT, vim.env.LOOPC
local function collect(bufnr)
  local result = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(result, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, message = d.message, source = d.source,
      code = d.code or lsp.code,
    })
  end
  return result
end
local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(plan))
  local bufnr = vim.api.nvim_get_current_buf()
  local exit_code = nil
  local config = {
    name = 'loopc',
    cmd = { loopc, 'lsp' },
    root_dir = vim.fn.fnamemodify(plan, ':p:h'),
    on_exit = function(code) exit_code = code end,
  }
  local client_id
  if vim.lsp.start then
    client_id = vim.lsp.start(config)
  else
    client_id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  local opened = vim.wait(20000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
  local first = collect(bufnr)
  -- Fix the typo on line 3 (0-based 2): `agnt` becomes `agent`.
  local line = vim.api.nvim_buf_get_lines(bufnr, 2, 3, false)[1]
  vim.api.nvim_buf_set_lines(bufnr, 2, 3, false, { (line:gsub('agnt', 'agent')) })
  local changed = vim.wait(20000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
      if code == 'E0002' then return false end
    end
    return true
  end, 50)
  local second = collect(bufnr)
  vim.lsp.stop_client(client_id)
  local stopped = vim.wait(20000, function() return exit_code ~= nil end, 50)
  return {
    opened = opened, changed = changed, stopped = stopped, exit_code = exit_code,
    version = tostring(vim.version().major) .. '.' .. tostring(vim.version().minor),
    first = first, second = second,
  }
end
local ok, res = pcall(run)
if not ok then res = { error = tostring(res) } end
local f = io.open(out, 'w')
f:write(vim.json.encode(res))
f:close()
vim.cmd('qa!')
"#;

/// Runs headless Neovim on `script` with `LOOP_PLAN`, `LOOP_OUT` and `LOOPC`
/// set, and returns the JSON the script wrote to `out`.
fn run_nvim(dir: &Path, script: &Path, plan: &Path, out: &Path, env: &[(&str, String)]) -> Value {
    let mut cmd = Command::new("nvim");
    cmd.args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("LOOP_PLAN", plan)
        .env("LOOP_OUT", out)
        .env("LOOPC", harness::loopc_path())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // Neovim's LSP log, shada and state go to the test's directory, so the
    // test neither depends on nor touches the user's (or CI's) home.
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    ] {
        cmd.env(var, dir.join("xdg").join(var));
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start nvim");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for nvim") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("nvim did not finish in 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "nvim failed: {status}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(out).unwrap_or_else(|e| panic!("{}: {e}", out.display())),
    )
    .expect("json from nvim");
    assert!(report.get("error").is_none(), "Lua error: {report}");
    report
}

/// Whether the test must be skipped (no `nvim`: [`harness::require`]).
fn skip() -> bool {
    !harness::require("nvim", harness::program_runs("nvim", &["--version"]))
}

#[test]
fn neovim_receives_the_diagnostics() {
    if skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.loop");
    // Line 3 has non-ASCII text before the error, so a wrong UTF-16
    // conversion would put Neovim's (byte) column elsewhere.
    let line3 = "task t \"Crème brûlée 😀\" { prompt = \"x\" agnt = a }";
    let text = format!("agent a {{ run = \"x\" }}\nbudget {{ time = 1h }}\n{line3}\n");
    std::fs::write(&plan, &text).expect("write plan");
    let script = dir.path().join("check.lua");
    std::fs::write(&script, SCRIPT).expect("write script");
    let out = dir.path().join("out.json");

    let report = run_nvim(dir.path(), &script, &plan, &out, &[]);
    assert_eq!(report["opened"], true, "no diagnostics arrived: {report}");

    let first = report["first"].as_array().expect("diagnostics");
    let e0002 = first
        .iter()
        .find(|d| d["code"] == "E0002")
        .unwrap_or_else(|| panic!("no E0002 among {first:#?}"));
    let byte_col = line3.find("agnt").expect("agnt") as i64;
    assert_eq!(e0002["lnum"], 2, "{e0002}");
    assert_eq!(e0002["col"], byte_col, "{e0002}");
    assert_eq!(e0002["end_lnum"], 2, "{e0002}");
    assert_eq!(e0002["end_col"], byte_col + 4, "{e0002}");
    assert_eq!(e0002["severity"], 1, "error: {e0002}");
    assert_eq!(e0002["source"], "loopc");
    let message = e0002["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("unknown field `agnt` in task `t`"),
        "{message}"
    );
    assert!(message.contains("did you mean `agent`?"), "{message}");

    // After the edit (a didChange), the error is gone and nothing new appeared.
    assert_eq!(report["changed"], true, "E0002 stayed: {report}");
    let second = report["second"].as_array().expect("diagnostics");
    assert!(
        second
            .iter()
            .all(|d| d["code"] != "E0002" && d["code"] != "E0013"),
        "{second:#?}"
    );

    // Neovim's stop_client sends shutdown then exit: the server ends with 0.
    assert_eq!(report["stopped"], true, "server did not stop: {report}");
    assert_eq!(report["exit_code"], 0, "{report}");
}

/// What the shipped snippet (`editors/nvim/loopc.lua`) sets up, and
/// formatting through Neovim (`:LoopFmt`) giving `loopc fmt`'s output.
const SNIPPET_SCRIPT: &str = r#"
local function run()
  dofile(vim.env.SNIPPET)
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.LOOP_PLAN))
  local got = vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
  local codes = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(codes, d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code))
  end
  local uri = vim.uri_from_bufnr(0)
  local function ask(method, line, character)
    local res = vim.lsp.buf_request_sync(0, method,
      { textDocument = { uri = uri }, position = { line = line, character = character } }, 10000)
    for _, r in pairs(res or {}) do
      if r.result then return r.result end
    end
    return vim.NIL
  end
  -- `defaults{agent=a}`: from the `a` on line 1 to the agent's definition.
  local definition = ask('textDocument/definition', 1, 15)
  -- Just after `task t{`: the task's field names.
  local completion = ask('textDocument/completion', 2, 7)
  local labels = {}
  for _, item in ipairs(completion.items or completion) do
    table.insert(labels, item.label)
  end
  vim.cmd('LoopFmt')
  vim.wait(5000, function()
    return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] ~= vim.env.FIRST_LINE
  end, 50)
  return {
    filetype = vim.bo.filetype, commentstring = vim.bo.commentstring,
    diagnostics = got, codes = codes, definition = definition, labels = labels,
    lines = vim.api.nvim_buf_get_lines(0, 0, -1, false),
  }
end
local ok, res = pcall(run)
if not ok then res = { error = tostring(res) } end
local f = io.open(vim.env.LOOP_OUT, 'w')
f:write(vim.json.encode(res))
f:close()
vim.cmd('qa!')
"#;

#[test]
fn shipped_neovim_snippet_attaches_and_formats() {
    if skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.loop");
    let text = "agent a{run=\"x\"}\ndefaults{agent=a}\ntask t{prompt=\"p\" atempts=2}\n";
    std::fs::write(&plan, text).expect("write plan");
    let script = dir.path().join("snippet.lua");
    std::fs::write(&script, SNIPPET_SCRIPT).expect("write script");
    let out = dir.path().join("out.json");
    let snippet = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/nvim/loopc.lua");
    // The snippet runs `loopc lsp` from $PATH.
    let bin_dir = harness::loopc_path()
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let report = run_nvim(
        dir.path(),
        &script,
        &plan,
        &out,
        &[
            ("SNIPPET", snippet.display().to_string()),
            ("PATH", path.to_string_lossy().into_owned()),
            ("FIRST_LINE", "agent a{run=\"x\"}".to_string()),
        ],
    );
    assert_eq!(report["filetype"], "loop", "{report}");
    assert_eq!(report["commentstring"], "# %s", "{report}");
    assert_eq!(report["diagnostics"], true, "{report}");
    let codes = report["codes"].as_array().expect("codes");
    assert!(codes.iter().any(|c| c == "E0002"), "{report}");
    assert_eq!(
        report["definition"]["range"]["start"]["line"], 0,
        "{report}"
    );
    assert_eq!(
        report["definition"]["range"]["start"]["character"], 6,
        "{report}"
    );
    let labels = report["labels"].as_array().expect("labels");
    assert!(labels.iter().any(|l| l == "prompt"), "{report}");
    assert!(labels.iter().any(|l| l == "attempts"), "{report}");
    let lines: Vec<&str> = report["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().unwrap_or(""))
        .collect();
    let want = loopc::fmt::format_source(text).expect("formats");
    assert_eq!(format!("{}\n", lines.join("\n")), want, "{report}");
}
