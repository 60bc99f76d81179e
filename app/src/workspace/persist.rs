//! Workspace persistence: the layout of every tab, which session each pane shows and the
//! projects they run in, saved under the data dir whenever it changes (written to a
//! temporary file and renamed over the old one) and restored when `march` opens on the
//! same directories.
//!
//! One file per workspace, named after its directories. A lock held for the life of the
//! process keeps a second `march` on the same workspace from writing it; a file that cannot
//! be read back is moved aside and reported, never fatal.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use march_core::atomic_file::{FileMode, write_file};
use serde::{Deserialize, Serialize};

use super::layout::{Layout, PaneId};

/// The format written. Version 1 files (agent and shell panes only) are read too; a file
/// with another version is set aside.
const FORMAT_VERSION: u32 = 2;

/// A workspace as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedWorkspace {
    /// The format version.
    pub version: u32,
    /// The directories `march` was opened on.
    pub dirs: Vec<PathBuf>,
    /// The active tab.
    pub active: usize,
    /// The tabs in order.
    pub tabs: Vec<SavedTab>,
    /// What each pane shows, by pane id.
    #[serde(deserialize_with = "read_panes")]
    pub panes: BTreeMap<u64, SavedPane>,
    /// The agent last chosen for a new pane, by project (absent: the workspace's own).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agent_choices: BTreeMap<PathBuf, String>,
}

/// A tab as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedTab {
    /// Its name.
    pub name: String,
    /// The user gave the name (else it is the project's).
    #[serde(default)]
    pub renamed: bool,
    /// The project its new panes open on.
    pub project: PathBuf,
    /// Its layout (pane ids are the keys of [`SavedWorkspace::panes`]).
    pub layout: Layout,
}

/// A pane as saved: what it shows, and enough to show it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SavedPane {
    /// An agent pane: the session in its project (its id once the agent gave one).
    Agent {
        /// The session's project directory.
        project: PathBuf,
        /// The agent's session id.
        session: Option<String>,
        /// The configured agent it runs, when not the workspace's own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        /// What was typed in its prompt and not sent.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        draft: String,
    },
    /// A shell pane, restored as a new shell where the old one last was.
    Shell {
        /// Its project.
        project: PathBuf,
        /// The directory its shell was last in.
        cwd: PathBuf,
    },
    /// The commands of a session (the commands themselves end with their runner).
    Commands {
        /// The session's project directory.
        project: PathBuf,
        /// The agent's session id.
        session: Option<String>,
    },
    /// The changes of a session.
    Diff {
        /// The session's project directory.
        project: PathBuf,
        /// The agent's session id.
        session: Option<String>,
    },
    /// A project's uncommitted changes.
    Uncommitted {
        /// The project.
        project: PathBuf,
    },
    /// A project's diagnostics.
    Diagnostics {
        /// The project.
        project: PathBuf,
    },
}

/// A pane as files hold it: this version's, or version 1's (no kind: a shell when it has a
/// directory, else an agent pane).
#[derive(Deserialize)]
#[serde(untagged)]
enum FilePane {
    Now(SavedPane),
    Version1 {
        project: PathBuf,
        session: Option<String>,
        #[serde(default)]
        shell_cwd: Option<PathBuf>,
    },
}

fn read_panes<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<u64, SavedPane>, D::Error> {
    let panes = BTreeMap::<u64, FilePane>::deserialize(d)?;
    Ok(panes
        .into_iter()
        .map(|(id, pane)| {
            let pane = match pane {
                FilePane::Now(pane) => pane,
                FilePane::Version1 {
                    project,
                    shell_cwd: Some(cwd),
                    ..
                } => SavedPane::Shell { project, cwd },
                FilePane::Version1 {
                    project, session, ..
                } => SavedPane::Agent {
                    project,
                    session,
                    agent: None,
                    draft: String::new(),
                },
            };
            (id, pane)
        })
        .collect())
}

impl SavedWorkspace {
    /// A new saved workspace in the current format.
    pub fn new(dirs: Vec<PathBuf>) -> Self {
        SavedWorkspace {
            version: FORMAT_VERSION,
            dirs,
            active: 0,
            tabs: Vec::new(),
            panes: BTreeMap::new(),
            agent_choices: BTreeMap::new(),
        }
    }

