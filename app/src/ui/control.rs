//! What the control CLI asks of the workspace (`march ls`, `march kill`…), answered from
//! the loop's own state. The JSON shapes are documented in docs/CONTROL.md.

use std::time::{SystemTime, UNIX_EPOCH};

use march_wire::{ControlRequest, WorkspaceInfo};
use serde_json::{Value, json};

use super::Ui;
use crate::server::connection::Finished;

/// Who this workspace is, for the control CLI.
pub(super) struct Control {
    /// Its name.
    name: String,
    /// When the server started.
    started: SystemTime,
    /// Answers the loop gave and their connections may not have written yet: a server
    /// that ends waits for them.
    pub(super) replies: Vec<Finished>,
}

impl Control {
    pub(super) fn new(name: String) -> Control {
        Control {
            name,
            started: SystemTime::now(),
            replies: Vec::new(),
        }
    }

    /// An answer was given; `written` is done once it is sent.
    pub(super) fn answered(&mut self, written: Finished) {
        self.replies.retain(|f| !f.is_done());
        self.replies.push(written);
    }
}

/// The answer to `request`.
pub(super) fn answer(ui: &mut Ui, request: ControlRequest) -> Result<Value, String> {
    match request {
        ControlRequest::Info => serde_json::to_value(info(ui)).map_err(|e| e.to_string()),
        ControlRequest::Kill { force } => {
            let running = ui.ws.running_work(None);
            if !force && !running.is_empty() {
                // The CLI asks the user, then asks again with force.
                return Ok(json!({ "closed": false, "running": running }));
            }
            ui.quit = true;
            Ok(json!({ "closed": true, "running": running }))
        }
    }
}

/// The workspace as `march ls` shows it.
fn info(ui: &Ui) -> WorkspaceInfo {
    let counts = ui.ws.attention_counts();
    let started = ui
        .control
        .started
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    WorkspaceInfo {
        name: ui.control.name.clone(),
        dirs: ui.dirs.clone(),
        pid: std::process::id(),
        clients: ui.clients.len(),
        sessions: counts.sessions,
        working: counts.working,
        needs_you: counts.needs_you,
        started,
        last_active: ui.clients.last_active_ms(),
    }
}
