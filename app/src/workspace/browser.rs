//! The browser daemon as the supervisor view shows it: asked off the UI loop when the view
//! opens and after each turn, never started for it.

use march_core::paths::MarchPaths;
use march_runner::browser::Status;

use super::jobs::{JobDone, Jobs};

/// What is known of the user's browser daemon.
#[derive(Debug, Default)]
pub struct BrowserDaemon {
    /// The last answer: `None` while the daemon does not run (or was never asked).
    status: Option<Status>,
    /// An ask is out; another is not sent until it is back.
    asking: bool,
}

impl BrowserDaemon {
    /// Ask the daemon how it is, off the loop.
    pub fn refresh(&mut self, jobs: &Jobs, paths: Option<&MarchPaths>) {
        let Some(paths) = paths.cloned() else {
            return;
        };
        if self.asking {
            return;
        }
        self.asking = true;
        jobs.spawn(async move {
            JobDone::BrowserStatus(march_runner::browser::browser_status(&paths).await)
        });
    }

    /// An answer came back; whether what is shown changed.
    pub fn answered(&mut self, answer: Result<Option<Status>, String>) -> bool {
        self.asking = false;
        let status = answer.unwrap_or_else(|e| {
            tracing::warn!("browser daemon status: {e}");
            None
        });
        let changed = self.status != status;
        self.status = status;
        changed
    }

    /// The daemon's state, when it runs.
    pub fn status(&self) -> Option<&Status> {
        self.status.as_ref()
    }
}
