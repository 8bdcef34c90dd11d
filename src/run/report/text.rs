//! Log files read for a report, cut to a size: each text at most
//! [`PER_TEXT`] bytes, and once [`TOTAL`] bytes have been taken, at most
//! [`LEAN`] each, so that a run with thousands of attempts still makes a
//! page a browser opens. Outputs keep their end (a failing test prints
//! last), diffs their start. Only the part kept is read.

use super::model::Text;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The most of one file a report holds.
pub const PER_TEXT: u64 = 48 * 1024;
/// The text a report takes before it keeps only [`LEAN`] of each file.
pub const TOTAL: u64 = 16 * 1024 * 1024;
/// The most of one file once [`TOTAL`] is spent.
pub const LEAN: u64 = 2 * 1024;

/// Which part of a long file is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Its start (a diff).
    Head,
    /// Its end (an output log).
    Tail,
}

/// Reads log files, counting what it took.
#[derive(Debug, Default)]
pub struct Reader {
    taken: u64,
}

impl Reader {
    /// The text of the file at `path`, cut as `keep` says; `None` when it
    /// is missing, unreadable or empty.
    pub fn read(&mut self, path: &Path, keep: Keep) -> Option<Text> {
        let mut file = std::fs::File::open(path).ok()?;
        let bytes = file.metadata().ok()?.len();
        if bytes == 0 || !file.metadata().ok()?.is_file() {
            return None;
        }
        let limit = if self.taken >= TOTAL { LEAN } else { PER_TEXT };
        let cut = bytes > limit;
        let want = bytes.min(limit);
        if cut && keep == Keep::Tail {
            file.seek(SeekFrom::Start(bytes - want)).ok()?;
        }
        let mut buf = Vec::with_capacity(usize::try_from(want).unwrap_or(0));
        file.take(want).read_to_end(&mut buf).ok()?;
        self.taken += buf.len() as u64;
        let mut text = String::from_utf8_lossy(&buf).into_owned();
        if cut {
            text = trim_to_lines(&text, keep).to_string();
        }
        Some(Text {
            path: path.to_string_lossy().into_owned(),
            bytes,
            text,
            cut,
        })
    }
}

/// `text` (a cut part of a file) without the partial line at the cut.
fn trim_to_lines(text: &str, keep: Keep) -> &str {
    match keep {
        Keep::Tail => text.split_once('\n').map_or(text, |(_, rest)| rest),
        Keep::Head => text.rsplit_once('\n').map_or(text, |(head, _)| head),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_files_keep_their_end_or_start() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("gate.log");
        let line = "x".repeat(99) + "\n";
        let body = format!("first\n{}last\n", line.repeat(1000));
        std::fs::write(&path, &body).expect("write");
        let mut r = Reader::default();
        let tail = r.read(&path, Keep::Tail).expect("tail");
        assert!(tail.cut);
        assert_eq!(tail.bytes, body.len() as u64);
        assert!(tail.text.ends_with("last\n"));
        assert!(tail.text.starts_with('x'));
        assert!(tail.text.len() as u64 <= PER_TEXT);
        let head = r.read(&path, Keep::Head).expect("head");
        assert!(head.text.starts_with("first\n"));
        assert!(head.text.ends_with('x'));
        std::fs::write(&path, "short\n").expect("write");
        let whole = r.read(&path, Keep::Tail).expect("whole");
        assert!(!whole.cut);
        assert_eq!(whole.text, "short\n");
        std::fs::write(&path, "").expect("write");
        assert!(r.read(&path, Keep::Tail).is_none());
    }
}
