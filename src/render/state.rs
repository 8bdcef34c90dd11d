//! `loopc graph --state`: each task's last status from `.loopc/state.json`
//! (docs/state.md, docs/graph.md).
//!
//! The state file lives at the repository root (`git rev-parse
//! --show-toplevel` run in the current directory; outside a repository, the
//! current directory). It is read leniently, since `graph` is a read-only
//! view that must work while a run rewrites the file and across state format
//! revisions: a JSON object whose `tasks` is either a map from task name to
//! an object with a `status` string (or to the status string itself), or a
//! list of objects with `name` and `status`. A top-level `plan` string, when
//! present, must be the plan's name (the state of another plan in the same
//! repository is not shown). Every other field is ignored.
//! A missing file, or one that cannot be read or understood, is a warning and
//! the graph is drawn without status; it is never an error.

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A task's last status (docs/running.md "Task states"): the interpreter's own
/// type, so the words cannot drift apart; drawing adds colors below.
pub use crate::state::TaskStatus as Status;

impl Status {
    /// Every status, in the order legends list them.
    pub const ALL: [Status; 11] = [
        Status::Pending,
        Status::Running,
        Status::Passed,
        Status::Cached,
        Status::Failed,
        Status::Blocked,
        Status::Skipped,
        Status::Interrupted,
        Status::NeedsHuman,
        Status::CompletedUnreviewed,
        Status::AlreadySatisfied,
    ];

    /// Parses a status word (ASCII case-insensitive).
    pub fn parse(word: &str) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(word))
    }

    /// Fill color (`#rrggbb`) for drawn formats (dot, mermaid, svg).
    pub fn fill(self) -> &'static str {
        match self {
            Status::Pending => "#eeeeee",
            Status::Running => "#90caf9",
            Status::Passed => "#a5d6a7",
            Status::Cached => "#c8e6c9",
            Status::Failed => "#ef9a9a",
            Status::Blocked => "#ffcc80",
            Status::Skipped => "#fafafa",
            Status::Interrupted => "#ce93d8",
            Status::NeedsHuman => "#fff59d",
            Status::CompletedUnreviewed => "#b2dfdb",
            Status::AlreadySatisfied => "#dcedc8",
        }
    }

    /// Outline color (`#rrggbb`) for drawn formats.
    pub fn stroke(self) -> &'static str {
        match self {
            Status::Pending => "#9e9e9e",
            Status::Running => "#1565c0",
            Status::Passed => "#2e7d32",
            Status::Cached => "#558b2f",
            Status::Failed => "#c62828",
            Status::Blocked => "#ef6c00",
            Status::Skipped => "#bdbdbd",
            Status::Interrupted => "#6a1b9a",
            Status::NeedsHuman => "#f9a825",
            Status::CompletedUnreviewed => "#00796b",
            Status::AlreadySatisfied => "#689f38",
        }
    }

    /// ANSI SGR color code for the text format on a terminal.
    pub fn ansi(self) -> &'static str {
        match self {
            Status::Pending => "2",
            Status::Running => "34",
            Status::Passed => "32",
            Status::Cached => "36",
            Status::Failed => "31",
            Status::Blocked => "33",
            Status::Skipped => "2",
            Status::Interrupted => "35",
            Status::NeedsHuman => "93",
            Status::CompletedUnreviewed => "96",
            Status::AlreadySatisfied => "32",
        }
    }
}

/// Last statuses by task name, read from a state file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateMap {
    statuses: HashMap<String, Status>,
    /// The commit each task's work was merged at, where recorded.
    commits: HashMap<String, String>,
    /// The commit each task's plan fragment was read from, where recorded.
    fragment_commits: HashMap<String, String>,
    /// How many times each producing task re-planned its fragment in the
    /// last run (state.json version 3 `replans`), where it did.
    replans: HashMap<String, usize>,
    /// The name of the plan the state was recorded for (`"plan"`), if given.
    pub plan: Option<String>,
}

