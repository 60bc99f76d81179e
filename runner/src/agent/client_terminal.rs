//! Bash in a terminal the client owns (`terminal/*`), used when the client offers `terminal`:
//! create → embed `{type: terminal}` in the tool call → wait for exit (raced against the
//! timeout and the run's abort, which kill) → output → release, always.
//!
//! ACP hands the output over once, at the end; meanwhile the client shows the terminal live,
//! so the runner does not poll for output to stream.

use march_tools::exec::sandbox::Sandbox;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, KillTerminalRequest, ReleaseTerminalRequest, SessionId,
    SessionNotification, SessionUpdate, Terminal, TerminalExitStatus, TerminalId,
    TerminalOutputRequest, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
    WaitForTerminalExitRequest,
};
use agent_client_protocol::{Client, Error, JsonRpcRequest};
use async_trait::async_trait;
use march_tools::exec::{CommandExecutor, CommandExit, CommandRequest, ExecError, OutputSink};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The most output the client keeps per command (the end of it, when there is more).
const OUTPUT_BYTE_LIMIT: u64 = 1024 * 1024;
/// How long the client may take to report the exit of a killed command.
const KILL_GRACE: Duration = Duration::from_secs(5);
/// How long a finished turn waits for its terminals to be released.
const RELEASE_GRACE: Duration = Duration::from_secs(10);

/// A session's client terminals: which tool call shows which terminal, and the tasks that
/// drive them (each ends only after its terminal was released).
#[derive(Default)]
pub(crate) struct ClientTerminals {
    attached: Mutex<HashMap<String, TerminalId>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl ClientTerminals {
    /// Whether the call's command runs in a client terminal (its output is shown there).
    pub(crate) fn is_attached(&self, tool_call_id: &str) -> bool {
        self.attached.lock().contains_key(tool_call_id)
    }

    /// The terminal of a finished call, forgotten here.
    pub(crate) fn take(&self, tool_call_id: &str) -> Option<TerminalId> {
        self.attached.lock().remove(tool_call_id)
    }

    /// Wait (bounded) until every terminal started so far has been released, so a turn
    /// answers only after its commands are gone.
    pub(crate) async fn settle(&self) {
        let tasks = std::mem::take(&mut *self.tasks.lock());
        if tasks.is_empty() {
            return;
        }
        let all = futures_util::future::join_all(tasks);
        if tokio::time::timeout(RELEASE_GRACE, all).await.is_err() {
            tracing::warn!("client terminals were not released in time");
        }
    }

    /// Note that the call's command runs in `terminal`.
    pub(crate) fn attach(&self, tool_call_id: &str, terminal: TerminalId) {
        self.attached
            .lock()
            .insert(tool_call_id.to_string(), terminal);
    }

    fn track(&self, task: JoinHandle<()>) {
        let mut tasks = self.tasks.lock();
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }
}

/// Runs bash commands in the client's terminals.
pub(crate) struct ClientTerminalExecutor {
    cx: ConnectionTo<Client>,
    session_id: SessionId,
    terminals: Arc<ClientTerminals>,
    /// What confines the commands (they run through its launcher).
    sandbox: Sandbox,
}

impl ClientTerminalExecutor {
    /// An executor for one session on the connection `cx`.
    pub(crate) fn new(
        cx: ConnectionTo<Client>,
        session_id: &str,
        terminals: Arc<ClientTerminals>,
        sandbox: Sandbox,
    ) -> Self {
        ClientTerminalExecutor {
            cx,
            session_id: session_id.to_string().into(),
            terminals,
            sandbox,
        }
    }
}

#[async_trait]
impl CommandExecutor for ClientTerminalExecutor {
    async fn run(
        &self,
        request: CommandRequest,
        cancel: CancellationToken,
        output: OutputSink,
    ) -> Result<CommandExit, ExecError> {
        check_cwd(&request.cwd).await?;
        // A mode the kernel cannot enforce is said before anything runs.
        let policy = self.sandbox.policy_for(request.tool_call_id.as_deref());
        policy.prepare().map_err(ExecError::Sandbox)?;
        // The terminal is driven by a task of its own, which releases it whatever happens;
        // dropping this future (the run was aborted) only tells that task to stop.
        let stop = cancel.child_token();
        let _stop_when_dropped = stop.clone().drop_guard();
        let job = Job {
            launch: policy.launch(),
            cx: self.cx.clone(),
            session_id: self.session_id.clone(),
            terminals: self.terminals.clone(),
            request,
            stop,
        };
        let (tx, rx) = oneshot::channel();
        self.terminals.track(tokio::spawn(async move {
            let _ = tx.send(job.run(output).await);
        }));
        rx.await
            .unwrap_or_else(|_| Err(ExecError::Client("the terminal task failed".to_string())))
    }

