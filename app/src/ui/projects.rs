//! The open-project picker: recent projects (from saved workspaces), the focused project's
//! neighbours, or any directory typed as a path; the choice opens in a new tab (or the tab
//! already on it is shown). Its runtime starts only then.

use std::path::{Path, PathBuf};

use crossterm::event::KeyEvent;
use march_panes::switcher::{Switcher, SwitcherEntry, SwitcherKey};
use march_panes::theme::Slot;

use crate::workspace::Workspace;
use crate::workspace::jobs::ProjectsListed;

/// The open picker and the directory behind each entry id.
pub(super) struct ProjectPicker {
    pub(super) view: Switcher,
    dirs: Vec<PathBuf>,
    /// The projects open in tabs (so marked).
    open: Vec<PathBuf>,
    /// Where a relative typed path starts.
    base: PathBuf,
    /// The directory a typed path names, pinned first while it exists.
    typed: Option<PathBuf>,
}

fn entry(id: u64, dir: &Path, state: &str) -> SwitcherEntry {
    let (title, project) = match crate::remote::Remote::of(dir) {
        Some(remote) => (remote.name(), format!("{} over ssh", remote.path)),
        None => (
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| dir.display().to_string()),
            dir.parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ),
    };
    SwitcherEntry {
        id,
        title,
        project,
        glyph: ("▸", Slot::Info),
        state: state.to_string(),
        activity: None,
        preview: None,
        panes: Vec::new(),
        avatar: None,
    }
}

impl ProjectPicker {
    /// Recent projects (those already open marked), then the neighbours of `near`.
    pub(super) fn open(ws: &Workspace, data_dir: &Path, near: &Path) -> Self {
        // What is on disk is listed off the loop and comes in `listed`.
        ws.list_projects(data_dir, near);
        let open: Vec<PathBuf> = ws.tabs().0.iter().map(|t| t.project.clone()).collect();
        // The projects on other machines named in config.toml's [remotes], first.
        let mut dirs = Vec::new();
        let mut entries = Vec::new();
        for (name, project) in ws.remote_projects() {
            let state = if open.contains(project) {
                "open".to_string()
            } else {
                format!("[remotes.{name}]")
            };
            entries.push(entry(dirs.len() as u64, project, &state));
            dirs.push(project.clone());
        }
        let mut view = Switcher::new(entries);
        view.set_title("Open a project");
        view.set_footer(
            " type a name, a path or ssh://HOST/PATH · enter opens it in a tab · esc close",
        );
        ProjectPicker {
            view,
            dirs,
            open,
            base: near.to_path_buf(),
            typed: None,
        }
    }

    /// The projects listed for it: recent ones first, then those nearby.
    pub(super) fn listed(&mut self, listed: ProjectsListed) {
        let mut entries = Vec::new();
        let recent = listed.recent.into_iter().map(|d| (d, "recent"));
        let nearby = listed.nearby.into_iter().map(|d| (d, "nearby"));
        for (dir, state) in recent.chain(nearby) {
            if self.dirs.contains(&dir) {
                continue;
            }
            let state = if self.open.contains(&dir) {
                "open"
            } else {
                state
            };
            entries.push(entry(self.dirs.len() as u64, &dir, state));
            self.dirs.push(dir);
        }
        self.view.extend(entries);
    }

    /// The directory the query names as a path, if it is one.
    fn typed_dir(&self) -> Option<PathBuf> {
        let q = self.view.query().trim();
        if q.starts_with(crate::remote::SCHEME) {
            return crate::remote::Remote::parse(q).ok().map(|r| r.project());
        }
        if !(q.starts_with('/') || q.starts_with('~') || q.starts_with('.')) {
            return None;
        }
        let path = match q.strip_prefix('~') {
            Some(rest) => {
                PathBuf::from(std::env::var_os("HOME")?).join(rest.trim_start_matches('/'))
            }
            None => self.base.join(q),
        };
        let path = path.canonicalize().ok()?;
        path.is_dir().then_some(path)
    }

    /// Handles a key; true when the picker should close.
    pub(super) fn key(&mut self, key: KeyEvent, ws: &mut Workspace) -> bool {
        let outcome = self.view.key(key);
        self.after(outcome, ws)
    }

    /// Inserts pasted text into the query.
    pub(super) fn paste(&mut self, text: &str, ws: &mut Workspace) -> bool {
        let outcome = self.view.paste(text);
        self.after(outcome, ws)
    }

    fn after(&mut self, outcome: SwitcherKey, ws: &mut Workspace) -> bool {
        match outcome {
            SwitcherKey::Ignored => false,
            SwitcherKey::Changed => {
                let typed = self.typed_dir();
                if typed != self.typed {
                    let pinned = typed.as_deref().map(|d| entry(u64::MAX, d, "this path"));
                    self.view.set_pinned(pinned);
                    self.typed = typed;
                }
                false
            }
            SwitcherKey::Closed => true,
            SwitcherKey::Chosen { id, .. } => {
                let dir = if id == u64::MAX {
                    self.typed.clone()
                } else {
                    usize::try_from(id)
                        .ok()
                        .and_then(|i| self.dirs.get(i).cloned())
                };
                if let Some(dir) = dir {
                    ws.open_or_show_project(dir);
                }
                true
            }
        }
    }
}