    /// Why this cannot be restored, if it cannot: every pane of every layout described,
    /// at least one tab, the active one among them.
    fn check(&self) -> Result<(), String> {
        if !(1..=FORMAT_VERSION).contains(&self.version) {
            return Err(format!(
                "format version {} (this March writes {FORMAT_VERSION})",
                self.version
            ));
        }
        if self.tabs.is_empty() {
            return Err("no tabs".to_string());
        }
        if self.active >= self.tabs.len() {
            return Err(format!(
                "active tab {} of {}",
                self.active + 1,
                self.tabs.len()
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for tab in &self.tabs {
            for PaneId(id) in tab.layout.panes() {
                if !self.panes.contains_key(&id) {
                    return Err(format!("pane {id} of tab {:?} is not described", tab.name));
                }
                if !seen.insert(id) {
                    return Err(format!("pane {id} is in two places"));
                }
            }
            if !tab.layout.contains(tab.layout.focused()) {
                return Err(format!(
                    "tab {:?} focuses a pane it does not hold",
                    tab.name
                ));
            }
        }
        Ok(())
    }
}

/// What was found when the store was opened.
#[derive(Debug)]
pub enum Loaded {
    /// Nothing saved for these directories.
    Fresh,
    /// The saved workspace.
    Restored(SavedWorkspace),
    /// The file could not be used; it was moved to `moved_to`.
    Damaged {
        /// Why.
        reason: String,
        /// Where the file is now.
        moved_to: PathBuf,
    },
}

/// Why the store could not be opened.
#[derive(Debug)]
pub enum StoreError {
    /// Another `march` has this workspace open.
    Busy,
    /// The directory or lock file could not be made.
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Busy => write!(
                f,
                "another march has this workspace open; this one will not save its layout"
            ),
            StoreError::Io(path, e) => write!(f, "cannot use {}: {e}", path.display()),
        }
    }
}

/// How often and how long opening a store tries a lock that is held.
const LOCK_TRIES: u32 = 50;
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(10);

/// The saved workspace of one set of directories, locked while open.
#[derive(Debug)]
pub struct WorkspaceStore {
    path: PathBuf,
    /// Held (locked) for the life of the store.
    _lock: File,
    /// What was last handed to be written, to write only changes.
    last: Option<Vec<u8>>,
    /// Writes the file off the loop (a write syncs the file and its directory).
    writer: Option<Writer>,
}

/// A thread writing the states it is handed to the workspace file, in order, skipping any
/// that a newer one replaced before it got to it.
#[derive(Debug)]
struct Writer {
    states: std::sync::mpsc::Sender<Vec<u8>>,
    /// Why the last write failed, until the next save says so.
    failed: std::sync::Arc<parking_lot::Mutex<Option<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    /// Starts writing to `path`; `None` when no thread can be started (saves are then
    /// written where they are asked for).
    fn start(path: PathBuf) -> Option<Writer> {
        let (states, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let failed = std::sync::Arc::new(parking_lot::Mutex::new(None));
        let failure = failed.clone();
        let thread = std::thread::Builder::new()
            .name("march-save".to_string())
            .spawn(move || {
                while let Ok(mut bytes) = rx.recv() {
                    while let Ok(newer) = rx.try_recv() {
                        bytes = newer;
                    }
                    if let Err(e) = write_file(&path, &bytes, FileMode::Kept) {
                        tracing::warn!(
                            "cannot save the workspace to {}: {}",
                            path.display(),
                            e.error
                        );
                        *failure.lock() = Some(e.error.to_string());
                    }
                }
            });
        match thread {
            Ok(thread) => Some(Writer {
                states,
                failed,
                thread: Some(thread),
            }),
            Err(e) => {
                tracing::warn!("cannot start the workspace writer: {e}");
                None
            }
        }
    }
}

impl Drop for WorkspaceStore {
    /// What was handed to be written is on disk before the lock goes.
    fn drop(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            drop(writer.states);
            if let Some(thread) = writer.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

impl WorkspaceStore {
    /// The store for `dirs` under `data_dir`, and what it holds; `fresh` ignores (and
    /// will overwrite) what was saved.
    pub fn open(
        data_dir: &Path,
        dirs: &[PathBuf],
        fresh: bool,
    ) -> Result<(Self, Loaded), StoreError> {
        let dir = data_dir.join("workspaces");
        fs::create_dir_all(&dir).map_err(|e| StoreError::Io(dir.clone(), e))?;
        let path = dir.join(file_name(dirs));
        let lock_path = path.with_extension("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| StoreError::Io(lock_path.clone(), e))?;
        // Briefly busy is not busy: a process that just forked (a shell, a runner) holds a
        // copy of a lock being let go until its exec, and a server that is ending lets go
        // of it an instant after its successor starts.
        let mut tries = 0;
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(fs::TryLockError::WouldBlock) if tries < LOCK_TRIES => {
                    tries += 1;
                    std::thread::sleep(LOCK_RETRY);
                }
                Err(fs::TryLockError::WouldBlock) => return Err(StoreError::Busy),
                Err(fs::TryLockError::Error(e)) => return Err(StoreError::Io(lock_path, e)),
            }
        }
        let mut store = WorkspaceStore {
            writer: Writer::start(path.clone()),
            path,
            _lock: lock,
            last: None,
        };
        let loaded = if fresh { Loaded::Fresh } else { store.load() };
        Ok((store, loaded))
    }

    /// Where the workspace is saved.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn load(&mut self) -> Loaded {
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Loaded::Fresh,
            Err(e) => return self.set_aside(format!("cannot read it: {e}")),
        };
        let saved: SavedWorkspace = match serde_json::from_slice(&bytes) {
            Ok(saved) => saved,
            Err(e) => return self.set_aside(format!("it is not a workspace file: {e}")),
        };
        if let Err(reason) = saved.check() {
            return self.set_aside(reason);
        }
        self.last = Some(bytes);
        Loaded::Restored(saved)
    }

