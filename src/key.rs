//! Cache keys: blake3 digests over a canonical encoding (spec §6).

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

/// The key format version; bump it whenever the encoding below changes so old
/// cache entries stop matching instead of matching wrongly.
pub const KEY_FORMAT_VERSION: &str = "loopc-key-v1";

/// A canonical, unambiguous encoder feeding blake3.
///
/// Every item is written as a one-byte type tag, a field name, and a
/// length-prefixed (u64 little-endian) payload, so no two different inputs
/// encode to the same bytes. Maps are written in key order (callers pass a
/// `BTreeMap`), so the encoding depends on content, not on source order.
pub struct Encoder {
    hasher: blake3::Hasher,
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
            hasher: blake3::Hasher::new(),
        }
    }

    fn bytes(&mut self, b: &[u8]) {
        self.hasher.update(&(b.len() as u64).to_le_bytes());
        self.hasher.update(b);
    }

    /// Writes a named string.
    pub fn str(&mut self, field: &str, value: &str) -> &mut Self {
        self.hasher.update(b"s");
        self.bytes(field.as_bytes());
        self.bytes(value.as_bytes());
        self
    }

    /// Writes a named optional string (absent and empty differ).
    pub fn opt(&mut self, field: &str, value: Option<&str>) -> &mut Self {
        match value {
            Some(v) => {
                self.hasher.update(b"o");
                self.str(field, v)
            }
            None => {
                self.hasher.update(b"n");
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
        self.hasher.update(b"m");
        self.bytes(field.as_bytes());
        self.hasher.update(&(entries.len() as u64).to_le_bytes());
        for (k, v) in entries {
            self.bytes(k.as_bytes());
            self.bytes(v.as_bytes());
        }
        self
    }

    /// Writes a named key (a nested digest).
    pub fn key(&mut self, field: &str, key: &Key) -> &mut Self {
        self.hasher.update(b"k");
        self.bytes(field.as_bytes());
        self.hasher.update(&key.0);
        self
    }

    /// The digest of everything written.
    pub fn finish(&self) -> Key {
        Key(*self.hasher.finalize().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_is_unambiguous() {
        let a = Encoder::new().str("x", "ab").str("y", "c").finish();
        let b = Encoder::new().str("x", "a").str("y", "bc").finish();
        assert_ne!(a, b);
        let c = Encoder::new().opt("x", None).finish();
        let d = Encoder::new().opt("x", Some("")).finish();
        assert_ne!(c, d);
    }
}
