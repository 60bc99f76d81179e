//! Running a tool's blocking file-system work off the async threads, and cancellation.

use std::path::Path;

use march_core::tool::ToolError;
use tokio_util::sync::CancellationToken;

/// The error for a call cancelled before or while it ran.
pub(crate) fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}

/// [`aborted`] once `cancel` has fired.
pub(crate) fn check_cancelled(cancel: &CancellationToken) -> Result<(), ToolError> {
    if cancel.is_cancelled() {
        Err(aborted())
    } else {
        Ok(())
    }
}

/// Run `work` on the blocking pool. Should the task itself fail (it panicked), the error
/// reads `"{failed}: {cause}"`, e.g. `failed` = "Reading /p/a.txt failed".
pub(crate) async fn run_blocking<T: Send + 'static>(
    failed: String,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::new(format!("{failed}: {e}")))
}

/// Refuse a call already cancelled, then [`run_blocking`] `work` on its own copies of `path`
/// and `cancel` (which it should check between steps); should the task fail, the error reads
/// `"{doing} {path} failed: {cause}"`.
pub(crate) async fn run_on_path<T: Send + 'static>(
    doing: &str,
    path: &Path,
    cancel: &CancellationToken,
    work: impl FnOnce(&Path, &CancellationToken) -> T + Send + 'static,
) -> Result<T, ToolError> {
    check_cancelled(cancel)?;
    let failed = format!("{doing} {} failed", path.display());
    let (path, cancel) = (path.to_path_buf(), cancel.clone());
    run_blocking(failed, move || work(&path, &cancel)).await
}
