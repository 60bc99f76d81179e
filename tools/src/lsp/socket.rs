//! The project's host process and the runners' way to it: a Unix socket under the data
//! directory, one JSON object per line.
//!
//! A runner that needs diagnostics connects to `<data>/lsp/<hash of project>.sock`; when
//! nobody answers it starts `march lsp-host PROJECT` and connects again (`crate::daemon`,
//! shared with the browser daemon). The host exits (shutting its servers down) a few seconds
//! after its last runner disconnected.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use march_core::restart::RestartPolicy;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::framing::{MAX_SOCKET_LINE_BYTES, RawLine, read_raw_line};
use super::host::{HostEvent, LspHost};
use super::{Checked, Diagnostics, FileDiagnostics, LspError};
use crate::daemon::DaemonClient;

/// What a runner asks the host.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
enum Request {
    Check {
        path: PathBuf,
        text: String,
        wait_ms: u64,
    },
    Query {
        path: Option<PathBuf>,
        wait_ms: u64,
    },
    /// Everything known now, then every change, as `event` lines.
    Subscribe,
}

#[derive(Debug, Serialize, Deserialize)]
struct RequestLine {
    id: u64,
    #[serde(flatten)]
    request: Request,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum ReplyLine {
    Reply {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ok: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    Event {
        event: HostEvent,
    },
}

/// The socket of `project`'s host under `data_dir` (in the temp dir when that path would be
/// too long for a Unix socket).
pub fn socket_path(data_dir: &Path, project: &Path) -> PathBuf {
    // FNV-1a: stable across builds, unlike std's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in project.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    crate::daemon::socket_path(&data_dir.join("lsp"), &format!("{hash:016x}.sock"), "lsp")
}

/// Serve `host` on `listener` until no runner has been connected for `linger` (or forever
/// when `linger` is `None`); then shut its servers down.
pub async fn serve_host(host: LspHost, listener: UnixListener, linger: Option<Duration>) {
    let clients = Arc::new(AtomicUsize::new(0));
    let mut alone_since = Some(Instant::now());
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    clients.fetch_add(1, Ordering::SeqCst);
                    let clients = clients.clone();
                    let host = host.clone();
                    tokio::spawn(async move {
                        serve_client(host, stream).await;
                        clients.fetch_sub(1, Ordering::SeqCst);
                    });
                }
                Err(e) => tracing::warn!("lsp host: accept failed: {e}"),
            },
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
        let Some(linger) = linger else { continue };
        if clients.load(Ordering::SeqCst) > 0 {
            alone_since = None;
        } else {
            let since = *alone_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= linger {
                break;
            }
        }
    }
    host.shutdown().await;
}

