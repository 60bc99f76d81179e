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
