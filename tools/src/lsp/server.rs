//! One language server child: start-up handshake, requests in both directions, documents kept
//! in sync, and the diagnostics it publishes or is asked for.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use lsp_types::{
    DocumentDiagnosticReport, DocumentDiagnosticReportResult, NumberOrString,
    PublishDiagnosticsParams,
};
use march_core::lsp_config::LspServerConfig;
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::process::{Child, Command};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Instant;

use super::framing::{FrameError, read_line_capped, read_message, write_message};
use super::uri::{file_uri, uri_path};
use super::{Diagnostic, Severity};

/// How long the server may take to answer `initialize`.
pub(crate) const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);

/// What a server child tells its host.
#[derive(Debug)]
pub(crate) enum ServerEvent {
    /// New diagnostics for a file (pushed, or answered to a pull).
    Published {
        /// Which server child (its serial number).
        serial: u64,
        /// The file.
        path: PathBuf,
        /// Its diagnostics from this server.
        diagnostics: Vec<Diagnostic>,
    },
    /// The child's output ended: it exited or closed stdout.
    Exited {
        /// Which server child.
        serial: u64,
        /// The last thing it wrote to stderr, or how it ended.
        detail: String,
    },
}

type Reply = Result<Value, String>;

/// What the reader task shares with the handle.
struct Shared {
    name: String,
    serial: u64,
    root: PathBuf,
    outgoing: mpsc::UnboundedSender<Value>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Reply>>>,
    /// Per file: how many times diagnostics arrived, and the latest ones.
    published: Mutex<HashMap<PathBuf, (u64, Vec<Diagnostic>)>>,
    changed: Notify,
    stderr_tail: Mutex<VecDeque<String>>,
    events: mpsc::UnboundedSender<ServerEvent>,
    closing: AtomicBool,
}

/// A running language server.
pub(crate) struct LanguageServer {
    shared: Arc<Shared>,
    next_id: AtomicI64,
    /// It answers `textDocument/diagnostic` (LSP 3.17 pull diagnostics).
    pull: bool,
    /// Open documents and their versions.
    documents: tokio::sync::Mutex<HashMap<PathBuf, i32>>,
    child: Mutex<Option<Child>>,
}

