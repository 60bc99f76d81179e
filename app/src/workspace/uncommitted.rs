//! The project's uncommitted changes (`git` against HEAD, untracked files too) in a diff pane
//! of their own: whatever changed them, an agent, the user or a build. In a March worktree
//! the pane shows all of the agent's work instead: the checkout against the commit it shares
//! with its base branch, committed or not.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::git::git;

use march_panes::diff::{DiffView, FileDiff};

use super::Workspace;
use super::changes::MAX_TEXT;
use super::diffs::DiffInput;
use super::jobs::JobDone;
use super::layout::{Axis, PaneId};
use super::pane::Pane;

/// Files listed at most (a checkout of generated files should not stall anything).
const MAX_FILES: usize = 500;

/// What a project's changes are diffed against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Against {
    /// The revision whose texts are the "before".
    rev: String,
    /// What it is, for people: `HEAD`, or a worktree's base branch.
    pub name: String,
}

impl Against {
    /// HEAD: the uncommitted changes.
    pub(super) fn head() -> Self {
        Against {
            rev: "HEAD".to_string(),
            name: "HEAD".to_string(),
        }
    }

    /// For `project`: the fork point with its base in a March worktree, else HEAD.
    pub(crate) fn of(project: &Path) -> Self {
        crate::git::worktree::Worktree::of(project)
            .and_then(|w| Some((w.fork_point().ok()?, w.base)))
            .map_or_else(Against::head, |(rev, name)| Against { rev, name })
    }

    fn is_head(&self) -> bool {
        self.rev == "HEAD"
    }
}

/// The text of `path` (relative to the repository's top) at `rev`; `None` when it is not
/// there (a new file, or no commit yet).
fn text_at(top: &Path, rev: &str, path: &str) -> Option<String> {
    git(top, &["show", &format!("{rev}:{path}")])
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The texts of `paths` (relative to the repository's top) at `rev`, in their order (`None`
/// where one is not there), read by one `git cat-file --batch` rather than a git per file.
fn texts_at(top: &Path, rev: &str, paths: &[&str]) -> Vec<Option<String>> {
    match batch_read(top, rev, paths) {
        Ok(texts) => texts,
        Err(e) => {
            tracing::debug!("git cat-file --batch: {e}; one git show per file");
            paths.iter().map(|p| text_at(top, rev, p)).collect()
        }
    }
}

fn batch_read(top: &Path, rev: &str, paths: &[&str]) -> std::io::Result<Vec<Option<String>>> {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::Stdio;
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["cat-file", "--batch"])
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other("no pipes to git"));
    };
    // One name per line: a path with a newline in it is asked of `git show` instead.
    let requests: String = paths
        .iter()
        .filter(|p| !p.contains('\n'))
        .map(|p| format!("{rev}:{p}\n"))
        .collect();
    // Written from a thread of its own: git answers as it reads, and both pipes are finite.
    let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
    let mut out = BufReader::new(stdout);
    let mut texts = Vec::with_capacity(paths.len());
    let mut header = String::new();
    for path in paths {
        if path.contains('\n') {
            texts.push(text_at(top, rev, path));
            continue;
        }
        header.clear();
        if out.read_line(&mut header)? == 0 {
            return Err(std::io::Error::other("git ended early"));
        }
        // `<oid> <type> <size>`, or `<name> missing` (and `ambiguous`).
        let mut words = header.split_whitespace().rev();
        let size = words.next().and_then(|w| w.parse::<usize>().ok());
        let kind = words.next();
        let text = match (size, kind) {
            (Some(size), Some(kind)) => {
                let mut bytes = vec![0; size + 1];
                out.read_exact(&mut bytes)?;
                bytes.pop();
                (kind == "blob").then(|| String::from_utf8_lossy(&bytes).into_owned())
            }
            _ => None,
        };
        texts.push(text);
    }
    drop(out);
    let _ = writer.join();
    let _ = child.wait();
    Ok(texts)
}

/// One line of `git status`: a file that differs from what it is diffed against.
pub(super) struct StatusEntry {
    /// The two status letters (`??` for untracked).
    pub(super) code: [u8; 2],
    /// Relative to the repository's top.
    pub(super) path: String,
    /// A rename's or copy's source, whose earlier text is the "before".
    pub(super) source: Option<String>,
}

