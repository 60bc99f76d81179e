//! Git worktrees for agents: a branch and a checkout of its own per agent pane, made outside
//! the project's working tree (so its tools and watchers do not see it twice), and the ways
//! back: merge, squash or rebase into the branch it came from, or a pull request.
//!
//! What March knows of a worktree lives in git: its directory (`git worktree list`) and, in
//! the repository's config, the branch it was made from (`branch.<name>.marchbase`) and the
//! tip a squash merged (`branch.<name>.marchsquashed`, as a squash leaves no ancestry).

use std::path::{Path, PathBuf};

use super::{git, git_ok, git_text};

/// Config key under `branch.<name>.` naming the branch a worktree was made from.
const BASE_KEY: &str = "marchbase";
/// Config key under `branch.<name>.` naming the tip a squash merged.
const SQUASHED_KEY: &str = "marchsquashed";
/// Default branch names: `march/1`, `march/2`, …
const BRANCH_PREFIX: &str = "march/";

/// A worktree March made for an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// Its checkout.
    pub path: PathBuf,
    /// The repository's main checkout, where merges land.
    pub repo: PathBuf,
    /// Its branch.
    pub branch: String,
    /// The branch (or commit) it was made from.
    pub base: String,
}

/// How a worktree's work goes back to its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeHow {
    /// A merge commit on the base.
    Merge,
    /// One commit on the base with all the work.
    Squash,
    /// The work replayed on the base, which then moves forward to it.
    Rebase,
}

impl MergeHow {
    /// `merge`, `squash` or `rebase`.
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "" | "merge" => Some(MergeHow::Merge),
            "squash" => Some(MergeHow::Squash),
            "rebase" => Some(MergeHow::Rebase),
            _ => None,
        }
    }
}

/// Work a worktree holds that its base does not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pending {
    /// Files changed and not committed.
    pub uncommitted: usize,
    /// Commits on its branch not merged into the base.
    pub unmerged: usize,
}

impl Pending {
    /// Whether removing the worktree would lose nothing.
    pub fn is_empty(&self) -> bool {
        self.uncommitted == 0 && self.unmerged == 0
    }

    /// `2 uncommitted files and 3 unmerged commits`.
    pub fn describe(&self) -> String {
        let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        let mut parts = Vec::new();
        if self.uncommitted > 0 {
            parts.push(plural(self.uncommitted, "uncommitted file"));
        }
        if self.unmerged > 0 {
            parts.push(plural(self.unmerged, "unmerged commit"));
        }
        if parts.is_empty() {
            "nothing unmerged".to_string()
        } else {
            parts.join(" and ")
        }
    }
}

/// Why work could not go back to the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeError {
    /// The files both sides changed; nothing was changed (the merge was undone).
    Conflict(Vec<String>),
    /// Git refused, in its words.
    Refused(String),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Conflict(files) => write!(
                f,
                "conflicts in {}: nothing was merged; resolve them in the worktree (or rebase \
                 it on the base) and merge again",
                files.join(", ")
            ),
            MergeError::Refused(said) => f.write_str(said),
        }
    }
}

/// The name of `path`'s last component (the project's name for people).
fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// `branch` as part of a directory name: `/` becomes `-`.
fn slug(branch: &str) -> String {
    branch
        .chars()
        .map(|c| {
            if c == '/' || c.is_whitespace() {
                '-'
            } else {
                c
            }
        })
        .collect()
}

/// The top of the checkout `dir` is in.
fn top_of(dir: &Path) -> Result<PathBuf, String> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])
        .map_err(|e| format!("not a git repository ({e})"))?;
    Ok(PathBuf::from(String::from_utf8_lossy(&top).trim()))
}

/// Whether branch `name` exists in the repository of `dir`.
fn branch_exists(dir: &Path, name: &str) -> bool {
    git_ok(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{name}"),
        ],
    )
}

