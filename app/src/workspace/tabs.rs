//! The workspace's tabs: each a name, the project its new panes open on, and a layout of
//! pane ids; which one is active; what the status bar calls each.

use std::path::{Path, PathBuf};

use ratatui::layout::Rect;

use super::layout::{Layout, PaneId};

/// One tab: a name, the project its new panes open on, and a layout.
pub struct Tab {
    /// Shown in the status bar: the project's name (numbered there when tabs share it) or
    /// the name the user gave.
    pub name: String,
    /// The user named it (`tab.rename`): shown as it is, never numbered.
    pub renamed: bool,
    /// The project directory new panes of this tab start in.
    pub project: PathBuf,
    /// Its panes.
    pub layout: Layout,
}

impl Tab {
    /// A tab on `project`, named after it, holding `layout`.
    pub fn on(project: PathBuf, layout: Layout) -> Tab {
        Tab {
            name: project_name(&project),
            renamed: false,
            project,
            layout,
        }
    }
}

/// What removing a pane from its tab did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneRemoved {
    /// No tab holds it.
    NotFound,
    /// It left its tab's layout.
    Removed,
    /// It was its tab's last pane: the tab went.
    TabClosed,
    /// It was the last pane of the last tab: nothing is left to show.
    Last,
}

/// The tabs, in order, and the active one. Never without a tab once one is open.
#[derive(Default)]
pub struct Tabs {
    tabs: Vec<Tab>,
    active: usize,
}

impl Tabs {
    /// Opens `tab` after the others, made active.
    pub fn open(&mut self, tab: Tab) {
        self.tabs.push(tab);
        self.active = self.tabs.len() - 1;
    }

    /// The active tab, if there is one yet.
    pub fn get_active(&self) -> Option<&Tab> {
        self.tabs.get(self.active)
    }

    /// The active tab (a workspace always has one).
    pub fn active(&self) -> &Tab {
        &self.tabs[self.active.min(self.tabs.len().saturating_sub(1))]
    }

    /// The active tab, to change.
    pub fn active_mut(&mut self) -> &mut Tab {
        let i = self.active.min(self.tabs.len().saturating_sub(1));
        &mut self.tabs[i]
    }

    /// Which tab is active (from 0).
    pub fn active_index(&self) -> usize {
        self.active
    }

    /// Every tab, in order.
    pub fn all(&self) -> &[Tab] {
        &self.tabs
    }

    /// Makes tab `n` (from 0) active, if there is one.
    pub fn select(&mut self, n: usize) -> bool {
        let there = n < self.tabs.len();
        if there {
            self.active = n;
        }
        there
    }

    /// Makes the next or previous tab active, wrapping.
    pub fn cycle(&mut self, forward: bool) {
        let n = self.tabs.len().max(1);
        self.active = if forward {
            (self.active + 1) % n
        } else {
            (self.active + n - 1) % n
        };
    }

    /// The index of the tab holding pane `id`.
    pub fn holding(&self, id: PaneId) -> Option<usize> {
        self.tabs.iter().position(|t| t.layout.contains(id))
    }

    /// The tab holding pane `id`, to change.
    pub fn holding_mut(&mut self, id: PaneId) -> Option<&mut Tab> {
        self.tabs.iter_mut().find(|t| t.layout.contains(id))
    }

    /// Takes pane `id` out of its tab's layout (laid out in `area`); a tab left without a
    /// pane goes, unless it is the last.
    pub fn remove_pane(&mut self, id: PaneId, area: Rect) -> PaneRemoved {
        let Some(t) = self.holding(id) else {
            return PaneRemoved::NotFound;
        };
        if self.tabs[t].layout.remove(id, area) {
            return PaneRemoved::Removed;
        }
        if self.tabs.len() == 1 {
            return PaneRemoved::Last;
        }
        self.tabs.remove(t);
        if t < self.active {
            self.active -= 1;
        }
        self.active = self.active.min(self.tabs.len() - 1);
        PaneRemoved::TabClosed
    }

    /// What the status bar calls tab `i`: its own name, or its project's with a number
    /// when other tabs not renamed show the same project name (`api 1`, `api 2`).
    pub fn label(&self, i: usize) -> String {
        let Some(tab) = self.tabs.get(i) else {
            return String::new();
        };
        if tab.renamed {
            return tab.name.clone();
        }
        let same = |t: &&Tab| !t.renamed && t.name == tab.name;
        if self.tabs.iter().filter(same).count() < 2 {
            return tab.name.clone();
        }
        let n = self.tabs[..i].iter().filter(same).count() + 1;
        format!("{} {n}", tab.name)
    }

    /// Names the active tab `name`; an empty name gives it back its project's.
    pub fn rename_active(&mut self, name: &str) {
        let name = name.trim();
        let tab = self.active_mut();
        if name.is_empty() {
            tab.name = project_name(&tab.project);
            tab.renamed = false;
        } else {
            tab.name = name.to_string();
            tab.renamed = true;
        }
    }
}

/// The last component of the project path, for titles.
pub fn project_name(cwd: &Path) -> String {
    if let Some(remote) = crate::remote::Remote::of(cwd) {
        return remote.name();
    }
    cwd.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| cwd.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::layout::Axis;

    fn tabs(projects: &[&str]) -> Tabs {
        let mut tabs = Tabs::default();
        for (i, p) in projects.iter().enumerate() {
            tabs.open(Tab::on(
                PathBuf::from(p),
                Layout::new(PaneId(i as u64 * 10)),
            ));
        }
        tabs
    }

    #[test]
    fn tabs_on_one_project_name_are_numbered_unless_renamed() {
        let mut t = tabs(&["/a/api", "/b/api", "/c/web"]);
        let labels = |t: &Tabs| (0..3).map(|i| t.label(i)).collect::<Vec<_>>();
        assert_eq!(labels(&t), ["api 1", "api 2", "web"]);
        t.select(1);
        t.rename_active("  backend ");
        assert_eq!(labels(&t), ["api", "backend", "web"]);
        t.rename_active("");
        assert_eq!(labels(&t), ["api 1", "api 2", "web"]);
        assert_eq!(t.label(9), "");
    }

    #[test]
    fn removing_a_tabs_last_pane_closes_it_and_keeps_the_active_one() {
        let mut t = tabs(&["/a", "/b", "/c"]);
        t.active_mut().layout.split(Axis::Horizontal, PaneId(21));
        assert_eq!(t.active_index(), 2);
        let area = Rect::new(0, 0, 80, 24);
        assert_eq!(t.remove_pane(PaneId(21), area), PaneRemoved::Removed);
        // A tab before the active one goes: the active one stays active.
        assert_eq!(t.remove_pane(PaneId(0), area), PaneRemoved::TabClosed);
        assert_eq!(t.active().project, PathBuf::from("/c"));
        assert_eq!(t.remove_pane(PaneId(99), area), PaneRemoved::NotFound);
        assert_eq!(t.remove_pane(PaneId(20), area), PaneRemoved::TabClosed);
        assert_eq!(t.active().project, PathBuf::from("/b"));
        assert_eq!(t.remove_pane(PaneId(10), area), PaneRemoved::Last);
        assert_eq!(t.all().len(), 1);
    }

    #[test]
    fn cycling_wraps_and_selecting_past_the_end_does_nothing() {
        let mut t = tabs(&["/a", "/b"]);
        t.cycle(true);
        assert_eq!(t.active_index(), 0);
        t.cycle(false);
        assert_eq!(t.active_index(), 1);
        assert!(!t.select(2));
        assert_eq!(t.active_index(), 1);
        assert_eq!(t.holding(PaneId(10)), Some(1));
    }
}
