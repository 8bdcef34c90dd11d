//! loopc: declarative, checked and cached loops of coding agents.
//!
//! The crate is shaped like a compiler; data flows one way:
//!
//! source → [`syntax`] (pest → [`ast`] with spans, never fails) →
//! [`check`] (names, fields, types → a resolved model and diagnostics) →
//! [`plan`] (petgraph DAG, defaults resolved, cache keys) →
//! [`render`] (`loopc graph`) or [`run`] (`loopc run`).
//!
//! [`compile`] runs the front-end and the plan phase in one call.

pub mod ast;
pub mod check;
pub mod compile;
pub mod diagnostic;
pub mod fmt;
pub mod key;
pub mod lsp;
pub mod origin;
pub mod plan;
pub mod reel;
pub mod render;
pub mod run;
pub mod source_map;
pub mod span;
pub mod syntax;

pub use compile::{
    Compilation, LoadError, compile, compile_bytes, compile_file, compile_path, compile_string,
    compile_with_model, loop_files_in,
};
