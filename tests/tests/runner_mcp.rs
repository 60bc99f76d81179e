//! MCP servers through `march runner`, with the scripted model calling their tools: the
//! reference server `@modelcontextprotocol/server-everything` (npm) over stdio and streamable
//! HTTP, and the Python SDK server of `tests/fixtures/python_mcp_server.py`; servers from
//! config.toml, from the client's `session/new` and from a project's `.mcp.json`.

// Helpers here unwrap like the tests they serve (clippy only exempts #[test] functions).
#![allow(clippy::unwrap_used)]

#[path = "support/acp_client.rs"]
mod acp_client;

use std::path::Path;
use std::time::{Duration, Instant};

use acp_client::*;
use agent_client_protocol::v1::schema::{
    McpServer, McpServerHttp, NewSessionRequest, PermissionOptionKind, SessionUpdate, StopReason,
    ToolCallStatus,
};
use march_testkit::{Event, Turn};
use serde_json::json;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/python_mcp_server.py");

fn call(id: &str, tool: &str, args: serde_json::Value) -> Event {
    Event::tool_call(id, tool, &[&args.to_string()])
}

/// Adds `text` to the harness's config.toml.
fn configure(h: &Harness, text: &str) {
    let path = h.march_home().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    // Top-level keys must come before the tables.
    if let Some(top) = text.strip_prefix("TOP ") {
        config.insert_str(0, &format!("{top}\n"));
    } else {
        config.push_str(text);
    }
    std::fs::write(path, config).unwrap();
}

/// `[mcp.servers.<name>]` running the Python fixture.
fn fixture_server(name: &str) -> String {
    format!(
        "\n[mcp.servers.{name}]\ncommand = {:?}\nargs = [{FIXTURE:?}, \"--name\", {name:?}]\n",
        march_testkit::test_tools::mcp_python()
            .display()
            .to_string()
    )
}

/// The tool results the model was sent in request `i`, as JSON text.
fn sent(h: &Harness, i: usize) -> String {
    h.server.requests()[i].raw_body.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_servers_tools_images_resources_instructions_and_prompts_reach_the_model() {
    let h = Harness::new(vec![
        Turn::stream(vec![call(
            "c1",
            "mcp__everything__echo",
            json!({"message": "round trip"}),
        )]),
        Turn::text("Echoed."),
        Turn::stream(vec![call(
            "c2",
            "mcp__everything__get-tiny-image",
            json!({}),
        )]),
        Turn::text("Seen."),
        Turn::stream(vec![call(
            "c3",
            "mcp__everything__get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 1}),
        )]),
        Turn::text("Read."),
        Turn::text("Prompted."),
    ])
    .await;
    configure(
        &h,
        &format!(
            "\n[mcp.servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\n",
            march_testkit::test_tools::mcp_everything()
                .display()
                .to_string()
        ),
    );
    // Model `m` takes images, so the tiny image reaches it as an image.
    h.model_takes_images();
    let (_runner, mut client) = h.connect().await;
    let init = client.init.as_ref().unwrap();
    let mcp = &init.agent_capabilities.mcp_capabilities;
    assert!(
        mcp.http && !mcp.sse,
        "http is advertised, SSE is not: {mcp:?}"
    );
    let id = client.new_session(&h.project()).await.session_id;

    prompt_ok(&client, &id, "echo something").await;
    let first = &h.server.requests()[0].body;
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"mcp__everything__echo"), "{tools:?}");
    let system = first["messages"][0]["content"].to_string();
    assert!(
        system.contains("Everything Server") && system.contains("mcp:everything"),
        "the server's instructions are in the system prompt"
    );
    assert!(sent(&h, 1).contains("Echo: round trip"), "{}", sent(&h, 1));
    // Read-only by its hints: it ran without asking (a permission request fails wait_update).
    client
        .wait_update(|u| is_status(u, ToolCallStatus::Completed))
        .await;

    prompt_ok(&client, &id, "show the image").await;
    assert!(
        sent(&h, 3).contains("data:image/png;base64,"),
        "the image reaches the model: {}",
        sent(&h, 3)
    );

    prompt_ok(&client, &id, "read the resource").await;
    assert!(sent(&h, 5).contains("<resource uri="), "{}", sent(&h, 5));

    // The prompts are slash commands, announced once the servers ran.
    let commands = client
        .updates
        .iter()
        .filter_map(|n| match &n.update {
            SessionUpdate::AvailableCommandsUpdate(u) => Some(u.available_commands.clone()),
            _ => None,
        })
        .next_back()
        .unwrap();
    let args_prompt = commands
        .iter()
        .find(|c| c.name == "mcp__everything__args-prompt")
        .unwrap_or_else(|| panic!("{commands:?}"));
    assert!(format!("{:?}", args_prompt.input).contains("<city> [state]"));
    prompt_ok(&client, &id, "/mcp__everything__args-prompt Lisbon").await;
    let body = sent(&h, 6);
    assert!(
        body.contains("Lisbon") && !body.contains("/mcp__everything"),
        "{body}"
    );
}

