//! The integration tests: one test binary (it links once), one module per
//! area, and one harness (`harness`) that sets up directories, git
//! repositories, scripted agents and plans and runs the real `loopc` binary.
//!
//! Run one area with `cargo test --test tests run_cache::` (a module path
//! filter). insta names snapshots after the module path: they live in
//! `tests/snapshots/tests__<module>__<name>.snap` (the `fmt` ones beside
//! their inputs, in `tests/fixtures/fmt/snapshots/`).

mod harness;

mod bench_output;
mod board;
mod check;
mod cli_commands;
mod diagnostics;
mod fmt;
mod graph;
mod hidden_text;
mod lsp;
mod lsp_editors;
mod lsp_nvim;
mod plan;
mod reel;
mod reel_cli;
mod reel_run;
mod robustness;
mod run_agents;
mod run_basic;
mod run_branches;
mod run_budget;
mod run_budget_order;
mod run_cache;
mod run_changes;
mod run_cli;
mod run_crash;
mod run_demo;
mod run_executors;
mod run_expands;
mod run_fallback;
mod run_gates;
mod run_hardening;
mod run_humans;
mod run_merge;
mod run_merge_env;
mod run_notify;
mod run_outcomes;
mod run_output;
mod run_pipeline;
mod run_preflight;
mod run_protect;
mod run_replay;
mod run_resilience;
mod run_resolver;
mod run_reuse;
mod run_safety;
mod run_signals;
mod run_slurm;
mod run_uncommitted;
mod run_watch;
mod run_wording;
mod run_worktree_files;
mod scale;
