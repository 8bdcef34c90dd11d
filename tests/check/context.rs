//! `loopc check` on `context` files (docs/language.md "Context every agent
//! reads"): a file that is not in the checkout of the plan's repository is
//! E0015 at the path's span; a path that is no file path is E0009.

use crate::harness::Test;

/// A repository with `DESIGN.md` and the fixture plan
/// (tests/fixtures/context/E0015.loop) as `plan.loop`.
fn repo() -> Test {
    let repo = Test::repo();
    repo.write("DESIGN.md", "# Design\n");
    let fixture = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/context/E0015.loop"),
    )
    .expect("the fixture");
    repo.write("plan.loop", fixture);
    repo
}

#[test]
fn a_context_file_missing_from_the_checkout_is_e0015_at_its_span() {
    let repo = repo();
    let r = repo.loopc(&["check", "plan.loop"]).status(1).run();
    insta::assert_snapshot!(r.stderr);
}

#[test]
fn e0015_in_json() {
    let repo = repo();
    let r = repo
        .loopc(&["check", "--format", "json", "plan.loop"])
        .status(1)
        .run();
    let codes: Vec<String> = r
        .stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            format!("{} {}", v["code"], v["message"])
        })
        .collect();
    assert_eq!(
        codes,
        [
            "\"E0015\" \"context file `AGENTS.md` is not in the repository's checkout\"",
            "\"E0015\" \"context file `docs/NOTES.md` is not in the repository's checkout\"",
            "\"E0009\" \"`../outside.md` is not a file path in `context`\"",
        ]
    );
}

#[test]
fn a_file_in_the_checkout_is_enough_for_check() {
    let repo = repo();
    repo.write("AGENTS.md", "x\n");
    repo.write("docs/NOTES.md", "x\n");
    repo.write(
        "plan.loop",
        std::fs::read_to_string(repo.root.join("plan.loop"))
            .unwrap()
            .replace(", \"../outside.md\"", ""),
    );
    repo.loopc(&["check", "plan.loop"]).status(0).run();
}

/// A plan named by its bare file name from a subdirectory: its context
/// files are still the repository's (before, `check plan.loop` in `sub/`
/// looked for them in `sub/`, while `check ./plan.loop` found them).
#[test]
fn a_bare_plan_name_in_a_subdirectory_finds_the_repositorys_files() {
    let repo = Test::repo();
    repo.write("README.md", "hi\n");
    repo.write(
        "sub/plan.loop",
        "task a { run = \"true\"  context = [\"README.md\"] }\n",
    );
    let sub = repo.root.join("sub");
    for args in [
        &["check"][..],
        &["check", "plan.loop"],
        &["check", "./plan.loop"],
    ] {
        repo.loopc(args).current_dir(&sub).status(0).run();
    }
    repo.write(
        "sub/plan.loop",
        "task a { run = \"true\"  context = [\"NOPE.md\"] }\n",
    );
    let r = repo
        .loopc(&["check", "plan.loop"])
        .current_dir(&sub)
        .status(1)
        .run();
    assert!(r.stderr.contains("E0015"), "{}", r.stderr);
}

/// A directory named in `context` is said to be one, in `check` (the
/// checkout) and `run` (the commit), as a path ending in `/` is: before,
/// both said "no such file" of a directory that is there.
#[test]
fn a_directory_in_context_is_named_a_directory() {
    let repo = Test::repo();
    repo.write("notes/a.md", "a\n");
    repo.write(
        "plan.loop",
        "loop \"c\" { }\nbudget { iterations = 1 }\nagent bot { run = \"true\" }\n\
         task a { agent = bot  prompt = \"x\"  context = [\"notes\"] }\n",
    );
    repo.commit("notes");
    let r = repo.loopc(&["check", "plan.loop"]).status(1).run();
    assert!(
        r.stderr
            .contains("context file `notes` is a directory in the repository's checkout"),
        "{r:?}"
    );
    assert!(r.stderr.contains("a directory: name the files"), "{r:?}");
    let r = repo.loopc(&["run", "plan.loop"]).status(2).run();
    assert!(
        r.stderr
            .contains("context file `notes` is a directory in the commit attempts start from"),
        "{r:?}"
    );
}
