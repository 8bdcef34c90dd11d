//! The front end: `loopc check`, diagnostics, the compiled plan, hidden text, mutated input, scale.

mod agents;
mod bench_output;
mod command;
mod context;
mod diagnostics;
mod hidden_text;
mod plan;
mod robustness;
mod scale;