    /// Moves the file to `<name>.damaged-<n>` so a fresh one can be written.
    fn set_aside(&self, reason: String) -> Loaded {
        let mut n = 1;
        let moved_to = loop {
            let candidate = self.path.with_extension(format!("damaged-{n}.json"));
            if !candidate.exists() {
                break candidate;
            }
            n += 1;
        };
        if let Err(e) = fs::rename(&self.path, &moved_to) {
            tracing::warn!("cannot move {} aside: {e}", self.path.display());
        }
        tracing::warn!(file = %self.path.display(), %reason, "workspace file set aside");
        Loaded::Damaged { reason, moved_to }
    }

    /// Has `saved` written when it differs from what was last, off the loop and atomically
    /// (a crash leaves the old file or the new); whether it differed. An earlier write that
    /// failed is the error (and the next save writes again).
    pub fn save(&mut self, saved: &SavedWorkspace) -> io::Result<bool> {
        let failed = self.writer.as_ref().and_then(|w| w.failed.lock().take());
        if let Some(why) = failed {
            self.last = None;
            return Err(io::Error::other(why));
        }
        let bytes = serde_json::to_vec_pretty(saved).map_err(io::Error::other)?;
        if self.last.as_deref() == Some(&bytes[..]) {
            return Ok(false);
        }
        let unsent = match &self.writer {
            Some(writer) => writer.states.send(bytes.clone()).err().map(|e| e.0),
            None => Some(bytes.clone()),
        };
        if let Some(bytes) = unsent {
            write_file(&self.path, &bytes, FileMode::Kept).map_err(|e| e.error)?;
        }
        self.last = Some(bytes);
        Ok(true)
    }
}

#[cfg(test)]
impl WorkspaceStore {
    /// Waits until what was handed to be written is written (tests only).
    fn settle(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            drop(writer.states);
            if let Some(thread) = writer.thread.take() {
                thread.join().unwrap();
            }
            let next = Writer::start(self.path.clone()).unwrap();
            *next.failed.lock() = writer.failed.lock().take();
            self.writer = Some(next);
        }
    }
}

/// `<last dir name>-<16 hex digits>.json`: readable, and unique per set of directories.
fn file_name(dirs: &[PathBuf]) -> String {
    format!("{}.json", file_stem(dirs))
}

/// `<last dir name>-<16 hex digits>`: readable, and unique per set of directories (FNV-1a
/// of their paths; stable across builds, unlike std's hasher), for files kept per project.
pub(super) fn file_stem(dirs: &[PathBuf]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for dir in dirs {
        for byte in dir.as_os_str().as_encoded_bytes().iter().chain([&0u8]) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    let name: String = dirs
        .first()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_string())
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{hash:016x}")
}

/// The projects of saved workspaces, most recently saved first: for the open-project
/// picker. Unreadable files are passed over.
pub fn recent_projects(data_dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = fs::read_dir(data_dir.join("workspaces")) else {
        return Vec::new();
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = read
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let mut out: Vec<PathBuf> = Vec::new();
    for (_, file) in files {
        let Some(saved) = fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice::<SavedWorkspace>(&b).ok())
        else {
            continue;
        };
        for dir in saved
            .dirs
            .into_iter()
            .chain(saved.tabs.into_iter().map(|t| t.project))
        {
            if !out.contains(&dir) {
                out.push(dir);
            }
        }
    }
    out
}

/// Directories beside `near` the project picker lists at most.
const NEARBY_MAX: usize = 200;

