//! Helper processes on a Unix socket, shared by runners: the language-server host of a
//! project, the browser daemon of a user. One JSON object per line each way; a request
//! carries an `id` and is answered by `{"id", "ok"}` or `{"id", "error"}`.
//!
//! The first runner that needs one starts it (`march <command>`); later runners find it on its
//! socket. The process holds a lock file for its life, so two started at once end up as one,
//! and a socket left by one that died is replaced.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::lsp::framing::{MAX_SOCKET_LINE_BYTES, RawLine, read_raw_line};

/// The socket `name` in `dir`, or in a directory of the user's own under the temp dir when
/// that path would be too long for a Unix socket (about 100 bytes).
pub fn socket_path(dir: &Path, name: &str, kind: &str) -> PathBuf {
    let path = dir.join(name);
    if path.as_os_str().len() < 100 {
        path
    } else {
        let uid = rustix::process::getuid().as_raw();
        std::env::temp_dir()
            .join(format!("march-{kind}-{uid}"))
            .join(name)
    }
}

/// A socket this process serves alone: the listener and the lock that makes it ours.
pub struct Claimed {
    /// Where runners connect.
    pub listener: UnixListener,
    /// Held for the process's life; dropping it lets another process take the socket.
    _lock: std::fs::File,
}

/// Takes `socket` for this process: its directory made private (0700), its lock taken, a
/// socket left by a dead process replaced. `None` when another live process holds it.
pub fn claim_socket(socket: &Path) -> Result<Option<Claimed>, String> {
    let dir = socket.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // Whoever can connect acts as the user: only the user may.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot restrict {}: {e}", dir.display()))?;
    }
    let lock_path = socket.with_extension("lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    if rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
        return Ok(None);
    }
    let _ = std::fs::remove_file(socket);
    let listener = UnixListener::bind(socket)
        .map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
    Ok(Some(Claimed {
        listener,
        _lock: lock,
    }))
}

