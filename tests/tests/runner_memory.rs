//! Memory through `march runner`: project and global memory files in the model's system
//! prompt, and the memory tool's appends asking permission like any write.

// Helpers here unwrap like the tests they serve (clippy only exempts #[test] functions).
#![allow(clippy::unwrap_used)]

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{PermissionOptionKind, StopReason};
use march_testkit::{Event, Turn};
use serde_json::json;

fn memory_call(id: &str, args: serde_json::Value) -> Event {
    Event::tool_call(id, "memory", &[&args.to_string()])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_files_reach_the_prompt_and_appends_ask_first() {
    let h = Harness::new(vec![
        Turn::stream(vec![memory_call(
            "m1",
            json!({ "action": "append", "section": "Decisions", "text": "The parser is recursive descent." }),
        )]),
        Turn::text("Noted."),
        Turn::stream(vec![memory_call(
            "m2",
            json!({ "action": "search", "query": "recursive" }),
        )]),
        Turn::text("Found it."),
    ])
    .await;
    let project = h.project();
    std::fs::create_dir_all(project.join(".march")).unwrap();
    std::fs::write(
        project.join(".march/memory.md"),
        "## Decisions\n- Use tokio. MEMO-PROJECT\n",
    )
    .unwrap();
    let global = h.march_home().join("data/memory");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(
        global.join("notes.md"),
        "- Prefers small diffs. MEMO-GLOBAL\n",
    )
    .unwrap();

    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&project).await.session_id;
    let answer = client.prompt(&id, "remember how the parser works");
    let (request, responder) = client.wait_permission().await;
    assert_eq!(request.tool_call.tool_call_id.0.as_ref(), "m1");
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    let r = within("prompt", answer).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);

    let requests = h.server.requests();
    let system = requests[0].body["messages"][0]["content"].to_string();
    assert!(
        system.contains("MEMO-PROJECT") && system.contains("MEMO-GLOBAL"),
        "{system}"
    );
    assert!(
        system.find("MEMO-PROJECT") < system.find("MEMO-GLOBAL"),
        "project memory comes first: {system}"
    );
    let text = std::fs::read_to_string(project.join(".march/memory.md")).unwrap();
    assert_eq!(
        text,
        "## Decisions\n- Use tokio. MEMO-PROJECT\n- The parser is recursive descent.\n"
    );

    // Reading and searching never ask.
    let r = within("prompt", client.prompt(&id, "what did we decide?"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let requests = h.server.requests();
    let result = serde_json::to_string(&requests[3].body["messages"]).unwrap();
    assert!(result.contains("memory.md:3"), "{result}");
}

/// A memory server on loopback serving `dir` to the token `remote-token`: its address, the
/// token that stops it, and its task, which ends once it no longer listens.
async fn memory_server(
    dir: &std::path::Path,
    addr: &str,
) -> (
    std::net::SocketAddr,
    tokio_util::sync::CancellationToken,
    tokio::task::JoinHandle<Result<(), march_tools::memory::server::MemoryServerError>>,
) {
    use march_tools::memory::server::{MemoryClient, MemoryServerConfig, serve_memory};
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let at = listener.local_addr().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let config = MemoryServerConfig {
        dir: dir.to_path_buf(),
        clients: vec![MemoryClient {
            name: "this-laptop".into(),
            token: "remote-token".into(),
        }],
        tls: None,
    };
    let task = tokio::spawn(serve_memory(listener, config, stop.clone()));
    (at, stop, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_memory_reaches_the_prompt_and_survives_the_server_going_down() {
    use agent_client_protocol::v1::schema::{
        ClientCapabilities, ClientSessionCapabilities, NoticeCapabilities, SessionUpdate,
    };
    let h = Harness::new(vec![
        Turn::text("Hello."),
        Turn::stream(vec![memory_call(
            "m1",
            json!({ "action": "append", "scope": "remote", "file": "team.md", "section": "Deploys", "text": "Friday deploys need two reviewers." }),
        )]),
        Turn::text("Kept."),
        Turn::text("Back."),
    ])
    .await;
    let served = tempfile::tempdir().unwrap();
    std::fs::write(
        served.path().join("team.md"),
        "## Deploys\n- staging needs the VPN. MEMO-REMOTE\n",
    )
    .unwrap();
    let (at, stop, task) = memory_server(served.path(), "127.0.0.1:0").await;
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!("\n[memory]\nremote = \"http://{at}\"\n"));
    std::fs::write(&config, text).unwrap();
    let mut auth =
        march_core::auth::AuthStore::load_file(&h.march_home().join("auth.json")).unwrap();
    auth.set("memory-remote", "remote-token").unwrap();

    let caps = ClientCapabilities::new()
        .session(ClientSessionCapabilities::new().notices(NoticeCapabilities::new()));
    let (_runner, mut client) = h.connect_offering(caps).await;
    let id = client.new_session(&h.project()).await.session_id;
    let r = within("prompt", client.prompt(&id, "hi"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let system = h.server.requests()[0].body["messages"][0]["content"].to_string();
    assert!(system.contains("MEMO-REMOTE"), "{system}");
    assert!(system.contains("scope=\\\"remote\\\""), "{system}");

    // The server goes down: one notice, the mirrored memory still in the prompt, and the
    // append kept.
    stop.cancel();
    task.await.unwrap().unwrap();
    let answer = client.prompt(&id, "remember the Friday rule");
    let notice = client
        .wait_update(|u| matches!(u, SessionUpdate::Notice(_)))
        .await;
    let said = format!("{notice:?}");
    assert!(said.contains("Remote memory unavailable"), "{said}");
    let (request, responder) = client.wait_permission().await;
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    let r = within("prompt", answer).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let requests = h.server.requests();
    let system = requests[1].body["messages"][0]["content"].to_string();
    assert!(system.contains("MEMO-REMOTE"), "the mirror: {system}");
    assert!(
        requests[2]
            .raw_body
            .contains("is kept here and sent when it answers again"),
        "{}",
        requests[2].raw_body
    );
    assert!(
        !std::fs::read_to_string(served.path().join("team.md"))
            .unwrap()
            .contains("Friday")
    );

    // Back: the next run sends the kept append first.
    let (_, _stop, _) = memory_server(served.path(), &at.to_string()).await;
    let r = within("prompt", client.prompt(&id, "and now?"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let team = std::fs::read_to_string(served.path().join("team.md")).unwrap();
    assert!(
        team.contains("- Friday deploys need two reviewers."),
        "{team}"
    );
}
