//! Streaming an agent's stdout log one JSON message at a time: a
//! `--verbose` array of any size is read to its result without being held
//! in memory, text that is not JSON is skipped a line at a time, and a log
//! that loopc cut is read head, then tail ([`super::cut`]).

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, Visitor};
use std::io::{BufRead, Read};
use std::path::Path;

/// A field that is read only when it has the expected shape (an object or
/// an array); anything else is skipped, so one odd message does not hide
/// the rest of the output.
#[derive(Debug)]
pub(super) struct Lenient<T>(pub(super) Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Lenient(Some(t)))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(|t| Lenient(Some(t)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The top of one JSON document: a message (an object) or an array of
/// messages, each handed to `each` as soon as it is read.
struct Top<'a, T, F: FnMut(T)> {
    each: &'a mut F,
    _t: std::marker::PhantomData<T>,
}

impl<'de, T: DeserializeOwned, F: FnMut(T)> DeserializeSeed<'de> for Top<'_, T, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T: DeserializeOwned, F: FnMut(T)> Visitor<'de> for Top<'_, T, F> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object or array")
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let t = T::deserialize(de::value::MapAccessDeserializer::new(map))?;
        (self.each)(t);
        Ok(())
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(m) = seq.next_element::<Lenient<T>>()? {
            if let Some(t) = m.0 {
                (self.each)(t);
            }
        }
        Ok(())
    }
}

/// Hands every JSON message in the file at `path` to `each`, in order:
/// top-level objects, and the elements of top-level arrays. Streams the
/// file; skips a line at a time over what is not JSON. A missing or
/// unreadable file has no messages.
///
/// A log that loopc cut (its first and last 32 MiB kept, a marker between)
/// is read as its head, then its tail from the first message that starts
/// after the cut: the messages at the end (a `--verbose` array's `result`)
/// are read even when the array was printed on one line.
pub(super) fn for_each_message<T: DeserializeOwned>(path: &Path, mut each: impl FnMut(T)) {
    use crate::run::sys::process::{LOG_LIMIT, log_cut};
    use std::io::{Seek, SeekFrom};
    let Ok(file) = std::fs::File::open(path) else {
        return;
    };
    let Some((head_len, tail_start)) = log_cut(path, LOG_LIMIT) else {
        let r = std::io::BufReader::with_capacity(64 * 1024, file);
        return read_messages(r, false, &mut each);
    };
    let head = std::io::BufReader::with_capacity(64 * 1024, file.take(head_len));
    read_messages(head, false, &mut each);
    let Ok(mut file) = std::fs::File::open(path) else {
        return;
    };
    let resumed = super::cut::resume_in_array(&mut file, tail_start);
    if file
        .seek(SeekFrom::Start(resumed.unwrap_or(tail_start)))
        .is_err()
    {
        return;
    }
    let tail = std::io::BufReader::with_capacity(64 * 1024, file);
    read_messages(tail, resumed.is_some(), &mut each);
}

/// Hands every JSON message `r` holds to `each` (see [`for_each_message`]);
/// `in_array`: `r` starts at an element of an array whose `[` came before
/// it, so `,` and `]` between elements are read as the array's.
fn read_messages<T: DeserializeOwned>(
    mut r: impl BufRead,
    mut in_array: bool,
    each: &mut impl FnMut(T),
) {
    loop {
        // The first byte that is not white space.
        let first = loop {
            let Ok(buf) = r.fill_buf() else { return };
            if buf.is_empty() {
                return;
            }
            let n = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
            if n < buf.len() {
                let c = buf[n];
                r.consume(n);
                break c;
            }
            let len = buf.len();
            r.consume(len);
        };
        if in_array && (first == b',' || first == b']') {
            in_array = first == b',';
            r.consume(1);
            continue;
        }
        if first == b'{' || first == b'[' {
            let mut de = serde_json::Deserializer::from_reader(&mut r);
            let top = Top {
                each: &mut *each,
                _t: std::marker::PhantomData,
            };
            if top.deserialize(&mut de).is_ok() {
                continue;
            }
        }
        // Not JSON (or broken JSON): go on after the end of this line.
        in_array = false;
        let mut skipped = Vec::new();
        loop {
            skipped.clear();
            match (&mut r).take(64 * 1024).read_until(b'\n', &mut skipped) {
                Ok(0) | Err(_) => return,
                Ok(_) if skipped.last() == Some(&b'\n') => break,
                Ok(_) => {}
            }
        }
    }
}