/// A free port on loopback.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on `port`.
async fn listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_the_client_gives_in_session_new_works_over_streamable_http() {
    let h = Harness::new(vec![
        Turn::stream(vec![call(
            "c1",
            "mcp__web__echo",
            json!({"message": "over http"}),
        )]),
        Turn::text("Echoed."),
    ])
    .await;
    let port = free_port();
    let mut server = tokio::process::Command::new(march_testkit::test_tools::mcp_everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    listening(port).await;
    let (_runner, client) = h.connect().await;
    let request = NewSessionRequest::new(h.project()).mcp_servers(vec![McpServer::Http(
        McpServerHttp::new("web", format!("http://127.0.0.1:{port}/mcp")),
    )]);
    let id = within("session/new", client.cx.send_request(request).block_task())
        .await
        .unwrap()
        .session_id;
    prompt_ok(&client, &id, "echo over http").await;
    assert!(sent(&h, 1).contains("Echo: over http"), "{}", sent(&h, 1));
    server.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_tool_asks_and_a_read_only_one_does_not_in_auto_edit() {
    let h = Harness::new(vec![
        Turn::stream(vec![call(
            "c1",
            "mcp__fx__delete_everything",
            json!({"confirm": "yes"}),
        )]),
        Turn::text("Deleted."),
        Turn::stream(vec![call("c2", "mcp__fx__echo", json!({"text": "quiet"}))]),
        Turn::text("Echoed."),
    ])
    .await;
    configure(&h, "TOP permission_mode = \"auto-edit\"");
    configure(&h, &fixture_server("fx"));
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let answer = client.prompt(&id, "delete it");
    let (request, responder) = client.wait_permission().await;
    assert_eq!(request.tool_call.tool_call_id.0.as_ref(), "c1");
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    let r = within("prompt", answer).await.unwrap().unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert!(sent(&h, 1).contains("deleted (yes)"));

    let answer = client.prompt(&id, "echo");
    client
        .wait_update(|u| is_status(u, ToolCallStatus::Completed))
        .await;
    within("prompt", answer).await.unwrap().unwrap();
    assert!(sent(&h, 3).contains("echo: quiet"));
}

/// Writes the project's `.mcp.json` with the fixture as server `proj`.
fn project_file(project: &Path) {
    let text = json!({"mcpServers": {"proj": {
        "command": march_testkit::test_tools::mcp_python(),
        "args": [FIXTURE, "--name", "proj"]
    }}});
    std::fs::write(project.join(".mcp.json"), text.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_mcp_json_is_asked_about_once() {
    let h = Harness::new(vec![
        Turn::stream(vec![call(
            "c1",
            "mcp__proj__echo",
            json!({"text": "trusted"}),
        )]),
        Turn::text("Echoed."),
        Turn::stream(vec![call(
            "c2",
            "mcp__proj__echo",
            json!({"text": "again"}),
        )]),
        Turn::text("Echoed again."),
    ])
    .await;
    project_file(&h.project());
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let answer = client.prompt(&id, "use the project's server");
    let (request, responder) = client.wait_permission().await;
    let title = request.tool_call.fields.title.clone().unwrap_or_default();
    assert!(
        title.contains(".mcp.json") && title.contains("proj"),
        "{title}"
    );
    choose(&request, responder, PermissionOptionKind::AllowAlways);
    within("prompt", answer).await.unwrap().unwrap();
    assert!(sent(&h, 1).contains("echo: trusted"), "{}", sent(&h, 1));

    // A new session of the project (and a new runner) does not ask again.
    let (_runner2, mut client2) = h.connect().await;
    let id2 = client2.new_session(&h.project()).await.session_id;
    let answer = client2.prompt(&id2, "again");
    client2
        .wait_update(|u| is_status(u, ToolCallStatus::Completed))
        .await;
    within("prompt", answer).await.unwrap().unwrap();
    assert!(sent(&h, 3).contains("echo: again"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_leaves_the_session_working() {
    let h = Harness::new(vec![
        Turn::stream(vec![call(
            "c1",
            "mcp__fx__echo",
            json!({"text": "still here"}),
        )]),
        Turn::text("Fine."),
    ])
    .await;
    configure(
        &h,
        "\n[mcp.servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n\
         [mcp.servers.nocommand]\nenabled = true\n",
    );
    configure(&h, &fixture_server("fx"));
    let (_runner, client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    prompt_ok(&client, &id, "go").await;
    assert!(sent(&h, 1).contains("echo: still here"));
}
