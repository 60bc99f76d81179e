//! Programs the tests run that a fresh machine lacks, installed on first use by
//! `.ci/install-test-tools` (which CI also runs up front).

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The ruff language server (`ruff server`) the LSP tests run, installed when missing.
///
/// Panics with the installer's output when it cannot be installed: the tests that need it
/// must not pass without it.
pub fn ruff() -> PathBuf {
    installed("venv/bin/ruff")
}

/// A Python with the ACP SDK (PyPI `agent-client-protocol`), for the third-party agent of
/// `tests/fixtures/python_acp_agent.py`, installed when missing (panics as [`ruff`] does).
pub fn acp_python() -> PathBuf {
    installed("acp-venv/bin/python")
}

/// A Python with the MCP SDK (PyPI `mcp`), for the MCP server of
/// `tests/fixtures/python_mcp_server.py`, installed when missing (panics as [`ruff`] does).
pub fn mcp_python() -> PathBuf {
    installed("mcp-venv/bin/python")
}

/// The MCP reference server `mcp-server-everything` (npm
/// `@modelcontextprotocol/server-everything`), installed when missing (panics as [`ruff`]
/// does).
pub fn mcp_everything() -> PathBuf {
    installed("mcp-everything/node_modules/.bin/mcp-server-everything")
}

/// OpenSSH's server (`/usr/sbin/sshd`, Debian's openssh-server, with the client beside it),
/// installed when missing (panics as [`ruff`] does).
pub fn sshd() -> PathBuf {
    let sshd = PathBuf::from("/usr/sbin/sshd");
    if sshd.exists() {
        return sshd;
    }
    installed("venv/bin/ruff");
    assert!(
        sshd.exists(),
        "the installer ran and {} is still missing",
        sshd.display()
    );
    sshd
}

/// Chromium (Debian's chromium), installed when missing (panics as [`ruff`] does).
pub fn chromium() -> PathBuf {
    let chromium = PathBuf::from("/usr/bin/chromium");
    if chromium.exists() {
        return chromium;
    }
    installed("venv/bin/ruff");
    assert!(
        chromium.exists(),
        "the installer ran and {} is still missing",
        chromium.display()
    );
    chromium
}

/// The test tools' directory's `path`, after the installer ran.
fn installed(path: &str) -> PathBuf {
    let root = workspace_root();
    let dir = std::env::var_os("MARCH_TEST_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/test-tools"));
    let program = dir.join(path);
    // Test binaries run in parallel: one installer at a time.
    let _ = std::fs::create_dir_all(&dir);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".install.lock"));
    let _held = lock
        .ok()
        .filter(|f| rustix::fs::flock(f, rustix::fs::FlockOperation::LockExclusive).is_ok());
    let out = Command::new(root.join(".ci/install-test-tools"))
        .env("MARCH_TEST_TOOLS", &dir)
        .output();
    match out {
        Ok(out) if out.status.success() && program.exists() => program,
        Ok(out) => panic!(
            "installing {path} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("cannot run .ci/install-test-tools: {e}"),
    }
}