/// The branch checked out in `dir`, or its commit when detached.
fn current_ref(dir: &Path) -> Result<String, String> {
    if let Ok(name) = git_text(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"]) {
        return Ok(name);
    }
    git_text(dir, &["rev-parse", "--verify", "HEAD"])
        .map_err(|_| "the project has no commit yet: a worktree starts from one".to_string())
}

impl Worktree {
    /// Makes a worktree of the repository `project` is in, on a new branch (`branch`, else
    /// the first free `march/N`) from what the project has checked out, in a directory of
    /// its own under `root` named `<project>@<branch>`.
    pub fn create(project: &Path, branch: Option<&str>, root: &Path) -> Result<Self, String> {
        let repo = top_of(project)?;
        let base = current_ref(&repo)?;
        let branch = match branch.map(str::trim).filter(|b| !b.is_empty()) {
            Some(name) => {
                git(&repo, &["check-ref-format", "--branch", name])
                    .map_err(|_| format!("`{name}` is not a valid branch name"))?;
                if branch_exists(&repo, name) {
                    return Err(format!("branch `{name}` exists already"));
                }
                name.to_string()
            }
            None => (1..)
                .map(|n| format!("{BRANCH_PREFIX}{n}"))
                .find(|name| !branch_exists(&repo, name))
                .unwrap_or_else(|| format!("{BRANCH_PREFIX}new")),
        };
        let parent = march_core::session::session_dir(root, &repo);
        std::fs::create_dir_all(&parent)
            .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
        let stem = format!("{}@{}", name_of(&repo), slug(&branch));
        let path = (1..)
            .map(|n| match n {
                1 => parent.join(&stem),
                n => parent.join(format!("{stem}-{n}")),
            })
            .find(|p| !p.exists())
            .unwrap_or_else(|| parent.join(stem));
        let shown = path.to_string_lossy().into_owned();
        git_text(&repo, &["worktree", "add", "-b", &branch, &shown, &base])?;
        git(
            &repo,
            &["config", &format!("branch.{branch}.{BASE_KEY}"), &base],
        )?;
        Ok(Worktree {
            path,
            repo,
            branch,
            base,
        })
    }

    /// The March worktree `dir` is in, if it is one (a linked checkout whose branch March
    /// made: it has a base in the config).
    pub fn of(dir: &Path) -> Option<Self> {
        let path = top_of(dir).ok()?;
        let common = git_text(
            &path,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        )
        .ok()?;
        let repo = PathBuf::from(common).parent()?.to_path_buf();
        if repo == path {
            return None;
        }
        let branch = git_text(&path, &["symbolic-ref", "--quiet", "--short", "HEAD"]).ok()?;
        let base = git_text(
            &path,
            &["config", "--get", &format!("branch.{branch}.{BASE_KEY}")],
        )
        .ok()?;
        Some(Worktree {
            path,
            repo,
            branch,
            base,
        })
    }

    /// `project@branch`, for people.
    pub fn label(&self) -> String {
        format!("{}@{}", name_of(&self.repo), self.branch)
    }

    /// The commit the base and the branch last shared: what the worktree's changes are
    /// diffed against.
    pub fn fork_point(&self) -> Result<String, String> {
        git_text(&self.path, &["merge-base", &self.base, "HEAD"])
    }

    /// What removing the worktree would lose.
    pub fn pending(&self) -> Result<Pending, String> {
        let status = git(
            &self.path,
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
        )?;
        let mut fields = status.split(|&b| b == 0).filter(|e| !e.is_empty());
        let mut uncommitted = 0;
        while let Some(entry) = fields.next() {
            if entry.len() < 4 {
                continue;
            }
            uncommitted += 1;
            // A rename or copy names its source in the next field.
            if entry[..2].contains(&b'R') || entry[..2].contains(&b'C') {
                fields.next();
            }
        }
        let tip = git_text(&self.path, &["rev-parse", "HEAD"])?;
        let squashed = git_text(
            &self.repo,
            &[
                "config",
                "--get",
                &format!("branch.{}.{SQUASHED_KEY}", self.branch),
            ],
        )
        .ok();
        let unmerged = if squashed.as_deref() == Some(tip.as_str()) {
            0
        } else {
            let range = format!("{}..{}", self.base, self.branch);
            git_text(&self.repo, &["rev-list", "--count", &range])?
                .parse()
                .unwrap_or(0)
        };
        Ok(Pending {
            uncommitted,
            unmerged,
        })
    }

