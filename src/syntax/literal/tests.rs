//! Round trips of every literal printer through its decoder and through
//! the whole parser, on many generated values.

use super::*;

/// A small deterministic generator (xorshift64*), so the property tests
/// see the same many values on every run.
struct Values(u64);

impl Values {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const AT: Span = Span { start: 0, end: 0 };

#[test]
fn money_displays_as_its_literal() {
    assert_eq!(Money(2_000_000).to_string(), "$2");
    assert_eq!(Money(1_500_000).to_string(), "$1.50");
    assert_eq!(Money(50_000).to_string(), "$0.05");
    assert_eq!(Money(420_000).to_string(), "$0.42");
    assert_eq!(Money(125).to_string(), "$0.000125");
    assert_eq!(Money(1_234_500).to_string(), "$1.2345");
    assert_eq!(Money(0).to_string(), "$0");
}

#[test]
fn money_round_trips() {
    let mut g = Values(0x9E37_79B9_7F4A_7C15);
    let mut values = vec![0, 1, 125, 50_000, 500_000, 1_500_000, 2_000_000, u64::MAX];
    for _ in 0..5_000 {
        // Mostly small amounts with few decimals, as plans and runs have.
        values.push(match g.below(4) {
            0 => g.below(100) * 1_000_000,
            1 => g.below(100_000_000),
            2 => g.below(1_000) * 10_000,
            _ => g.next(),
        });
    }
    for m in values {
        let text = Money(m).to_string();
        assert_eq!(decode_money(&text, AT), Ok(Money(m)), "{text}");
    }
}

#[test]
fn durations_round_trip() {
    let mut g = Values(0xD1B5_4A32_D192_ED03);
    let mut values = vec![0, 1, 500, 1_000, 5_400_000, 86_400_000, u64::MAX / 1_000];
    for _ in 0..5_000 {
        values.push(match g.below(3) {
            0 => g.below(1_000) * 60_000,
            1 => g.below(10_000_000),
            _ => g.below(u64::MAX / 1_000),
        });
    }
    for ms in values {
        let d = Duration::from_millis(ms);
        let text = print_duration(d);
        assert_eq!(decode_duration(&text, AT), Ok(d), "{text}");
    }
    assert_eq!(print_duration(Duration::from_secs(5400)), "1h30m");
    assert_eq!(print_duration(Duration::from_millis(500)), "500ms");
}

#[test]
fn a_durations_parts_add_up_in_any_order() {
    for (text, ms) in [
        ("1d2h3m4s5ms", 93_784_005),
        ("1h30m", 5_400_000),
        ("30m1h", 5_400_000),
        ("1h1h", 7_200_000),
        ("5ms1s", 1_005),
        ("1m2m3s", 183_000),
        ("1_0m", 600_000),
    ] {
        assert_eq!(
            decode_duration(text, AT),
            Ok(Duration::from_millis(ms)),
            "{text}"
        );
    }
}

/// As docs/language.md says: `4294967295h` fits, `4294967295d` does not.
#[test]
fn a_whole_duration_has_a_ceiling() {
    assert_eq!(
        decode_duration("4294967295h", AT),
        Ok(Duration::from_secs(4_294_967_295 * 3_600))
    );
    let d = decode_duration("4294967295d", AT).unwrap_err();
    assert_eq!(d.code, Code::E0009);
    assert_eq!(d.message, "duration `4294967295d` is too long");
    assert_eq!(
        d.notes,
        ["a duration is at most 18446744073709551ms (about 584,000 years)"]
    );
}

#[test]
fn a_durations_integers_fit_in_32_bits() {
    assert_eq!(
        decode_duration("4294967295ms", AT),
        Ok(Duration::from_millis(4_294_967_295))
    );
    for (bad, at, len) in [("4294967296s", 0, 10), ("1h4294967296ms", 2, 10)] {
        let d = decode_duration(bad, AT).unwrap_err();
        assert_eq!(d.code, Code::E0009, "{bad}");
        assert_eq!(
            (d.primary.span.start, d.primary.span.end),
            (AT.start + at, AT.start + at + len),
            "{bad}: {d:?}"
        );
    }
}

/// Strings mixing quotes, backslashes, escapes' look-alikes, control
/// characters, newlines, indentation and non-ASCII text.
fn strings() -> Vec<String> {
    let alphabet: Vec<char> = "ab z\"\\\n\r\t\0\u{1}\u{7f}\u{85}\u{2028}é😀{}u#$`'"
        .chars()
        .collect();
    let mut g = Values(0x2545_F491_4F6C_DD1D);
    let mut out: Vec<String> = [
        "",
        "plain",
        "say \"hi\"",
        "C:\\path\\to",
        "\\u{41}",
        "two\nlines",
        "  indented\n    more\n",
        "trailing newline\n",
        "\n\nleading blank lines",
        "tab\tand\r\nCRLF",
        "nul\0byte",
        "\"\"\" inside",
        "😀 émoji",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for _ in 0..3_000 {
        let len = g.below(24);
        out.push(
            (0..len)
                .map(|_| alphabet[g.below(alphabet.len() as u64) as usize])
                .collect(),
        );
    }
    out
}

#[test]
fn strings_round_trip() {
    for s in strings() {
        let quoted = print_string(&s);
        let body = &quoted[1..quoted.len() - 1];
        assert_eq!(decode_string(body, 0), Ok(s.clone()), "{quoted}");
        if fits_block_string(&s) {
            let block = print_block_string(&s, 6);
            let raw = &block[3..block.len() - 3];
            assert_eq!(decode_block_string(raw, 0), Ok(s.clone()));
        }
    }
}

/// The printers' output read back by the whole parser, as a field value
/// and as a task name.
#[test]
fn the_parser_reads_back_what_was_printed() {
    use crate::ast::{Item, ValueKind};
    for s in strings() {
        let src = format!(
            "task {} {{ prompt = {} }}",
            print_string(&s),
            print_text(&s)
        );
        let (file, diags) = crate::syntax::parse(&src);
        assert!(diags.is_empty(), "{src}: {diags:?}");
        let Some(Item::Task(t)) = file.items.first() else {
            panic!("{src}")
        };
        assert_eq!(t.name.text, s);
        match &t.block.fields[0].value.kind {
            ValueKind::String(v) | ValueKind::BlockString(v) => assert_eq!(**v, *s, "{src}"),
            other => panic!("{src}: {other:?}"),
        }
    }
    let mut g = Values(7);
    for _ in 0..500 {
        let (m, ms) = (g.below(10_000_000_000), g.below(10_000_000_000));
        let src = format!(
            "budget {{ cost = {}  time = {} }}",
            Money(m),
            print_duration(Duration::from_millis(ms))
        );
        let (file, diags) = crate::syntax::parse(&src);
        assert!(diags.is_empty(), "{src}: {diags:?}");
        let Some(Item::Budget(b)) = file.items.first() else {
            panic!("{src}")
        };
        assert_eq!(b.fields[0].value.kind, ValueKind::Money(m), "{src}");
        let time = Duration::from_millis(ms);
        assert_eq!(b.fields[1].value.kind, ValueKind::Duration(time), "{src}");
    }
}

#[test]
fn task_names_are_bare_when_they_can_be() {
    assert_eq!(print_task_name("fix-auth_2"), "fix-auth_2");
    assert_eq!(print_task_name("0f3a9b2c"), "\"0f3a9b2c\"");
    assert_eq!(print_task_name("v1.2"), "\"v1.2\"");
    assert_eq!(print_task_name("gate"), "\"gate\"");
    for name in ["build", "task", "a.b", "_x", "9"] {
        let src = format!("task x: {} {{ run = \"y\" }}", print_task_name(name));
        let (file, diags) = crate::syntax::parse(&src);
        let Some(crate::ast::Item::Task(t)) = file.items.first() else {
            panic!("{src}")
        };
        assert!(diags.is_empty(), "{src}: {diags:?}");
        assert_eq!(t.dependencies[0].text, name);
    }
}

#[test]
fn block_strings_dedent_and_drop_the_last_line() {
    let decode = |raw: &str| decode_block_string(raw, 0).ok();
    assert_eq!(
        decode("\n      a\n        b\n\n      c\n      ").as_deref(),
        Some("a\n  b\n\nc")
    );
    assert_eq!(decode("\r\n  x\r\n  ").as_deref(), Some("x"));
    assert_eq!(decode("x\n"), None);
    // A lone CR ends a line as LF and CRLF do (as editors show it).
    assert_eq!(decode("\r  a\r    b\r  ").as_deref(), Some("a\n  b"));
    assert_eq!(decode("\r\n  a\r  b\n  ").as_deref(), Some("a\nb"));
}

#[test]
fn bad_literals_are_reported_where_they_are() {
    let e = decode_duration("1h30x", Span::new(10, 15)).unwrap_err();
    assert_eq!(e.primary.span, Span::new(14, 15));
    let e = decode_money("$1.1234567", AT).unwrap_err();
    assert!(e.message.contains("more than 6 decimal places"), "{e:?}");
    let e = decode_string("a\\qb\\u{110000}", 5).unwrap_err();
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].primary.span, Span::new(6, 8));
    assert_eq!(e[0].message, "unknown escape `\\q`");
    // The escape as written: one backslash, the character itself; a
    // hidden one escaped.
    let e = decode_string("it\\'s", 0).unwrap_err();
    assert_eq!(e[0].message, "unknown escape `\\'`");
    let e = decode_string("\\\u{202e}", 0).unwrap_err();
    assert_eq!(e[0].message, "unknown escape `\\\\u{202e}`");
    assert!(decode_integer("4294967296", AT).is_err());
    assert_eq!(decode_integer("1_000", AT), Ok(1000));
}
