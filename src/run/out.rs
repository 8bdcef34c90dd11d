//! Writing what a person asked for to stdout without panicking: `println!`
//! panics on a closed pipe (`loopc status | head -1`) or a full disk. A
//! closed pipe is a normal end for a report; any other error is exit 2 with
//! a message; a run never stops over its stdout.

use crate::exit;
use std::io::{self, Write};

/// Writes `text` to stdout and flushes it.
///
/// Errors: the write failed (a closed pipe is `BrokenPipe`).
pub fn stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Writes a report (`status`, `--dry-run`) and returns the exit status:
/// 0 when written or when the reader went away, 2 (with a message on
/// stderr) for any other error, e.g. a full disk.
pub fn report(text: &str) -> i32 {
    match stdout(text) {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            let _ = writeln!(io::stderr(), "loopc: cannot write to stdout: {e}");
            exit::USAGE
        }
    }
}