impl LanguageServer {
    /// Start `program` for `root` and finish the `initialize` handshake.
    pub(crate) async fn start(
        config: &LspServerConfig,
        program: &Path,
        root: &Path,
        serial: u64,
        events: mpsc::UnboundedSender<ServerEvent>,
    ) -> Result<LanguageServer, String> {
        let mut child = Command::new(program)
            .args(&config.args)
            .envs(&config.env)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot run `{}`: {e}", program.display()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("its pipes could not be opened".to_string());
        };
        let (outgoing, mut to_write) = mpsc::unbounded_channel::<Value>();
        let shared = Arc::new(Shared {
            name: config.name.clone(),
            serial,
            root: root.to_path_buf(),
            outgoing,
            pending: Mutex::new(HashMap::new()),
            published: Mutex::new(HashMap::new()),
            changed: Notify::new(),
            stderr_tail: Mutex::new(VecDeque::new()),
            events,
            closing: AtomicBool::new(false),
        });
        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(message) = to_write.recv().await {
                if write_message(&mut stdin, &message).await.is_err() {
                    break;
                }
            }
        });
        let tail = shared.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            let mut bytes = Vec::new();
            // Lines are cut at 4 KiB: a server that floods stderr costs no memory.
            loop {
                bytes.clear();
                match read_line_capped(&mut reader, &mut bytes, 4096).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let line = String::from_utf8_lossy(&bytes).trim_end().to_string();
                tracing::debug!(server = %tail.name, "stderr: {line}");
                let mut t = tail.stderr_tail.lock();
                if t.len() == 20 {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        tokio::spawn(read_loop(shared.clone(), stdout));

        let server = LanguageServer {
            shared,
            next_id: AtomicI64::new(1),
            pull: false,
            documents: tokio::sync::Mutex::new(HashMap::new()),
            child: Mutex::new(Some(child)),
        };
        let uri = file_uri(root);
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "/".to_string());
        let params = json!({
            "processId": std::process::id(),
            "rootUri": uri,
            "rootPath": root,
            "workspaceFolders": [{ "uri": uri, "name": name }],
            "clientInfo": { "name": "march", "version": env!("CARGO_PKG_VERSION") },
            "initializationOptions": config.initialization_options,
            "capabilities": {
                "textDocument": {
                    "synchronization": { "didSave": true, "dynamicRegistration": false },
                    "publishDiagnostics": { "versionSupport": true, "relatedInformation": false },
                    "diagnostic": { "dynamicRegistration": false, "relatedDocumentSupport": false },
                },
                "workspace": { "configuration": true, "workspaceFolders": true },
                "window": { "workDoneProgress": true },
                "general": { "positionEncodings": ["utf-16"] },
            },
        });
        let deadline = Instant::now() + INITIALIZE_TIMEOUT;
        let result = server
            .request("initialize", params, deadline)
            .await
            .map_err(|e| match e.as_str() {
                "exited" => server.exit_detail(),
                _ => e,
            })?;
        let pull = result
            .pointer("/capabilities/diagnosticProvider")
            .is_some_and(|p| !p.is_null() && p != &Value::Bool(false));
        server.notify("initialized", json!({}));
        Ok(LanguageServer { pull, ..server })
    }

    /// Its name in the config.
    pub(crate) fn name(&self) -> &str {
        &self.shared.name
    }

    /// Whether it answers pull requests for diagnostics.
    pub(crate) fn pulls(&self) -> bool {
        self.pull
    }

    /// The serial number its events carry.
    pub(crate) fn serial(&self) -> u64 {
        self.shared.serial
    }

    /// What its stderr said last, or a plain word when it said nothing.
    pub(crate) fn exit_detail(&self) -> String {
        exit_detail(&self.shared)
    }

    fn notify(&self, method: &str, params: Value) {
        let _ = self.shared.outgoing.send(json!({
            "jsonrpc": "2.0", "method": method, "params": params,
        }));
    }

    async fn request(&self, method: &str, params: Value, deadline: Instant) -> Reply {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.shared.pending.lock().insert(id, tx);
        let sent = self.shared.outgoing.send(json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params,
        }));
        if sent.is_err() {
            self.shared.pending.lock().remove(&id);
            return Err("exited".to_string());
        }
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err("exited".to_string()),
            Err(_) => {
                self.shared.pending.lock().remove(&id);
                // Tell the server it may stop working on it.
                self.notify("$/cancelRequest", json!({ "id": id }));
                Err(format!("no answer to {method} in time"))
            }
        }
    }

    /// How many times diagnostics for `path` have arrived so far.
    pub(crate) fn published_count(&self, path: &Path) -> u64 {
        self.shared
            .published
            .lock()
            .get(path)
            .map_or(0, |(n, _)| *n)
    }

    /// Open `path` with `text`, or send `text` as its new content; then say it was saved.
    pub(crate) async fn sync(&self, path: &Path, text: &str, language_id: &str) {
        let uri = file_uri(path);
        let mut documents = self.documents.lock().await;
        match documents.get_mut(path) {
            Some(version) => {
                *version += 1;
                self.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": { "uri": uri, "version": *version },
                        "contentChanges": [{ "text": text }],
                    }),
                );
            }
            None => {
                documents.insert(path.to_path_buf(), 1);
                self.notify(
                    "textDocument/didOpen",
                    json!({ "textDocument": {
                        "uri": uri, "languageId": language_id, "version": 1, "text": text,
                    }}),
                );
            }
        }
        // The text is on disk already; servers that check on save (pylsp) check now.
        self.notify(
            "textDocument/didSave",
            json!({ "textDocument": { "uri": uri } }),
        );
    }

    /// Close `path` (it is gone).
    pub(crate) async fn close(&self, path: &Path) {
        if self.documents.lock().await.remove(path).is_some() {
            self.notify(
                "textDocument/didClose",
                json!({ "textDocument": { "uri": file_uri(path) } }),
            );
        }
    }

    /// Wait until diagnostics for `path` arrive after the `since`-th time, or until
    /// `deadline`. An empty set is waited past for a moment: some servers (rust-analyzer)
    /// first publish nothing, then the real set.
    pub(crate) async fn wait_published(
        &self,
        path: &Path,
        since: u64,
        deadline: Instant,
    ) -> Option<Vec<Diagnostic>> {
        let mut first: Option<(u64, Instant)> = None;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some((count, items)) = self.shared.published.lock().get(path).cloned()
                && count > since
            {
                if !items.is_empty() {
                    return Some(items);
                }
                match first {
                    Some((seen, settle)) if count > seen || Instant::now() >= settle => {
                        return Some(items);
                    }
                    Some(_) => {}
                    None => first = Some((count, Instant::now() + SETTLE)),
                }
            }
            let wake = match first {
                Some((_, settle)) => settle.min(deadline),
                None => deadline,
            };
            if tokio::time::timeout_at(wake, notified).await.is_err() {
                if Instant::now() >= deadline {
                    return first.map(|_| Vec::new());
                }
                if let Some((_, settle)) = first
                    && Instant::now() >= settle
                {
                    return Some(Vec::new());
                }
            }
        }
    }

    /// Ask for the diagnostics of `path` (pull servers); `None` when no answer came in time.
    pub(crate) async fn pull(&self, path: &Path, deadline: Instant) -> Option<Vec<Diagnostic>> {
        let params = json!({ "textDocument": { "uri": file_uri(path) } });
        let reply = self
            .request("textDocument/diagnostic", params, deadline)
            .await;
        let value = match reply {
            Ok(value) => value,
            Err(e) => {
                tracing::debug!(server = %self.shared.name, "diagnostic pull failed: {e}");
                return None;
            }
        };
        let items = match serde_json::from_value::<DocumentDiagnosticReportResult>(value) {
            Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(full))) => {
                convert(
                    &self.shared.name,
                    full.full_document_diagnostic_report.items,
                )
            }
            Ok(_) => self
                .shared
                .published
                .lock()
                .get(path)
                .map(|(_, d)| d.clone())
                .unwrap_or_default(),
            Err(e) => {
                tracing::warn!(server = %self.shared.name, "bad diagnostic report: {e}");
                return None;
            }
        };
        store(&self.shared, path.to_path_buf(), items.clone());
        Some(items)
    }

    /// Ask it to shut down, then make sure it is gone.
    pub(crate) async fn shutdown(&self) {
        self.shared.closing.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(2);
        let _ = self.request("shutdown", Value::Null, deadline).await;
        let _ = self
            .shared
            .outgoing
            .send(json!({ "jsonrpc": "2.0", "method": "exit" }));
        let child = self.child.lock().take();
        if let Some(mut child) = child
            && tokio::time::timeout(Duration::from_secs(1), child.wait())
                .await
                .is_err()
        {
            let _ = child.kill().await;
        }
    }

    /// Whether it is being shut down on purpose (its exit is not a crash).
    pub(crate) fn closing(&self) -> bool {
        self.shared.closing.load(Ordering::Relaxed)
    }
}

