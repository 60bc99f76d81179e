//! Against a real MCP server written with the Python `mcp` SDK
//! (`tests/fixtures/python_mcp_server.py`, its SDK installed by `.ci/install-test-tools`),
//! over stdio and streamable HTTP.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use march_core::mcp_config::{McpOrigin, McpServerDef, McpTransport};
use march_core::message::UserContent;
use march_core::restart::RestartPolicy;
use march_core::tool::{Tool, ToolUpdates};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::test_support::{run_tool, run_tool_with};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/python_mcp_server.py"
);

/// The fixture over stdio, named `name`, with `extra` arguments.
fn fixture(name: &str, extra: &[&str]) -> McpServerDef {
    let mut args = vec![FIXTURE.to_string(), "--name".into(), name.into()];
    args.extend(extra.iter().map(|a| a.to_string()));
    let mut def = McpServerDef::new(
        name,
        McpTransport::Stdio {
            command: march_testkit::test_tools::mcp_python()
                .display()
                .to_string(),
            args,
            env: BTreeMap::new(),
            cwd: None,
        },
        McpOrigin::Config,
    );
    def.start_timeout = Duration::from_secs(60);
    def
}

/// Restarts at once, a few times: the tests wait on states, not on backoff.
const QUICK: RestartPolicy = RestartPolicy {
    max_attempts: 2,
    initial_backoff: Duration::from_millis(10),
    max_backoff: Duration::from_millis(10),
    healthy_after: Duration::from_secs(600),
};

/// A hub over `defs` and the notices it gives.
fn hub(defs: Vec<McpServerDef>) -> (Arc<McpHub>, Arc<Mutex<Vec<McpNotice>>>) {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let sink = notices.clone();
    let hub = McpHub::with_policy(
        std::env::temp_dir(),
        defs,
        Vec::new(),
        Arc::new(move |n| sink.lock().push(n)),
        QUICK,
    );
    (hub, notices)
}

fn tool(tools: &[Arc<dyn Tool>], name: &str) -> Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no {name} among {:?}",
                tools.iter().map(|t| t.name()).collect::<Vec<_>>()
            )
        })
}

