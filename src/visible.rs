//! Text from a plan or a run made safe to show a person: the one escaping
//! rule of every human-facing output (`loopc graph`'s drawings, `list`,
//! `status`, the run's lines and summary, the board, human diagnostics).
//!
//! A **hidden** character is one that must not reach a screen as itself:
//! a control character (it can move the cursor, retitle the window, clear
//! the screen), a Unicode format character (general category Cf: the
//! bidirectional overrides, embeddings, isolates and marks that reorder
//! the text around them, zero-width spaces and joiners, the byte order
//! mark, …) or a line or paragraph separator (U+2028, U+2029). [`escape`]
//! shows each as its Rust-style escape (`\u{202e}`, `\t`, `\u{1b}`), so
//! what is shown is what the text holds, in the order it holds it. Machine
//! output (JSON, state files) keeps the exact text instead.
//!
//! [`shell_word`] quotes a word of a command a message tells a person to
//! run (a path with a space in it), so it can be pasted into `sh` as it is;
//! [`join_words`] lists names as a sentence does.

use std::borrow::Cow;

/// Whether `c` is a Unicode format character (general category Cf, Unicode
/// 15.1): invisible, and for the bidirectional controls able to reorder
/// the text around it.
pub fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{AD}'
            | '\u{600}'..='\u{605}'
            | '\u{61C}'
            | '\u{6DD}'
            | '\u{70F}'
            | '\u{890}'..='\u{891}'
            | '\u{8E2}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

/// Whether `c` must not be shown as itself: a control character, a format
/// character ([`is_format`]) or U+2028/U+2029 (line and paragraph
/// separators, which some terminals and viewers break lines at).
pub fn is_hidden(c: char) -> bool {
    c.is_control() || is_format(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `text` with every hidden character ([`is_hidden`]) not in `keep` shown
/// as its escape: `\t`, `\r`, `\n` for those, `\u{…}` (lowercase hex) for
/// the others. Borrows when nothing needs escaping. Callers keep `\n`
/// where they draw line breaks themselves.
pub fn escape<'a>(text: &'a str, keep: &[char]) -> Cow<'a, str> {
    let shown = |c: char| !is_hidden(c) || keep.contains(&c);
    if text.chars().all(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown(c) {
            out.push(c);
        } else {
            out.extend(c.escape_default());
        }
    }
    Cow::Owned(out)
}

/// `word` quoted for `sh` when it needs to be, for a command a message
/// tells a person to run (`cd '/my repo' && loopc report`).
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:@,".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The first `max` of `names`, joined with `, `, and how many more there
/// are (`a, b, c and 9,997 more`): a line that names a fragment's tasks
/// stays a line however many it adds.
pub fn some_of<S: AsRef<str>>(names: &[S], max: usize) -> String {
    let shown: Vec<&str> = names.iter().take(max).map(AsRef::as_ref).collect();
    match names.len().saturating_sub(max) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// Joins words as English: `a`, `a and b`, `a, b and c`.
pub fn join_words(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn some_of_a_long_list_says_how_many_more() {
        let names: Vec<String> = (0..25).map(|i| format!("t{i}")).collect();
        assert_eq!(some_of(&names[..2], 20), "t0, t1");
        let long = some_of(&names, 3);
        assert_eq!(long, "t0, t1, t2 and 22 more");
    }

    #[test]
    fn controls_format_characters_and_separators_are_escaped() {
        assert_eq!(
            escape(
                "a\u{202E}b\u{2066}c\u{200B}\u{200D}\u{FEFF}\u{61C}\u{E0041}",
                &[]
            ),
            "a\\u{202e}b\\u{2066}c\\u{200b}\\u{200d}\\u{feff}\\u{61c}\\u{e0041}"
        );
        assert_eq!(
            escape("x\u{2028}y\u{AD}\u{1b}[2J\t\n", &['\n']),
            "x\\u{2028}y\\u{ad}\\u{1b}[2J\\t\n"
        );
    }

    #[test]
    fn other_text_is_kept_and_borrowed() {
        let plain = "plain — ünïcødé 🎉 \u{FE0F} عربي";
        assert!(matches!(escape(plain, &[]), Cow::Borrowed(s) if s == plain));
        assert!(matches!(escape("a\tb", &['\t']), Cow::Borrowed(_)));
    }
}
