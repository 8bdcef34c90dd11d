//! Reading on in a log that loopc cut (see
//! [`crate::run::sys::process::cap_log`]): its tail starts at an arbitrary
//! byte, often inside one message of a `--verbose` array printed on a
//! single line, so the messages after it are found by following the JSON
//! structure from a point that can only be structure.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// The bytes that mark a point of JSON structure: inside a JSON string a
/// quote is escaped, so the quote after `type` closes an object key, and
/// what follows its `:` is outside any string. Every Claude Code message
/// (and most objects in it) has a `type` key.
const SYNC: &[u8] = b"type\":";

/// A JSON lexer that knows only strings and nesting.
struct Lexer {
    in_string: bool,
    escape: bool,
    /// Containers open, counted from the sync point (negative once the
    /// object holding it is closed).
    depth: i64,
}

impl Lexer {
    /// Takes `b`; returns the depth before it when `b` opens an object
    /// outside a string, and the new depth when it closes a container.
    fn step(&mut self, b: u8) -> Step {
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return Step::Other;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => {
                self.depth += 1;
                if b == b'{' {
                    return Step::Opened(self.depth - 1);
                }
            }
            b'}' | b']' => {
                self.depth -= 1;
                return Step::Closed(self.depth);
            }
            _ => {}
        }
        Step::Other
    }
}

enum Step {
    /// An object opened at this depth.
    Opened(i64),
    /// A container closed, leaving this depth.
    Closed(i64),
    Other,
}

/// Hands every byte of `file` from `start` to `each` with its offset, until
/// `each` says to stop (returns `false`). Streams; read errors end it.
fn scan(file: &mut File, start: u64, mut each: impl FnMut(u64, u8) -> bool) {
    if file.seek(SeekFrom::Start(start)).is_err() {
        return;
    }
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = start;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        for (i, &b) in buf[..n].iter().enumerate() {
            if !each(at + i as u64, b) {
                return;
            }
        }
        at += n as u64;
    }
}

/// Where the messages of a JSON array resume in the tail of a cut log that
/// starts at `tail_start`: the offset of the first element of the
/// outermost array that starts after the cut. `None` when the tail is not
/// the end of an array (one message a line: read on a line at a time) or
/// holds no whole element.
pub(super) fn resume_in_array(file: &mut File, tail_start: u64) -> Option<u64> {
    // The sync point: just after the first `type":`.
    let mut window = [0u8; SYNC.len()];
    let mut sync = None;
    scan(file, tail_start, |at, b| {
        window.rotate_left(1);
        window[SYNC.len() - 1] = b;
        if window == SYNC {
            sync = Some(at + 1);
            return false;
        }
        true
    });
    let sync = sync?;
    let lexer = || Lexer {
        in_string: false,
        escape: false,
        depth: 0,
    };
    // The outermost container the tail closes, and what closed it.
    let mut lex = lexer();
    let mut lowest = (0, b'}');
    scan(file, sync, |_, b| {
        if let Step::Closed(d) = lex.step(b)
            && d < lowest.0
        {
            lowest = (d, b);
        }
        true
    });
    if lowest.1 != b']' {
        return None;
    }
    // Its elements are the objects opened one level inside it.
    let mut lex = lexer();
    let mut first = None;
    scan(file, sync, |at, b| match lex.step(b) {
        Step::Opened(d) if d == lowest.0 + 1 => {
            first = Some(at);
            false
        }
        _ => true,
    });
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resume(text: &str) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        std::fs::write(&p, text).unwrap();
        let mut f = File::open(&p).unwrap();
        resume_in_array(&mut f, 0).map(|at| text[at as usize..].to_string())
    }

    #[test]
    fn the_next_element_of_the_outermost_array_is_found() {
        // Cut inside a string that holds braces, quotes and `type":`.
        let tail = r#"yy \"type\":\"result\" {[ \\"},{"type":"tool_use","input":{"a":[{"b":1}]}}]},"session_id":"s"},{"type":"result","total_cost_usd":1}]"#;
        assert_eq!(
            resume(tail).as_deref(),
            Some(r#"{"type":"result","total_cost_usd":1}]"#)
        );
        // The same over lines.
        let tail = "\"}]}},\n{\"type\": \"assistant\"},\n{\"type\": \"result\"}\n]\n";
        assert_eq!(resume(tail).as_deref(), Some("{\"type\": \"result\"}\n]\n"));
        // One message a line: no array to resume.
        assert_eq!(resume("x\"}}\n{\"type\":\"result\"}\n"), None);
        // Nothing that is surely structure.
        assert_eq!(resume("aaaa"), None);
    }
}
