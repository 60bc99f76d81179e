//! The web capability through `march runner`: the model calls `web_fetch`, the runner
//! fetches a page from a real HTTP server on loopback, and the next request carries the page
//! as markdown; without `[web] allow_private` the loopback address is refused.

#![allow(clippy::unwrap_used)] // The page server, a helper outside #[test] fns, fails the test on setup failure.

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{SessionUpdate, StopReason};
use march_testkit::{Event, PageReply, PageServer, Turn};
use serde_json::json;

const PAGE: &str = "<html><head><title>Release notes</title></head><body>\
    <nav>Home · Docs · Blog</nav><main><h1>Version 2</h1>\
    <p>Parsing is <strong>twice</strong> as fast.</p></main><footer>© 2026</footer></body></html>";

/// The page on loopback: `/old` redirects to `/notes`, which is the page.
async fn page_server() -> String {
    let routes = [
        ("/notes".to_string(), PageReply::ok("text/html", PAGE)),
        ("/old".to_string(), PageReply::Redirect("/notes".into())),
    ];
    let pages = PageServer::start(routes.into_iter().collect())
        .await
        .unwrap();
    pages.url("")
}

fn fetch_call(url: &str) -> Event {
    Event::tool_call("f1", "web_fetch", &[&json!({ "url": url }).to_string()])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetched_page_reaches_the_model_as_markdown() {
    let base = page_server().await;
    let h = Harness::new(vec![
        Turn::stream(vec![fetch_call(&format!("{base}/old"))]),
        Turn::text("It is twice as fast."),
    ])
    .await;
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[web]\nallow_private = true\n");
    std::fs::write(&config, text).unwrap();
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let prompt = client.prompt(&id, "what changed in version 2?");
    let call = client
        .wait_update(|u| matches!(u, SessionUpdate::ToolCall(_)))
        .await;
    let call = serde_json::to_value(&call).unwrap();
    assert_eq!(call["kind"], "fetch");
    assert_eq!(call["title"], format!("web_fetch {base}/old"));
    let r = within("the prompt", prompt).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let requests = h.server.requests();
    let second = &requests.last().unwrap().raw_body;
    for shown in [
        "Title: Release notes",
        "URL: {base}/notes",
        "Redirected from: {base}/old",
        "# Version 2",
        "**twice**",
    ] {
        let shown = shown.replace("{base}", &base);
        assert!(second.contains(&shown), "{shown} in {second}");
    }
    for left in ["Home · Docs", "© 2026"] {
        assert!(!second.contains(left), "{left} in {second}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_page_is_refused_unless_the_config_allows_it() {
    let base = page_server().await;
    let h = Harness::new(vec![
        Turn::stream(vec![fetch_call(&format!("{base}/notes"))]),
        Turn::text("Refused."),
    ])
    .await;
    let (_runner, client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let r = within("the prompt", client.prompt(&id, "read it"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let requests = h.server.requests();
    let second = &requests.last().unwrap().raw_body;
    assert!(second.contains("allow_private"), "{second}");
    assert!(!second.contains("Version 2"), "{second}");
}
