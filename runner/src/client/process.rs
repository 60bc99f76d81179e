//! The runner child process: spawned in its own process group with piped stdio, its stderr
//! kept as a bounded tail for error reports, and the whole group killed and reaped when it
//! exits or is dropped, so neither zombies nor orphans are left behind.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, Command};
use tokio::sync::{oneshot, watch};

use super::ClientError;

/// How many bytes of the runner's stderr are kept for error reports.
pub const STDERR_TAIL_BYTES: usize = 16 * 1024;

/// How long to wait for the rest of stderr once the runner exited (a killed group closes it
/// at once; this only bounds a pathological holder of the pipe).
const STDERR_DRAIN: Duration = Duration::from_secs(1);

/// The transport over a runner's stdin and stdout: lines read as bytes, bad ones answered.
pub type StdioTransport = crate::wire::LineTransport;

/// What to run as a runner: any ACP agent command, with its working directory and environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerCommand {
    program: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    env_remove: Vec<OsString>,
}

impl RunnerCommand {
    /// A command running `program` with no arguments in the current directory and environment.
    pub fn new(program: impl Into<OsString>) -> Self {
        RunnerCommand {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            env_remove: Vec::new(),
        }
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets the working directory of the child.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets one environment variable for the child (on top of the inherited environment).
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        let name = name.into();
        self.env_remove.retain(|removed| *removed != name);
        self.env.push((name, value.into()));
        self
    }

    /// Removes one inherited environment variable from the child's environment.
    pub fn env_remove(mut self, name: impl Into<OsString>) -> Self {
        let name = name.into();
        self.env.retain(|(set, _)| *set != name);
        self.env_remove.push(name);
        self
    }

    /// The program to run.
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments.
    pub fn arguments(&self) -> &[OsString] {
        &self.args
    }

    /// The working directory, when one is set.
    pub fn working_dir(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// `program arg…` for messages.
    pub fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|part| part.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn to_command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        for name in &self.env_remove {
            command.env_remove(name);
        }
        for (name, value) in &self.env {
            command.env(name, value);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own group, so one signal reaches everything it started.
            .process_group(0)
            // Only a fallback for a runtime shutting down; the group kill below does the work.
            .kill_on_drop(true);
        command
    }
}

/// How a runner process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunnerExit {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
    /// Waiting for it failed, so the status is unknown (it is gone all the same).
    Unknown,
}

impl RunnerExit {
    fn from_status(status: ExitStatus) -> Self {
        match (status.code(), status.signal()) {
            (Some(code), _) => RunnerExit::Code(code),
            (None, Some(signal)) => RunnerExit::Signal(signal),
            (None, None) => RunnerExit::Unknown,
        }
    }

    /// Whether the runner exited with code 0.
    pub fn success(self) -> bool {
        self == RunnerExit::Code(0)
    }
}

impl fmt::Display for RunnerExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunnerExit::Code(code) => write!(f, "exited with code {code}"),
            RunnerExit::Signal(9) => write!(f, "was killed (SIGKILL)"),
            RunnerExit::Signal(signal) => write!(f, "was killed by signal {signal}"),
            RunnerExit::Unknown => write!(f, "ended with an unknown status"),
        }
    }
}

/// The last [`STDERR_TAIL_BYTES`] bytes a process wrote to stderr.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    bytes: Arc<Mutex<VecDeque<u8>>>,
}

impl StderrTail {
    fn push(&self, chunk: &[u8]) {
        let mut bytes = self.bytes.lock();
        bytes.extend(chunk);
        let excess = bytes.len().saturating_sub(STDERR_TAIL_BYTES);
        bytes.drain(..excess);
    }

    /// The tail as text (invalid UTF-8 replaced), trimmed of surrounding whitespace.
    pub fn text(&self) -> String {
        let bytes = self.bytes.lock();
        let (front, back) = bytes.as_slices();
        let mut all = Vec::with_capacity(bytes.len());
        all.extend_from_slice(front);
        all.extend_from_slice(back);
        String::from_utf8_lossy(&all).trim().to_string()
    }
}

/// A spawned runner. Dropping it SIGKILLs its whole process group and reaps the child.
pub struct RunnerProcess {
    pid: u32,
    pgid: Option<Pid>,
    transport: Option<StdioTransport>,
    stderr: StderrTail,
    exit: watch::Receiver<Option<RunnerExit>>,
    /// Dropping (or sending on) this tells the waiter task to kill the group.
    kill: Option<oneshot::Sender<()>>,
}

impl fmt::Debug for RunnerProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunnerProcess")
            .field("pid", &self.pid)
            .field("transport_taken", &self.transport.is_none())
            .finish_non_exhaustive()
    }
}