impl StateMap {
    /// A map from `(name, status)` pairs (later pairs win).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, Status)>) -> Self {
        StateMap {
            statuses: pairs.into_iter().map(|(n, s)| (n.to_string(), s)).collect(),
            commits: HashMap::new(),
            fragment_commits: HashMap::new(),
            replans: HashMap::new(),
            plan: None,
        }
    }

    /// The status of the task called `name`; `pending` when the state file
    /// does not mention it (it has not been started).
    pub fn status(&self, name: &str) -> Status {
        self.statuses.get(name).copied().unwrap_or(Status::Pending)
    }

    /// The integration branch commit task `name`'s work was merged (or
    /// replayed) at, if the state records one.
    pub fn commit(&self, name: &str) -> Option<&str> {
        self.commits.get(name).map(String::as_str)
    }

    /// The commit task `name`'s plan fragment was read from (its own
    /// commit, before the merge), if the state records one; older state
    /// files do not, and then it is [`StateMap::commit`].
    pub fn fragment_commit(&self, name: &str) -> Option<&str> {
        self.fragment_commits
            .get(name)
            .or_else(|| self.commits.get(name))
            .map(String::as_str)
    }

    /// How many times task `name` re-planned its fragment in the recorded
    /// run (0 when it did not).
    pub fn replans(&self, name: &str) -> usize {
        self.replans.get(name).copied().unwrap_or(0)
    }

    /// The recorded status of task `name`, `None` when the state has no
    /// entry for it (it was not part of the last run).
    pub fn recorded(&self, name: &str) -> Option<Status> {
        self.statuses.get(name).copied()
    }
}

/// Where the state file is for a process whose current directory is `cwd`:
/// `<repository root>/.loopc/state.json`, or `cwd/.loopc/state.json` outside
/// a git repository (or when git cannot be run).
pub fn state_path(cwd: &Path) -> PathBuf {
    let root = git_stdout(cwd, &["rev-parse", "--show-toplevel"])
        .map(|s| s.trim_end_matches(['\n', '\r']).to_string())
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| cwd.to_path_buf());
    root.join(".loopc").join("state.json")
}

/// The text of the file `path` at `commit` in the repository containing
/// `cwd` (`git cat-file blob`), if there is one: a plan fragment a run
/// spliced, for `loopc graph --state`.
pub fn file_at(cwd: &Path, commit: &str, path: &str) -> Option<String> {
    if commit.is_empty() || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    git_stdout(cwd, &["cat-file", "blob", &format!("{commit}:{path}")])
}

/// What `git ARGS`, run in `cwd`, prints, when it succeeds and prints UTF-8.
fn git_stdout(cwd: &Path, args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
}

/// Reads the statuses of the plan called `plan_name` for the repository
/// containing the directory `cwd` ([`state_path`]). State entries of tasks the plan
/// does not have are ignored by the renderers.
///
/// Errors: warning text for the user (no state file; unreadable; not
/// understood; recorded for another plan), after which the graph is drawn
/// without status.
pub fn load_for_dir(cwd: &Path, plan_name: &str) -> Result<StateMap, String> {
    let path = state_path(cwd);
    let state = load(&path)?;
    match &state.plan {
        Some(other) if other != plan_name => Err(format!(
            "the run state `{}` is for plan `{other}`, not `{plan_name}`; drawing without status",
            path.display()
        )),
        _ => Ok(state),
    }
}

/// Reads the state file at `path`.
///
/// Errors (as warning text ending in "drawing without status"): the file is
/// missing, cannot be read, is not JSON, or has no understandable `tasks`.
pub fn load(path: &Path) -> Result<StateMap, String> {
    let shown = path.display();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "no run state at `{shown}` (no `loopc run` here yet); drawing without status"
            ));
        }
        Err(e) => {
            return Err(format!(
                "cannot read run state `{shown}`: {e}; drawing without status"
            ));
        }
    };
    parse(&bytes).map_err(|why| {
        format!("cannot understand run state `{shown}`: {why}; drawing without status")
    })
}

