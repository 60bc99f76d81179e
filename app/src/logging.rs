//! Tracing to `march.log` in the log directory; never to stdout or stderr, which belong to the
//! terminal UI and to command output.

use std::path::Path;

use anyhow::{Context, anyhow};
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;

/// The environment variable holding the log filter, e.g. `debug` or `march_core=trace`.
const FILTER_VAR: &str = "MARCH_LOG";

/// The log file of the workspace and the CLI commands.
pub const MAIN_LOG: &str = "march.log";

/// The log file of the runner with process id `pid` (each runner has its own, so the
/// supervisor view can show one runner's log).
pub fn runner_log(pid: u32) -> String {
    format!("runner.{pid}.log")
}

/// The log file of a project's language server host.
pub fn lsp_host_log(pid: u32) -> String {
    format!("lsp-host.{pid}.log")
}

/// The browser daemon's log file.
pub fn browser_log(pid: u32) -> String {
    format!("browser.{pid}.log")
}

/// The memory server's log file name.
pub const MEMORY_SERVER_LOG: &str = "memory-server.log";

/// The gateway's log file name: every message in and out, with its sender.
pub const GATEWAY_LOG: &str = "gateway.log";

/// Runner logs older than this are removed when the workspace starts.
const RUNNER_LOG_AGE: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Remove runner logs not written for a week; problems are only logged.
pub fn prune_runner_logs(log_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(log_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("runner.") && name.ends_with(".log")) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > RUNNER_LOG_AGE);
        if old && let Err(e) = std::fs::remove_file(entry.path()) {
            tracing::warn!("cannot remove old log {name}: {e}");
        }
    }
}

/// Start logging to `log_dir/file`; keep the guard alive until exit so lines are flushed.
pub fn init(log_dir: &Path, file: &str) -> anyhow::Result<WorkerGuard> {
    std::fs::create_dir_all(log_dir)
        .with_context(|| format!("cannot create the log directory {}", log_dir.display()))?;
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::NEVER)
        .filename_prefix(file)
        .build(log_dir)
        .with_context(|| format!("cannot open the log file in {}", log_dir.display()))?;
    let (writer, guard) = tracing_appender::non_blocking(appender);

    let (filter, bad_filter) = match std::env::var(FILTER_VAR) {
        Ok(spec) if !spec.trim().is_empty() => match EnvFilter::try_new(&spec) {
            Ok(filter) => (filter, None),
            Err(e) => (EnvFilter::new("info"), Some((spec, e))),
        },
        _ => (EnvFilter::new("info"), None),
    };
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .map_err(|e| anyhow!(e))
        .context("cannot start logging")?;
    if let Some((spec, e)) = bad_filter {
        // Reported in the log rather than on stderr, which may belong to the UI.
        tracing::warn!("ignoring invalid {FILTER_VAR}={spec:?} ({e}); logging at info");
    }
    Ok(guard)
}