/// What the project picker offers: the projects of saved workspaces under `data_dir` that
/// are still there, and the directories beside `near` (not hidden ones), sorted.
pub fn list_projects(data_dir: &Path, near: &Path) -> super::jobs::ProjectsListed {
    let recent = recent_projects(data_dir)
        .into_iter()
        .filter(|d| d.is_dir())
        .collect();
    let mut nearby: Vec<PathBuf> = near
        .parent()
        .and_then(|parent| fs::read_dir(parent).ok())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .take(NEARBY_MAX)
        .collect();
    nearby.sort();
    super::jobs::ProjectsListed { recent, nearby }
}

impl super::Workspace {
    /// The workspace as saved for `dirs`: tabs, layouts, and what each pane shows (a pane
    /// with nothing left to show is left out of its layout).
    pub fn saved(&self, dirs: &[PathBuf]) -> SavedWorkspace {
        let mut saved = SavedWorkspace::new(dirs.to_vec());
        for (i, t) in self.tabs.all().iter().enumerate() {
            let mut layout = t.layout.clone();
            let mut empty = false;
            for pane in t.layout.panes() {
                match self.saved_pane(pane) {
                    Some(what) => {
                        saved.panes.insert(pane.0, what);
                    }
                    None => empty |= !layout.remove(pane, ratatui::layout::Rect::default()),
                }
            }
            if empty {
                continue;
            }
            if i == self.tabs.active_index() {
                saved.active = saved.tabs.len();
            }
            saved.tabs.push(SavedTab {
                name: t.name.clone(),
                renamed: t.renamed,
                project: t.project.clone(),
                layout,
            });
        }
        saved.agent_choices = self.agent_choices.clone();
        saved
    }