async fn serve_client(host: LspHost, stream: UnixStream) {
    let (read, write) = stream.into_split();
    let (out, writer) = crate::daemon::line_writer(write);
    // The connection's requests; a watch never ends by itself, so all stop with the reader.
    let mut tasks = tokio::task::JoinSet::new();
    let mut reader = BufReader::new(read);
    while let Ok(Some(line)) = read_raw_line(&mut reader, MAX_SOCKET_LINE_BYTES).await {
        while tasks.try_join_next().is_some() {}
        let parsed = match line {
            RawLine::Line(bytes) => serde_json::from_slice::<RequestLine>(&bytes)
                .map_err(|e| format!("bad request: {e}")),
            RawLine::TooLong => Err(format!(
                "bad request: longer than {MAX_SOCKET_LINE_BYTES} bytes"
            )),
        };
        let parsed = match parsed {
            Ok(r) => r,
            Err(e) => {
                send(&out, &reply(0, Err(e)));
                continue;
            }
        };
        let host = host.clone();
        let out = out.clone();
        let id = parsed.id;
        tasks.spawn(async move {
            let result = match parsed.request {
                Request::Check {
                    path,
                    text,
                    wait_ms,
                } => host
                    .check(&path, &text, Duration::from_millis(wait_ms))
                    .await
                    .map(|c| serde_json::to_value(c).unwrap_or(Value::Null)),
                Request::Query { path, wait_ms } => host
                    .query(path.as_deref(), Duration::from_millis(wait_ms))
                    .await
                    .map(|f| serde_json::to_value(f).unwrap_or(Value::Null)),
                Request::Subscribe => {
                    let (snapshot, mut rx) = host.subscribe();
                    for event in snapshot {
                        send(&out, &ReplyLine::Event { event });
                    }
                    loop {
                        match rx.recv().await {
                            Ok(event) => {
                                if !send(&out, &ReplyLine::Event { event }) {
                                    return;
                                }
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                                tracing::warn!("lsp host: a watcher missed {n} events");
                            }
                            Err(_) => return,
                        }
                    }
                }
            };
            send(&out, &reply(id, result.map_err(|e| e.to_string())));
        });
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    drop(out);
    let _ = writer.await;
}

fn reply(id: u64, result: Result<Value, String>) -> ReplyLine {
    match result {
        Ok(v) => ReplyLine::Reply {
            id,
            ok: Some(v),
            error: None,
        },
        Err(e) => ReplyLine::Reply {
            id,
            ok: None,
            error: Some(e),
        },
    }
}

/// Queue one line; `false` once the connection is gone.
fn send(out: &mpsc::UnboundedSender<String>, line: &ReplyLine) -> bool {
    match serde_json::to_string(line) {
        Ok(text) => out.send(text).is_ok(),
        Err(_) => true,
    }
}

/// The body of `march lsp-host PROJECT`: serve the project's host on its socket unless
/// another process already does; exit `linger` after the last runner left.
pub async fn run_host_process(
    socket: &Path,
    project: &Path,
    config: &march_core::lsp_config::LspConfig,
    linger: Duration,
) -> Result<(), String> {
    let Some(claimed) = crate::daemon::claim_socket(socket)? else {
        // Another host serves this project.
        return Ok(());
    };
    tracing::info!(project = %project.display(), socket = %socket.display(), "lsp host serving");
    let host = LspHost::new(
        project,
        config.servers(),
        Duration::from_secs(config.idle_shutdown_secs),
    );
    serve_host(host, claimed.listener, Some(linger)).await;
    let _ = std::fs::remove_file(socket);
    tracing::info!("lsp host done");
    Ok(())
}

/// A runner's handle on its project's host: connects (starting the host when nobody
/// answers) on first use and again after the host went away.
pub struct HostClient {
    daemon: DaemonClient,
    /// Set by the first question asked of the host: a project whose files no language
    /// server handles never asks, so no host is started for it.
    asked: tokio::sync::watch::Sender<bool>,
}

impl HostClient {
    /// A client of the host on `socket`, started with `start` when it is not running.
    pub fn new(socket: PathBuf, start: Option<(PathBuf, Vec<OsString>)>) -> Self {
        HostClient {
            daemon: DaemonClient::new(socket, start),
            asked: tokio::sync::watch::channel(false).0,
        }
    }

    /// Whether anything was asked of the host yet.
    fn was_asked(&self) -> bool {
        *self.asked.borrow()
    }

    async fn call(&self, request: Request, wait: Duration) -> Result<Value, LspError> {
        self.asked.send_replace(true);
        // The host answers within `wait` plus a server start-up; past that it is stuck.
        self.daemon
            .call(&request, wait + Duration::from_secs(30))
            .await
            .map_err(LspError::Host)
    }

    /// Watch the host: everything known now, then every change. Until something is asked
    /// of the host it only joins one already running (another runner's); after that it
    /// reconnects, starting the host again, when it goes away. Ends when the receiver is
    /// dropped.
    pub fn subscribe(self: &Arc<Self>) -> mpsc::UnboundedReceiver<HostEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let this = self.clone();
        tokio::spawn(async move {
            // Never given up on: the host comes back when a runner starts it again.
            let policy = RestartPolicy {
                max_attempts: u32::MAX,
                initial_backoff: Duration::from_millis(200),
                max_backoff: Duration::from_secs(10),
                healthy_after: Duration::ZERO,
            };
            let mut attempt = 0;
            while !tx.is_closed() {
                let asked = this.was_asked();
                let stream = if asked {
                    this.daemon.stream().await
                } else {
                    UnixStream::connect(this.daemon.socket())
                        .await
                        .map_err(|e| e.to_string())
                };
                if stream.is_err() && !asked {
                    // Nothing runs and nothing was asked: wait for the first question (no
                    // timer runs meanwhile).
                    let mut asked = this.asked.subscribe();
                    tokio::select! {
                        _ = asked.wait_for(|asked| *asked) => continue,
                        _ = tx.closed() => return,
                    }
                }
                if let Ok(stream) = stream {
                    attempt = 0;
                    let (read, mut write) = stream.into_split();
                    let line = RequestLine {
                        id: 0,
                        request: Request::Subscribe,
                    };
                    let mut text = serde_json::to_string(&line).unwrap_or_default();
                    text.push('\n');
                    if write.write_all(text.as_bytes()).await.is_ok() {
                        let mut reader = BufReader::new(read);
                        loop {
                            tokio::select! {
                                next = read_raw_line(&mut reader, MAX_SOCKET_LINE_BYTES) => match next {
                                    Ok(Some(line)) => {
                                        if let RawLine::Line(line) = line
                                            && let Ok(ReplyLine::Event { event }) = serde_json::from_slice(&line)
                                            && tx.send(event).is_err()
                                        {
                                            return;
                                        }
                                    }
                                    _ => break,
                                },
                                _ = tx.closed() => return,
                            }
                        }
                    }
                }
                attempt += 1;
                tokio::time::sleep(policy.backoff(attempt)).await;
            }
        });
        rx
    }
}

#[async_trait]
impl Diagnostics for HostClient {
    async fn check(&self, path: &Path, text: &str, wait: Duration) -> Result<Checked, LspError> {
        let request = Request::Check {
            path: path.to_path_buf(),
            text: text.to_string(),
            wait_ms: wait.as_millis() as u64,
        };
        let value = self.call(request, wait).await?;
        serde_json::from_value(value).map_err(|e| LspError::Host(format!("bad answer: {e}")))
    }

    async fn query(
        &self,
        path: Option<&Path>,
        wait: Duration,
    ) -> Result<Vec<FileDiagnostics>, LspError> {
        let request = Request::Query {
            path: path.map(Path::to_path_buf),
            wait_ms: wait.as_millis() as u64,
        };
        let value = self.call(request, wait).await?;
        serde_json::from_value(value).map_err(|e| LspError::Host(format!("bad answer: {e}")))
    }
}
