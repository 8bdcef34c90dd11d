//! The digests a cache key is made of: [`Key`], the canonical [`Encoder`]
//! that produces one, and a definition key's components ([`KeyParts`]).
//! A leaf: the plan's types hold these, [`super::key`] computes them.

use std::fmt;

/// A 32-byte blake3 digest, shown as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub [u8; 32]);

impl Key {
    /// The 64-digit lowercase hex form.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({})", self.to_hex())
    }
}

/// A canonical, unambiguous encoder feeding blake3.
///
/// Every item is written as a one-byte type tag, a field name, and a
/// length-prefixed (u64 little-endian) payload, so no two different inputs
/// encode to the same bytes. Maps are written in key order (callers pass a
/// `BTreeMap`), so the encoding depends on content, not on source order.
///
/// The encoding is collected in a buffer and hashed once by [`Encoder::finish`]:
/// blake3 over the whole buffer is the digest of the same bytes fed piece by
/// piece, and one call costs a fraction of the many tiny `update`s (those
/// were a quarter of `loopc check` on large plans).
pub struct Encoder {
    buf: Vec<u8>,
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Encoder {
    /// A fresh encoder.
    pub fn new() -> Self {
        Encoder {
            buf: Vec::with_capacity(256),
        }
    }

    fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.buf.extend_from_slice(b);
    }

    /// Writes a named string.
    pub fn str(&mut self, field: &str, value: &str) -> &mut Self {
        self.buf.extend_from_slice(b"s");
        self.bytes(field.as_bytes());
        self.bytes(value.as_bytes());
        self
    }

    /// Writes a named optional string (absent and empty differ).
    pub fn opt(&mut self, field: &str, value: Option<&str>) -> &mut Self {
        match value {
            Some(v) => {
                self.buf.extend_from_slice(b"o");
                self.str(field, v)
            }
            None => {
                self.buf.extend_from_slice(b"n");
                self.bytes(field.as_bytes());
                self
            }
        }
    }

    /// Writes a named map of strings in key order.
    pub fn map<'a>(
        &mut self,
        field: &str,
        entries: impl ExactSizeIterator<Item = (&'a String, &'a String)>,
    ) -> &mut Self {
        self.buf.extend_from_slice(b"m");
        self.bytes(field.as_bytes());
        self.buf
            .extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for (k, v) in entries {
            self.bytes(k.as_bytes());
            self.bytes(v.as_bytes());
        }
        self
    }

    /// Writes a named key (a nested digest).
    pub fn key(&mut self, field: &str, key: &Key) -> &mut Self {
        self.buf.extend_from_slice(b"k");
        self.bytes(field.as_bytes());
        self.buf.extend_from_slice(&key.0);
        self
    }

    /// The digest of everything written.
    pub fn finish(&self) -> Key {
        Key(*blake3::hash(&self.buf).as_bytes())
    }
}

/// Digests of the components of a task's definition key (docs/cache.md), kept so
/// that `run --dry-run` can name the part that changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyParts {
    /// The prompt (agent task) or command (command task).
    pub work: Key,
    /// The agent's `run` and `output`.
    pub agent: Key,
    /// `accept` and the gates' definitions (with `protect`, `may_change`).
    pub gates: Key,
    /// `accept` (with its executor), `protect` and `may_change`, without
    /// the gates: the part of [`KeyParts::gates`] in the work key.
    pub checks: Key,
    /// The merged environment.
    pub env: Key,
    /// The dependencies' keys.
    pub dependencies: Key,
}
