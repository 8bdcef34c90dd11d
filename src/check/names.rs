//! Name rules: which task names, branch names and `inputs` globs are valid,
//! and the "did you mean" suggestion. The checker reports them; the plan
//! phase (the default branch name) and the REEL front-end (task ids, field
//! names) use them too.

use foldhash::{HashMap, HashMapExt, HashSet};
use std::collections::BTreeMap;

/// The closest of `candidates` to `name`, if one is close enough to suggest:
/// at an edit distance of at least 1 and at most a third of the longer
/// name's length (at least 1); ties go to the alphabetically first. The
/// distance counts a swap of two neighbouring characters as one edit
/// (`biuld` is one from `build`), as people mistype.
///
/// For a few candidates (field names, keywords). Names that are looked up
/// many times among many candidates go through a [`Suggester`].
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name: Vec<char> = name.chars().collect();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let cs: Vec<char> = c.chars().collect();
        if let Some(d) = close(&name, &cs)
            && best.is_none_or(|b| (d, c) < b)
        {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The edit distance of `a` and `b` when it makes `b` worth suggesting for
/// `a` (see [`suggest`]), else `None`.
fn close(a: &[char], b: &[char]) -> Option<usize> {
    let limit = (a.len() / 3).max(1).max(b.len() / 3);
    bounded_distance(a, b, limit).filter(|&d| d > 0)
}

/// The optimal-string-alignment distance of `a` and `b` (Levenshtein's
/// insertions, deletions and substitutions, and a swap of two neighbouring
/// characters as one edit) if it is at most `limit`, else `None`; stops as
/// soon as two rows in a row exceed `limit` everywhere (a swap reaches back
/// two rows), so a hopeless pair costs about `limit` rows rather than the
/// whole table.
fn bounded_distance(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    let mut prev_min = 0;
    for (i, ca) in a.iter().enumerate() {
        row[0] = i + 1;
        let mut row_min = row[0];
        for (j, cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != cb);
            let mut d = substitution.min(prev[j + 1] + 1).min(row[j] + 1);
            if i > 0 && j > 0 && *ca == b[j - 1] && a[i - 1] == *cb {
                d = d.min(before[j - 1] + 1);
            }
            row[j + 1] = d;
            row_min = row_min.min(d);
        }
        if row_min > limit && prev_min > limit {
            return None;
        }
        prev_min = row_min;
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    Some(prev[b.len()]).filter(|&d| d <= limit)
}

/// "Did you mean" for many unknown names among many candidates (E0005 in a
/// generated plan can mean thousands of each).
///
/// Candidates are grouped by length, so only those whose length is within
/// the distance limit are compared; each distinct name is looked up once;
/// and the comparisons a whole check may spend are capped at
/// [`Suggester::BUDGET`], after which names get no suggestion (their
/// diagnostics are otherwise the same). The cost of checking a plan is thus
/// linear in its size however many unknown names it has; a hand-written plan
/// with a few typos never reaches the cap.
pub struct Suggester<'a> {
    /// Candidates by length in characters, each as `(chars, name)`, sorted
    /// by name within a length.
    by_len: BTreeMap<usize, Vec<(Vec<char>, &'a str)>>,
    /// The two best candidates of each name looked up, best first (two, so
    /// that one excluded candidate still leaves an answer).
    seen: HashMap<String, Vec<(usize, &'a str)>>,
    /// Comparisons left.
    budget: usize,
}

impl<'a> Suggester<'a> {
    /// How many name pairs one check may compare.
    pub const BUDGET: usize = 2_000_000;

    /// A suggester over `candidates`.
    pub fn new(candidates: impl IntoIterator<Item = &'a str>) -> Self {
        let mut by_len: BTreeMap<usize, Vec<(Vec<char>, &'a str)>> = BTreeMap::new();
        for c in candidates {
            let chars: Vec<char> = c.chars().collect();
            by_len.entry(chars.len()).or_default().push((chars, c));
        }
        for group in by_len.values_mut() {
            group.sort_by(|a, b| a.1.cmp(b.1));
        }
        Suggester {
            by_len,
            seen: HashMap::new(),
            budget: Self::BUDGET,
        }
    }

    /// What [`suggest`] would answer for `name` among the candidates other
    /// than `exclude`, or `None` once the budget is spent.
    pub fn suggest(&mut self, name: &str, exclude: Option<&str>) -> Option<&'a str> {
        if !self.seen.contains_key(name) {
            let best = self.best_two(name);
            self.seen.insert(name.to_string(), best);
        }
        self.seen
            .get(name)?
            .iter()
            .find(|(_, c)| Some(*c) != exclude)
            .map(|(_, c)| *c)
    }

    fn best_two(&mut self, name: &str) -> Vec<(usize, &'a str)> {
        let chars: Vec<char> = name.chars().collect();
        // A candidate of length `l` is close only if |l - n| <= max(n/3, 1, l/3),
        // which bounds `l` by n/3-ish on both sides.
        let n = chars.len();
        let low = n.saturating_sub((n / 3).max(1));
        let high = (n + (n / 3).max(1)).max((3 * n).div_ceil(2));
        let mut best: Vec<(usize, &'a str)> = Vec::with_capacity(3);
        for group in self.by_len.range(low..=high).map(|(_, g)| g) {
            for (cs, c) in group {
                if self.budget == 0 {
                    // A scan cut short could suggest a worse name than the
                    // best: suggest nothing.
                    return Vec::new();
                }
                self.budget -= 1;
                if let Some(d) = close(&chars, cs) {
                    best.push((d, c));
                    best.sort_unstable();
                    best.truncate(2);
                }
            }
        }
        best
    }
}

/// The note of every E0011 on a task name: why the rule is what it is, and
/// where text of any kind goes instead.
pub const TASK_NAME_NOTE: &str = "a task name becomes a git branch and a directory name: it must match [A-Za-z0-9_][A-Za-z0-9_.-]{0,63} and contain no `..`; the title may hold any text: `task cafe \"Café au lait\" { … }`";

/// Whether a bare task name `text` was reported by the parser already (a
/// bare id that starts with a digit, `task 0f3a`: E0011 "quote it").
pub fn reported_by_parser(text: &str, quoted: bool) -> bool {
    !quoted && text.is_ascii() && text.starts_with(|c: char| c.is_ascii_digit())
}

/// Whether `name` is a valid task name (docs/language.md; E0011), and if not, why.
pub fn task_name_problem(name: &str) -> Option<&'static str> {
    let valid_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-';
    // Letters outside ASCII (`café`) are letters to a person: say ASCII.
    if !name.is_ascii() {
        return Some("a task name may contain only ASCII letters, digits, `_`, `.` and `-`");
    }
    match name.chars().next() {
        None => return Some("a task name cannot be empty"),
        Some(c) if !(c.is_ascii_alphanumeric() || c == '_') => {
            return Some("a task name must start with an ASCII letter, a digit or `_`");
        }
        _ => {}
    }
    if name.len() > 64 {
        return Some("a task name is at most 64 characters long");
    }
    if !name.chars().all(valid_char) {
        return Some("a task name may contain only ASCII letters, digits, `_`, `.` and `-`");
    }
    if name.contains("..") {
        return Some("a task name cannot contain `..`");
    }
    None
}

/// Why `name` is not a branch name git accepts (the rules of
/// `git check-ref-format --branch`), if it is not.
pub fn branch_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("a branch name cannot be empty");
    }
    if name.starts_with('-') {
        return Some("a branch name cannot start with `-`");
    }
    if name == "HEAD" {
        return Some("`HEAD` names the checked-out commit; git refuses it as a branch name");
    }
    // git would take `refs/heads/x` as the branch `refs/heads/x`, whose ref
    // is `refs/heads/refs/heads/x`: never what was meant.
    if name.starts_with("refs/") {
        return Some("a branch is named without `refs/heads/`: write `x`, not `refs/heads/x`");
    }
    // Refs are files: a part longer than the file system's 255 bytes, less
    // git's `.lock` suffix, cannot be written.
    if name.split('/').any(|c| c.len() > 250) {
        return Some("a `/`-separated part of a branch name may be at most 250 bytes long");
    }
    if name
        .chars()
        .any(|c| c.is_ascii_control() || " ~^:?*[\\".contains(c))
    {
        return Some("spaces, control characters and `~ ^ : ? * [ \\` are not allowed");
    }
    if name == "@" {
        return Some("`@` alone is git's name for HEAD; git refuses it as a branch name");
    }
    if name.contains("..") || name.contains("//") || name.contains("@{") {
        return Some("`..`, `//` and `@{` are not allowed");
    }
    if name.ends_with('/') || name.ends_with('.') {
        return Some("a branch name cannot end with `/` or `.`");
    }
    if name
        .split('/')
        .any(|c| c.starts_with('.') || c.ends_with(".lock"))
    {
        return Some("no component may start with `.` or end with `.lock`");
    }
    None
}

