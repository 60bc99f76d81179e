//! The project's files for `@` mentions: listed off the loop (`file_walk`), kept per
//! project for a few seconds so panes typing `@` at once share one listing, and handed to every agent pane
//! of the project.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use march_panes::agent::ProjectFiles;

use super::file_walk::list;

use super::Workspace;
use super::jobs::JobDone;
use super::router::SessionKey;

/// A listing younger than this is given as it is.
const FRESH: Duration = Duration::from_secs(10);
/// Listings per project, and the ones under way.
#[derive(Default)]
pub struct FileLists {
    lists: HashMap<PathBuf, (Instant, ProjectFiles)>,
    listing: HashSet<PathBuf>,
}

impl Workspace {
    /// Session `key`'s `@` popup wants its project's files: given at once when a recent
    /// listing exists, else listed off the loop.
    pub(super) fn list_files(&mut self, key: SessionKey) {
        let Some(project) = self.sessions.get(&key).map(|s| s.project.clone()) else {
            return;
        };
        if let Some((at, files)) = self.file_lists.lists.get(&project)
            && at.elapsed() < FRESH
        {
            let files = files.clone();
            if let Some(slot) = self.sessions.get_mut(&key) {
                slot.view.set_files(files);
            }
            return;
        }
        if !self.file_lists.listing.insert(project.clone()) {
            return;
        }
        self.launcher.jobs.blocking(move || JobDone::FilesListed {
            files: Arc::new(list(&project)),
            project,
        });
    }

    /// A listing of `project` came back: every agent pane of the project gets it.
    pub(super) fn files_listed(&mut self, project: PathBuf, files: ProjectFiles) -> bool {
        self.file_lists.listing.remove(&project);
        for slot in self.sessions.values_mut().filter(|s| s.project == project) {
            slot.view.set_files(files.clone());
        }
        self.file_lists
            .lists
            .insert(project, (Instant::now(), files));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_hidden_and_git_files_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for f in [
            "src/main.rs",
            "src/lib.rs",
            "target/debug/x",
            ".hidden/y",
            ".git/HEAD",
            "a b.txt",
        ] {
            std::fs::create_dir_all(p.join(f).parent().unwrap()).unwrap();
            std::fs::write(p.join(f), "x").unwrap();
        }
        std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
        assert_eq!(list(p), ["a b.txt", "src/", "src/lib.rs", "src/main.rs"]);
    }
}
