//! The agent's side: what loopc hands an agent and reads back, knowing
//! nothing of the run around it. [`handoff`] is the agent protocol (the
//! prompt an agent is given, the handoff it writes back); [`report`] reads
//! what each CLI's output reports (`output = claude-json`, `codex-json`)
//! and [`limits`] tells a usage or rate limit in it, which is waited for;
//! [`executor`] wraps a command in its launcher; [`programs`] looks up every
//! `run` string's program before any work, and [`scripts`] the file an
//! agent's command runs in the commit attempts start from.

pub mod executor;
pub mod handoff;
pub mod limits;
pub mod programs;
pub mod report;
pub mod scripts;