/// A task writing each string sent to it as one line on `write`; it ends when every sender
/// is gone or the peer stops reading.
pub fn line_writer(
    mut write: tokio::net::unix::OwnedWriteHalf,
) -> (mpsc::UnboundedSender<String>, tokio::task::JoinHandle<()>) {
    let (out, mut to_send) = mpsc::unbounded_channel::<String>();
    let task = tokio::spawn(async move {
        while let Some(mut line) = to_send.recv().await {
            line.push('\n');
            if write.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    (out, task)
}

/// The reply line to request `id`.
pub fn reply_line(id: u64, result: Result<Value, String>) -> String {
    let line = match result {
        Ok(ok) => serde_json::json!({ "id": id, "ok": ok }),
        Err(error) => serde_json::json!({ "id": id, "error": error }),
    };
    line.to_string()
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

struct Connection {
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
    /// The process closed it.
    closed: Arc<AtomicBool>,
}

/// A runner's handle on a helper process: connects (starting the process when nobody
/// answers) on first use and again after it went away.
pub struct DaemonClient {
    socket: PathBuf,
    /// How to start it: program and arguments; `None` only connects.
    start: Option<(PathBuf, Vec<OsString>)>,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    next_id: AtomicU64,
}

impl DaemonClient {
    /// A client of the process on `socket`, started with `start` when it is not running.
    pub fn new(socket: PathBuf, start: Option<(PathBuf, Vec<OsString>)>) -> Self {
        DaemonClient {
            socket,
            start,
            connection: tokio::sync::Mutex::new(None),
            next_id: AtomicU64::new(1),
        }
    }

    /// Its socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// A connection of its own to the process, which is started when nobody answers.
    pub async fn stream(&self) -> Result<UnixStream, String> {
        if let Ok(stream) = UnixStream::connect(&self.socket).await {
            return Ok(stream);
        }
        let Some((program, args)) = &self.start else {
            return Err(format!("nothing listens on {}", self.socket.display()));
        };
        let mut child = tokio::process::Command::new(program)
            .args(args)
            // A daemon of sorts: it keeps no directory busy (a project may be deleted).
            .current_dir("/")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        // Reap it when it exits (it outlives this runner when other runners still use it).
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match UnixStream::connect(&self.socket).await {
                Ok(stream) => return Ok(stream),
                Err(e) if Instant::now() >= deadline => {
                    return Err(format!("{} did not open: {e}", self.socket.display()));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(25)).await,
            }
        }
    }

    async fn connection(&self) -> Result<Arc<Connection>, String> {
        let mut slot = self.connection.lock().await;
        if let Some(c) = slot.as_ref()
            && !c.out.is_closed()
            && !c.closed.load(Ordering::SeqCst)
        {
            return Ok(c.clone());
        }
        let stream = self.stream().await?;
        let (read, write) = stream.into_split();
        let (out, _writer) = line_writer(write);
        let pending: Pending = Arc::default();
        let waiting = pending.clone();
        let closed = Arc::new(AtomicBool::new(false));
        let mark = closed.clone();
        // Holds no sender: dropping the client ends the writer, which closes the socket.
        tokio::spawn(async move {
            let mut reader = BufReader::new(read);
            while let Ok(Some(line)) = read_raw_line(&mut reader, MAX_SOCKET_LINE_BYTES).await {
                let RawLine::Line(line) = line else { continue };
                let Ok(Value::Object(reply)) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                let Some(id) = reply.get("id").and_then(Value::as_u64) else {
                    continue;
                };
                if let Some(waiter) = waiting.lock().remove(&id) {
                    let _ = waiter.send(match reply.get("error") {
                        Some(e) => Err(e.as_str().map_or_else(|| e.to_string(), str::to_string)),
                        None => Ok(reply.get("ok").cloned().unwrap_or(Value::Null)),
                    });
                }
            }
            // The process went away: fail what waits, and mark the connection dead.
            mark.store(true, Ordering::SeqCst);
            waiting.lock().clear();
        });
        let connection = Arc::new(Connection {
            out,
            pending,
            closed,
        });
        *slot = Some(connection.clone());
        Ok(connection)
    }

    /// [`DaemonClient::call`] when the process runs (it is not started for this); `None`
    /// when it does not.
    pub async fn call_if_running(
        &self,
        request: &impl Serialize,
        limit: Duration,
    ) -> Option<Result<Value, String>> {
        let connected = self
            .connection
            .lock()
            .await
            .as_ref()
            .is_some_and(|c| !c.out.is_closed() && !c.closed.load(Ordering::SeqCst));
        if !connected && UnixStream::connect(&self.socket).await.is_err() {
            return None;
        }
        Some(self.call(request, limit).await)
    }

    /// Sends `request` (an object; its `id` is added) and waits up to `limit` for the
    /// answer. Tried again once on a fresh connection when the process went away since the
    /// last call (it exits when idle, or was killed).
    pub async fn call(&self, request: &impl Serialize, limit: Duration) -> Result<Value, String> {
        let Ok(Value::Object(mut line)) = serde_json::to_value(request) else {
            return Err("a request must be an object".into());
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        line.insert("id".into(), id.into());
        let text = Value::Object(line).to_string();
        for attempt in 0..2 {
            let connection = self.connection().await?;
            let (tx, rx) = oneshot::channel();
            connection.pending.lock().insert(id, tx);
            if connection.out.send(text.clone()).is_err() {
                *self.connection.lock().await = None;
                continue;
            }
            match tokio::time::timeout(limit, rx).await {
                Ok(Ok(result)) => return result,
                Ok(Err(_)) if attempt == 0 => {
                    *self.connection.lock().await = None;
                }
                Ok(Err(_)) => return Err("the connection closed before the answer".into()),
                Err(_) => {
                    connection.pending.lock().remove(&id);
                    return Err(format!("no answer within {} s", limit.as_secs()));
                }
            }
        }
        Err("the connection closed before the answer".into())
    }
}
