//! REEL specs: reading them, `import`/`id`, and running spec trees.

mod cli;
mod run;
mod specs;
