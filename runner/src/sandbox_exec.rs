//! `march sandbox`: the launcher that confines an agent's command and then becomes it (the
//! rules are `march_tools::exec::sandbox`'s). The runner starts commands through it; it
//! reads no config and writes no log, so it costs a command little.

use std::ffi::OsString;
use std::path::PathBuf;

use march_tools::exec::sandbox::{SandboxMode, SandboxPolicy, confine_and_exec};

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
