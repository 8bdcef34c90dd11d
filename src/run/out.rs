//! Writing the run's own output to stdout without panicking: `println!`
//! panics on a closed pipe or a full disk, and a run never stops over its
//! stdout.

use std::io::{self, Write};

/// Writes `text` to stdout and flushes it.
///
/// Errors: the write failed (a closed pipe is `BrokenPipe`).
pub fn stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}
