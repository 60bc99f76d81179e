//! Tracing to `march.log` in the log directory; never to stdout or stderr, which belong to the
//! terminal UI and to command output.

use std::path::Path;

use anyhow::{Context, anyhow};
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;

/// The environment variable holding the log filter, e.g. `debug` or `march_core=trace`.
const FILTER_VAR: &str = "MARCH_LOG";

/// Start logging to `log_dir/march.log`; keep the guard alive until exit so lines are flushed.
pub fn init(log_dir: &Path) -> anyhow::Result<WorkerGuard> {
    std::fs::create_dir_all(log_dir)
        .with_context(|| format!("cannot create the log directory {}", log_dir.display()))?;
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::NEVER)
        .filename_prefix("march.log")
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
