//! The browser tools through `march runner`: the runner offers them where Chromium is, the
//! first call asks (an "always" answer covers the session's later calls), the tool starts the
//! user's browser daemon, and a screenshot reaches the model as an image. Closing the session
//! closes its tabs.

#![allow(clippy::unwrap_used)] // Helpers outside #[test] fns fail the test on setup failure.

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{PermissionOptionKind, StopReason};
use march_e2e::march_bin;
use march_testkit::{Event, PageReply, PageServer, Turn};
use serde_json::json;

const PAGE: &str = "<html><head><title>Status board</title></head><body><main>\
    <h1>All green</h1></main></body></html>";

fn browser(id: &str, args: serde_json::Value) -> Turn {
    Turn::stream(vec![Event::tool_call(id, "browser", &[&args.to_string()])])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_browses_and_the_model_sees_the_screenshot() {
    let routes = [("/board".to_string(), PageReply::ok("text/html", PAGE))];
    let pages = PageServer::start(routes.into_iter().collect())
        .await
        .unwrap();
    let url = pages.url("/board");
    let h = Harness::new(vec![
        browser("b1", json!({"action": "navigate", "url": url})),
        browser("b2", json!({"action": "screenshot"})),
        Turn::text("All green."),
    ])
    .await;
    h.model_takes_images();
    let chromium = march_testkit::test_tools::chromium();
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[browser]\nexecutable = \"{}\"\n",
        chromium.display()
    ));
    std::fs::write(&config, text).unwrap();

    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let prompt = client.prompt(&id, "is the board green?");
    let (request, responder) = client.wait_permission().await;
    assert_eq!(request.tool_call.tool_call_id.0.as_ref(), "b1");
    // "Always allow browser in this session": the screenshot does not ask again.
    choose(&request, responder, PermissionOptionKind::AllowAlways);
    let r = within("the prompt", prompt).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);

    let requests = h.server.requests();
    let tools = requests[0].raw_body.clone();
    assert!(
        tools.contains("\"browser\"") && tools.contains("browser_evaluate"),
        "offered"
    );
    let after_navigate = &requests[1].raw_body;
    assert!(
        after_navigate.contains("Title: Status board"),
        "{after_navigate}"
    );
    assert!(
        after_navigate.contains(&format!("URL: {url}")),
        "{after_navigate}"
    );
    let after_screenshot = &requests[2].raw_body;
    assert!(
        after_screenshot.contains("Screenshot, 1280×800 px."),
        "{after_screenshot}"
    );
    assert!(
        after_screenshot.contains("data:image/png;base64,"),
        "the image reaches the model"
    );

    let out = std::process::Command::new(march_bin())
        .args(["browser", "status"])
        .env("MARCH_HOME", h.march_home())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(status.contains("Status board"), "{status}");
    let out = std::process::Command::new(march_bin())
        .args(["browser", "stop"])
        .env("MARCH_HOME", h.march_home())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}
