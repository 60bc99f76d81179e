//! The gateway end to end: `march gateway` beside a workspace server whose runners talk to
//! the scripted model server. An HTTP prompt gets its answer streamed; a permission request
//! goes out and an allow coming back completes the turn; a sender off the allow-list is
//! refused; a fake of Telegram's Bot API sees the same flow; a gateway restart loses no
//! queued message.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/gateway.rs"]
mod gateway;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use acp_client::Harness;
use gateway::{FakeTelegram, Gateway, Stream, http};
use march_testkit::Turn;
use serde_json::{Value, json};
use workspace::*;

/// Appends `text` to the harness's config.
fn configure(h: &Harness, text: &str) {
    let config = h.march_home().join("config.toml");
    let mut old = std::fs::read_to_string(&config).unwrap_or_default();
    old.push_str(text);
    std::fs::write(&config, old).unwrap();
}

/// The gateway's log so far.
fn gateway_log(h: &Harness) -> String {
    std::fs::read_to_string(h.march_home().join("data/logs/gateway.log")).unwrap_or_default()
}

/// A token for HTTP client `name`.
fn token(m: &pty::PtyMarch, name: &str) -> String {
    let (code, out) = m.cli(&["gateway", "token", "add", name]);
    assert_eq!(code, 0, "{out}");
    out.lines().next().unwrap().trim().to_string()
}

