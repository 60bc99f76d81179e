//! An agent on a git worktree of its own, end to end: the real `march` in a pseudo-terminal,
//! its agent answered by the scripted model server, a real git repository as the project.
//! A key opens the agent on a new worktree and branch (labelled `project@branch`), its edit
//! lands in the worktree only, the diff pane shows it against the base branch, `/merge`
//! brings it into the project, and closing the pane removes the worktree.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use std::path::Path;

use acp_client::{Harness, write_call};
use march_testkit::Turn;
use workspace::*;

/// Runs git in `dir`; its output, which must say it succeeded.
/// git's answer, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    march_e2e::git(dir, args).trim().to_string()
}

#[test]
fn an_agent_on_a_worktree_edits_there_and_its_work_merges_back() {
    let h: Harness = tokio_harness(vec![
        Turn::stream(vec![write_call("w1", "feature.txt", "from the worktree")]),
        Turn::text("Wrote the feature."),
    ]);
    let project = h.project();
    git(&project, &["init", "-q"]);
    git(&project, &["config", "user.email", "t@example.com"]);
    git(&project, &["config", "user.name", "T"]);
    std::fs::write(project.join("README.md"), "hello\n").unwrap();
    git(&project, &["add", "."]);
    git(&project, &["commit", "-qm", "start"]);
    let base = git(&project, &["symbolic-ref", "--short", "HEAD"]);
    let_commands_run_unasked(&h);

    let mut m = start(&h);
    m.send(PREFIX);
    m.send(b"W");
    m.wait_text("project@march-1");
    m.type_line("add the feature");
    m.wait_text("Wrote the feature.");
    // The edit is in the worktree, not in the project.
    assert!(!project.join("feature.txt").exists());
    let worktree_list = git(&project, &["worktree", "list", "--porcelain"]);
    let worktree = worktree_list
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(std::path::PathBuf::from)
        .find(|p| p.ends_with("project@march-1"))
        .unwrap_or_else(|| panic!("no worktree in {worktree_list}"));
    assert!(!worktree.starts_with(&project), "{}", worktree.display());
    assert_eq!(
        std::fs::read_to_string(worktree.join("feature.txt")).unwrap(),
        "from the worktree"
    );

    // The diff pane shows the worktree against its base branch.
    m.send(PREFIX);
    m.send(b"g");
    m.wait_for("the change since the base", |t| {
        t.contains(&format!("changes since {base}")) && t.contains("feature.txt")
    });
    m.send(PREFIX);
    m.send(b"x");

    // Merged back: committed in the worktree, merged into the base in the project.
    m.type_line("/merge");
    m.wait_text(&format!("merged 1 commit of march/1 into {base}"));
    assert_eq!(
        std::fs::read_to_string(project.join("feature.txt")).unwrap(),
        "from the worktree"
    );
    assert!(git(&project, &["log", "--format=%s", "-1"]).starts_with("Merge march/1"));

    // Closing asks what becomes of the worktree; removed, with its branch.
    m.send(PREFIX);
    m.send(b"x");
    m.wait_text("Remove project@march/1");
    m.send(b"\x1b[B");
    m.send(ENTER);
    m.wait_text("removed the worktree project@march/1");
    assert!(!worktree.exists());
    assert!(git(&project, &["branch", "--list", "march/1"]).is_empty());
    m.quit();
}