/// Parses state file bytes (see the module documentation for the forms).
///
/// Errors: the reason, for a warning.
pub fn parse(bytes: &[u8]) -> Result<StateMap, String> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON ({e})"))?;
    let Some(obj) = doc.as_object() else {
        return Err("expected a JSON object".to_string());
    };
    if let Some(v) = obj.get("version") {
        match v.as_u64() {
            Some(n) if (1..=u64::from(crate::state::STATE_VERSION)).contains(&n) => {}
            _ => return Err(format!("unsupported state format version {v}")),
        }
    }
    let mut statuses = HashMap::new();
    let mut commits = HashMap::new();
    let mut fragment_commits = HashMap::new();
    let mut replans = HashMap::new();
    let entry_status = |v: &Value| -> Result<Status, String> {
        let word = match v {
            Value::String(s) => s.as_str(),
            Value::Object(o) => o
                .get("status")
                .and_then(Value::as_str)
                .ok_or_else(|| "a task without a `status` string".to_string())?,
            _ => return Err("a task entry that is neither an object nor a string".to_string()),
        };
        Status::parse(word).ok_or_else(|| format!("unknown task status `{word}`"))
    };
    match obj.get("tasks") {
        Some(Value::Object(map)) => {
            for (name, v) in map {
                statuses.insert(name.clone(), entry_status(v)?);
            }
        }
        Some(Value::Array(list)) => {
            for v in list {
                let name = v
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| "a task without a `name` string".to_string())?;
                statuses.insert(name.to_string(), entry_status(v)?);
                if let Some(c) = v.get("commit").and_then(Value::as_str) {
                    commits.insert(name.to_string(), c.to_string());
                }
                if let Some(c) = v.get("fragment_commit").and_then(Value::as_str) {
                    fragment_commits.insert(name.to_string(), c.to_string());
                }
                if let Some(r) = v.get("replans").and_then(Value::as_array) {
                    replans.insert(name.to_string(), r.len());
                }
            }
        }
        Some(_) => return Err("`tasks` is neither an object nor a list".to_string()),
        None => return Err("no `tasks` field".to_string()),
    }
    let plan = obj.get("plan").and_then(Value::as_str).map(str::to_string);
    Ok(StateMap {
        statuses,
        commits,
        fragment_commits,
        replans,
        plan,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_map_form() {
        let s = parse(
            br#"{"version":1,"tasks":{"a":{"status":"passed","x":1},"b":"FAILED"},"extra":[]}"#,
        )
        .unwrap();
        assert_eq!(s.status("a"), Status::Passed);
        assert_eq!(s.status("b"), Status::Failed);
        assert_eq!(s.status("c"), Status::Pending);
        assert_eq!(s.plan, None);
    }

    #[test]
    fn parses_the_list_form() {
        let s = parse(br#"{"plan":"p","tasks":[{"name":"a","status":"cached","attempts":2},{"name":"b","status":"interrupted"}]}"#)
            .unwrap();
        assert_eq!(s.status("a"), Status::Cached);
        assert_eq!(s.status("b"), Status::Interrupted);
        assert_eq!(s.plan.as_deref(), Some("p"));
    }

    #[test]
    fn rejects_what_it_cannot_understand() {
        assert!(
            parse(b"{not json")
                .unwrap_err()
                .starts_with("not valid JSON")
        );
        assert_eq!(parse(b"[]").unwrap_err(), "expected a JSON object");
        assert_eq!(parse(b"{}").unwrap_err(), "no `tasks` field");
        let next = crate::state::STATE_VERSION + 1;
        assert_eq!(
            parse(format!(r#"{{"version":{next},"tasks":[]}}"#).as_bytes()).unwrap_err(),
            format!("unsupported state format version {next}")
        );
        assert_eq!(
            parse(br#"{"tasks":{"a":{"status":"weird"}}}"#).unwrap_err(),
            "unknown task status `weird`"
        );
        assert_eq!(
            parse(br#"{"tasks":[{"status":"passed"}]}"#).unwrap_err(),
            "a task without a `name` string"
        );
    }

    #[test]
    fn every_status_round_trips() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
    }
}