    /// Commits what the worktree has not committed (all of it, new files too) with
    /// `message`; whether there was anything.
    pub fn commit_all(&self, message: &str) -> Result<bool, String> {
        git_text(&self.path, &["add", "-A"])?;
        if git_ok(&self.path, &["diff", "--cached", "--quiet"]) {
            return Ok(false);
        }
        git_text(&self.path, &["commit", "-q", "-m", message])?;
        Ok(true)
    }

    /// Brings the branch's work into the base in the main checkout, which must have the base
    /// checked out. Uncommitted work is committed first with `message`. A conflict undoes
    /// the attempt and names the files; nothing is ever forced. Says what was done.
    pub fn merge(&self, how: MergeHow, message: &str) -> Result<String, MergeError> {
        let refused = MergeError::Refused;
        let on = current_ref(&self.repo).map_err(refused)?;
        if on != self.base {
            return Err(MergeError::Refused(format!(
                "{} has {on} checked out, not {}: check out {} there to merge into it",
                self.repo.display(),
                self.base,
                self.base
            )));
        }
        // The merge goes through the main checkout's index: what the user staged there is
        // theirs, never swept into (or reset with) the worktree's work.
        if !git_ok(&self.repo, &["diff", "--cached", "--quiet"]) {
            return Err(MergeError::Refused(format!(
                "{} has staged changes: commit or unstage them before merging",
                self.repo.display()
            )));
        }
        let committed = self.commit_all(message).map_err(refused)?;
        let pending = self.pending().map_err(refused)?;
        if pending.unmerged == 0 {
            return Ok(format!(
                "{} has nothing to merge into {}",
                self.branch, self.base
            ));
        }
        let (base, branch) = (self.base.as_str(), self.branch.as_str());
        match how {
            MergeHow::Merge => {
                let msg = format!("Merge {branch}: {message}");
                let merged = git_text(&self.repo, &["merge", "--no-ff", "-m", &msg, branch]);
                if let Err(said) = merged {
                    return Err(self.undo(&self.repo, &["merge", "--abort"], said));
                }
            }
            MergeHow::Squash => {
                if let Err(said) = git_text(&self.repo, &["merge", "--squash", branch]) {
                    return Err(self.undo(&self.repo, &["reset", "--merge"], said));
                }
                let msg = format!("{message} (squashed from {branch})");
                if let Err(said) = git_text(&self.repo, &["commit", "-q", "-m", &msg]) {
                    // Not left staged: the main checkout is as it was.
                    return Err(self.undo(&self.repo, &["reset", "--merge"], said));
                }
                let tip = git_text(&self.path, &["rev-parse", "HEAD"]).map_err(refused)?;
                let key = format!("branch.{branch}.{SQUASHED_KEY}");
                git_text(&self.repo, &["config", &key, &tip]).map_err(refused)?;
            }
            MergeHow::Rebase => {
                if let Err(said) = git_text(&self.path, &["rebase", base]) {
                    return Err(self.undo(&self.path, &["rebase", "--abort"], said));
                }
                git_text(&self.repo, &["merge", "--ff-only", branch]).map_err(refused)?;
            }
        }
        let what = match how {
            MergeHow::Merge => "merged",
            MergeHow::Squash => "squashed",
            MergeHow::Rebase => "rebased and fast-forwarded",
        };
        let first = if committed {
            "committed the worktree's changes, "
        } else {
            ""
        };
        Ok(format!(
            "{first}{what} {} commit{} of {branch} into {base}",
            pending.unmerged,
            if pending.unmerged == 1 { "" } else { "s" }
        ))
    }

