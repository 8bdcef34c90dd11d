//! Name rules: which task names, branch names and `inputs` globs are valid,
//! and the "did you mean" suggestion. The checker reports them; the plan
//! phase (the default branch name) and the REEL front-end (task ids, field
//! names) use them too.

/// The closest of `candidates` to `name`, if one is close enough to suggest.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|(d, c)| *d <= limit.max(c.chars().count() / 3) && *d > 0)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
        .or(None)
}

/// Whether `name` is a valid task name (spec §2; E0011), and if not, why.
pub fn task_name_problem(name: &str) -> Option<&'static str> {
    let valid_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-';
    match name.chars().next() {
        None => return Some("a task name cannot be empty"),
        Some(c) if !(c.is_ascii_alphanumeric() || c == '_') => {
            return Some("a task name must start with a letter, a digit or `_`");
        }
        _ => {}
    }
    if name.len() > 64 {
        return Some("a task name is at most 64 characters long");
    }
    if !name.chars().all(valid_char) {
        return Some("a task name may contain only letters, digits, `_`, `.` and `-`");
    }
    if name.contains("..") {
        return Some("a task name cannot contain `..`");
    }
    if name.ends_with('.') || name.ends_with(".lock") {
        return Some("a task name cannot end with `.` or `.lock` (git refuses such branch names)");
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
    if name
        .chars()
        .any(|c| c.is_ascii_control() || " ~^:?*[\\".contains(c))
    {
        return Some("spaces, control characters and `~ ^ : ? * [ \\` are not allowed");
    }
    if name.contains("..") || name.contains("//") || name.contains("@{") || name == "@" {
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
    // A plain path has nothing for the glob parser to reject.
    if !pattern.contains(['*', '?', '[', ']', '{', '}', '\\']) {
        return None;
    }
    match globset::Glob::new(pattern) {
        Ok(_) => None,
        Err(e) => Some(e.kind().to_string()),
    }
}