    fn failure_note(&self, call_id: Option<&str>, output: &str) -> Option<String> {
        self.sandbox.failure_note(call_id, output)
    }
}

/// How waiting for the command ended.
enum Ending {
    Exited(TerminalExitStatus),
    TimedOut,
    Aborted,
    Failed(ExecError),
}

/// One command in one client terminal.
struct Job {
    /// The sandbox's launcher and its arguments, when the command is confined.
    launch: Option<(std::path::PathBuf, Vec<std::ffi::OsString>)>,
    cx: ConnectionTo<Client>,
    session_id: SessionId,
    terminals: Arc<ClientTerminals>,
    request: CommandRequest,
    stop: CancellationToken,
}

impl Job {
    async fn run(self, mut output: OutputSink) -> Result<CommandExit, ExecError> {
        if self.stop.is_cancelled() {
            return Ok(CommandExit::Aborted);
        }
        // Not raced against a stop: the client answers at once, and a terminal created after
        // we stopped listening would never be released.
        let shell = [
            march_tools::exec::SHELL.to_string(),
            "-c".to_string(),
            self.request.command.clone(),
        ];
        // Confined, the launcher runs the shell (its arguments end in the shell's).
        let (program, args) = match &self.launch {
            Some((launcher, args)) => (
                launcher.to_string_lossy().into_owned(),
                args.iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .chain(shell)
                    .collect(),
            ),
            None => (shell[0].clone(), shell[1..].to_vec()),
        };
        let create = CreateTerminalRequest::new(self.session_id.clone(), program)
            .args(args)
            .cwd(self.request.cwd.clone())
            .output_byte_limit(OUTPUT_BYTE_LIMIT);
        let terminal = self
            .call(create)
            .await
            .map_err(|e| ExecError::Client(format!("terminal/create failed: {}", e.message)))?
            .terminal_id;
        tracing::debug!(session = %self.session_id, terminal = %terminal.0, "client terminal created");
        if let Some(call) = &self.request.tool_call_id {
            self.terminals.attach(call, terminal.clone());
            self.show(call, &terminal);
        }

        let ending = self.wait(&terminal).await;
        if let Ending::Failed(e) = &ending {
            tracing::warn!(session = %self.session_id, terminal = %terminal.0, "{e}");
        }

        let out = self
            .call(TerminalOutputRequest::new(
                self.session_id.clone(),
                terminal.clone(),
            ))
            .await;
        match out {
            Ok(out) => {
                if out.truncated {
                    output(
                        format!(
                            "[The client's terminal kept only the last {} KB of output]\n",
                            OUTPUT_BYTE_LIMIT / 1024
                        )
                        .as_bytes(),
                    );
                }
                output(out.output.as_bytes());
            }
            Err(e) => tracing::warn!(session = %self.session_id, "terminal/output failed: {e}"),
        }
        let release = ReleaseTerminalRequest::new(self.session_id.clone(), terminal.clone());
        if let Err(e) = self.call(release).await {
            tracing::warn!(session = %self.session_id, "terminal/release failed: {e}");
        }
        match ending {
            Ending::Exited(status) => exit_of(&status),
            Ending::TimedOut => Ok(CommandExit::TimedOut),
            Ending::Aborted => Ok(CommandExit::Aborted),
            Ending::Failed(e) => Err(e),
        }
    }

