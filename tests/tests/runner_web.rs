//! The web capability through `march runner`: the model calls `web_fetch`, the runner
//! fetches a page from a real HTTP server on loopback, and the next request carries the page
//! as markdown; without `[web] allow_private` the loopback address is refused. `web_search`
//! asks a fake SearXNG instance on loopback, and is not offered without `[web.search]`.

#![allow(clippy::unwrap_used)] // The page server, a helper outside #[test] fns, fails the test on setup failure.

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{PermissionOptionKind, SessionUpdate, StopReason};
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
    // An open-world read: the user lets it, since the address could carry data out.
    let (request, responder) = client.wait_permission().await;
    assert_eq!(request.tool_call.tool_call_id.0.as_ref(), "f1");
    choose(&request, responder, PermissionOptionKind::AllowOnce);
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
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let prompt = client.prompt(&id, "read it");
    let (request, responder) = client.wait_permission().await;
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    let r = within("the prompt", prompt).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let requests = h.server.requests();
    let second = &requests.last().unwrap().raw_body;
    assert!(second.contains("allow_private"), "{second}");
    assert!(!second.contains("Version 2"), "{second}");
    // No `[web.search]`: the model is not offered a search it cannot run.
    assert!(!requests[0].raw_body.contains("web_search"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_asks_the_configured_instance_and_the_model_reads_the_results() {
    let results = json!({"query": "release notes", "results": [
        {"title": "Version 2 notes", "url": "https://example.org/notes", "content": "Parsing is twice as fast."}
    ]});
    let routes = [(
        "/search".to_string(),
        PageReply::ok("application/json", results.to_string()),
    )];
    let searx = PageServer::start(routes.into_iter().collect())
        .await
        .unwrap();
    let search = json!({ "query": "release notes" }).to_string();
    let h = Harness::new(vec![
        Turn::stream(vec![Event::tool_call("s1", "web_search", &[&search])]),
        Turn::text("Twice as fast."),
    ])
    .await;
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[web.search]\nprovider = \"searxng\"\nurl = \"{}\"\n",
        searx.url("")
    ));
    std::fs::write(&config, text).unwrap();
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let prompt = client.prompt(&id, "what is in the release notes?");
    let (request, responder) = client.wait_permission().await;
    assert_eq!(request.tool_call.tool_call_id.0.as_ref(), "s1");
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    let r = within("the prompt", prompt).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert_eq!(
        searx.requests()[0].target,
        "/search?q=release+notes&format=json"
    );
    let requests = h.server.requests();
    assert!(requests[0].raw_body.contains("web_search"), "offered");
    let second = &requests.last().unwrap().raw_body;
    for shown in [
        "1. Version 2 notes",
        "https://example.org/notes",
        "Parsing is twice as fast.",
    ] {
        assert!(second.contains(shown), "{shown} in {second}");
    }
}
