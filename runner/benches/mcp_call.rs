//! MCP tool calls: one call through March (the run's tools, the argument check against the
//! tool's schema, the permission gate, execution on a task of its own, the result mapped and
//! cut) against a bare `rmcp` client calling the same tool of the same server, in the same
//! run; and the time to start five stdio servers for one session, against starting them one
//! after another with bare `rmcp` clients.
//!
//! Servers: the reference server `@modelcontextprotocol/server-everything` (Node) and the
//! Python SDK test server `tests/fixtures/python_mcp_server.py`, both installed by
//! `.ci/install-test-tools`.
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use march_core::mcp_config::{McpOrigin, McpServerDef, McpTransport};
use march_core::message::ToolCall;
use march_runner::agent::bench::GatedTools;
use march_tools::mcp::{McpHub, ServerPhase};
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// Calls measured per path and server, after the warm-up calls.
const CALLS: usize = 3000;
const WARMUP: usize = 300;
/// Start-up measurements of five servers.
const STARTS: usize = 5;

struct Server {
    label: &'static str,
    command: PathBuf,
    args: Vec<String>,
    tool: &'static str,
    arguments: Value,
}

fn servers() -> Vec<Server> {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/python_mcp_server.py");
    vec![
        Server {
            label: "server-everything (Node)",
            command: march_testkit::test_tools::mcp_everything(),
            args: vec!["stdio".into()],
            tool: "echo",
            arguments: json!({"message": "hello from the bench"}),
        },
        Server {
            label: "Python SDK (FastMCP)",
            command: march_testkit::test_tools::mcp_python(),
            args: vec![fixture.display().to_string(), "--name".into(), "fx".into()],
            tool: "echo",
            arguments: json!({"text": "hello from the bench"}),
        },
    ]
}

fn def(name: &str, s: &Server) -> McpServerDef {
    McpServerDef::new(
        name,
        McpTransport::Stdio {
            command: s.command.display().to_string(),
            args: s.args.clone(),
            env: BTreeMap::new(),
            cwd: None,
        },
        McpOrigin::Config,
    )
}

/// A bare client speaking the protocol version March negotiates (a server may do more per
/// call under another), so only the client side differs.
async fn bare(s: &Server) -> RunningService<RoleClient, ClientConfig> {
    let mut command = tokio::process::Command::new(&s.command);
    command.args(&s.args).stderr(std::process::Stdio::null());
    ClientConfig::default()
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
        .serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn micros(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n as f64
}

/// Median µs of one call through March, bare, and their ratio.
async fn call_overhead(project: &Path, s: &Server) -> (f64, f64, f64) {
    let hub = McpHub::new(
        project.to_path_buf(),
        vec![def("bench", s)],
        Vec::new(),
        Arc::new(|_| {}),
    );
    hub.ensure_started().await;
    assert_eq!(
        hub.status()[0].phase,
        ServerPhase::Ready,
        "{:?}",
        hub.status()
    );
    let gated = GatedTools::new(project.to_path_buf(), hub.tools());
    let call = ToolCall {
        id: "c1".into(),
        name: format!("mcp__bench__{}", s.tool),
        arguments: s.arguments.clone(),
        thought_signature: None,
    };
    let client = bare(s).await;
    let params =
        CallToolRequestParams::new(s.tool).with_arguments(s.arguments.as_object().unwrap().clone());
    let through_march = async || {
        let t = Instant::now();
        let outcome = gated.call(&call).await.unwrap();
        assert!(!outcome.content.is_empty());
        t.elapsed()
    };
    let direct = async || {
        let t = Instant::now();
        let result = client.call_tool(params.clone()).await.unwrap();
        assert!(!result.content.is_empty());
        t.elapsed()
    };
    for _ in 0..WARMUP {
        through_march().await;
        direct().await;
    }
    // One call of each in turn, the order alternating, so drift (a server's garbage
    // collection, the machine's other work) falls on both alike; medians of single calls.
    let (mut m, mut b) = (Vec::with_capacity(CALLS), Vec::with_capacity(CALLS));
    for i in 0..CALLS {
        if i % 2 == 0 {
            m.push(micros(through_march().await, 1));
            b.push(micros(direct().await, 1));
        } else {
            b.push(micros(direct().await, 1));
            m.push(micros(through_march().await, 1));
        }
    }
    client.cancel().await.unwrap();
    hub.shutdown().await;
    let (m, b) = (median(m), median(b));
    (m, b, m / b)
}

/// Median ms to start five servers for one session with March (in parallel), five bare
/// clients one after another, and one bare client.
async fn five_starts(project: &Path, s: &Server) -> (f64, f64, f64) {
    let (mut march, mut serial, mut one) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..STARTS {
        let defs: Vec<McpServerDef> = (1..=5).map(|i| def(&format!("s{i}"), s)).collect();
        let hub = McpHub::new(project.to_path_buf(), defs, Vec::new(), Arc::new(|_| {}));
        let t = Instant::now();
        hub.ensure_started().await;
        march.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(hub.status().iter().all(|st| st.phase == ServerPhase::Ready));
        hub.shutdown().await;

        let t = Instant::now();
        let mut clients = Vec::new();
        for _ in 0..5 {
            clients.push(bare(s).await);
        }
        serial.push(t.elapsed().as_secs_f64() * 1e3);
        for c in clients {
            c.cancel().await.unwrap();
        }

        let t = Instant::now();
        let c = bare(s).await;
        one.push(t.elapsed().as_secs_f64() * 1e3);
        c.cancel().await.unwrap();
    }
    (median(march), median(serial), median(one))
}

fn main() {
    // `cargo test --benches` runs this with --bench absent: stay quick then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("mcp_call: run with `cargo bench -p march-runner --bench mcp_call`");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let project = tempfile::tempdir().unwrap();
    let project = project.path().canonicalize().unwrap();
    println!("One tool call (median µs of {CALLS} calls each, interleaved):");
    println!("| server | through March | bare rmcp | ratio |");
    println!("|---|---|---|---|");
    for s in servers() {
        let label = s.label;
        // On a worker thread, as a runner's turns run (not on the thread that blocks).
        let (m, b, r) = runtime.block_on(async {
            let project = project.clone();
            tokio::spawn(async move { call_overhead(&project, &s).await })
                .await
                .unwrap()
        });
        println!("| {label} | {m:.0} µs | {b:.0} µs | {r:.2}× |");
    }
    println!();
    println!("Five stdio servers for one session (median ms of {STARTS}):");
    println!(
        "| server | March, five in parallel | bare rmcp, five one after another | bare rmcp, one |"
    );
    println!("|---|---|---|---|");
    for s in servers() {
        let (m, serial, one) = runtime.block_on(five_starts(&project, &s));
        println!("| {} | {m:.0} ms | {serial:.0} ms | {one:.0} ms |", s.label);
    }
}
