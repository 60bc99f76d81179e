//! The avatar tool through `march runner`: the model proposes an image from the project as
//! March's avatar; the permission request carries the picture; allowed, it becomes
//! `<config>/profiles/avatars/march.png`; refused, nothing changes.

#![allow(clippy::unwrap_used)] // Helpers outside #[test] fns fail the test on setup failure.

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOptionKind, StopReason, ToolCallContent,
};
use march_testkit::{Event, Turn};
use serde_json::json;

fn propose(id: &str, path: &str) -> Turn {
    let args = json!({ "path": path }).to_string();
    Turn::stream(vec![Event::tool_call(id, "avatar", &[&args])])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_proposes_an_avatar_the_user_sees_it_and_decides() {
    let h = Harness::new(vec![
        propose("a1", ".march/images/fox.png"),
        Turn::text("That is me now."),
        propose("a2", "other.png"),
        Turn::text("Kept the fox."),
    ])
    .await;
    let fox = std::fs::read(march_e2e::fixture("red-32x16.png")).unwrap();
    let images = h.project().join(".march/images");
    std::fs::create_dir_all(&images).unwrap();
    std::fs::write(images.join("fox.png"), &fox).unwrap();
    // Another picture: the same pixels as a GIF would do, but a second PNG file is enough.
    let mut other = fox.clone();
    other.extend_from_slice(b"trailing bytes a PNG reader ignores");
    std::fs::write(h.project().join("other.png"), &other).unwrap();
    let avatar = h.march_home().join("profiles/avatars/march.png");

    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let prompt = client.prompt(&id, "make the fox your avatar");
    let (request, responder) = client.wait_permission().await;
    let fields = &request.tool_call.fields;
    assert!(
        fields
            .title
            .as_deref()
            .unwrap_or_default()
            .contains("avatar"),
        "{fields:?}"
    );
    let content = fields.content.clone().unwrap_or_default();
    let shown = content.iter().find_map(|c| match c {
        ToolCallContent::Content(c) => match &c.content {
            ContentBlock::Image(image) => Some(image.clone()),
            _ => None,
        },
        _ => None,
    });
    let shown = shown.expect("the request shows the picture");
    assert_eq!(shown.mime_type, "image/png");
    let said = content.iter().any(|c| {
        matches!(c, ToolCallContent::Content(c)
            if matches!(&c.content, ContentBlock::Text(t) if t.text.contains("profiles/avatars/march.png")))
    });
    assert!(said, "where it goes: {content:?}");
    assert!(!avatar.exists(), "nothing before the answer");
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    let r = within("the prompt", prompt).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert_eq!(std::fs::read(&avatar).unwrap(), fox);
    let requests = h.server.requests();
    assert!(requests[0].raw_body.contains("\"avatar\""), "offered");
    assert!(
        requests[1].raw_body.contains("Your avatar is now"),
        "{}",
        requests[1].raw_body
    );

    // Refused: the fox stays.
    let prompt = client.prompt(&id, "or this one?");
    let (request, responder) = client.wait_permission().await;
    choose(&request, responder, PermissionOptionKind::RejectOnce);
    within("the prompt", prompt).await.unwrap().unwrap();
    assert_eq!(std::fs::read(&avatar).unwrap(), fox);
}