/// Waits (boundedly) until `done` holds for the hub.
async fn until(hub: &Arc<McpHub>, what: &str, done: impl Fn(&Arc<McpHub>) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done(hub) {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {:?}",
            hub.status()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn phase(hub: &McpHub, name: &str) -> ServerPhase {
    hub.status()
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.phase)
        .unwrap_or_else(|| panic!("no server {name}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_servers_tools_prompts_and_resources_work_through_the_hub() {
    let (hub, _) = hub(vec![fixture("fixture", &[])]);
    assert_eq!(
        phase(&hub, "fixture"),
        ServerPhase::Idle,
        "nothing starts before it is needed"
    );
    hub.ensure_started().await;
    assert_eq!(phase(&hub, "fixture"), ServerPhase::Ready);
    let instructions = hub.instructions();
    assert_eq!(instructions[0].source, "mcp:fixture");
    assert_eq!(instructions[0].text, "Use echo to repeat text back.");
    let tools = hub.tools();
    let echo = tool(&tools, "mcp__fixture__echo");
    // Its hints read like a built-in tool's: read-only, so harmless.
    assert!(echo.annotations().read_only && echo.annotations().is_harmless());
    assert_eq!(echo.parameters()["properties"]["text"]["type"], "string");
    // Destructive, and a tool without hints (MCP's defaults): both ask.
    assert!(
        !tool(&tools, "mcp__fixture__delete_everything")
            .annotations()
            .is_harmless()
    );
    let fail = tool(&tools, "mcp__fixture__fail");
    assert!(!fail.annotations().is_harmless());

    let out = run_tool(echo.as_ref(), serde_json::json!({"text": "hi there"}))
        .await
        .unwrap();
    assert!(
        out.text_content().contains("echo: hi there"),
        "{}",
        out.text_content()
    );
    // The server's `isError` result is the tool's error (this SDK words it itself).
    let err = run_tool(fail.as_ref(), serde_json::json!({"reason": "no way"}))
        .await
        .unwrap_err();
    assert!(err.0.contains("Error executing tool fail"), "{}", err.0);
    // A long output is cut as bash's is: its end kept, said so.
    let many = tool(&tools, "mcp__fixture__many_lines");
    let out = run_tool(many.as_ref(), serde_json::json!({"count": 5000}))
        .await
        .unwrap();
    let text = out.text_content();
    assert!(
        text.starts_with("[output cut to its last"),
        "{}",
        &text[..80]
    );
    assert!(
        text.contains("line 4999") && !text.contains("line 10\n"),
        "cut from the start"
    );
    // An image result is an image the model sees.
    let picture = tool(&tools, "mcp__fixture__picture");
    let out = run_tool(picture.as_ref(), serde_json::json!({}))
        .await
        .unwrap();
    assert!(
        out.content
            .iter()
            .any(|c| matches!(c, UserContent::Image(i) if i.mime_type == "image/png")),
        "{:?}",
        out.content
    );
    // Progress reaches the call's updates.
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let updates = ToolUpdates::new(move |o| seen.lock().push(o.text_content()));
    let count = tool(&tools, "mcp__fixture__slow_count");
    let out = count
        .execute(
            "call-1",
            serde_json::json!({"steps": 3}),
            CancellationToken::new(),
            updates,
        )
        .await
        .unwrap();
    assert_eq!(out.text_content(), "counted to 3");
    assert!(
        progress.lock().iter().any(|p| p.contains("step 3 (3/3)")),
        "{:?}",
        progress.lock()
    );

    // Resources: listed and read through one tool.
    let resources = tool(&tools, RESOURCES_TOOL);
    assert!(resources.annotations().is_harmless());
    let listing = run_tool(resources.as_ref(), serde_json::json!({}))
        .await
        .unwrap();
    assert!(
        listing.text_content().contains("note://readme"),
        "{}",
        listing.text_content()
    );
    let read = run_tool(
        resources.as_ref(),
        serde_json::json!({"uri": "note://readme"}),
    )
    .await
    .unwrap();
    assert!(
        read.text_content()
            .contains("The readme of the fixture server.")
    );

    // A prompt is a slash command.
    let prompts = hub.prompts();
    let review = prompts
        .iter()
        .find(|p| p.command == "mcp__fixture__review")
        .unwrap();
    assert_eq!(review.hint(), "<file> [focus]");
    let message = hub
        .run_prompt("mcp__fixture__review", "src/main.rs naming")
        .await
        .unwrap()
        .unwrap();
    let UserContent::Text(text) = &message[0] else {
        panic!("{message:?}")
    };
    assert_eq!(text.text, "Please review src/main.rs, focusing on naming.");
    assert!(
        hub.run_prompt("mcp__fixture__review", "")
            .await
            .unwrap()
            .is_err(),
        "file is required"
    );
    assert!(hub.run_prompt("not_a_prompt", "").await.is_none());

    // The tool list changes while it runs: followed.
    let grow = tool(&tools, "mcp__fixture__grow");
    run_tool(grow.as_ref(), serde_json::json!({}))
        .await
        .unwrap();
    until(&hub, "the grown tool", |h| {
        h.tools().iter().any(|t| t.name() == "mcp__fixture__grown")
    })
    .await;
    hub.shutdown().await;
    assert_eq!(phase(&hub, "fixture"), ServerPhase::Stopped);
    assert!(hub.tools().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_serves_the_same_tools() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(march_testkit::test_tools::mcp_python())
        .args([FIXTURE, "--http", &port.to_string()])
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut def = McpServerDef::new(
        "web",
        McpTransport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: BTreeMap::from([("X-Test".to_string(), "1".to_string())]),
        },
        McpOrigin::Client,
    );
    def.start_timeout = Duration::from_secs(5);
    // The server takes a moment to listen: start again until it answers.
    let deadline = Instant::now() + Duration::from_secs(60);
    let hub = loop {
        let (hub, _) = hub(vec![def.clone()]);
        hub.ensure_started().await;
        if phase(&hub, "web") == ServerPhase::Ready {
            break hub;
        }
        hub.shutdown().await;
        assert!(Instant::now() < deadline, "the HTTP server never answered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let echo = tool(&hub.tools(), "mcp__web__echo");
    let out = run_tool(echo.as_ref(), serde_json::json!({"text": "over http"}))
        .await
        .unwrap();
    assert!(out.text_content().contains("echo: over http"));
    hub.shutdown().await;
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_go_wrong_cost_a_call_not_the_session() {
    let mut stalling = fixture("slow", &[]);
    stalling.call_timeout = Duration::from_secs(1);
    let (hub, notices) = hub(vec![
        fixture("dead", &["--crash-at-start"]),
        fixture("odd", &["--bad-schema"]),
        stalling,
    ]);
    hub.ensure_started().await;
    // The server that crashes at start is tried again and then disabled, with notices.
    until(&hub, "the crashing server disabled", |h| {
        phase(h, "dead") == ServerPhase::Disabled
    })
    .await;
    let said: Vec<String> = notices.lock().iter().map(|n| n.text.clone()).collect();
    assert!(
        said.iter()
            .any(|t| t.contains("dead") && t.contains("could not start")),
        "{said:?}"
    );
    assert!(said.iter().any(|t| t.contains("now disabled")), "{said:?}");
    // The invalid schema is left out, with a notice; the server's other tools work.
    assert!(
        said.iter()
            .any(|t| t.contains("broken") && t.contains("invalid")),
        "{said:?}"
    );
    let tools = hub.tools();
    assert!(!tools.iter().any(|t| t.name() == "mcp__odd__broken"));
    let echo = tool(&tools, "mcp__odd__echo");
    assert!(
        run_tool(echo.as_ref(), serde_json::json!({"text": "x"}))
            .await
            .is_ok()
    );

    // A call that never answers ends at its timeout; a cancelled one at once.
    let stall = tool(&tools, "mcp__slow__stall");
    let err = run_tool(stall.as_ref(), serde_json::json!({}))
        .await
        .unwrap_err();
    assert!(
        err.0.contains("did not answer stall within 1 s"),
        "{}",
        err.0
    );
    let cancel = CancellationToken::new();
    let call = run_tool_with(stall.as_ref(), serde_json::json!({}), cancel.clone());
    cancel.cancel();
    assert_eq!(call.await.unwrap_err().0, "Operation aborted");
    // 50 MB comes back cut to the limits.
    let huge = tool(&tools, "mcp__odd__huge");
    let out = run_tool(huge.as_ref(), serde_json::json!({}))
        .await
        .unwrap();
    assert!(
        out.text_content().len() <= 60 * 1024,
        "{}",
        out.text_content().len()
    );
    assert!(out.text_content().starts_with("[output cut"));
    // A stderr flood does not block the server.
    let flood = tool(&tools, "mcp__odd__flood");
    let out = run_tool(flood.as_ref(), serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "flooded");

    // A crash mid-call is that call's error; the server comes back and works.
    let crash = tool(&tools, "mcp__odd__crash");
    let err = run_tool(crash.as_ref(), serde_json::json!({}))
        .await
        .unwrap_err();
    assert!(err.0.contains("MCP server odd"), "{}", err.0);
    until(&hub, "odd restarted", |h| {
        h.status()
            .iter()
            .any(|s| s.name == "odd" && s.phase == ServerPhase::Ready && s.restarts == 1)
    })
    .await;
    let out = run_tool(echo.as_ref(), serde_json::json!({"text": "again"}))
        .await
        .unwrap();
    assert!(
        out.text_content().contains("echo: again"),
        "the old tool reaches the new process"
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clashing_names_keep_the_first_and_say_so() {
    let mut config = fixture("a-b", &[]);
    config.enabled_tools = Some(vec!["echo".into()]);
    let mut client = fixture("a-b", &[]);
    client.origin = McpOrigin::Client;
    client.disabled_tools = vec!["crash".into()];
    // `a.b` becomes `a_b` in tool names, as `a_b` does.
    let (hub, notices) = hub(vec![
        config,
        client,
        fixture("a.b", &[]),
        fixture("a_b", &[]),
    ]);
    assert!(
        hub.problems()
            .iter()
            .any(|p| p.contains("config.toml is hidden by the one from the client")),
        "{:?}",
        hub.problems()
    );
    hub.ensure_started().await;
    let tools = hub.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    // The client's definition won: all tools but the disabled one.
    assert!(
        names.contains(&"mcp__a-b__fail") && !names.contains(&"mcp__a-b__crash"),
        "{names:?}"
    );
    assert_eq!(names.iter().filter(|n| **n == "mcp__a_b__echo").count(), 1);
    assert!(
        notices
            .lock()
            .iter()
            .any(|n| n.text.contains("mcp__a_b__echo") && n.text.contains("only the first"))
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_left_running_after_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file: PathBuf = dir.path().join("pid");
    let python = march_testkit::test_tools::mcp_python()
        .display()
        .to_string();
    // A wrapper shell that starts the server as its child, as `npx` does.
    let script = format!(
        "echo $$ > '{}'; '{python}' '{FIXTURE}'; true",
        pid_file.display()
    );
    let def = McpServerDef::new(
        "wrapped",
        McpTransport::Stdio {
            command: "sh".into(),
            args: vec!["-c".into(), script],
            env: BTreeMap::new(),
            cwd: Some(dir.path().to_path_buf()),
        },
        McpOrigin::Config,
    );
    let (hub, _) = hub(vec![def]);
    hub.ensure_started().await;
    assert_eq!(
        phase(&hub, "wrapped"),
        ServerPhase::Ready,
        "{:?}",
        hub.status()
    );
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let group_alive = || {
        rustix::process::test_kill_process_group(rustix::process::Pid::from_raw(pid).unwrap())
            .is_ok()
    };
    assert!(group_alive());
    hub.shutdown().await;
    assert!(!group_alive(), "the server's process group is gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_callers_start_a_server_once_and_both_wait_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let python = march_testkit::test_tools::mcp_python()
        .display()
        .to_string();
    // Each start of the server appends a line.
    let script = format!(
        "echo start >> '{}'; exec '{python}' '{FIXTURE}'",
        starts.display()
    );
    let def = McpServerDef::new(
        "once",
        McpTransport::Stdio {
            command: "sh".into(),
            args: vec!["-c".into(), script],
            env: BTreeMap::new(),
            cwd: None,
        },
        McpOrigin::Config,
    );
    let (hub, _) = hub(vec![def]);
    let (a, b) = (hub.clone(), hub.clone());
    tokio::join!(a.ensure_started(), b.ensure_started());
    // Both returned only once it was up.
    assert_eq!(
        phase(&hub, "once"),
        ServerPhase::Ready,
        "{:?}",
        hub.status()
    );
    assert_eq!(std::fs::read_to_string(&starts).unwrap().lines().count(), 1);
    hub.shutdown().await;
}
