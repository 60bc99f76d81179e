//! The daemons beside the workspace as the supervisor view shows them (the browser daemon,
//! the memory server and the remote memory, the gateway): asked off the UI loop when the view opens and
//! after each turn, never started for it.

use march_core::paths::MarchPaths;
use march_runner::browser::Status;
use march_runner::memory_server::MemoryStatus;

use super::jobs::{JobDone, Jobs};

/// The last answer of a daemon asked off the loop.
#[derive(Debug)]
pub struct Asked<T> {
    /// The last answer: `None` while it does not run (or was never asked).
    status: Option<T>,
    /// An ask is out; another is not sent until it is back.
    asking: bool,
}

impl<T> Default for Asked<T> {
    fn default() -> Self {
        Asked {
            status: None,
            asking: false,
        }
    }
}

impl<T: PartialEq> Asked<T> {
    /// Whether to send an ask now (none is out); marks one out.
    fn start(&mut self) -> bool {
        !std::mem::replace(&mut self.asking, true)
    }

    /// An answer came back; whether what is shown changed.
    fn answered(&mut self, what: &str, answer: Result<Option<T>, String>) -> bool {
        self.asking = false;
        let status = answer.unwrap_or_else(|e| {
            tracing::warn!("{what} status: {e}");
            None
        });
        let changed = self.status != status;
        self.status = status;
        changed
    }

    /// Its state, when it runs.
    pub fn status(&self) -> Option<&T> {
        self.status.as_ref()
    }
}

/// What is known of the daemons.
#[derive(Debug, Default)]
pub struct Daemons {
    /// The user's browser daemon.
    pub browser: Asked<Status>,
    /// This machine's memory server and the remote memory.
    pub memory: Asked<MemoryStatus>,
    /// The gateway beside the workspace.
    pub gateway: Asked<march_gateway::GatewayStatus>,
}

impl Daemons {
    /// Ask each daemon how it is, off the loop.
    pub fn refresh(&mut self, jobs: &Jobs, paths: Option<&MarchPaths>) {
        let Some(paths) = paths else {
            return;
        };
        if self.browser.start() {
            let paths = paths.clone();
            jobs.spawn(async move {
                JobDone::BrowserStatus(march_runner::browser::browser_status(&paths).await)
            });
        }
        if self.memory.start() {
            let paths = paths.clone();
            jobs.spawn(async move {
                let status = march_runner::memory_server::memory_status(&paths).await;
                // Nothing to show when neither runs nor is configured.
                JobDone::MemoryStatus(status.map(|s| (!s.is_empty()).then_some(s)))
            });
        }
        if self.gateway.start() {
            let dir = march_gateway::gateway_dir(&paths.data_dir);
            jobs.spawn(
                async move { JobDone::GatewayStatus(Ok(march_gateway::status(&dir).await)) },
            );
        }
    }

    /// The browser daemon answered; whether what is shown changed.
    pub fn browser_answered(&mut self, answer: Result<Option<Status>, String>) -> bool {
        self.browser.answered("browser daemon", answer)
    }

    /// The gateway's status came back; whether what is shown changed.
    pub fn gateway_answered(
        &mut self,
        answer: Result<Option<march_gateway::GatewayStatus>, String>,
    ) -> bool {
        self.gateway.answered("gateway", answer)
    }

    /// The memory status came back; whether what is shown changed.
    pub fn memory_answered(&mut self, answer: Result<Option<MemoryStatus>, String>) -> bool {
        self.memory.answered("memory server", answer)
    }
}
