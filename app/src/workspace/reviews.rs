//! The bookkeeping behind the review panes (diffs, uncommitted changes, diagnostics): which
//! diffing each session's and each project's panes wait for, so that only the latest asked
//! is shown and one diffing of a project runs at a time, and what each project's language
//! servers reported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::diagnostics::ProjectDiagnostics;
use super::router::SessionKey;

/// Diffings waited for and diagnostics known.
#[derive(Default)]
pub struct Reviews {
    /// The last generation handed out (shared by sessions and projects).
    generation: u64,
    /// Per session, the diffing of its changes its panes wait for.
    sessions: BTreeMap<SessionKey, u64>,
    /// Per project, the diffing of its uncommitted changes running.
    projects: BTreeMap<PathBuf, u64>,
    /// Projects asked for again while being diffed.
    again: BTreeSet<PathBuf>,
    /// What each project's language servers report.
    diagnostics: BTreeMap<PathBuf, ProjectDiagnostics>,
}

impl Reviews {
    /// A diffing of session `key`'s changes starts: its generation. A result of an earlier
    /// one is dropped when it comes.
    pub fn session_asked(&mut self, key: SessionKey) -> u64 {
        self.generation += 1;
        self.sessions.insert(key, self.generation);
        self.generation
    }

    /// Session `key`'s diffing `generation` came back: whether it is the one waited for
    /// (then it is waited for no more).
    pub fn session_answered(&mut self, key: SessionKey, generation: u64) -> bool {
        let current = self.sessions.get(&key) == Some(&generation);
        if current {
            self.sessions.remove(&key);
        }
        current
    }

    /// A diffing of `project`'s uncommitted changes is asked for: its generation, or `None`
    /// when one runs already (it then runs once more when that one is done).
    pub fn project_asked(&mut self, project: &Path) -> Option<u64> {
        if self.projects.contains_key(project) {
            self.again.insert(project.to_path_buf());
            return None;
        }
        self.generation += 1;
        self.projects.insert(project.to_path_buf(), self.generation);
        Some(self.generation)
    }

    /// `project`'s diffing `generation` came back: `None` when it is not the one running;
    /// else whether it was asked for again meanwhile (and so must run once more).
    pub fn project_answered(&mut self, project: &Path, generation: u64) -> Option<bool> {
        if self.projects.get(project) != Some(&generation) {
            return None;
        }
        self.projects.remove(project);
        Some(self.again.remove(project))
    }

    /// What `project`'s language servers reported, if anything.
    pub fn diagnostics(&self, project: &Path) -> Option<&ProjectDiagnostics> {
        self.diagnostics.get(project)
    }

    /// What `project`'s language servers reported, to add to.
    pub fn diagnostics_of(&mut self, project: &Path) -> &mut ProjectDiagnostics {
        self.diagnostics.entry(project.to_path_buf()).or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_latest_diffing_of_a_session_is_shown() {
        let mut r = Reviews::default();
        let (a, b) = (SessionKey(1), SessionKey(2));
        let first = r.session_asked(a);
        let second = r.session_asked(a);
        let other = r.session_asked(b);
        assert!(!r.session_answered(a, first), "asked again since");
        assert!(r.session_answered(a, second));
        assert!(!r.session_answered(a, second), "answered once");
        assert!(r.session_answered(b, other));
    }

    #[test]
    fn a_project_is_diffed_once_at_a_time_and_once_more_if_asked_meanwhile() {
        let mut r = Reviews::default();
        let p = Path::new("/work/p");
        let running = r.project_asked(p).unwrap();
        assert_eq!(r.project_asked(p), None);
        assert_eq!(r.project_asked(p), None, "asked twice: still once more");
        assert_eq!(
            r.project_answered(p, running + 7),
            None,
            "not the one running"
        );
        assert_eq!(r.project_answered(p, running), Some(true));
        let again = r.project_asked(p).unwrap();
        assert_eq!(r.project_answered(p, again), Some(false));
        assert_eq!(r.project_answered(p, again), None);
    }
}
