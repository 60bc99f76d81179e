//! What the workspace PTY tests share: `march` started in a harness's project with a clean
//! environment, keys, and config tweaks.

#![allow(dead_code)] // Each test binary uses a different part.

use std::path::Path;

use super::acp_client::Harness;
use super::pty::PtyMarch;
use march_testkit::Turn;

pub const PREFIX: &[u8] = b"\x01";
pub const ENTER: &[u8] = b"\r";
pub const ESC: &[u8] = b"\x1b";

/// `march` in `project` at 120×40 with a clean environment: PATH, HOME and MARCH_HOME only.
pub fn spawn_clean(project: &Path, home: &Path, march_home: &Path) -> PtyMarch {
    PtyMarch::spawn_clean(&[], project, home, march_home, &[])
}

/// `march` in the harness's project, once its agent pane has the agent's title.
pub fn start(h: &Harness) -> PtyMarch {
    let m = spawn_clean(&h.project(), &h.dir.path().join("home"), &h.march_home());
    // The pane's title turns from the configured name into the agent's own once the
    // session is open.
    m.wait_text("March · project");
    m
}

/// A harness (scripted server on its own runtime, kept alive by the harness's thread).
pub fn tokio_harness(turns: Vec<Turn>) -> Harness {
    Harness::on_own_runtime(turns)
}

/// `permission_mode = "yolo"` in the harness's config: tool calls run without asking.
pub fn let_commands_run_unasked(h: &Harness) {
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    text.insert_str(0, "permission_mode = \"yolo\"\n");
    std::fs::write(&config, text).unwrap_or_else(|e| panic!("write config: {e}"));
}