/// How long an empty first publication is waited past.
const SETTLE: Duration = Duration::from_millis(150);

fn exit_detail(shared: &Shared) -> String {
    let tail = shared.stderr_tail.lock();
    tail.iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| crate::truncate::truncate_line(l.trim(), 200).0)
        .unwrap_or_else(|| "it exited".to_string())
}

async fn read_loop(shared: Arc<Shared>, stdout: tokio::process::ChildStdout) {
    let mut reader = BufReader::new(stdout);
    loop {
        match read_message(&mut reader).await {
            Ok(Some(message)) => handle(&shared, message),
            Ok(None) => break,
            Err(FrameError::Io(e)) => {
                tracing::warn!(server = %shared.name, "reading failed: {e}");
                break;
            }
            Err(e) => tracing::warn!(server = %shared.name, "{e}"),
        }
    }
    // Give the stderr reader a moment to catch the last words.
    tokio::time::sleep(Duration::from_millis(50)).await;
    for (_, waiter) in shared.pending.lock().drain() {
        let _ = waiter.send(Err("exited".to_string()));
    }
    let _ = shared.events.send(ServerEvent::Exited {
        serial: shared.serial,
        detail: exit_detail(&shared),
    });
}

fn handle(shared: &Shared, message: Value) {
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id").cloned();
    match (method, id) {
        (Some(method), Some(id)) => {
            let result = answer(shared, method, message.get("params"));
            let reply = match result {
                Some(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                None => json!({ "jsonrpc": "2.0", "id": id, "error": {
                    "code": -32601, "message": format!("march does not handle {method}"),
                }}),
            };
            let _ = shared.outgoing.send(reply);
        }
        (Some("textDocument/publishDiagnostics"), None) => {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            match serde_json::from_value::<PublishDiagnosticsParams>(params) {
                Ok(p) => match uri_path(p.uri.as_str()) {
                    Some(path) => store(shared, path, convert(&shared.name, p.diagnostics)),
                    None => {
                        tracing::debug!(server = %shared.name, "diagnostics for {}", p.uri.as_str())
                    }
                },
                Err(e) => tracing::warn!(server = %shared.name, "bad publishDiagnostics: {e}"),
            }
        }
        (Some(other), None) => tracing::trace!(server = %shared.name, "notification {other}"),
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let waiter = shared.pending.lock().remove(&id);
            if let Some(waiter) = waiter {
                let reply = match message.get("error") {
                    Some(error) => Err(error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("error")
                        .to_string()),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = waiter.send(reply);
            }
        }
        (None, None) => {
            tracing::debug!(server = %shared.name, "a message that is neither request nor answer")
        }
    }
}

/// The answer to a request from the server; `None` for methods March does not handle.
fn answer(shared: &Shared, method: &str, params: Option<&Value>) -> Option<Value> {
    match method {
        // One `null` per item asked for: "use your defaults".
        "workspace/configuration" => {
            let items = params
                .and_then(|p| p.get("items"))
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            Some(Value::Array(vec![Value::Null; items]))
        }
        "workspace/workspaceFolders" => {
            let uri = file_uri(&shared.root);
            Some(
                json!([{ "uri": uri, "name": shared.root.file_name().map(|n| n.to_string_lossy().into_owned()) }]),
            )
        }
        "client/registerCapability"
        | "client/unregisterCapability"
        | "window/workDoneProgress/create"
        | "window/showMessageRequest"
        | "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/codeLens/refresh" => Some(Value::Null),
        "workspace/applyEdit" => Some(json!({ "applied": false })),
        _ => None,
    }
}

fn store(shared: &Shared, path: PathBuf, diagnostics: Vec<Diagnostic>) {
    {
        let mut published = shared.published.lock();
        let entry = published.entry(path.clone()).or_insert((0, Vec::new()));
        entry.0 += 1;
        entry.1 = diagnostics.clone();
    }
    shared.changed.notify_waiters();
    let _ = shared.events.send(ServerEvent::Published {
        serial: shared.serial,
        path,
        diagnostics,
    });
}

/// LSP diagnostics as March's: 1-based positions, a severity always set, a one-string code.
fn convert(server: &str, items: Vec<lsp_types::Diagnostic>) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = items
        .into_iter()
        .map(|d| Diagnostic {
            line: d.range.start.line.saturating_add(1),
            column: d.range.start.character.saturating_add(1),
            end_line: d.range.end.line.saturating_add(1),
            end_column: d.range.end.character.saturating_add(1),
            severity: match d.severity {
                Some(lsp_types::DiagnosticSeverity::WARNING) => Severity::Warning,
                Some(lsp_types::DiagnosticSeverity::INFORMATION) => Severity::Information,
                Some(lsp_types::DiagnosticSeverity::HINT) => Severity::Hint,
                // The spec lets the client choose when it is missing; errors are safest.
                _ => Severity::Error,
            },
            message: d.message,
            source: d.source.unwrap_or_else(|| server.to_string()),
            code: d.code.map(|c| match c {
                NumberOrString::Number(n) => n.to_string(),
                NumberOrString::String(s) => s,
            }),
        })
        .collect();
    out.sort_by_key(|d| (d.line, d.column, d.severity));
    out
}