/// The repository's top and the files of `project` that differ from `against` (at most
/// [`MAX_FILES`]): quick git runs, no file read.
fn uncommitted_status(
    project: &Path,
    against: &Against,
) -> Result<(PathBuf, Vec<StatusEntry>), String> {
    let top = git(project, &["rev-parse", "--show-toplevel"])
        .map_err(|e| format!("not a git repository ({e})"))?;
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim());
    if !against.is_head() {
        return Ok((top.clone(), changed_since(project, &top, &against.rev)?));
    }
    let status = git(
        project,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--",
            ".",
        ],
    )?;
    let mut entries = parse_status(&status);
    // A submodule or nested repository: not a file to diff.
    entries.retain(|e| !top.join(&e.path).is_dir());
    Ok((top, entries))
}

/// The entries of `git status --porcelain=v1 -z` (at most [`MAX_FILES`]).
pub(super) fn parse_status(status: &[u8]) -> Vec<StatusEntry> {
    let mut fields = status.split(|&b| b == 0).filter(|e| !e.is_empty());
    let mut entries = Vec::new();
    while let Some(entry) = fields.next() {
        if entry.len() < 4 {
            continue;
        }
        let code = [entry[0], entry[1]];
        let path = String::from_utf8_lossy(&entry[3..]).into_owned();
        let source = if code.contains(&b'R') || code.contains(&b'C') {
            fields
                .next()
                .map(|s| String::from_utf8_lossy(s).into_owned())
        } else {
            None
        };
        if entries.len() == MAX_FILES {
            break;
        }
        entries.push(StatusEntry { code, path, source });
    }
    entries
}

/// The files of `project` that differ from `rev` (committed since, or not), untracked ones
/// too, as status entries.
fn changed_since(project: &Path, top: &Path, rev: &str) -> Result<Vec<StatusEntry>, String> {
    let diff = git(
        project,
        &["diff", "--name-status", "-z", "-M", rev, "--", "."],
    )?;
    let mut fields = diff.split(|&b| b == 0).filter(|f| !f.is_empty());
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut entries = Vec::new();
    while let Some(status) = fields.next() {
        let letter = status.first().copied().unwrap_or(b'M');
        let Some(first) = fields.next() else { break };
        let (path, source) = if matches!(letter, b'R' | b'C') {
            let Some(second) = fields.next() else { break };
            (text(second), Some(text(first)))
        } else {
            (text(first), None)
        };
        entries.push(StatusEntry {
            code: [letter, b' '],
            path,
            source,
        });
    }
    let untracked = git(
        project,
        &[
            "ls-files",
            "--others",
            "--exclude-standard",
            "--full-name",
            "-z",
            "--",
            ".",
        ],
    )?;
    entries.extend(
        untracked
            .split(|&b| b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| StatusEntry {
                code: *b"??",
                path: text(f),
                source: None,
            }),
    );
    entries.retain(|e| !top.join(&e.path).is_dir());
    entries.truncate(MAX_FILES);
    Ok(entries)
}

/// An entry's text on disk beside `before`, its earlier text, named as `project` sees it.
fn entry_input(
    top: &Path,
    project: &Path,
    entry: &StatusEntry,
    before: Option<String>,
) -> DiffInput {
    let absolute = top.join(&entry.path);
    let after = std::fs::read(&absolute)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let shown = absolute
        .strip_prefix(project)
        .unwrap_or(&absolute)
        .to_string_lossy()
        .into_owned();
    sized_input(shown, before, after)
}

/// A file's input from its two texts, which are dropped when too large to diff.
pub(super) fn sized_input(
    shown: String,
    before: Option<String>,
    after: Option<String>,
) -> DiffInput {
    let sizes = (
        before.as_ref().map_or(0, String::len),
        after.as_ref().map_or(0, String::len),
    );
    if sizes.0 > MAX_TEXT || sizes.1 > MAX_TEXT {
        return DiffInput {
            shown,
            before: None,
            after: None,
            too_large: Some(sizes),
        };
    }
    DiffInput {
        shown,
        before,
        after,
        too_large: None,
    }
}

