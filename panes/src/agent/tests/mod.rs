//! Tests of the whole pane: snapshots of what it draws, its events, and the cost of a frame.

mod behaviour;
mod copying;
mod pictures;
mod tree;
mod views;
mod virtualisation;

use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, MessageId, PermissionOption, PermissionOptionKind,
    RequestPermissionRequest, SessionConfigKind, SessionConfigOption, SessionConfigOptionCategory,
    SessionConfigSelect, SessionConfigSelectOption, SessionUpdate, TextContent, ToolCall,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::AgentPane;
use crate::highlight::Highlighter;
use crate::theme::Theme;

fn text(s: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(s))
}

fn agent(s: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(text(s)))
}

fn agent_id(s: &str, id: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(text(s)).message_id(MessageId::new(id)))
}

fn thought(s: &str) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(text(s)))
}

fn call(id: &str, title: &str, kind: ToolKind, status: ToolCallStatus) -> SessionUpdate {
    SessionUpdate::ToolCall(
        ToolCall::new(id.to_string(), title)
            .kind(kind)
            .status(status),
    )
}

fn update(id: &str, fields: ToolCallUpdateFields) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_string(), fields))
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn type_text(pane: &mut AgentPane, s: &str) {
    for c in s.chars() {
        pane.handle_key(key(KeyCode::Char(c)));
    }
}

/// A pane fed `updates`, all at `t0` plus the given offsets.
fn pane_with(updates: &[(u64, SessionUpdate)]) -> AgentPane {
    let mut pane = AgentPane::new("agent 1");
    let t0 = Instant::now();
    for (ms, u) in updates {
        pane.apply_at(u, t0 + Duration::from_millis(*ms));
    }
    pane
}

/// The pane drawn on a `width`×`height` test terminal.
fn draw(pane: &mut AgentPane, theme: &Theme, width: u16, height: u16) -> Terminal<TestBackend> {
    let hl = Highlighter::new();
    draw_with(pane, theme, &hl, width, height)
}

fn draw_with(
    pane: &mut AgentPane,
    theme: &Theme,
    hl: &Highlighter,
    width: u16,
    height: u16,
) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
    t.draw(|f| {
        let area = f.area();
        pane.render(area, f.buffer_mut(), theme, hl, true);
    })
    .unwrap();
    t
}

fn permission_request() -> RequestPermissionRequest {
    RequestPermissionRequest::new(
        "s1",
        ToolCallUpdate::new("call-1", ToolCallUpdateFields::new()),
        vec![
            PermissionOption::new("allow", "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new("always", "Allow always", PermissionOptionKind::AllowAlways),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
            PermissionOption::new("never", "Reject always", PermissionOptionKind::RejectAlways),
        ],
    )
}

fn model_options() -> Vec<SessionConfigOption> {
    vec![
        SessionConfigOption::new(
            "model",
            "Model",
            SessionConfigKind::Select(SessionConfigSelect::new(
                "sonnet",
                vec![
                    SessionConfigSelectOption::new("sonnet", "Claude Sonnet"),
                    SessionConfigSelectOption::new("opus", "Claude Opus"),
                ],
            )),
        )
        .category(SessionConfigOptionCategory::Model),
        SessionConfigOption::new(
            "thinking",
            "Thinking",
            SessionConfigKind::Select(SessionConfigSelect::new(
                "high",
                vec![
                    SessionConfigSelectOption::new("low", "low"),
                    SessionConfigSelectOption::new("high", "high"),
                ],
            )),
        )
        .category(SessionConfigOptionCategory::ThoughtLevel),
    ]
}