    /// After a failed merge step in `dir`: the conflicting files (read before undoing with
    /// `undo`), or git's words when there were none.
    fn undo(&self, dir: &Path, undo: &[&str], said: String) -> MergeError {
        let conflicts: Vec<String> = git_text(dir, &["diff", "--name-only", "--diff-filter=U"])
            .map(|list| list.lines().map(str::to_string).collect())
            .unwrap_or_default();
        if let Err(e) = git_text(dir, undo) {
            tracing::warn!(dir = %dir.display(), "undoing a failed merge failed: {e}");
        }
        if conflicts.is_empty() {
            MergeError::Refused(said)
        } else {
            MergeError::Conflict(conflicts)
        }
    }

    /// Pushes the branch to `origin` and opens a pull request against the base with `gh`
    /// (its title `title`); the pull request's address, or why not.
    pub fn pull_request(&self, title: &str) -> Result<String, String> {
        if !gh_installed() {
            return Err("`gh` (GitHub's CLI) is not installed: push the branch and open the pull request yourself".to_string());
        }
        git_text(
            &self.path,
            &["push", "--set-upstream", "origin", &self.branch],
        )?;
        let out = std::process::Command::new("gh")
            .current_dir(&self.path)
            .args(["pr", "create", "--base", &self.base, "--head", &self.branch])
            .args(["--title", title, "--fill"])
            .env("GH_PROMPT_DISABLED", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run gh: {e}"))?;
        let said = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
        if out.status.success() {
            Ok(said(&out.stdout))
        } else {
            Err(format!("gh pr create failed: {}", said(&out.stderr)))
        }
    }

    /// Removes the checkout and its branch. Unless `anyway`, refuses when that would lose
    /// work ([`Self::pending`]), saying what.
    pub fn remove(&self, anyway: bool) -> Result<(), String> {
        if !anyway {
            let pending = self.pending()?;
            if !pending.is_empty() {
                return Err(format!(
                    "{} has {}: not removed",
                    self.label(),
                    pending.describe()
                ));
            }
        }
        let shown = self.path.to_string_lossy().into_owned();
        let mut args = vec!["worktree", "remove"];
        if anyway {
            args.push("--force");
        }
        args.push(&shown);
        git_text(&self.repo, &args)?;
        let delete = if anyway { "-D" } else { "-d" };
        // A squash-merged branch is not an ancestor of the base: -d would refuse it.
        if let Err(e) = git_text(&self.repo, &["branch", delete, &self.branch])
            .or_else(|_| git_text(&self.repo, &["branch", "-D", &self.branch]))
        {
            tracing::warn!(branch = %self.branch, "worktree removed, branch kept: {e}");
        }
        let section = format!("branch.{}", self.branch);
        // The branch's config section went with the branch (git removes it); nothing else
        // to do when it did.
        let _ = git(&self.repo, &["config", "--remove-section", &section]);
        Ok(())
    }
}

/// Whether GitHub's `gh` is on the PATH.
fn gh_installed() -> bool {
    std::process::Command::new("gh")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A worktree found under the worktrees directory, or what is wrong with a directory there.
#[derive(Debug)]
pub struct Found {
    /// Its directory.
    pub path: PathBuf,
    /// The worktree, or why the directory is not one any more (its repository is gone, it
    /// was removed by hand).
    pub worktree: Result<Worktree, String>,
}

/// Every directory under `root` that March made a worktree in (`<root>/<repo>/<name>`).
pub fn list(root: &Path) -> Vec<Found> {
    let mut found = Vec::new();
    // Git names checkouts by their real paths.
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let Ok(repos) = std::fs::read_dir(&root) else {
        return found;
    };
    for repo in repos.flatten() {
        let Ok(entries) = std::fs::read_dir(repo.path()) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let worktree = Worktree::of(&path)
                .filter(|w| w.path == path)
                .ok_or_else(|| "not a March worktree any more".to_string());
            found.push(Found { path, worktree });
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::{git_in, test_repo};

    /// A repository with one commit on `main`, and a worktrees root beside it.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let (dir, repo) = test_repo();
        git_in(&repo, &["checkout", "-q", "-b", "main"]);
        std::fs::write(repo.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        git_in(&repo, &["add", "."]);
        git_in(&repo, &["commit", "-qm", "start"]);
        let root = tempfile::tempdir().unwrap().keep();
        (dir, repo, root)
    }

    #[test]
    fn a_worktree_is_made_outside_the_project_on_a_new_branch_and_found_again() {
        let (_dir, repo, root) = setup();
        let w = Worktree::create(&repo, None, &root).unwrap();
        assert_eq!(w.branch, "march/1");
        assert_eq!(w.base, "main");
        assert!(w.path.starts_with(&root), "{}", w.path.display());
        assert!(!w.path.starts_with(&repo));
        let name = name_of(&repo);
        assert_eq!(name_of(&w.path), format!("{name}@march-1"));
        assert_eq!(w.label(), format!("{name}@march/1"));
        assert_eq!(
            std::fs::read_to_string(w.path.join("a.txt")).unwrap(),
            "one\ntwo\nthree\n"
        );
        assert_eq!(Worktree::of(&w.path), Some(w.clone()));
        // The main checkout is not a March worktree; a subdirectory of one is.
        assert_eq!(Worktree::of(&repo), None);
        std::fs::create_dir(w.path.join("sub")).unwrap();
        assert_eq!(Worktree::of(&w.path.join("sub")), Some(w.clone()));
        // The next default name is the next number; a taken name is refused.
        let second = Worktree::create(&repo, None, &root).unwrap();
        assert_eq!(second.branch, "march/2");
        let err = Worktree::create(&repo, Some("march/1"), &root).unwrap_err();
        assert!(err.contains("exists already"), "{err}");
        let err = Worktree::create(&repo, Some("bad..name"), &root).unwrap_err();
        assert!(err.contains("not a valid branch name"), "{err}");
        let listed: Vec<PathBuf> = list(&root).into_iter().map(|f| f.path).collect();
        assert_eq!(listed, [w.path.clone(), second.path.clone()]);
    }

    #[test]
    fn a_clean_merge_commits_the_work_and_lands_on_the_base() {
        let (_dir, repo, root) = setup();
        let w = Worktree::create(&repo, Some("feature/x"), &root).unwrap();
        std::fs::write(w.path.join("new.txt"), "fresh\n").unwrap();
        assert_eq!(
            w.pending().unwrap(),
            Pending {
                uncommitted: 1,
                unmerged: 0
            }
        );
        // Removing would lose the file: refused without the second yes.
        let err = w.remove(false).unwrap_err();
        assert!(err.contains("1 uncommitted file"), "{err}");
        let said = w.merge(MergeHow::Merge, "add new.txt").unwrap();
        assert!(
            said.contains("merged 1 commit of feature/x into main"),
            "{said}"
        );
        assert_eq!(
            std::fs::read_to_string(repo.join("new.txt")).unwrap(),
            "fresh\n"
        );
        assert!(w.pending().unwrap().is_empty());
        w.remove(false).unwrap();
        assert!(!w.path.exists());
        assert!(!branch_exists(&repo, "feature/x"));
        assert!(list(&root).is_empty());
    }

    #[test]
    fn a_conflict_is_named_and_nothing_is_merged() {
        let (_dir, repo, root) = setup();
        let w = Worktree::create(&repo, None, &root).unwrap();
        std::fs::write(w.path.join("a.txt"), "one\nTWO (worktree)\nthree\n").unwrap();
        std::fs::write(repo.join("a.txt"), "one\nTWO (main)\nthree\n").unwrap();
        git_in(&repo, &["commit", "-qam", "main changed it too"]);
        let before = git_text(&repo, &["rev-parse", "HEAD"]).unwrap();
        for how in [MergeHow::Merge, MergeHow::Squash, MergeHow::Rebase] {
            let err = w.merge(how, "change two").unwrap_err();
            assert_eq!(
                err,
                MergeError::Conflict(vec!["a.txt".to_string()]),
                "{how:?}"
            );
            assert!(err.to_string().contains("nothing was merged"));
            // Nothing changed on either side.
            assert_eq!(git_text(&repo, &["rev-parse", "HEAD"]).unwrap(), before);
            assert!(git_ok(&repo, &["diff", "--quiet", "HEAD"]), "{how:?}");
            assert!(git_ok(&w.path, &["diff", "--quiet", "HEAD"]), "{how:?}");
        }
        assert_eq!(
            std::fs::read_to_string(repo.join("a.txt")).unwrap(),
            "one\nTWO (main)\nthree\n"
        );
        // The work is committed in the worktree and unmerged: removing it takes a second yes.
        let err = w.remove(false).unwrap_err();
        assert!(err.contains("1 unmerged commit"), "{err}");
        assert!(w.path.exists());
        w.remove(true).unwrap();
        assert!(!w.path.exists());
        assert!(!branch_exists(&repo, &w.branch));
    }

    #[test]
    fn squash_and_rebase_land_the_work_and_count_it_merged() {
        let (_dir, repo, root) = setup();
        let squash = Worktree::create(&repo, None, &root).unwrap();
        std::fs::write(squash.path.join("s.txt"), "s\n").unwrap();
        squash.commit_all("first").unwrap();
        std::fs::write(squash.path.join("s.txt"), "s2\n").unwrap();
        let said = squash.merge(MergeHow::Squash, "squash it").unwrap();
        assert!(said.contains("squashed 2 commits"), "{said}");
        assert_eq!(std::fs::read_to_string(repo.join("s.txt")).unwrap(), "s2\n");
        // Squashed: nothing unmerged though the branch is no ancestor of main.
        assert!(squash.pending().unwrap().is_empty());
        squash.remove(false).unwrap();

        let rebase = Worktree::create(&repo, None, &root).unwrap();
        std::fs::write(rebase.path.join("r.txt"), "r\n").unwrap();
        // main moves on meanwhile: the rebase replays the work on it.
        std::fs::write(repo.join("m.txt"), "m\n").unwrap();
        git_in(&repo, &["add", "."]);
        git_in(&repo, &["commit", "-qm", "main moves"]);
        let said = rebase.merge(MergeHow::Rebase, "add r").unwrap();
        assert!(
            said.contains("rebased and fast-forwarded 1 commit"),
            "{said}"
        );
        let log = git_text(&repo, &["log", "--format=%s", "-3"]).unwrap();
        assert_eq!(log, "add r\nmain moves\nsquash it (squashed from march/1)");
        assert!(rebase.pending().unwrap().is_empty());
    }

    #[test]
    fn merging_needs_the_base_checked_out_in_the_main_checkout() {
        let (_dir, repo, root) = setup();
        let w = Worktree::create(&repo, None, &root).unwrap();
        std::fs::write(w.path.join("x.txt"), "x\n").unwrap();
        git_in(&repo, &["checkout", "-q", "-b", "elsewhere"]);
        let err = w.merge(MergeHow::Merge, "x").unwrap_err();
        assert!(
            err.to_string()
                .contains("has elsewhere checked out, not main"),
            "{err}"
        );
        // Nothing was committed either.
        assert_eq!(w.pending().unwrap().uncommitted, 1);
    }

    #[test]
    fn a_pull_request_without_gh_says_so() {
        let (_dir, repo, root) = setup();
        let w = Worktree::create(&repo, None, &root).unwrap();
        if gh_installed() {
            return;
        }
        let err = w.pull_request("title").unwrap_err();
        assert!(err.contains("`gh`"), "{err}");
    }
}