    /// The workspace `saved` describes: its tabs and layouts, each pane's session
    /// reloaded from its agent (or a new one where none was open yet).
    pub fn restore(launcher: super::AgentLauncher, saved: SavedWorkspace) -> Self {
        let mut ws = super::Workspace::empty(launcher);
        ws.agent_choices = saved.agent_choices;
        // New panes get ids above the restored ones.
        ws.next_id = saved.panes.keys().max().map_or(1, |max| max + 1);
        for mut tab in saved.tabs {
            // The panes that follow a session last: the session may be in a later pane.
            let (follow, own): (Vec<PaneId>, Vec<PaneId>) =
                tab.layout.panes().into_iter().partition(|p| {
                    matches!(
                        saved.panes.get(&p.0),
                        Some(SavedPane::Commands { .. } | SavedPane::Diff { .. })
                    )
                });
            for pane in own.into_iter().chain(follow) {
                let restored = saved
                    .panes
                    .get(&pane.0)
                    .is_some_and(|what| ws.restore_pane(pane, what));
                if !restored {
                    // Nothing to show there: the layout closes it.
                    tab.layout.remove(pane, ratatui::layout::Rect::default());
                }
            }
            ws.tabs.open(super::Tab {
                name: tab.name,
                renamed: tab.renamed,
                project: tab.project,
                layout: tab.layout,
            });
        }
        ws.tabs
            .select(saved.active.min(ws.tabs.all().len().saturating_sub(1)));
        ws
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(dirs: &[PathBuf]) -> SavedWorkspace {
        let mut saved = SavedWorkspace::new(dirs.to_vec());
        let mut layout = Layout::new(PaneId(1));
        layout.split(super::super::layout::Axis::Horizontal, PaneId(2));
        saved.tabs.push(SavedTab {
            name: "api".into(),
            renamed: true,
            project: dirs[0].clone(),
            layout,
        });
        for id in [1, 2] {
            saved.panes.insert(
                id,
                SavedPane::Agent {
                    project: dirs[0].clone(),
                    session: Some(format!("s{id}")),
                    agent: (id == 2).then(|| "claude".to_string()),
                    draft: if id == 1 {
                        "half typed".to_string()
                    } else {
                        String::new()
                    },
                },
            );
        }
        saved
    }

    #[test]
    fn saves_on_change_only_and_restores() {
        let home = tempfile::tempdir().unwrap();
        let dirs = vec![PathBuf::from("/work/api")];
        let saved = sample(&dirs);
        {
            let (mut store, loaded) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
            assert!(matches!(loaded, Loaded::Fresh));
            assert!(store.save(&saved).unwrap());
            assert!(!store.save(&saved).unwrap(), "unchanged: not written again");
        }
        let (_store, loaded) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
        match loaded {
            Loaded::Restored(back) => assert_eq!(back, saved),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn version_1_files_are_read_as_agent_and_shell_panes() {
        let home = tempfile::tempdir().unwrap();
        let dirs = vec![PathBuf::from("/work/api")];
        let path = {
            let (store, _) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
            store.path().to_path_buf()
        };
        // As version 1 wrote it: panes without a kind, a shell known by its directory.
        let mut v1 = serde_json::to_value(sample(&dirs)).unwrap();
        v1["version"] = 1.into();
        v1["panes"] = serde_json::json!({
            "1": {"project": "/work/api", "session": "s1"},
            "2": {"project": "/work/api", "session": null, "shell_cwd": "/work/api/src"},
        });
        fs::write(&path, v1.to_string()).unwrap();
        let (_store, loaded) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
        let Loaded::Restored(back) = loaded else {
            panic!("{loaded:?}");
        };
        assert_eq!(
            back.panes[&1],
            SavedPane::Agent {
                project: dirs[0].clone(),
                session: Some("s1".into()),
                agent: None,
                draft: String::new(),
            }
        );
        assert_eq!(
            back.panes[&2],
            SavedPane::Shell {
                project: dirs[0].clone(),
                cwd: PathBuf::from("/work/api/src")
            }
        );
    }

    #[test]
    fn writes_happen_off_the_caller_and_a_failed_one_is_said_and_retried() {
        let home = tempfile::tempdir().unwrap();
        let dirs = vec![PathBuf::from("/work/api")];
        let (mut store, _) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
        let mut saved = sample(&dirs);
        assert!(store.save(&saved).unwrap());
        store.settle();
        let on_disk: SavedWorkspace =
            serde_json::from_slice(&fs::read(store.path()).unwrap()).unwrap();
        assert_eq!(on_disk, saved);
        // A directory where the file goes: the write fails, the next save says so, and the
        // one after writes again (the same state included).
        fs::remove_file(store.path()).unwrap();
        fs::create_dir(store.path()).unwrap();
        saved.active = 0;
        saved.tabs[0].name = "renamed".into();
        assert!(store.save(&saved).unwrap());
        store.settle();
        let err = store.save(&saved).unwrap_err();
        assert!(!err.to_string().is_empty());
        fs::remove_dir(store.path()).unwrap();
        assert!(
            store.save(&saved).unwrap(),
            "written again after the failure"
        );
        store.settle();
        let on_disk: SavedWorkspace =
            serde_json::from_slice(&fs::read(store.path()).unwrap()).unwrap();
        assert_eq!(on_disk.tabs[0].name, "renamed");
    }

    #[test]
    fn a_second_store_on_the_same_workspace_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let dirs = vec![PathBuf::from("/work/api")];
        let (_first, _) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
        let second = WorkspaceStore::open(home.path(), &dirs, false).unwrap_err();
        assert!(matches!(second, StoreError::Busy));
        assert!(second.to_string().contains("another march"));
        // Other directories are another workspace.
        WorkspaceStore::open(home.path(), &[PathBuf::from("/work/web")], false).unwrap();
    }

    #[test]
    fn damaged_files_are_set_aside_and_reported() {
        let home = tempfile::tempdir().unwrap();
        let dirs = vec![PathBuf::from("/work/api")];
        let path = {
            let (store, _) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
            store.path().to_path_buf()
        };
        let mut broken = sample(&dirs);
        broken.panes.remove(&2);
        for (content, why) in [
            ("{ not json".to_string(), "not a workspace file"),
            (serde_json::to_string(&broken).unwrap(), "pane 2"),
        ] {
            fs::write(&path, &content).unwrap();
            let (_store, loaded) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
            match loaded {
                Loaded::Damaged { reason, moved_to } => {
                    assert!(reason.contains(why), "{reason}");
                    assert_eq!(fs::read_to_string(&moved_to).unwrap(), content);
                    assert!(!path.exists());
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn fresh_ignores_what_was_saved() {
        let home = tempfile::tempdir().unwrap();
        let dirs = vec![PathBuf::from("/work/api")];
        {
            let (mut store, _) = WorkspaceStore::open(home.path(), &dirs, false).unwrap();
            store.save(&sample(&dirs)).unwrap();
        }
        let (_store, loaded) = WorkspaceStore::open(home.path(), &dirs, true).unwrap();
        assert!(matches!(loaded, Loaded::Fresh));
    }

    #[test]
    fn file_names_are_readable_and_distinct() {
        let a = file_name(&[PathBuf::from("/work/my project")]);
        let b = file_name(&[PathBuf::from("/other/my project")]);
        assert!(a.starts_with("my_project-") && a.ends_with(".json"), "{a}");
        assert_ne!(a, b);
    }
}
