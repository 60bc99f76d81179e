//! `march worktrees` as a real process on real git repositories: the worktrees March made for
//! agents (as `Ctrl-a W` makes them: a branch with its base in the repository's config, a
//! directory under `[worktrees] dir`) listed with what they hold; `--clean` removes only
//! those that lose nothing; `--remove` refuses one with work until `--force`.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

use std::path::{Path, PathBuf};
use std::process::Command;

use march_e2e::march_bin;

/// git's answer, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    march_e2e::git(dir, args).trim().to_string()
}

/// `march worktrees ARGS` with a clean environment: exit code, stdout and stderr.
fn march(tmp: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(march_bin())
        .arg("worktrees")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", tmp.join("home"))
        .env("MARCH_HOME", tmp.join("march"))
        .env("XDG_RUNTIME_DIR", tmp.join("run"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A worktree of `repo` on a new `branch`, made as March makes them, under `root`.
fn march_worktree(repo: &Path, root: &Path, branch: &str) -> PathBuf {
    let path = root
        .join("repo")
        .join(format!("project@{}", branch.replace('/', "-")));
    git(
        repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            branch,
            path.to_str().unwrap(),
            "main",
        ],
    );
    git(
        repo,
        &["config", &format!("branch.{branch}.marchbase"), "main"],
    );
    path
}

#[test]
fn leftover_worktrees_are_listed_and_only_those_losing_nothing_are_cleaned() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path().canonicalize().unwrap();
    for dir in ["home", "march", "run", "project"] {
        std::fs::create_dir_all(tmp.join(dir)).unwrap();
    }
    let root = tmp.join("worktrees");
    std::fs::write(
        tmp.join("march/config.toml"),
        format!("[worktrees]\ndir = \"{}\"\n", root.display()),
    )
    .unwrap();
    let repo = tmp.join("project");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "t@example.com"]);
    git(&repo, &["config", "user.name", "T"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "start"]);
    let clean = march_worktree(&repo, &root, "march/1");
    let busy = march_worktree(&repo, &root, "march/2");
    std::fs::write(busy.join("work.txt"), "unsaved\n").unwrap();

    let (code, out, err) = march(&tmp, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("project@march/1 (from main)"), "{out}");
    assert!(out.contains("nothing unmerged"), "{out}");
    assert!(out.contains("project@march/2 (from main)"), "{out}");
    assert!(out.contains("1 uncommitted file"), "{out}");

    let (code, out, err) = march(&tmp, &["--clean"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("removed"), "{out}");
    assert!(!clean.exists());
    assert!(git(&repo, &["branch", "--list", "march/1"]).is_empty());
    assert!(busy.exists(), "a worktree with work is never cleaned");

    let busy_arg = busy.to_str().unwrap();
    let (code, _, err) = march(&tmp, &["--remove", busy_arg]);
    assert_ne!(code, 0);
    assert!(
        err.contains("1 uncommitted file") && err.contains("not removed"),
        "{err}"
    );
    assert!(busy.exists());
    let (code, out, err) = march(&tmp, &["--remove", busy_arg, "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("removed project@march/2"), "{out}");
    assert!(!busy.exists());
    let (code, out, _) = march(&tmp, &[]);
    assert_eq!(code, 0);
    assert!(out.contains("no worktrees"), "{out}");
}