/// The entries' inputs: their texts at `rev` read in one go (untracked files have none).
fn entry_inputs(top: &Path, rev: &str, project: &Path, entries: &[&StatusEntry]) -> Vec<DiffInput> {
    let tracked: Vec<&str> = entries
        .iter()
        .filter(|e| &e.code != b"??")
        .map(|e| e.source.as_deref().unwrap_or(&e.path))
        .collect();
    let mut before = texts_at(top, rev, &tracked).into_iter();
    entries
        .iter()
        .map(|entry| {
            let text = match &entry.code == b"??" {
                true => None,
                false => before.next().flatten(),
            };
            entry_input(top, project, entry, text)
        })
        .collect()
}

/// The files of `project` that differ from what it is diffed against ([`Against::of`]),
/// with their earlier text and their text on disk.
pub fn uncommitted_inputs(project: &Path) -> Result<(Vec<DiffInput>, Against), String> {
    let against = Against::of(project);
    let (top, entries) = uncommitted_status(project, &against)?;
    let entries: Vec<&StatusEntry> = entries.iter().collect();
    Ok((entry_inputs(&top, &against.rev, project, &entries), against))
}

/// The change of the one file `project` shows as `shown`, if it has one (its earlier text
/// and file alone are read), and what it is against.
pub(super) fn uncommitted_input(
    project: &Path,
    shown: &str,
) -> Result<(Option<DiffInput>, Against), String> {
    let against = Against::of(project);
    let (top, entries) = uncommitted_status(project, &against)?;
    let wanted = project.join(shown);
    let input = entries
        .iter()
        .find(|entry| top.join(&entry.path) == wanted)
        .and_then(|entry| entry_inputs(&top, &against.rev, project, &[entry]).pop());
    Ok((input, against))
}

impl Workspace {
    /// Opens the focused project's uncommitted changes in a diff pane to the right, or
    /// focuses the one already open (and brings it up to date).
    pub fn open_uncommitted_diff(&mut self) {
        let project = self.focused_project();
        let existing =
            self.find_pane(|p| matches!(p, Pane::Uncommitted { project: p, .. } if *p == project));
        self.focus_or_open(existing, Axis::Horizontal, |ws, pane| {
            let view = DiffView::new(&ws.uncommitted_title(&project), Vec::new());
            let project = project.clone();
            ws.panes.insert(pane, Pane::Uncommitted { project, view });
        });
        self.refresh_uncommitted(&project);
    }

    /// Whether pane `id` shows a project's uncommitted changes.
    pub fn is_uncommitted_diff(&self, id: PaneId) -> bool {
        matches!(self.panes.get(&id), Some(Pane::Uncommitted { .. }))
    }

    /// The title of `project`'s uncommitted-changes pane.
    pub(super) fn uncommitted_title(&self, project: &Path) -> String {
        format!("uncommitted · {}", super::project_name(project))
    }

