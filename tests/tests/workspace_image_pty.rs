//! Pictures end to end: a picture file's path pasted into the prompt (as a terminal sends
//! a dropped file) is attached and reaches the model as image content; the transcript
//! shows it as a picture on a terminal that announced kitty graphics when asked, and as
//! its label on one that did not; `/image` and a file that is no picture.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use march_testkit::Turn;
use pty::{PtyMarch, TerminalKind};
use workspace::*;

/// The label a 32×16 PNG gets.
const LABEL: &str = "[image 32×16 png]";

/// The harness's model `m` takes images; the project holds `my shot.png`.
fn harness_with_picture(turns: Vec<Turn>) -> (acp_client::Harness, std::path::PathBuf) {
    let h = tokio_harness(turns);
    h.model_takes_images();
    let shot = h.project().join("my shot.png");
    std::fs::copy(march_e2e::fixture("red-32x16.png"), &shot).unwrap();
    (h, shot)
}

fn start_in(h: &acp_client::Harness, kind: TerminalKind) -> PtyMarch {
    let m = PtyMarch::spawn_clean_as(
        kind,
        &[],
        &h.project(),
        &h.dir.path().join("home"),
        &h.march_home(),
    );
    m.wait_text("March · project");
    m
}

/// What the last request's last user message holds: its text parts and image URLs.
fn last_user_content(h: &acp_client::Harness) -> (Vec<String>, Vec<String>) {
    let requests = h.server.requests();
    let body = &requests.last().unwrap().body;
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    let parts = user["content"].as_array().cloned().unwrap_or_default();
    let texts = parts
        .iter()
        .filter_map(|p| p["text"].as_str().map(str::to_string))
        .collect();
    let images = parts
        .iter()
        .filter_map(|p| p["image_url"]["url"].as_str().map(str::to_string))
        .collect();
    (texts, images)
}

/// Kitty graphics commands that transmit a picture (the query has `a=q`).
fn transmissions(m: &PtyMarch) -> Vec<String> {
    m.graphics()
        .into_iter()
        .filter(|c| c.split(',').any(|kv| kv == "a=T"))
        .collect()
}

#[test]
fn a_pasted_picture_path_reaches_the_model_and_a_kitty_terminal_gets_the_picture() {
    let (h, shot) = harness_with_picture(vec![Turn::text("A red rectangle.")]);
    let mut m = start_in(&h, TerminalKind::Kitty);
    // A file dropped on the terminal: its path, quoted, as a bracketed paste.
    m.send(format!("\x1b[200~'{}'\x1b[201~", shot.display()).as_bytes());
    m.wait_text(&format!("{LABEL}  (Backspace"));
    m.type_line("what is this?");
    m.wait_text("A red rectangle.");
    let (texts, images) = last_user_content(&h);
    assert_eq!(texts, ["what is this?"]);
    assert_eq!(images.len(), 1, "{images:?}");
    assert!(
        images[0].starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{}",
        images[0]
    );
    let screen = m.wait_text(&format!("› {LABEL}"));
    assert!(
        !screen.contains("(Backspace"),
        "the attachment went with it"
    );
    // Drawn as a picture: kitty is sent it (as a virtual placement under the label).
    m.wait_for("the picture sent to the terminal", |_| {
        !transmissions(&m).is_empty()
    });
    let sent = transmissions(&m);
    assert!(sent[0].contains("U=1"), "{sent:?}");
    m.quit();
}

#[test]
fn a_terminal_without_graphics_gets_the_label_and_no_escape() {
    let (h, shot) = harness_with_picture(vec![Turn::text("A red rectangle.")]);
    let mut m = start_in(&h, TerminalKind::Plain);
    m.send(b"/image ");
    m.send(b"my shot.png");
    m.send(ENTER);
    m.wait_text(&format!("{LABEL}  (Backspace"));
    // Backspace on the empty prompt takes it off; pasted again, it comes back.
    m.send(b"\x7f");
    m.wait_for("the attachment removed", |t| !t.contains("(Backspace"));
    m.send(format!("\x1b[200~{}\x1b[201~", shot.display()).as_bytes());
    m.wait_text(&format!("{LABEL}  (Backspace"));
    m.type_line("and this?");
    m.wait_text("A red rectangle.");
    m.wait_text(&format!("› {LABEL}"));
    let (_, images) = last_user_content(&h);
    assert_eq!(images.len(), 1);
    assert!(transmissions(&m).is_empty(), "{:?}", m.graphics());
    // A path to something that is no picture stays the text it was.
    std::fs::write(h.project().join("fake.png"), "not a picture").unwrap();
    let fake = h.project().join("fake.png");
    m.send(format!("\x1b[200~{}\x1b[201~", fake.display()).as_bytes());
    m.wait_text("not a PNG, JPEG, GIF or WebP image");
    m.wait_text(&format!("› {}", fake.display()));
    m.quit();
}

