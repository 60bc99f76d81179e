//! Session store tests: loading (fixtures, migration, damage), writing, context building.

mod context;
mod lines;
mod load;
mod time;
mod tree;
mod write;

use std::path::{Path, PathBuf};

use super::*;
use crate::message::{
    AssistantContent, AssistantMessage, StopReason, TextContent, UserContent, UserMessage,
};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/fixtures/pi-sessions/"
);

/// A copy of a pi fixture in `dir`, so tests can check the file is never touched.
fn copy_fixture(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(Path::new(FIXTURES).join(name), &to).unwrap();
    to
}

fn new_store(dir: &Path) -> SessionStore {
    SessionStore::create(dir, SessionHeader::new("/work/proj")).unwrap()
}

fn user(text: &str) -> SessionMessage {
    SessionMessage::User(UserMessage::text(text))
}

fn assistant(text: &str, provider: &str, model: &str) -> SessionMessage {
    SessionMessage::Assistant(AssistantMessage {
        content: vec![AssistantContent::Text(TextContent {
            text: text.to_string(),
            text_signature: None,
        })],
        api: "anthropic-messages".to_string(),
        provider: provider.to_string(),
        model: model.to_string(),
        response_model: None,
        response_id: None,
        usage: Default::default(),
        stop_reason: StopReason::Stop,
        error_message: None,
        refused: false,
        timestamp: 1_700_000_000_000,
    })
}

/// The text of a user message as the model sees it.
fn llm_text(m: &crate::message::Message) -> String {
    let crate::message::Message::User(u) = m else {
        panic!("expected a user message, got {}", m.role())
    };
    u.content
        .blocks()
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => t.text.clone(),
            UserContent::Image(_) => "<image>".to_string(),
        })
        .collect()
}

/// The role of each context message.
fn roles(ctx: &SessionContext) -> Vec<&'static str> {
    ctx.messages.iter().map(|m| m.role()).collect()
}

/// Write `lines` (each followed by a newline) to a new file in `dir`.
fn write_lines(dir: &Path, name: &str, lines: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut text = String::new();
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}