    /// The views of `project`'s uncommitted changes.
    fn uncommitted_views<'a>(
        &'a mut self,
        project: &'a Path,
    ) -> impl Iterator<Item = &'a mut DiffView> + 'a {
        self.panes.values_mut().filter_map(move |p| match p {
            Pane::Uncommitted {
                project: p, view, ..
            } if p == project => Some(view),
            _ => None,
        })
    }

    /// Diffs `project`'s uncommitted changes again for its panes, off the loop; they come
    /// back as a [`JobDone::UncommittedDiffed`]. One diffing per project runs at a time (it runs
    /// git once per changed file): asked again meanwhile, it runs once more when it is done.
    /// Whether such a pane is in the active tab.
    pub fn refresh_uncommitted(&mut self, project: &Path) -> bool {
        if self.uncommitted_views(project).next().is_none() {
            return false;
        }
        for view in self.uncommitted_views(project) {
            view.set_pending(true);
        }
        let project = project.to_path_buf();
        let shows = self.uncommitted_shows(&project);
        let Some(generation) = self.reviews.project_asked(&project) else {
            return shows;
        };
        let ssh = self.launcher.ssh.clone();
        self.launcher.jobs.blocking(move || {
            let inputs = match crate::remote::Remote::of(&project) {
                Some(remote) => super::remote_changes::remote_inputs(&remote, &ssh),
                None => uncommitted_inputs(&project),
            };
            let result = inputs.map(|(inputs, against)| {
                let files = inputs.into_iter().map(DiffInput::diff).collect();
                (files, against.name)
            });
            JobDone::UncommittedDiffed {
                project,
                generation,
                result,
            }
        });
        shows
    }

    /// `project`'s uncommitted changes were diffed: its panes show them, unless newer ones
    /// were asked for since.
    pub(super) fn uncommitted_diffed(
        &mut self,
        project: PathBuf,
        generation: u64,
        result: Result<(Vec<FileDiff>, String), String>,
    ) -> bool {
        // Asked again while this ran: shown, and diffed once more.
        let Some(again) = self.reviews.project_answered(&project, generation) else {
            return false;
        };
        let title = match &result {
            Ok((_, base)) if base != "HEAD" => {
                format!("changes since {base} · {}", super::project_name(&project))
            }
            _ => self.uncommitted_title(&project),
        };
        for view in self.uncommitted_views(&project) {
            view.set_title(&title);
            view.set_pending(again);
            match &result {
                Ok((files, against)) => {
                    let note = match against.as_str() {
                        "HEAD" => "no uncommitted changes".to_string(),
                        base => format!("no changes since {base}"),
                    };
                    view.set_empty_note(&note);
                    view.set_files(files.clone());
                }
                Err(why) => {
                    view.set_empty_note(why);
                    view.set_files(Vec::new());
                }
            }
        }
        if again {
            self.refresh_uncommitted(&project);
        }
        self.uncommitted_shows(&project)
    }

    fn uncommitted_shows(&self, project: &Path) -> bool {
        self.shows(|p| matches!(p, Pane::Uncommitted { project: p, .. } if p == project))
    }

    /// Has a session of `project` ask its language servers about `path` again.
    pub(super) fn refresh_diagnostics_of(&self, project: &Path, path: &Path) {
        if let Some(slot) = self.sessions.values().find(|s| s.project == project) {
            slot.driver.refresh_diagnostics(vec![path.to_path_buf()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::pane::PaneKind;
    use crate::workspace::test_workspace;

    /// A repository with `a.txt` (twenty lines), `gone.txt` and `old.txt` committed.
    fn repo() -> (tempfile::TempDir, PathBuf) {
        let (dir, root) = crate::workspace::test_repo();
        let run = |args: &[&str]| crate::workspace::git_in(&root, args);
        let ten: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        std::fs::write(root.join("a.txt"), ten).unwrap();
        std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
        std::fs::write(root.join("old.txt"), "moved\n").unwrap();
        run(&["add", "."]);
        run(&["commit", "-qm", "start"]);
        run(&["mv", "old.txt", "new.txt"]);
        (dir, root)
    }

    #[test]
    fn head_texts_come_for_every_file_even_one_with_a_newline_in_its_name() {
        let (_dir, root) = crate::workspace::test_repo();
        let git = |args: &[&str]| crate::workspace::git_in(&root, args);
        for name in ["plain.txt", "two\nlines.txt", "with space.txt"] {
            std::fs::write(root.join(name), format!("old {name}\n")).unwrap();
        }
        git(&["add", "."]);
        git(&["commit", "-qm", "one"]);
        for name in ["plain.txt", "two\nlines.txt", "with space.txt"] {
            std::fs::write(root.join(name), "new\n").unwrap();
        }
        let mut inputs = uncommitted_inputs(&root).unwrap().0;
        inputs.sort_by(|a, b| a.shown.cmp(&b.shown));
        let befores: Vec<(&str, Option<&str>)> = inputs
            .iter()
            .map(|i| (i.shown.as_str(), i.before.as_deref()))
            .collect();
        assert_eq!(
            befores,
            [
                ("plain.txt", Some("old plain.txt\n")),
                ("two\nlines.txt", Some("old two\nlines.txt\n")),
                ("with space.txt", Some("old with space.txt\n")),
            ]
        );
    }

    #[test]
    fn uncommitted_changes_are_listed_against_head() {
        let (_dir, root) = repo();
        let mut text = std::fs::read_to_string(root.join("a.txt")).unwrap();
        text = text
            .replace("line 2\n", "line two\n")
            .replace("line 18\n", "line eighteen\n");
        std::fs::write(root.join("a.txt"), &text).unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/fresh.txt"), "hi\n").unwrap();
        let mut inputs = uncommitted_inputs(&root).unwrap().0;
        inputs.sort_by(|a, b| a.shown.cmp(&b.shown));
        let summary: Vec<(&str, bool, bool)> = inputs
            .iter()
            .map(|i| (i.shown.as_str(), i.before.is_some(), i.after.is_some()))
            .collect();
        assert_eq!(
            summary,
            [
                ("a.txt", true, true),
                ("gone.txt", true, false),
                ("new.txt", true, true),
                ("sub/fresh.txt", false, true),
            ]
        );
        // The renamed file's text in HEAD is the source's.
        let renamed = inputs.iter().find(|i| i.shown == "new.txt").unwrap();
        assert_eq!(renamed.before.as_deref(), Some("moved\n"));

        let plain = tempfile::tempdir().unwrap();
        let err = uncommitted_inputs(plain.path()).unwrap_err();
        assert!(err.starts_with("not a git repository"), "{err}");
    }

    /// The files diff pane `pane` lists.
    fn files(ws: &mut Workspace, pane: PaneId) -> Vec<String> {
        let view = ws.diff_mut(pane).unwrap();
        view.files().iter().map(|f| f.path.clone()).collect()
    }

    #[tokio::test]
    async fn the_pane_shows_and_reverts_uncommitted_changes() {
        use crate::workspace::revert::tests::revert_and_wait as revert;
        let (_dir, root) = repo();
        let head = std::fs::read_to_string(root.join("a.txt")).unwrap();
        let changed = head
            .replace("line 2\n", "line two\n")
            .replace("line 18\n", "line eighteen\n");
        std::fs::write(root.join("a.txt"), &changed).unwrap();
        std::fs::write(root.join("scratch.txt"), "tmp\n").unwrap();
        let (mut ws, mut bus) = test_workspace(&root);
        ws.open_uncommitted_diff();
        let pane = ws.focused();
        bus.settle(&mut ws).await;
        assert_eq!(ws.pane_kind(pane), Some(PaneKind::Uncommitted));
        assert_eq!(ws.focused_project(), root);
        assert_eq!(files(&mut ws, pane), ["a.txt", "new.txt", "scratch.txt"]);
        assert!(ws.diff_mut(pane).unwrap().select_path("a.txt"));
        assert_eq!(
            ws.diff_mut(pane).unwrap().selected().unwrap().hunks.len(),
            2
        );

        // Changed behind the pane's back: refused until it is diffed again.
        std::fs::write(root.join("a.txt"), format!("{changed}more\n")).unwrap();
        let refused = revert(&mut ws, &mut bus, pane, false).await.unwrap_err();
        assert!(refused.contains("changed since it was diffed"), "{refused}");
        std::fs::write(root.join("a.txt"), &changed).unwrap();

        // The first hunk goes back; the second stays.
        assert_eq!(
            revert(&mut ws, &mut bus, pane, false).await.as_deref(),
            Ok("reverted a change in a.txt")
        );
        let now = std::fs::read_to_string(root.join("a.txt")).unwrap();
        assert_eq!(now, head.replace("line 18\n", "line eighteen\n"));
        ws.diff_mut(pane).unwrap().select_path("a.txt");
        assert_eq!(
            revert(&mut ws, &mut bus, pane, true).await.as_deref(),
            Ok("a.txt is as in HEAD again")
        );
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), head);
        assert!(ws.diff_mut(pane).unwrap().select_path("scratch.txt"));
        assert_eq!(
            revert(&mut ws, &mut bus, pane, true).await.as_deref(),
            Ok("deleted scratch.txt, which is not in HEAD")
        );
        assert!(!root.join("scratch.txt").exists());
        assert_eq!(files(&mut ws, pane), ["new.txt"]);
    }

    #[tokio::test]
    async fn asked_again_while_diffing_it_diffs_once_more_not_once_per_ask() {
        let (_dir, root) = repo();
        std::fs::write(root.join("a.txt"), "changed\n").unwrap();
        let (mut ws, mut bus) = test_workspace(&root);
        ws.open_uncommitted_diff();
        let pane = ws.focused();
        // Three more asks while the first diffing runs.
        for _ in 0..3 {
            ws.refresh_uncommitted(&root);
        }
        let mut diffed = 0;
        while ws.jobs_running() > 0 {
            let done = bus.jobs.recv().await.unwrap();
            assert!(
                matches!(done, JobDone::UncommittedDiffed { .. }),
                "{done:?}"
            );
            diffed += 1;
            ws.job_done(done);
        }
        assert_eq!(diffed, 2, "the first diffing and one more");
        assert_eq!(files(&mut ws, pane), ["a.txt", "new.txt"]);
    }
}