#[test]
fn a_generated_image_is_saved_priced_and_drawn_on_a_kitty_terminal() {
    // A scripted images API on loopback, speaking OpenAI's `images/generations`.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let png = std::fs::read(march_e2e::fixture("red-32x16.png")).unwrap();
    let b64 = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(&png)
    };
    let answer = serde_json::json!({ "created": 1, "data": [{ "b64_json": b64 }] });
    let routes = [(
        "/v1/images/generations".to_string(),
        march_testkit::PageReply::ok("application/json", answer.to_string()),
    )];
    let api = runtime
        .block_on(march_testkit::PageServer::start(
            routes.into_iter().collect(),
        ))
        .unwrap();
    let call = serde_json::json!({ "prompt": "a red square" }).to_string();
    let h = tokio_harness(vec![
        Turn::stream(vec![march_testkit::Event::tool_call(
            "g1",
            "image_generate",
            &[&call],
        )]),
        Turn::text("Here is your red square."),
    ]);
    h.model_takes_images();
    let_commands_run_unasked(&h);
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\n[providers.pics]\napi = \"openai-completions\"\nbase_url = \"{}\"\n\n\
         [images]\nmodel = \"pics/img-1\"\nprice_per_image = 0.05\n",
        api.url("/v1")
    ));
    std::fs::write(&config, text).unwrap();

    let mut m = start_in(&h, TerminalKind::Kitty);
    m.type_line("draw a red square");
    m.wait_text("Here is your red square.");
    m.wait_text(LABEL);
    m.wait_for("the picture sent to the terminal", |_| {
        !transmissions(&m).is_empty()
    });
    let saved: Vec<_> = std::fs::read_dir(h.project().join(".march/images"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(std::fs::read(&saved[0]).unwrap(), png);
    assert!(saved[0].to_string_lossy().ends_with("-a-red-square.png"));
    // The price is on the tool result, so it counts into the session's cost.
    let transcripts = walk(&h.sessions_dir());
    let priced = transcripts.iter().any(|path| {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains("\"toolResult\"") && l.contains("\"total\":0.05"))
    });
    assert!(priced, "no priced tool result in {transcripts:?}");
    m.quit();
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn an_avatar_the_model_proposes_is_asked_for_and_then_heads_the_pane_on_a_kitty_terminal() {
    let (h, shot) = harness_with_picture(vec![
        Turn::stream(vec![march_testkit::Event::tool_call(
            "a1",
            "avatar",
            &[&serde_json::json!({ "path": "my shot.png" }).to_string()],
        )]),
        Turn::text("That is me now."),
    ]);
    let mut m = start_in(&h, TerminalKind::Kitty);
    // No avatar file: the agent's initial, and no picture sent.
    m.wait_text("┌ M  March · project");
    assert!(transmissions(&m).is_empty(), "{:?}", m.graphics());
    m.type_line("take my shot as your avatar");
    // The request shows where the picture goes, and the picture.
    m.wait_text("profiles/avatars/march.png");
    m.wait_for("the proposed picture sent to the terminal", |_| {
        !transmissions(&m).is_empty()
    });
    let before = transmissions(&m).len();
    m.send(b"1");
    m.wait_text("That is me now.");
    let avatar = h.march_home().join("profiles/avatars/march.png");
    assert_eq!(
        std::fs::read(&avatar).unwrap(),
        std::fs::read(&shot).unwrap()
    );
    // Read after the turn: the header's picture is sent (a new one: round, ringed).
    m.wait_for("the avatar sent to the terminal", |_| {
        transmissions(&m).len() > before
    });
    m.quit();
}
