//! March's use of the `git` command line: one way to run it, and git worktrees for agents.

pub mod worktree;

use std::path::Path;
use std::process::{Command, Output};

/// Runs `git` in `dir` with no pager, no prompts and the C locale (what is parsed is
/// English), input from nothing.
fn run(dir: &Path, args: &[&str]) -> Result<Output, String> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))
}

/// Runs `git` in `dir`; its stdout, or the first line of what it said went wrong.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = run(dir, args)?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(err
            .lines()
            .next()
            .unwrap_or("git failed")
            .trim()
            .to_string())
    }
}

/// Runs `git` in `dir`; its stdout as text, or everything it said (stderr, then stdout) when
/// it failed: a merge's conflicts and a push's refusal take more than a line.
pub(crate) fn git_text(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = run(dir, args)?;
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let said = [stderr, stdout]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    Err(if said.is_empty() {
        format!("git {} failed", args.first().copied().unwrap_or_default())
    } else {
        said
    })
}

/// Whether `git` in `dir` succeeds (a check such as `rev-parse --verify`).
pub(crate) fn git_ok(dir: &Path, args: &[&str]) -> bool {
    run(dir, args).is_ok_and(|out| out.status.success())
}
