//! loopc: declarative, checked and cached loops of coding agents.
//!
//! The crate is shaped like a compiler; data flows one way:
//!
//! source → [`syntax`] (pest → [`ast`] with spans, never fails; REEL specs
//! through [`reel`]'s front-ends instead) → [`check`] (names, fields, types
//! → a resolved model and diagnostics) → [`plan`] (petgraph DAG, defaults
//! resolved, cache keys) → [`render`] (`loopc graph`), [`run`] (`loopc
//! run`), [`fmt`], [`lsp`] or [`import`].
//!
//! [`mod@compile`] is the one front-end driver: it reads files (UTF-8 checked)
//! into a [`source_map`], parses `.loop` plans or lowers REEL specs, checks
//! and plans, telling both phases where the plan came from
//! ([`origin::Origin`]). Its entry points are re-exported here
//! ([`compile()`], [`compile_path`], …).
//!
//! [`visible`] is the one rule for showing text from a plan or a run to a
//! person (control and format characters as escapes).
//!
//! The library prints no command's result and picks no exit status: it
//! returns values and errors. The command line (clap, output, exit codes)
//! is the binary's `src/cli/`, one file per subcommand.

pub mod ast;
pub mod check;
pub mod compile;
pub mod diagnostic;
pub mod discover;
pub mod expand;
pub mod fmt;
pub mod import;
pub mod jsonpath;
pub mod lsp;
pub mod model;
pub mod origin;
pub mod pid;
pub mod plan;
pub mod reel;
pub mod render;
pub mod run;
pub mod source_map;
pub mod span;
pub mod state;
pub mod syntax;
pub mod visible;

pub use compile::{
    Compilation, LoadError, compile, compile_bytes, compile_file, compile_path, compile_string,
    compile_with_model, loop_files_in,
};