/// Why `pattern` is not a usable `inputs` glob (E0014), if it is not.
pub fn glob_problem(pattern: &str) -> Option<String> {
    if pattern.is_empty() {
        return Some("empty pattern".to_string());
    }
    if pattern.starts_with('/') {
        return Some("must be relative to the repository root".to_string());
    }
    if pattern.split('/').any(|c| c == "..") {
        return Some("cannot leave the repository (`..`)".to_string());
    }
    // Paths are matched as git lists them (`src/a.rs`): these forms never
    // match one.
    if let Some(rest) = pattern.strip_prefix("./") {
        return Some(format!(
            "paths are relative to the repository root without `./`: write `{rest}`"
        ));
    }
    if pattern.split('/').any(|c| c == ".") {
        return Some("a `.` part matches no path: leave it out".to_string());
    }
    if pattern.contains("//") {
        return Some("an empty part (`//`) matches no path: write one `/`".to_string());
    }
    if let Some(dir) = pattern.strip_suffix('/') {
        let all = if dir.ends_with("**") {
            dir.to_string()
        } else {
            format!("{dir}/**")
        };
        return Some(format!(
            "a pattern matches files, not directories: write `{all}` for every file under it"
        ));
    }
    // A plain path has nothing for the glob parser to reject, and neither
    // has one whose only wildcards are `*` and `?` with every `**` a whole
    // component (`src/**/*.py`): the common case, without building a
    // matcher per pattern (that was a twentieth of a large plan's check).
    if !pattern.contains(['[', ']', '{', '}', '\\'])
        && pattern.split('/').all(|c| c == "**" || !c.contains("**"))
    {
        return None;
    }
    match globset::Glob::new(pattern) {
        Ok(_) => None,
        Err(e) => Some(e.kind().to_string()),
    }
}

