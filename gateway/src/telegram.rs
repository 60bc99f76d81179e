//! The Telegram adapter: a bot on Telegram's Bot API, read by long polling (`getUpdates`),
//! written with `sendMessage` (questions with inline allow and reject buttons) and
//! `answerCallbackQuery`. The API's base URL is configurable, so tests run it against a
//! fake on 127.0.0.1.

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::chat::{ChatAdapter, ChatError, ChatInput, ChatMessage, ChatSender, ChatUpdate};

/// How long one long poll may wait for updates, as asked of Telegram.
const POLL_SECONDS: u64 = 30;
/// The most characters one Telegram message holds.
const MESSAGE_CHARS: usize = 4096;

/// A Telegram bot.
pub struct Telegram {
    http: reqwest::Client,
    /// `{api}/bot{token}/`, every method's URL prefix.
    base: String,
}

impl Telegram {
    /// The bot with `token`, on the Bot API at `api`.
    pub fn new(api: &str, token: &str) -> Telegram {
        let http = march_core::http::client_builder(Duration::from_secs(10))
            .timeout(Duration::from_secs(POLL_SECONDS + 15))
            .build()
            .unwrap_or_default();
        Telegram {
            http,
            base: format!("{}/bot{token}/", api.trim_end_matches('/')),
        }
    }

    /// Calls `method` with `body`; its `result`.
    async fn call(&self, method: &str, body: &Value) -> Result<Value, ChatError> {
        let response = self
            .http
            .post(format!("{}{method}", self.base))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send()
            .await
            // The URL holds the token: never in a message.
            .map_err(|e| ChatError(format!("{method}: {}", e.without_url())))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| ChatError(format!("{method}: {}", e.without_url())))?;
        let reply: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ChatError(format!("{method}: the answer is not JSON ({status}): {e}")))?;
        if reply["ok"].as_bool() != Some(true) {
            return Err(ChatError(format!(
                "{method}: {}",
                reply["description"].as_str().unwrap_or("refused")
            )));
        }
        Ok(reply["result"].clone())
    }
}

#[derive(Deserialize)]
struct Update {
    update_id: i64,
    #[serde(default)]
    message: Option<TgMessage>,
    #[serde(default)]
    callback_query: Option<CallbackQuery>,
}

#[derive(Deserialize)]
struct TgMessage {
    chat: TgChat,
    #[serde(default)]
    from: Option<TgUser>,
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct TgChat {
    id: i64,
}

#[derive(Deserialize)]
struct TgUser {
    id: i64,
    #[serde(default)]
    username: Option<String>,
}

#[derive(Deserialize)]
struct CallbackQuery {
    id: String,
    from: TgUser,
    #[serde(default)]
    message: Option<TgMessage>,
    #[serde(default)]
    data: Option<String>,
}

fn sender(user: TgUser) -> ChatSender {
    ChatSender {
        id: user.id.to_string(),
        username: user.username,
    }
}

/// What the gateway can use of `update`: texts and button presses; the rest is skipped.
fn chat_update(update: Update) -> Option<ChatUpdate> {
    let number = update.update_id;
    if let Some(message) = update.message {
        return Some(ChatUpdate {
            number,
            chat: message.chat.id.to_string(),
            sender: sender(message.from?),
            input: ChatInput::Text(message.text?),
        });
    }
    let press = update.callback_query?;
    Some(ChatUpdate {
        number,
        chat: press.message?.chat.id.to_string(),
        sender: sender(press.from),
        input: ChatInput::Press {
            id: press.id,
            data: press.data.unwrap_or_default(),
        },
    })
}

/// `text` in pieces Telegram takes, every character kept: broken after whole lines where
/// a line fits, inside a line only where one is longer than a message.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut piece = String::new();
    let mut used = 0;
    for line in text.split_inclusive('\n') {
        let chars: Vec<char> = line.chars().collect();
        if used + chars.len() > MESSAGE_CHARS && used > 0 {
            out.push(std::mem::take(&mut piece));
            used = 0;
        }
        for chunk in chars.chunks(MESSAGE_CHARS) {
            if used + chunk.len() > MESSAGE_CHARS {
                out.push(std::mem::take(&mut piece));
                used = 0;
            }
            piece.extend(chunk);
            used += chunk.len();
        }
    }
    if !piece.is_empty() {
        out.push(piece);
    }
    out
}

