//! Fixtures shared by the tools' tests.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolError, ToolUpdates};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use march_core::atomic_file::TEMP_SUFFIX;

/// Run `tool` as the agent loop does (arguments prepared first), never cancelled.
pub(crate) async fn run_tool(tool: &dyn Tool, args: Value) -> Result<ToolOutcome, ToolError> {
    run_tool_with(tool, args, CancellationToken::new()).await
}

/// [`run_tool`] with a cancellation token of the test's own.
pub(crate) async fn run_tool_with(
    tool: &dyn Tool,
    args: Value,
    cancel: CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let args = tool.prepare_arguments(args);
    tool.execute("call", args, cancel, ToolUpdates::discard())
        .await
}

/// A token that has already fired.
pub(crate) fn cancelled() -> CancellationToken {
    let cancel = CancellationToken::new();
    cancel.cancel();
    cancel
}

/// Create files (and their parent directories) under `root` with the given contents.
pub(crate) fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }
}

/// 200 names of 254 bytes and a last one of `last` bytes: 51200 bytes listed when `last`
/// is 200.
pub(crate) fn long_names(dir: &Path, last: usize) {
    for i in 0..200 {
        fs::write(dir.join(format!("{i:03}{}", "x".repeat(251))), "").unwrap();
    }
    fs::write(dir.join(format!("200{}", "y".repeat(last - 3))), "").unwrap();
}

/// Set the permission bits of `path`.
pub(crate) fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether permission bits bind this process; root bypasses them, so refusals can only be
/// observed in an unprivileged run.
pub(crate) fn permissions_enforced() -> bool {
    !rustix::process::geteuid().is_root()
}

/// The temporary files an atomic write left in `dir`.
pub(crate) fn temp_files_in(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n.ends_with(TEMP_SUFFIX))
        .collect()
}
