//! The runner's way to its projects' language servers: one [`HostClient`] per project (the
//! host process is shared with the project's other runners), and `_march/diagnostics`
//! notifications for clients that asked for them in `initialize`.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, Error};
use march_core::config::Config;
use march_core::lsp_config::LspConfig;
use march_core::paths::MarchPaths;
use march_tools::context::LspAccess;
use march_tools::lsp::{HostClient, run_host_process, socket_path};

use crate::diagnostics::{DiagnosticsNotification, RefreshDiagnosticsResponse};

use super::errors;
use super::session::Session;

/// The notification that carries diagnostics and language server notices to the client.
pub(crate) const NOTIFICATION: &str = crate::diagnostics::METHOD;

/// The language server hosts of the projects this runner has sessions in.
pub(crate) struct ProjectServers {
    data_dir: PathBuf,
    /// The program that serves `lsp-host` (this runner's own executable); `None` turns
    /// diagnostics off (a runner embedded in another program).
    host_program: Option<PathBuf>,
    hosts: Mutex<HashMap<PathBuf, Arc<HostClient>>>,
}

impl ProjectServers {
    pub(crate) fn new(paths: &MarchPaths, host_program: Option<PathBuf>) -> Self {
        ProjectServers {
            data_dir: paths.data_dir.clone(),
            host_program,
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// What a session in `cwd` uses for diagnostics; `None` when they are off. The first
    /// session of a project also starts forwarding the project's diagnostics to `forward`.
    pub(crate) fn access(
        &self,
        cwd: &Path,
        config: &Config,
        forward: Option<&ConnectionTo<Client>>,
    ) -> Option<LspAccess> {
        if !config.lsp.enabled {
            return None;
        }
        let program = self.host_program.clone()?;
        let (host, fresh) = {
            let mut hosts = self.hosts.lock();
            match hosts.get(cwd) {
                Some(host) => (host.clone(), false),
                None => {
                    let args: Vec<OsString> = vec!["lsp-host".into(), cwd.as_os_str().to_owned()];
                    let host = Arc::new(HostClient::new(
                        socket_path(&self.data_dir, cwd),
                        Some((program, args)),
                    ));
                    hosts.insert(cwd.to_path_buf(), host.clone());
                    (host, true)
                }
            }
        };
        if fresh && let Some(cx) = forward {
            let mut events = host.subscribe();
            let cx = cx.clone();
            let project = cwd.to_path_buf();
            tokio::spawn(async move {
                while let Some(event) = events.recv().await {
                    let notification = DiagnosticsNotification {
                        project: project.clone(),
                        event,
                    };
                    if cx.send_notification(notification).is_err() {
                        return;
                    }
                }
            });
        }
        Some(LspAccess {
            source: host,
            servers: Arc::new(config.lsp.servers()),
            wait: Duration::from_millis(config.lsp.wait_ms),
        })
    }
}

impl ProjectServers {
    /// Answer `_march/diagnostics/refresh` for `session`: its project checks `paths` again.
    pub(crate) async fn refresh(
        &self,
        session: &Session,
        paths: &[PathBuf],
    ) -> Result<RefreshDiagnosticsResponse, Error> {
        if let Some(path) = paths.iter().find(|p| !p.is_absolute()) {
            return Err(errors::invalid_params(format!(
                "`{}` is not an absolute path",
                path.display()
            )));
        }
        let Some(lsp) = self.access(&session.cwd, &session.config, None) else {
            return Ok(RefreshDiagnosticsResponse { files: Vec::new() });
        };
        let mut files = Vec::new();
        for path in paths.iter().filter(|p| lsp.handles(p)) {
            let found = lsp.source.query(Some(path), lsp.wait).await;
            files.extend(found.map_err(|e| errors::internal(e.to_string()))?);
        }
        Ok(RefreshDiagnosticsResponse { files })
    }
}

/// `march lsp-host PROJECT`: serve the project's language servers to its runners until the
/// last one has been gone for a few seconds (`MARCH_LSP_HOST_LINGER_MS`, default 5000).
pub async fn serve_lsp_host(paths: MarchPaths, project: PathBuf) -> Result<(), String> {
    let config = match Config::load(&paths) {
        Ok(config) => config.lsp,
        Err(e) => {
            tracing::warn!("lsp host: {e}; using the built-in servers");
            LspConfig::default()
        }
    };
    let linger = std::env::var("MARCH_LSP_HOST_LINGER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(5), Duration::from_millis);
    let socket = socket_path(&paths.data_dir, &project);
    run_host_process(&socket, &project, &config, linger).await
}
