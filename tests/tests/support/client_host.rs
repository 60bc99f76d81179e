//! The client's side of `fs/write_text_file` and `terminal/*` for the ACP tests: writes land
//! on disk, and terminals run real child processes (each in its own process group) whose
//! output is captured, as an editor's terminal would.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt as _;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, CreateTerminalResponse, TerminalExitStatus, TerminalOutputResponse,
    WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Error, ErrorCode};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot, watch};

use super::Seen;

/// Paths containing this are refused by the host's `fs/write_text_file`.
const REFUSED: &str = "refuse";

/// One terminal: its captured output, exit status once known, and the way to kill it.
struct HostTerminal {
    output: Arc<Mutex<Vec<u8>>>,
    exit: watch::Receiver<Option<TerminalExitStatus>>,
    kill: Mutex<Option<oneshot::Sender<()>>>,
}

/// Serves the client capabilities; every request it gets is reported as [`Seen::Call`].
#[derive(Clone)]
pub struct Host {
    events: mpsc::UnboundedSender<Seen>,
    terminals: Arc<Mutex<HashMap<String, Arc<HostTerminal>>>>,
    next: Arc<AtomicU64>,
}

fn failed(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}

impl Host {
    pub fn new(events: mpsc::UnboundedSender<Seen>) -> Host {
        Host {
            events,
            terminals: Arc::new(Mutex::new(HashMap::new())),
            next: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Report a request to the test.
    pub fn log(&self, method: &str, params: Value) {
        let _ = self.events.send(Seen::Call(method.to_string(), params));
    }

    pub fn write(&self, r: &WriteTextFileRequest) -> Result<WriteTextFileResponse, Error> {
        if r.path.to_string_lossy().contains(REFUSED) {
            return Err(failed("the user keeps this file read-only"));
        }
        std::fs::write(&r.path, &r.content)
            .map(|()| WriteTextFileResponse::new())
            .map_err(|e| failed(e.to_string()))
    }

    fn terminal(&self, id: &str) -> Result<Arc<HostTerminal>, Error> {
        self.terminals
            .lock()
            .get(id)
            .cloned()
            .ok_or_else(|| Error::new(ErrorCode::INVALID_PARAMS, format!("no terminal {id}")))
    }

    /// Start the command and answer at once, as the protocol asks.
    pub fn create(&self, r: &CreateTerminalRequest) -> Result<CreateTerminalResponse, Error> {
        let mut command = Command::new(&r.command);
        command
            .args(&r.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &r.cwd {
            command.current_dir(cwd);
        }
        for var in &r.env {
            command.env(&var.name, &var.value);
        }
        let mut child = command.spawn().map_err(|e| failed(e.to_string()))?;
        let pid = child.id().unwrap_or_default();
        let output = Arc::new(Mutex::new(Vec::new()));
        let readers = [
            read_into(child.stdout.take(), output.clone()),
            read_into(child.stderr.take(), output.clone()),
        ];
        let (exit_tx, exit) = watch::channel(None);
        let (kill, killed) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status,
                _ = killed => {
                    // The whole group, so no grandchild keeps the pipes open.
                    // A syscall, not `kill -KILL -PID`: procps-ng 4.0.2's kill command can
                    // misread a negative pid, and signalling the wrong group is fatal here.
                    if let Some(pgid) = rustix::process::Pid::from_raw(pid as i32) {
                        let _ = rustix::process::kill_process_group(
                            pgid,
                            rustix::process::Signal::KILL,
                        );
                    }
                    child.wait().await
                }
            };
            // Everything written before the exit is in the output before the exit is told.
            for reader in readers {
                let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
            }
            let status = match status {
                Ok(s) => match (s.code(), s.signal()) {
                    (Some(code), _) => TerminalExitStatus::new().exit_code(code as u32),
                    (None, Some(9)) => TerminalExitStatus::new().signal("SIGKILL".to_string()),
                    (None, Some(n)) => TerminalExitStatus::new().signal(n.to_string()),
                    (None, None) => TerminalExitStatus::new(),
                },
                Err(_) => TerminalExitStatus::new(),
            };
            let _ = exit_tx.send(Some(status));
        });
        let id = format!("term-{}", self.next.fetch_add(1, Ordering::SeqCst));
        self.terminals.lock().insert(
            id.clone(),
            Arc::new(HostTerminal {
                output,
                exit,
                kill: Mutex::new(Some(kill)),
            }),
        );
        Ok(CreateTerminalResponse::new(id))
    }

    pub fn output(&self, id: &str) -> Result<TerminalOutputResponse, Error> {
        let t = self.terminal(id)?;
        let text = String::from_utf8_lossy(&t.output.lock()).into_owned();
        let exit = t.exit.borrow().clone();
        Ok(TerminalOutputResponse::new(text, false).exit_status(exit))
    }

    /// A receiver that holds the exit status once the command ended.
    pub fn exit_of(&self, id: &str) -> Result<watch::Receiver<Option<TerminalExitStatus>>, Error> {
        Ok(self.terminal(id)?.exit.clone())
    }

    pub fn kill(&self, id: &str) -> Result<(), Error> {
        if let Some(kill) = self.terminal(id)?.kill.lock().take() {
            let _ = kill.send(());
        }
        Ok(())
    }

    /// Kill if still running and forget the terminal.
    pub fn release(&self, id: &str) -> Result<(), Error> {
        self.kill(id)?;
        self.terminals.lock().remove(id);
        Ok(())
    }

    /// Terminals not released yet.
    pub fn open_terminals(&self) -> usize {
        self.terminals.lock().len()
    }
}

fn read_into(
    pipe: Option<impl AsyncRead + Unpin + Send + 'static>,
    output: Arc<Mutex<Vec<u8>>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Some(mut pipe) = pipe else { return };
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 {
                break;
            }
            output.lock().extend_from_slice(&buf[..n]);
        }
    })
}
