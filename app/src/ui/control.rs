//! What the control CLI asks of the workspace (`march ls`, `status`, `send`, `new-pane`,
//! `capture`, `wait`, `answer`, `kill`), answered from the loop's own state. A `wait` is
//! answered when its turn ends. The JSON shapes are documented in docs/CONTROL.md.

use std::time::{SystemTime, UNIX_EPOCH};

use march_wire::{ControlRequest, SessionStatus, WorkspaceInfo};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::Ui;
use super::watch::Watchers;
use crate::server::connection::Finished;
use crate::workspace::router::{Attention, SessionKey};
use crate::workspace::supervisor::{TurnEnd, TurnEvent};

/// Where an answer goes.
type Reply = oneshot::Sender<Result<Value, String>>;

/// Who this workspace is, and the requests still to answer.
pub(super) struct Control {
    /// Its name.
    name: String,
    /// When the server started.
    started: SystemTime,
    /// Answers the loop gave and their connections may not have written yet: a server
    /// that ends waits for them.
    pub(super) replies: Vec<Finished>,
    /// `march wait`s, by session, answered when its turn ends.
    waiting: Vec<(SessionKey, Reply)>,
    /// Connections watching sessions.
    pub(super) watchers: Watchers,
}

impl Control {
    pub(super) fn new(name: String) -> Control {
        Control {
            name,
            started: SystemTime::now(),
            replies: Vec::new(),
            waiting: Vec::new(),
            watchers: Watchers::default(),
        }
    }

    /// An answer was given; `written` is done once it is sent.
    pub(super) fn answered(&mut self, written: Finished) {
        self.replies.retain(|f| !f.is_done());
        self.replies.push(written);
    }

    /// A step of session `key`'s turn: its watchers are told, and when it ended, whoever
    /// waits on it.
    pub(super) fn turn_event(&mut self, key: SessionKey, event: &TurnEvent) {
        self.watchers.turn_event(key, event);
        if let TurnEvent::Ended(end) = event {
            self.turn_ended(key, end);
        }
    }

    /// Session `key`'s turn ended: whoever waits on it is told how.
    fn turn_ended(&mut self, key: SessionKey, end: &TurnEnd) {
        let (done, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(k, _)| *k == key);
        self.waiting = waiting;
        for (_, reply) in done {
            let _ = reply.send(Ok(turn_json(Some(end))));
        }
    }

    /// Sessions that closed: whoever waits on one is told.
    pub(super) fn sessions_closed(&mut self, open: impl Fn(SessionKey) -> bool) {
        let (gone, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(k, _)| !open(*k));
        self.waiting = waiting;
        for (_, reply) in gone {
            let _ = reply.send(Err("the session was closed".to_string()));
        }
    }

    /// Whether a `wait` is pending.
    pub(super) fn has_waiting(&self) -> bool {
        !self.waiting.is_empty()
    }
}

/// Answers `request` on `reply`, now or (a `wait`) when its turn ends.
pub(super) fn answer(ui: &mut Ui, request: ControlRequest, reply: Reply) {
    let answer = match request {
        ControlRequest::Info => serde_json::to_value(info(ui)).map_err(|e| e.to_string()),
        ControlRequest::Kill { force } => {
            let running = ui.ws.running_work(crate::workspace::work::WorkScope::All);
            if !force && !running.is_empty() {
                // The CLI asks the user, then asks again with force.
                Ok(json!({ "closed": false, "running": running }))
            } else {
                ui.quit = true;
                Ok(json!({ "closed": true, "running": running }))
            }
        }
        ControlRequest::Status => Ok(json!({ "sessions": statuses(ui) })),
        ControlRequest::Send { session, text } => {
            match ui.ws.prompt_session(SessionKey(session), text) {
                Some(queued) => Ok(json!({ "queued": queued })),
                None => Err(no_session(ui, session)),
            }
        }
        ControlRequest::NewPane { dir, agent, prompt } => ui
            .ws
            .open_agent_pane(dir, agent.as_deref(), prompt)
            .map(|key| json!({ "key": key.0, "target": format!("{}:{}", ui.control.name, key.0) })),
        ControlRequest::Capture { session, last } => {
            match ui.ws.capture(SessionKey(session), last) {
                Some(markdown) => Ok(json!({ "markdown": markdown })),
                None => Err(no_session(ui, session)),
            }
        }
        ControlRequest::Wait { session } => {
            let key = SessionKey(session);
            match ui.ws.turn_pending(key) {
                None => Err(no_session(ui, session)),
                Some(true) => {
                    ui.control.waiting.push((key, reply));
                    return;
                }
                Some(false) => Ok(turn_json(ui.ws.last_turn(key).as_ref())),
            }
        }
        // The connection hands a watch to the loop itself (`Incoming::Watch`).
        ControlRequest::Watch { .. } => Err("a watch needs a connection of its own".to_string()),
        ControlRequest::Answer { session, allow } => ui
            .ws
            .answer_permission(SessionKey(session), allow)
            .map(|question| json!({ "answered": question, "allowed": allow })),
    };
    let _ = reply.send(answer);
}

fn no_session(ui: &Ui, key: u64) -> String {
    format!("workspace `{}` has no session {key}", ui.control.name)
}

/// How a turn ended, as `march wait` reads it.
fn turn_json(end: Option<&TurnEnd>) -> Value {
    match end {
        None => json!({ "stop_reason": null, "error": null }),
        Some(Ok(response)) => json!({ "stop_reason": response.stop_reason, "error": null }),
        Some(Err(e)) => json!({ "stop_reason": null, "error": e }),
    }
}

/// Every session of the workspace.
fn statuses(ui: &Ui) -> Vec<SessionStatus> {
    ui.ws
        .supervisor_rows()
        .into_iter()
        .map(|row| SessionStatus {
            workspace: ui.control.name.clone(),
            target: format!("{}:{}", ui.control.name, row.key.0),
            key: row.key.0,
            session_id: ui.ws.session_id(row.key),
            project: row.project,
            title: row.title,
            attention: attention_name(row.attention).to_string(),
            question: row.question,
            model: row.pane.model,
            tokens: row.pane.context_used,
            context_size: row.pane.context_size,
            cost: row.pane.cost.as_ref().map(|(amount, _)| *amount),
            currency: row.pane.cost.map(|(_, currency)| currency),
            shown: row.shown,
        })
        .collect()
}

/// How the control socket names `attention`.
pub(super) fn attention_name(attention: Attention) -> &'static str {
    match attention {
        Attention::Idle => "idle",
        Attention::Working => "working",
        Attention::NeedsYou => "needs-you",
        Attention::Done => "done",
        Attention::Error => "error",
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
