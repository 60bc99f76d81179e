//! Diagnostics after an edit: March's LSP host against a minimal direct LSP client, both
//! talking to the same real server (ruff), in the same run.
//!
//! - `warm`: the server is running and the file open; one edit's new text is sent and the
//!   fresh diagnostics waited for (what edit and write pay after writing).
//! - `cold`: a new server is started, initialized, the file opened and its diagnostics
//!   waited for (the first edit of a Python file in a project).
//! - `march_socket_warm`: as `warm`, through the Unix socket runners use.
//!
//! The reference is a blocking client of some 60 lines with no March code: it writes
//! Content-Length frames to the server's stdin and reads until `publishDiagnostics`.
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use march_core::lsp_config::{LspConfig, LspServerOverride};
use march_tools::lsp::{Diagnostics, HostClient, LspHost, serve_host};
use serde_json::{Value, json};

const BAD: &str = "import os\n\nprint(undefined_name)\n";
const GOOD: &str = "print('fine')\n";
const WAIT: Duration = Duration::from_secs(30);

/// The reference: a bare LSP client over the server's pipes.
struct Direct {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    uri: String,
    version: i32,
    id: i64,
}

impl Direct {
    fn start(ruff: &Path, root: &Path, file: &Path, text: &str) -> Direct {
        let mut child = Command::new(ruff)
            .arg("server")
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut d = Direct {
            child,
            stdin,
            stdout,
            uri: format!("file://{}", file.display()),
            version: 1,
            id: 1,
        };
        let root_uri = format!("file://{}", root.display());
        d.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": null, "rootUri": root_uri,
            "capabilities": {"textDocument": {"publishDiagnostics": {}}}}}),
        );
        while d.recv().get("id") != Some(&json!(1)) {}
        d.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        d.send(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": d.uri, "languageId": "python", "version": 1, "text": text}}}),
        );
        d.wait_diagnostics();
        d
    }

    fn send(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(&body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            let line = line.trim();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.stdout.read_exact(&mut body).unwrap();
        let message: Value = serde_json::from_slice(&body).unwrap();
        // Server requests get `null` (ruff asks for none, but be fair).
        if let (Some(id), Some(_)) = (message.get("id"), message.get("method")) {
            let id = id.clone();
            self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
        }
        message
    }

    fn wait_diagnostics(&mut self) -> usize {
        loop {
            let m = self.recv();
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == self.uri {
                return m["params"]["diagnostics"].as_array().map_or(0, Vec::len);
            }
        }
    }

    fn change(&mut self, text: &str) -> usize {
        self.version += 1;
        let change = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [{"text": text}]}});
        self.send(&change);
        self.wait_diagnostics()
    }

    fn stop(mut self) {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}));
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        let _ = self.child.wait();
    }
}

fn ruff_only(ruff: &Path) -> Vec<march_core::lsp_config::LspServerConfig> {
    let mut config = LspConfig::default();
    config.servers.insert(
        "ruff".into(),
        LspServerOverride {
            command: Some(ruff.display().to_string()),
            ..Default::default()
        },
    );
    config
        .servers()
        .into_iter()
        .filter(|s| s.name == "ruff")
        .collect()
}

fn bench(c: &mut Criterion) {
    let ruff = march_testkit::test_tools::ruff();
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().canonicalize().unwrap();
    let file = root.join("bad.py");
    std::fs::write(&file, BAD).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("lsp_check");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(10));

    // Warm: alternate a broken and a fixed text, so every check has news to wait for.
    let host =
        rt.block_on(async { LspHost::new(&root, ruff_only(&ruff), Duration::from_secs(600)) });
    assert!(
        !rt.block_on(host.check(&file, BAD, WAIT))
            .unwrap()
            .diagnostics
            .is_empty()
    );
    let mut flip = false;
    group.bench_function("march_warm", |b| {
        b.iter(|| {
            flip = !flip;
            let text = if flip { GOOD } else { BAD };
            let checked = rt.block_on(host.check(&file, text, WAIT)).unwrap();
            assert_eq!(checked.answered, ["ruff"]);
        })
    });
    let socket = root.join("bench.sock");
    let listener = rt
        .block_on(async { tokio::net::UnixListener::bind(&socket) })
        .unwrap();
    rt.spawn(serve_host(host.clone(), listener, None));
    let client = Arc::new(HostClient::new(socket, None));
    group.bench_function("march_socket_warm", |b| {
        b.iter(|| {
            flip = !flip;
            let text = if flip { GOOD } else { BAD };
            let checked = rt.block_on(client.check(&file, text, WAIT)).unwrap();
            assert_eq!(checked.answered, ["ruff"]);
        })
    });
    rt.block_on(host.shutdown());

    let mut direct = Direct::start(&ruff, &root, &file, BAD);
    group.bench_function("direct_warm", |b| {
        b.iter(|| {
            flip = !flip;
            direct.change(if flip { GOOD } else { BAD })
        })
    });
    direct.stop();

    group.sample_size(10);
    group.bench_function("march_cold", |b| {
        b.iter(|| {
            rt.block_on(async {
                let host = LspHost::new(&root, ruff_only(&ruff), Duration::from_secs(600));
                let checked = host.check(&file, BAD, WAIT).await.unwrap();
                assert!(!checked.diagnostics.is_empty());
                host.shutdown().await;
            })
        })
    });
    group.bench_function("direct_cold", |b| {
        b.iter(|| Direct::start(&ruff, &root, &file, BAD).stop())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
