//! `march sandbox`: the launcher that confines an agent's command and then becomes it (the
//! rules are `march_tools::exec::sandbox`'s). The runner starts commands through it; it
//! reads no config and writes no log, so it costs a command little.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use march_core::config::{SandboxConfig, SandboxMechanism};
use march_tools::exec::sandbox::{SandboxMode, SandboxPolicy, confine_and_exec};

/// The mode a session's commands run in when the user chose none for the session:
/// `[sandbox]`'s, else `workspace-write` unless every call runs unasked (`yolo`: `full`).
pub(crate) fn default_mode(config: &SandboxConfig, yolo: bool) -> SandboxMode {
    match config.mode {
        Some(mode) => mode.as_str().parse().unwrap_or_default(),
        None if yolo => SandboxMode::Full,
        None => SandboxMode::WorkspaceWrite,
    }
}

/// The policy a session's commands run under ([`default_mode`]'s mode), through this binary
/// as the launcher.
pub(crate) fn session_policy(config: &SandboxConfig, yolo: bool, project: &Path) -> SandboxPolicy {
    SandboxPolicy {
        mode: default_mode(config, yolo),
        writable: vec![project.to_path_buf()],
        network: config.network,
        enforce: config.mechanism == SandboxMechanism::Landlock,
        launcher: std::env::current_exe().ok(),
    }
}

/// Confines this process by `mode` (writes allowed under `writable` for
/// `workspace-write`, TCP when `network`) and runs `command`; returns only why it could not.
pub fn sandbox_exec(
    mode: &str,
    writable: Vec<PathBuf>,
    network: bool,
    command: &[OsString],
) -> String {
    let mode: SandboxMode = match mode.parse() {
        Ok(mode) => mode,
        Err(e) => return e,
    };
    let Some((program, args)) = command.split_first() else {
        return "no command to run".to_string();
    };
    let policy = SandboxPolicy {
        mode,
        writable,
        network,
        enforce: true,
        launcher: None,
    };
    confine_and_exec(&policy, program, args)
}