/// The one session besides the first pane's, which the gateway opened.
fn other_session(m: &pty::PtyMarch) -> String {
    let (code, status) = m.cli(&["status", "--json"]);
    assert_eq!(code, 0, "{status}");
    let others: Vec<String> = status
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|s| s["key"] != 1)
        .map(|s| s["target"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(others.len(), 1, "{status}");
    others[0].clone()
}

/// A command longer than any one line of a dialog, its tail last.
fn long_command() -> String {
    format!("echo from-the-tool {} ; echo GATEWAY-TAIL", "x".repeat(400))
}

#[test]
fn an_http_prompt_streams_its_answer_and_a_permission_allowed_over_http_completes_the_turn() {
    let h = tokio_harness(vec![
        Turn::text("Hello from the model."),
        Turn::stream(vec![acp_client::bash_call("c1", &long_command())]),
        Turn::text("Ran it."),
        Turn::text("Whole answer."),
    ]);
    // The webhook's receiver: the fake Bot API records any POST.
    let hook = FakeTelegram::start();
    configure(
        &h,
        &format!(
            "\n[gateway]\nlisten = \"127.0.0.1:0\"\nwebhook = \"{}/botTOKEN/hook\"\n",
            hook.url
        ),
    );
    let m = start(&h);
    let ci = token(&m, "ci");
    let gw = Gateway::start(m.command(&["gateway"]));

    // Streamed: the answer's text as events, then its end.
    let mut stream = Stream::prompt(
        &gw.addr,
        &ci,
        json!({ "session": "1", "text": "hello gateway", "stream": true }),
    );
    let read = stream.until("event: end").to_string();
    assert!(read.contains("text/event-stream"), "{read}");
    assert!(read.contains("event: accepted"), "{read}");
    assert!(read.contains("event: start"), "{read}");
    assert!(
        read.contains(r#"event: text"#) && read.contains("Hello from the model."),
        "{read}"
    );
    assert!(read.contains(r#""stop_reason":"end_turn""#), "{read}");
    m.wait_text("Hello from the model.");

    // A tool that asks: the question goes out on the stream, the allow comes back over
    // HTTP, and the turn completes.
    let mut stream = Stream::prompt(
        &gw.addr,
        &ci,
        json!({ "session": "project:1", "text": "run the tool", "stream": true }),
    );
    // The question whole: a long command's tail reaches the stream.
    let read = stream.until("GATEWAY-TAIL").to_string();
    assert!(read.contains("event: permission"), "{read}");
    assert!(read.contains("echo from-the-tool"), "{read}");
    let (status, body) = http(
        &gw.addr,
        "POST",
        "/v1/answer",
        &ci,
        Some(json!({ "session": "1", "allow": true })),
    );
    assert_eq!(status, 200, "{body}");
    let read = stream.until("event: end").to_string();
    assert!(read.contains("Ran it."), "{read}");
    // The webhook was told the session needed someone, and what for.
    let told = hook.wait_call("hook", "session 1 needing someone", |b| {
        b["session"] == 1 && b["attention"] == "needs-you"
    });
    assert_eq!(told["workspace"], "project", "{told}");
    assert_eq!(told["was"], "working", "{told}");
    assert!(
        told["question"]
            .as_str()
            .unwrap()
            .contains("echo from-the-tool"),
        "{told}"
    );

    // Whole: one JSON answer.
    let (status, body) = http(
        &gw.addr,
        "POST",
        "/v1/prompt",
        &ci,
        Some(json!({ "session": "1", "text": "answer whole" })),
    );
    assert_eq!(status, 200, "{body}");
    let whole: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(whole["answer"], "Whole answer.", "{whole}");
    assert_eq!(whole["session"], 1);

    // A sender without a valid token is refused and nothing reaches the session.
    let (status, body) = http(
        &gw.addr,
        "POST",
        "/v1/prompt",
        "gt_not-a-token",
        Some(json!({ "session": "1", "text": "let me in" })),
    );
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("allow-list"), "{body}");
    let (status, body) = http(&gw.addr, "GET", "/v1/sessions", "", None);
    assert_eq!(status, 401, "{body}");
    // Bad requests say why.
    let (status, body) = http(
        &gw.addr,
        "POST",
        "/v1/prompt",
        &ci,
        Some(json!({ "session": "9", "text": "to nobody" })),
    );
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("no session `9`"), "{body}");
    let (status, body) = http(
        &gw.addr,
        "POST",
        "/v1/prompt",
        &ci,
        Some(json!({ "text": 3 })),
    );
    assert_eq!(status, 400, "{body}");

    // `march gateway status` sees it; every message is in its log with its sender.
    let (code, out) = m.cli(&["gateway", "status"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&gw.addr) && out.contains("answers"), "{out}");
    gw.stop();
    let log = gateway_log(&h);
    assert!(
        log.contains("message in")
            && log.contains("sender=\"ci\"")
            && log.contains("hello gateway"),
        "{log}"
    );
    assert!(log.contains("message out"), "{log}");
    assert!(log.contains("refused a sender"), "{log}");
    let (_, out) = m.cli(&["capture", "-t", "1"]);
    assert!(!out.contains("let me in"), "{out}");
}

#[test]
fn a_telegram_chat_prompts_answers_permissions_and_refuses_strangers() {
    let h = tokio_harness(vec![
        Turn::text("Hello from the model."),
        Turn::stream(vec![acp_client::bash_call("c1", &long_command())]),
        Turn::text("Ran it."),
        Turn::text("After the restart."),
    ]);
    let bot = FakeTelegram::start();
    configure(
        &h,
        &format!(
            "\n[gateway]\nlisten = \"127.0.0.1:0\"\n\n[gateway.telegram]\napi = \"{}\"\n\
             allow = [\"42\", \"@bea\"]\n",
            bot.url
        ),
    );
    let mut m = start(&h);
    let (code, out) = m.cli(&["gateway", "token", "telegram", "TOKEN"]);
    assert_eq!(code, 0, "{out}");
    let gw = Gateway::start(m.command(&["gateway"]));

    // A stranger is told no, and nothing is sent to a session.
    bot.say(-7, 999, "mallory", "let me in");
    let refusal = bot.wait_call("sendMessage", "the refusal", |b| b["chat_id"] == "-7");
    assert!(
        refusal["text"].as_str().unwrap().contains("allow-list"),
        "{refusal}"
    );

    // An allowed user's message opens a session on the project; the answer comes back.
    bot.say(5, 42, "ann", "hello bot");
    bot.wait_call("sendMessage", "the answer", |b| {
        b["chat_id"] == "5" && b["text"] == "Hello from the model."
    });
    // `/sessions` lists the workspace's sessions, the chat's marked.
    bot.say(5, 42, "ann", "/sessions");
    let listed = bot.wait_call("sendMessage", "the session list", |b| {
        b["chat_id"] == "5" && b["text"].as_str().unwrap().contains("project:1")
    });
    assert!(
        listed["text"].as_str().unwrap().contains("→ project:"),
        "{listed}"
    );
    // The next message goes to the same session; its question comes with buttons, and
    // the press (from another allowed user, by name) completes the turn.
    bot.say(5, 42, "ann", "run the tool");
    let question = bot.wait_call("sendMessage", "the question", |b| {
        b.get("reply_markup").is_some()
    });
    assert!(
        question["text"]
            .as_str()
            .unwrap()
            .contains("echo from-the-tool"),
        "{question}"
    );
    let allow = question["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(allow.starts_with("allow:"), "{question}");
    bot.press(5, 43, "bea", &allow);
    bot.wait_call("answerCallbackQuery", "the press acknowledged", |_| true);
    bot.wait_call("sendMessage", "the answer after the tool", |b| {
        b["chat_id"] == "5" && b["text"] == "Ran it."
    });
    // One session took both prompts: the stranger's message is nowhere.
    let opened = other_session(&m);
    let (_, out) = m.cli(&["capture", "-t", &opened]);
    assert!(
        out.contains("> hello bot") && out.contains("> run the tool"),
        "{out}"
    );
    assert!(!out.contains("let me in"), "{out}");

    // The workspace restarts (its sessions numbered anew, the panes' sessions resumed):
    // the chat's next message opens a new session, not whichever has its old number.
    let (code, out) = m.cli(&["kill-server", "--force"]);
    assert_eq!(code, 0, "{out}");
    m.wait_exit();
    let m = start(&h);
    bot.say(5, 42, "ann", "after the restart");
    bot.wait_call("sendMessage", "the answer in the new workspace", |b| {
        b["chat_id"] == "5" && b["text"] == "After the restart."
    });
    let (_, status) = m.cli(&["status", "--json"]);
    let mut found = false;
    for line in status.lines() {
        let target = serde_json::from_str::<Value>(line).unwrap()["target"]
            .as_str()
            .unwrap()
            .to_string();
        let (_, out) = m.cli(&["capture", "-t", &target]);
        if out.contains("> after the restart") {
            assert!(
                !out.contains("> hello bot"),
                "an old session took it: {out}"
            );
            found = true;
        }
    }
    assert!(found, "no session took it: {status}");
    gw.stop();
    let log = gateway_log(&h);
    assert!(
        log.contains("refused a sender not on the allow-list"),
        "{log}"
    );
    assert!(log.contains("sender=\"42(@ann)\""), "{log}");
}

#[test]
fn a_message_queued_while_no_workspace_runs_survives_a_gateway_restart() {
    let h = tokio_harness(vec![Turn::text("Delivered after the restart.")]);
    configure(&h, "\n[gateway]\nlisten = \"127.0.0.1:0\"\n");
    let home = h.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let command = || pty::march_command(&["gateway"], &h.project(), &home, &h.march_home());
    let (code, out) = {
        let out = pty::march_command(
            &["gateway", "token", "add", "ci"],
            &h.project(),
            &home,
            &h.march_home(),
        )
        .output()
        .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(code, 0, "{out}");
    let ci = out.trim().to_string();

    // No workspace runs: the prompt is kept, and the gateway says it waits.
    let gw = Gateway::start(command());
    let project = h.project();
    let (status, body) = http(
        &gw.addr,
        "POST",
        "/v1/prompt",
        &ci,
        Some(json!({ "project": project, "text": "sent while nobody listened" })),
    );
    assert_eq!(status, 202, "{body}");
    assert!(body.contains("\"queued\":true"), "{body}");
    gw.stop();
    let queue = h.march_home().join("data/gateway/queue");
    assert_eq!(std::fs::read_dir(&queue).unwrap().count(), 1);

    // The workspace starts, the gateway comes back: the message reaches a new session.
    let m = start(&h);
    let gw = Gateway::start(command());
    m.wait_text("Delivered after the restart.");
    let (_, out) = m.cli(&["capture", "-t", &other_session(&m)]);
    assert!(out.contains("> sent while nobody listened"), "{out}");
    let (code, status) = m.cli(&["gateway", "status"]);
    assert_eq!(code, 0, "{status}");
    assert!(!status.contains("wait"), "{status}");
    gw.stop();
    assert_eq!(std::fs::read_dir(&queue).unwrap().count(), 0);
}
