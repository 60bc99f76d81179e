//! The browser capability: a per-user daemon (`march browser`) drives a Chromium-family
//! browser over the DevTools protocol (chromiumoxide); sessions reach it through its socket
//! (`crate::daemon`) and see only their own tabs.

pub mod daemon;
mod outline;
pub mod protocol;
pub mod tool;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use march_core::config::BrowserConfig;

use crate::daemon::DaemonClient;

/// How one session reaches the browser daemon.
#[derive(Clone)]
pub struct BrowserAccess {
    /// The daemon (started on first use).
    pub client: Arc<DaemonClient>,
    /// The session the requests act for.
    pub session: String,
}

/// The daemon's socket under the data directory.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    crate::daemon::socket_path(&data_dir.join("browser"), "daemon.sock", "browser")
}

/// The profile of the browser the daemon launches: cookies and logins of its own, never the
/// user's everyday browser's.
pub fn profile_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("browser").join("profile")
}

/// A client of the daemon under `data_dir`, started as `program browser serve`.
pub fn client(data_dir: &Path, program: Option<PathBuf>) -> DaemonClient {
    let start = program.map(|p| (p, vec![OsString::from("browser"), OsString::from("serve")]));
    DaemonClient::new(socket_path(data_dir), start)
}

/// The browser `[browser]` names, else the first Chromium-family browser on PATH; `None`
/// when neither is there (and no browser to connect to is configured).
pub fn find_browser(config: &BrowserConfig) -> Option<PathBuf> {
    if let Some(path) = &config.executable {
        return Some(path.clone());
    }
    let path = std::env::var_os("PATH")?;
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
        "microsoft-edge",
        "brave-browser",
    ] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}