    /// Wait for the exit, the timeout or a stop; on the latter two, kill and give the client
    /// a moment to see the command go.
    async fn wait(&self, terminal: &TerminalId) -> Ending {
        let exit = self.call(WaitForTerminalExitRequest::new(
            self.session_id.clone(),
            terminal.clone(),
        ));
        tokio::pin!(exit);
        let timeout = self.request.timeout;
        let timer = async move {
            match timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let ending = tokio::select! {
            exited = &mut exit => return match exited {
                Ok(response) => Ending::Exited(response.exit_status),
                Err(e) => Ending::Failed(ExecError::Client(format!(
                    "terminal/wait_for_exit failed: {}",
                    e.message
                ))),
            },
            () = timer => Ending::TimedOut,
            () = self.stop.cancelled() => Ending::Aborted,
        };
        let kill = KillTerminalRequest::new(self.session_id.clone(), terminal.clone());
        if let Err(e) = self.call(kill).await {
            tracing::warn!(session = %self.session_id, "terminal/kill failed: {e}");
        }
        // Dropping the wait after the grace withdraws it (`$/cancel_request`).
        let _ = tokio::time::timeout(KILL_GRACE, exit).await;
        ending
    }

    /// Attach the terminal to its tool call, so the client shows the command running.
    fn show(&self, tool_call_id: &str, terminal: &TerminalId) {
        let content = vec![ToolCallContent::Terminal(Terminal::new(terminal.clone()))];
        let update = SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            tool_call_id.to_string(),
            ToolCallUpdateFields::new().content(content),
        ));
        let note = SessionNotification::new(self.session_id.clone(), update);
        if let Err(e) = self.cx.send_notification(note) {
            tracing::debug!(session = %self.session_id, "terminal not shown: {e}");
        }
    }

    /// A request to the client, from this task (never the dispatch loop).
    async fn call<R: JsonRpcRequest>(&self, request: R) -> Result<R::Response, Error> {
        self.cx.send_request(request).block_task().await
    }
}

/// The working directory must exist here too: the client shares this disk.
async fn check_cwd(cwd: &Path) -> Result<(), ExecError> {
    match tokio::fs::metadata(cwd).await {
        Ok(meta) if !meta.is_dir() => Err(ExecError::CwdNotDirectory(cwd.to_path_buf())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(ExecError::MissingCwd(cwd.to_path_buf()))
        }
        _ => Ok(()),
    }
}

/// How the client says the command ended, as the bash tool reports it.
fn exit_of(status: &TerminalExitStatus) -> Result<CommandExit, ExecError> {
    if let Some(code) = status.exit_code {
        return Ok(CommandExit::Code(i32::try_from(code).unwrap_or(i32::MAX)));
    }
    match &status.signal {
        Some(name) => signal_number(name)
            .map(CommandExit::Signal)
            .ok_or_else(|| ExecError::Client(format!("the command was ended by signal {name}"))),
        None => Err(ExecError::Client(
            "the terminal reported neither an exit code nor a signal".to_string(),
        )),
    }
}

/// Linux's number for a signal given as `SIGKILL`, `KILL`, `kill` or `9`.
fn signal_number(name: &str) -> Option<i32> {
    const NAMES: [&str; 31] = [
        "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
        "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
        "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
    ];
    let name = name.trim();
    if let Ok(number) = name.parse::<i32>() {
        return (number > 0).then_some(number);
    }
    let upper = name.to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    let bare = match bare {
        "IOT" => "ABRT",
        "POLL" => "IO",
        "CLD" => "CHLD",
        other => other,
    };
    NAMES
        .iter()
        .position(|n| *n == bare)
        .and_then(|i| i32::try_from(i + 1).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_read_by_name_or_number() {
        assert_eq!(signal_number("SIGKILL"), Some(9));
        assert_eq!(signal_number("term"), Some(15));
        assert_eq!(signal_number("SIGHUP"), Some(1));
        assert_eq!(signal_number("SIGSYS"), Some(31));
        assert_eq!(signal_number("SIGIOT"), Some(6));
        assert_eq!(signal_number(" 2 "), Some(2));
        assert_eq!(signal_number("0"), None);
        assert_eq!(signal_number("SIGNOPE"), None);
    }

    #[test]
    fn exit_statuses_map_to_command_exits() {
        let code = |c| exit_of(&TerminalExitStatus::new().exit_code(c)).unwrap();
        assert_eq!(code(0), CommandExit::Code(0));
        assert_eq!(code(3), CommandExit::Code(3));
        let signal = TerminalExitStatus::new().signal("SIGTERM".to_string());
        assert_eq!(exit_of(&signal).unwrap(), CommandExit::Signal(15));
        assert!(exit_of(&TerminalExitStatus::new()).is_err());
        let odd = TerminalExitStatus::new().signal("SIGWHAT".to_string());
        assert_eq!(
            exit_of(&odd).unwrap_err().to_string(),
            "The client's terminal failed: the command was ended by signal SIGWHAT"
        );
    }
}