#[async_trait]
impl ChatAdapter for Telegram {
    fn name(&self) -> &'static str {
        "telegram"
    }

    async fn updates(&self, after: Option<i64>) -> Result<Vec<ChatUpdate>, ChatError> {
        let mut body = json!({
            "timeout": POLL_SECONDS,
            "allowed_updates": ["message", "callback_query"],
        });
        if let Some(after) = after {
            body["offset"] = json!(after + 1);
        }
        let result = self.call("getUpdates", &body).await?;
        let updates: Vec<Value> =
            serde_json::from_value(result).map_err(|e| ChatError(format!("getUpdates: {e}")))?;
        let mut out = Vec::new();
        for update in updates {
            match serde_json::from_value::<Update>(update) {
                Ok(update) => {
                    let number = update.update_id;
                    match chat_update(update) {
                        Some(update) => out.push(update),
                        // Still counted, so the next poll asks past it.
                        None => out.push(ChatUpdate {
                            number,
                            chat: String::new(),
                            sender: ChatSender {
                                id: String::new(),
                                username: None,
                            },
                            input: ChatInput::Other,
                        }),
                    }
                }
                Err(e) => tracing::warn!("telegram: an update that does not parse: {e}"),
            }
        }
        Ok(out)
    }

    async fn send(&self, chat: &str, message: &ChatMessage) -> Result<(), ChatError> {
        match message {
            ChatMessage::Text(text) => {
                for piece in pieces(text) {
                    self.call("sendMessage", &json!({ "chat_id": chat, "text": piece }))
                        .await?;
                }
            }
            ChatMessage::Question { text, session } => {
                let buttons = json!({ "inline_keyboard": [[
                    { "text": "Allow", "callback_data": format!("allow:{session}") },
                    { "text": "Reject", "callback_data": format!("reject:{session}") },
                ]] });
                // The whole question, then the buttons under its last piece: nothing of it
                // is cut, and the answer comes after all of it.
                let mut pieces = pieces(text);
                let last = pieces.pop().unwrap_or_default();
                for piece in pieces {
                    self.call("sendMessage", &json!({ "chat_id": chat, "text": piece }))
                        .await?;
                }
                self.call(
                    "sendMessage",
                    &json!({ "chat_id": chat, "text": last, "reply_markup": buttons }),
                )
                .await?;
            }
        }
        Ok(())
    }

    async fn acknowledge(&self, press: &str, text: &str) -> Result<(), ChatError> {
        self.call(
            "answerCallbackQuery",
            &json!({ "callback_query_id": press, "text": pieces(text).into_iter().next() }),
        )
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn long_texts_are_split_whole() {
        let line = format!("{}\n", "x".repeat(1000));
        let text = format!("{}{}", line.repeat(9), "y".repeat(9000));
        let got = pieces(&text);
        assert!(got.iter().all(|p| p.chars().count() <= MESSAGE_CHARS));
        assert_eq!(got.concat(), text);
        // Whole lines stay together where they fit.
        assert_eq!(got[0], line.repeat(4));
    }

    #[test]
    fn texts_and_presses_are_read_and_the_rest_skipped() {
        let update = |v: Value| chat_update(serde_json::from_value(v).unwrap());
        let text = update(json!({"update_id": 7, "message": {"message_id": 1,
            "chat": {"id": -5}, "from": {"id": 42, "username": "ann"}, "text": "hi"}}));
        assert_eq!(
            text,
            Some(ChatUpdate {
                number: 7,
                chat: "-5".into(),
                sender: ChatSender {
                    id: "42".into(),
                    username: Some("ann".into())
                },
                input: ChatInput::Text("hi".into()),
            })
        );
        let press = update(json!({"update_id": 8, "callback_query": {"id": "cb1",
            "from": {"id": 42}, "message": {"chat": {"id": -5}}, "data": "allow:3"}}));
        assert_eq!(
            press.unwrap().input,
            ChatInput::Press {
                id: "cb1".into(),
                data: "allow:3".into()
            }
        );
        // A sticker (no text) is nothing the gateway reads.
        assert_eq!(
            update(json!({"update_id": 9, "message": {"chat": {"id": 1}, "from": {"id": 2}}})),
            None
        );
    }

    #[test]
    fn long_answers_go_in_pieces_telegram_takes() {
        let text = "é".repeat(MESSAGE_CHARS + 10);
        let p = pieces(&text);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].chars().count(), MESSAGE_CHARS);
        assert!(pieces("").is_empty());
    }
}