impl RunnerProcess {
    /// Starts `command` in a new process group with piped stdin, stdout and stderr.
    ///
    /// Must be called within a tokio runtime: a task waits for the child and reaps it.
    pub fn spawn(command: &RunnerCommand) -> Result<RunnerProcess, ClientError> {
        let spawn_error = |source| ClientError::Spawn {
            command: command.display(),
            source,
        };
        let mut child = command.to_command().spawn().map_err(spawn_error)?;
        let (Some(pid), Some(stdin), Some(stdout), Some(stderr)) = (
            child.id(),
            child.stdin.take(),
            child.stdout.take(),
            child.stderr.take(),
        ) else {
            // Cannot happen for a freshly spawned child with piped stdio; do not leak it.
            let _ = child.start_kill();
            return Err(spawn_error(io::Error::other(
                "the child has no pid or stdio pipes",
            )));
        };
        // The child leads its own group (`process_group(0)`), so its pid is the group id.
        let pgid = i32::try_from(pid).ok().and_then(Pid::from_raw);
        let tail = StderrTail::default();
        let reader = tokio::spawn(read_stderr(stderr, tail.clone()));
        let (exit_tx, exit_rx) = watch::channel(None);
        let (kill_tx, kill_rx) = oneshot::channel();
        tokio::spawn(wait_and_reap(child, pgid, kill_rx, reader, exit_tx));
        tracing::debug!(pid, command = %command.display(), "runner spawned");
        Ok(RunnerProcess {
            pid,
            pgid,
            transport: Some(crate::wire::line_transport(stdout, stdin)),
            stderr: tail,
            exit: exit_rx,
            kill: Some(kill_tx),
        })
    }

    /// The child's process id, which is also its process group id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Takes the ACP transport over the child's stdin and stdout (once).
    pub fn take_transport(&mut self) -> Option<StdioTransport> {
        self.transport.take()
    }

    /// What the child wrote to stderr lately.
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// How the child ended, if it has (and was reaped).
    pub fn exit(&self) -> Option<RunnerExit> {
        *self.exit.borrow()
    }

    /// Waits until the child has exited and been reaped (its stderr tail is complete then).
    pub async fn wait(&self) -> RunnerExit {
        self.exit_watcher().wait().await.0
    }

    /// A handle that waits for the exit without borrowing the process.
    pub fn exit_watcher(&self) -> ExitWatcher {
        ExitWatcher {
            exit: self.exit.clone(),
            stderr: self.stderr.clone(),
        }
    }

    /// SIGKILLs the whole process group now; [`wait`](Self::wait) reports the end.
    pub fn kill(&mut self) {
        self.kill_group();
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
    }

    fn kill_group(&self) {
        if self.exit().is_some() {
            // Reaped, and the group was killed after the leader ended: nothing is left.
            return;
        }
        if let Some(pgid) = self.pgid {
            // ESRCH just means the group is already gone.
            let _ = kill_process_group(pgid, Signal::KILL);
        }
    }
}

impl Drop for RunnerProcess {
    fn drop(&mut self) {
        // Synchronously, so the group dies even if the runtime never polls the waiter again;
        // the waiter (told by the dropped sender) then reaps the child.
        self.kill_group();
    }
}

/// Waits for a [`RunnerProcess`] to end, detached from it.
#[derive(Debug, Clone)]
pub struct ExitWatcher {
    exit: watch::Receiver<Option<RunnerExit>>,
    stderr: StderrTail,
}

impl ExitWatcher {
    /// How the process ended and the tail of its stderr, once it has been reaped.
    pub async fn wait(mut self) -> (RunnerExit, String) {
        let exit = match self.exit.wait_for(Option::is_some).await {
            Ok(value) => value.unwrap_or(RunnerExit::Unknown),
            // The waiter task is gone only when the runtime shuts down.
            Err(_) => RunnerExit::Unknown,
        };
        (exit, self.stderr.text())
    }
}

async fn read_stderr(mut stderr: ChildStderr, tail: StderrTail) {
    let mut buf = vec![0u8; 4096];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) => return,
            Ok(n) => tail.push(&buf[..n]),
            Err(error) => {
                tracing::debug!("reading the runner's stderr failed: {error}");
                return;
            }
        }
    }
}

/// Owns the child: waits for it to exit (or for the order to kill it), reaps it, kills what
/// is left of its group, then publishes the exit once stderr is drained.
async fn wait_and_reap(
    mut child: Child,
    pgid: Option<Pid>,
    kill: oneshot::Receiver<()>,
    reader: tokio::task::JoinHandle<()>,
    exit: watch::Sender<Option<RunnerExit>>,
) {
    let status = tokio::select! {
        status = child.wait() => status,
        // A kill order, or the owner dropped: either way the group goes.
        _ = kill => {
            kill_group(pgid, &mut child);
            child.wait().await
        }
    };
    // The leader is gone; whatever it left in its group must not outlive it.
    kill_group(pgid, &mut child);
    let result = match status {
        Ok(status) => RunnerExit::from_status(status),
        Err(error) => {
            tracing::warn!("waiting for the runner failed: {error}");
            RunnerExit::Unknown
        }
    };
    let _ = tokio::time::timeout(STDERR_DRAIN, reader).await;
    tracing::debug!(exit = %result, "runner reaped");
    exit.send_replace(Some(result));
}

fn kill_group(pgid: Option<Pid>, child: &mut Child) {
    match pgid {
        Some(pgid) => {
            let _ = kill_process_group(pgid, Signal::KILL);
        }
        None => {
            let _ = child.start_kill();
        }
    }
}