/// The names of one kind (tasks, agents or gates) that references may
/// name, prepared once for every E0005 of that kind.
pub(super) struct Known<'a> {
    pub(super) set: HashSet<&'a str>,
    names: Vec<&'a str>,
    /// Every name (duplicates too), sorted, and the suggester over them:
    /// built at the first unknown name, so a plan whose references all
    /// resolve never sorts its names (a million of them, for a large plan).
    lists: Option<(Vec<&'a str>, Suggester<'a>)>,
}

impl<'a> Known<'a> {
    pub(super) fn new(names: Vec<&'a str>) -> Self {
        Known {
            set: names.iter().copied().collect(),
            names,
            lists: None,
        }
    }

    /// The sorted names and the suggester.
    pub(super) fn lists(&mut self) -> &mut (Vec<&'a str>, Suggester<'a>) {
        let names = &self.names;
        self.lists.get_or_insert_with(|| {
            let mut sorted: Vec<&str> = names.clone();
            sorted.sort_unstable();
            let mut unique = sorted.clone();
            unique.dedup();
            (sorted, Suggester::new(unique))
        })
    }
}

#[cfg(test)]
mod suggestion_tests {
    use super::*;

    /// The suggestion as specified: the full optimal-string-alignment
    /// distance (a neighbour swap is one edit) to every candidate.
    fn reference<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
        let limit = (name.chars().count() / 3).max(1);
        candidates
            .iter()
            .map(|c| (strsim::osa_distance(name, c), *c))
            .filter(|(d, c)| *d <= limit.max(c.chars().count() / 3) && *d > 0)
            .min_by_key(|(d, c)| (*d, *c))
            .map(|(_, c)| c)
    }

    /// Swapped neighbours are one edit: the mistyping docs/language.md
    /// shows for E0005.
    #[test]
    fn a_swap_is_one_edit() {
        let tasks = ["build", "deploy", "lint"];
        assert_eq!(suggest("biuld", tasks), Some("build"));
        assert_eq!(suggest("bulid", tasks), Some("build"));
        assert_eq!(suggest("tetss", ["tests"]), Some("tests"));
        assert_eq!(Suggester::new(tasks).suggest("biuld", None), Some("build"));
    }

    #[test]
    fn bounded_search_agrees_with_the_full_distance() {
        // Names over a small alphabet, so that many pairs are close.
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let alphabet = ['a', 'b', 'c', 'é', '-'];
        let mut names: Vec<String> = (0..300)
            .map(|_| {
                (0..1 + next() % 9)
                    .map(|_| alphabet[next() % alphabet.len()])
                    .collect()
            })
            .collect();
        names.sort();
        names.dedup();
        let candidates: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut suggester = Suggester::new(candidates.iter().copied());
        for probe in names
            .iter()
            .take(150)
            .chain(["abc".to_string(), "x".into()].iter())
        {
            let expected = reference(probe, &candidates);
            assert_eq!(
                suggest(probe, candidates.iter().copied()),
                expected,
                "{probe}"
            );
            assert_eq!(suggester.suggest(probe, None), expected, "{probe}");
            // Excluding the answer gives the best of the others.
            if let Some(e) = expected {
                let others: Vec<&str> = candidates.iter().copied().filter(|c| *c != e).collect();
                assert_eq!(
                    suggester.suggest(probe, Some(e)),
                    reference(probe, &others),
                    "{probe}"
                );
            }
        }
    }

    #[test]
    fn the_comparison_budget_ends_suggestions_not_diagnostics() {
        let names: Vec<String> = (0..3_000).map(|i| format!("task{i:05}")).collect();
        let mut s = Suggester::new(names.iter().map(String::as_str));
        assert_eq!(s.suggest("task00001x", None), Some("task00001"));
        let mut answered = 0;
        for i in 0..2_000 {
            if s.suggest(&format!("tsak{i:05}"), None).is_some() {
                answered += 1;
            }
        }
        // 3,000 comparisons a name: the budget lasts for about 666 names.
        assert!(answered > 600 && answered < 700, "{answered}");
        assert_eq!(
            s.suggest("task00001x", None),
            Some("task00001"),
            "remembered"
        );
    }
}

#[cfg(test)]
mod glob_tests {
    /// The shortcut for `*`/`?` patterns says what globset says.
    #[test]
    fn the_glob_shortcut_agrees_with_globset() {
        for p in [
            "src/**", "**", "**/a", "a/**/b", "*.py", "a?b/*", "a**", "**b", "a/***/b", "x/**y",
            "***", "*/**/*", "?",
        ] {
            let ours = super::glob_problem(p);
            let theirs = globset::Glob::new(p).err().map(|e| e.kind().to_string());
            assert_eq!(ours, theirs, "{p}");
        }
    }

    /// Forms globset takes that never match a path as git lists it.
    #[test]
    fn forms_that_match_no_path_are_refused() {
        let why = |p: &str| super::glob_problem(p).unwrap_or_default();
        assert!(why("./src").ends_with("write `src`"));
        assert!(why("src/**/").ends_with("write `src/**` for every file under it"));
        assert!(why("src/").ends_with("write `src/**` for every file under it"));
        assert!(why("a//b").contains("`//`"));
        assert!(why("a/./b").contains("`.` part"));
        assert_eq!(super::glob_problem("src/.env"), None);
        assert_eq!(super::glob_problem(".github/**"), None);
    }
}
