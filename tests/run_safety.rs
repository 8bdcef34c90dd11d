//! Nothing an agent or a user's git setup does touches the user's branches,
//! hangs a run or loses passed work: agents that delete `.git`, move the
//! user's refs or stash; hooks, signing and maintenance in the user's git
//! configuration; counting after the agent started; start-up checks; the
//! lock; `.loopc` symlinks; submodules and nested repositories. Real
//! repositories, real processes, scripted agents.

mod common;
use common::repo::Repo;
use std::collections::BTreeMap;

/// What a user sees of their repository: every ref that is not loopc's
/// (not `refs/heads/loopc/…`, `refs/loopc/…` or the integration branch
/// `refs/heads/loop/…`), the main checkout's HEAD, its index, its working
/// tree (status and the contents of changed and untracked files) and the
/// stash.
#[derive(Debug, PartialEq, Eq, Clone)]
struct UserView {
    refs: BTreeMap<String, String>,
    head: String,
    index: String,
    status: String,
    files: BTreeMap<String, String>,
    stash: String,
}

fn user_view(repo: &Repo) -> UserView {
    let refs = repo
        .git(&["for-each-ref", "--format=%(refname) %(objectname)"])
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(r, _)| {
            !r.starts_with("refs/heads/loopc/")
                && !r.starts_with("refs/loopc/")
                && !r.starts_with("refs/heads/loop/")
        })
        .map(|(r, o)| (r.to_string(), o.to_string()))
        .collect();
    let head = std::fs::read_to_string(repo.root.join(".git/HEAD")).unwrap();
    let index = repo.git(&["ls-files", "--stage"]);
    let status = repo.git(&["status", "--porcelain", "--untracked-files=all"]);
    let mut files = BTreeMap::new();
    for line in status.lines() {
        let path = &line[3..];
        let text = std::fs::read_to_string(repo.root.join(path)).unwrap_or_default();
        files.insert(path.to_string(), text);
    }
    let stash = repo.git(&["stash", "list", "--format=%H %gs"]);
    UserView {
        refs,
        head,
        index,
        status,
        files,
        stash,
    }
}

/// A user's repository with work in progress: a second branch, a tag, an
/// uncommitted edit of a tracked file, a staged file and an untracked one.
fn busy_repo() -> Repo {
    let repo = Repo::new();
    repo.write("tracked.txt", "committed\n");
    repo.commit("tracked");
    repo.git(&["branch", "feature"]);
    repo.git(&["tag", "v1"]);
    repo.write("tracked.txt", "user's uncommitted edit\n");
    repo.write("staged.txt", "user's staged file\n");
    repo.git(&["add", "staged.txt"]);
    repo.write("untracked.txt", "user's untracked file\n");
    // The plan is the user's file too; keep it out of the views' way.
    repo.git(&["config", "core.excludesFile", "/dev/null"]);
    std::fs::write(
        repo.root.join(".git/info/exclude"),
        "/plan.loop\n/.loopc/\n",
    )
    .unwrap();
    repo
}

fn one_task_plan(repo: &Repo, agent: &str, attempts: u32) {
    repo.script("agent.sh", agent);
    repo.plan(&format!(
        r#"
loop "s" {{ }}
budget {{ iterations = 10  failures = 10 }}
agent bot {{ run = "sh @BIN@/agent.sh" }}
task one {{ agent = bot  prompt = "x"  attempts = {attempts} }}
"#
    ));
}

// Item 1: an agent that deletes its worktree's `.git` ------------------------

#[test]
fn an_agent_deleting_dot_git_fails_and_the_users_checkout_is_untouched() {
    let repo = busy_repo();
    one_task_plan(
        &repo,
        "#!/bin/sh\ncat > /dev/null\nrm -rf .git && echo work > feature.txt\n",
        1,
    );
    let before = user_view(&repo);
    let main = repo.git(&["rev-parse", "main"]);
    let r = repo.run();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(repo.status_of("one"), "failed");
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert!(reason.contains(".git"), "{reason}");
    assert_eq!(user_view(&repo), before);
    assert_eq!(repo.git(&["rev-parse", "main"]), main);
    assert_eq!(repo.git(&["rev-parse", "loop/s"]), main);
}

// The guard: refs that are not loopc's ---------------------------------------

#[test]
fn an_agent_moving_a_users_branch_fails_naming_it_and_the_move_is_kept() {
    let repo = busy_repo();
    one_task_plan(
        &repo,
        "#!/bin/sh\ncat > /dev/null\necho work > feature.txt\ngit commit -qam x 2>/dev/null; \
         git add feature.txt && git commit -qm work && git branch -f feature HEAD\n",
        1,
    );
    let old = repo.git(&["rev-parse", "feature"]);
    let r = repo.run();
    assert_eq!(r.code, 1, "{r:?}");
    let new = repo.git(&["rev-parse", "feature"]);
    assert_ne!(
        old, new,
        "the agent's move stays: loopc never moves it back"
    );
    let reason = repo.task("one")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains(&format!(
            "`refs/heads/feature` was moved from {old} to {new}"
        )),
        "{reason}"
    );
    assert!(
        r.stdout.contains("warning: while task `one` attempt 1 ran"),
        "{r:?}"
    );
    assert!(r.stdout.contains("refs/heads/feature"), "{r:?}");
    assert_eq!(repo.state()["warnings"].as_array().unwrap().len(), 1);
    // Nothing of the attempt reached the integration branch.
    assert_eq!(
        repo.git(&["rev-parse", "loop/s"]),
        repo.git(&["rev-parse", "main"])
    );
}
