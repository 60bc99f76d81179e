//! Against a real MCP server written with the Python `mcp` SDK
//! (`tests/fixtures/python_mcp_server.py`, its SDK installed by `.ci/install-test-tools`).

use super::*;
use crate::test_support::run_tool;

fn fixture() -> StdioServer {
    StdioServer {
        name: "fixture".into(),
        command: march_testkit::test_tools::mcp_python()
            .display()
            .to_string(),
        args: vec![
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../tests/fixtures/python_mcp_server.py"
            )
            .to_string(),
        ],
        env: BTreeMap::new(),
        cwd: None,
    }
}

fn tool<'a>(tools: &'a [Arc<dyn Tool>], name: &str) -> &'a Arc<dyn Tool> {
    tools.iter().find(|t| t.name() == name).unwrap_or_else(|| {
        panic!(
            "no {name} among {:?}",
            tools.iter().map(|t| t.name()).collect::<Vec<_>>()
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_servers_tools_run_as_march_tools() {
    let server = McpServer::start(&fixture(), Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        server.instructions.as_deref(),
        Some("Use echo to repeat text back.")
    );
    let (tools, skipped) = server.tools().await.unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let echo = tool(&tools, "mcp__fixture__echo");
    // Its hints read like a built-in tool's: read-only, so harmless.
    assert!(echo.annotations().read_only && echo.annotations().is_harmless());
    assert_eq!(echo.parameters()["properties"]["text"]["type"], "string");
    // A tool without hints is MCP's default: destructive, open-world: it asks.
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
    let err = run_tool(fail.as_ref(), serde_json::json!({"reason": "no way"}))
        .await
        .unwrap_err();
    // The server's `isError` result is the tool's error (this SDK words it itself).
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
    server.stop().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_or_never_answers_is_an_error_not_a_hang() {
    let missing = StdioServer {
        command: "/nonexistent/mcp-server".into(),
        ..fixture()
    };
    let err = McpServer::start(&missing, Duration::from_secs(5))
        .await
        .err()
        .unwrap();
    assert!(matches!(err, McpError::Spawn { .. }), "{err}");
    // `sleep` starts, never reads the handshake, never answers it.
    let silent = StdioServer {
        command: "sleep".into(),
        args: vec!["600".into()],
        ..fixture()
    };
    let err = McpServer::start(&silent, Duration::from_millis(500))
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("did not answer"), "{err}");
}
