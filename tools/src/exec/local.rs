//! Local execution: `bash -c` in its own process group, output merged through one pipe, and the
//! whole group killed when the run ends, times out, is aborted or is dropped.

use std::ffi::OsString;
use std::future::pending;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use async_trait::async_trait;
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep_until, timeout_at};
use tokio_util::sync::CancellationToken;

use super::sandbox::{Sandbox, SandboxPolicy};
use super::{CommandExecutor, CommandExit, CommandRequest, ExecError, OutputSink};

/// How long to keep reading after the group was killed. Whatever the dead group wrote is already
/// in the pipe; only a process that escaped the group (e.g. via `setsid`) can hold it open longer.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Size of one read from the output pipe.
const READ_CHUNK: usize = 64 * 1024;

/// Runs commands as local child processes, each in its own process group, confined by a
/// sandbox policy when it has one.
#[derive(Debug, Clone, Default)]
pub struct LocalExecutor {
    sandbox: Option<Sandbox>,
}

impl LocalExecutor {
    /// An executor whose commands run confined by `sandbox` (a policy, or a session's shared
    /// sandbox).
    pub fn sandboxed(sandbox: impl Into<Sandbox>) -> LocalExecutor {
        LocalExecutor {
            sandbox: Some(sandbox.into()),
        }
    }

    /// The sandbox commands run in, if any.
    pub fn sandbox(&self) -> Option<&Sandbox> {
        self.sandbox.as_ref()
    }
}

#[async_trait]
impl CommandExecutor for LocalExecutor {
    async fn run(
        &self,
        request: CommandRequest,
        cancel: CancellationToken,
        mut output: OutputSink,
    ) -> Result<CommandExit, ExecError> {
        check_cwd(&request.cwd).await?;
        let confined = match &self.sandbox {
            // Checked here, so a mode the kernel cannot enforce is said before anything runs.
            Some(sandbox) => {
                let policy = sandbox.policy_for(request.tool_call_id.as_deref());
                policy.prepare().map_err(ExecError::Sandbox)?;
                Some(policy)
            }
            None => None,
        };
        let (mut reader, mut group) = spawn(&request, confined.as_ref())?;

        let deadline = request
            .timeout
            .and_then(|limit| Instant::now().checked_add(limit));
        let timer = async move {
            match deadline {
                Some(at) => sleep_until(at).await,
                None => pending::<()>().await,
            }
        };
        tokio::pin!(timer);

        let mut buf = vec![0u8; READ_CHUNK];
        let mut open = true;
        // Not `biased`: a grandchild flooding the pipe must not starve noticing the shell's exit.
        let ending = loop {
            tokio::select! {
                _ = cancel.cancelled() => break Ending::Aborted,
                _ = &mut timer => break Ending::TimedOut,
                read = reader.read(&mut buf), if open => match read {
                    Ok(0) => open = false,
                    Ok(n) => output(&buf[..n]),
                    Err(err) => break Ending::ReadFailed(err),
                },
                status = group.wait() => break Ending::Exited(status),
            }
        };

        // Also on a normal exit: background grandchildren would otherwise outlive the call and
        // hold the pipe open.
        let reaped = group.kill_and_reap().await;

        if open {
            drain(&mut reader, &mut buf, &mut output).await;
        }

        match ending {
            Ending::Exited(status) => Ok(exit_of(status.map_err(ExecError::Io)?)),
            Ending::ReadFailed(err) => Err(ExecError::Io(err)),
            Ending::TimedOut | Ending::Aborted => {
                if let Err(err) = reaped {
                    tracing::warn!("could not reap a killed command: {err}");
                }
                Ok(if matches!(ending, Ending::TimedOut) {
                    CommandExit::TimedOut
                } else {
                    CommandExit::Aborted
                })
            }
        }
    }

    fn failure_note(&self, call_id: Option<&str>, output: &str) -> Option<String> {
        self.sandbox.as_ref()?.failure_note(call_id, output)
    }
}

/// Why the main loop stopped.
enum Ending {
    Exited(io::Result<ExitStatus>),
    TimedOut,
    Aborted,
    ReadFailed(io::Error),
}

async fn check_cwd(cwd: &Path) -> Result<(), ExecError> {
    match tokio::fs::metadata(cwd).await {
        Ok(meta) if !meta.is_dir() => Err(ExecError::CwdNotDirectory(cwd.to_path_buf())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            Err(ExecError::MissingCwd(cwd.to_path_buf()))
        }
        // Other failures (e.g. permissions) surface from the spawn with the OS's reason.
        _ => Ok(()),
    }
}

/// Start the shell with stdout and stderr sharing one pipe, in a new process group,
/// through the sandbox's launcher when `confined` (it confines itself, then runs the shell).
fn spawn(
    request: &CommandRequest,
    confined: Option<&SandboxPolicy>,
) -> Result<(pipe::Receiver, ProcessGroup), ExecError> {
    let (sender, reader) = pipe::pipe().map_err(ExecError::Spawn)?;
    let stdout = sender.into_blocking_fd().map_err(ExecError::Spawn)?;
    let stderr = stdout.try_clone().map_err(ExecError::Spawn)?;

    let shell_args = [
        shell().as_os_str().to_os_string(),
        OsString::from("-c"),
        OsString::from(&request.command),
    ];
    let mut command = match confined.and_then(SandboxPolicy::launch) {
        Some((launcher, mut args)) => {
            args.extend(shell_args);
            let mut command = Command::new(launcher);
            command.args(args);
            command
        }
        None => {
            let mut command = Command::new(&shell_args[0]);
            command.args(&shell_args[1..]);
            command
        }
    };
    command
        .current_dir(&request.cwd)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    let spawned = command.spawn();
    // The command still owns our copies of the write end; without dropping them the pipe would
    // never report end of file.
    drop(command);
    let child = spawned.map_err(ExecError::Spawn)?;
    Ok((reader, ProcessGroup::new(child)))
}

/// Read what the killed group left in the pipe, until end of file or a short grace period.
async fn drain(reader: &mut pipe::Receiver, buf: &mut [u8], output: &mut OutputSink) {
    let until = Instant::now() + DRAIN_GRACE;
    loop {
        match timeout_at(until, reader.read(buf)).await {
            Ok(Ok(0)) => return,
            Ok(Ok(n)) => output(&buf[..n]),
            Ok(Err(err)) => {
                tracing::warn!("reading command output failed: {err}");
                return;
            }
            Err(_) => {
                tracing::warn!("command output still open after its process group was killed");
                return;
            }
        }
    }
}

fn exit_of(status: ExitStatus) -> CommandExit {
    match (status.code(), status.signal()) {
        (Some(code), _) => CommandExit::Code(code),
        (None, Some(signal)) => CommandExit::Signal(signal),
        (None, None) => CommandExit::Code(-1),
    }
}

/// The shell `bash -c` runs in: `/bin/bash`, else `bash` on `PATH`, else `sh`.
fn shell() -> &'static Path {
    static SHELL: OnceLock<PathBuf> = OnceLock::new();
    SHELL.get_or_init(|| {
        let bin_bash = Path::new("/bin/bash");
        if is_executable(bin_bash) {
            return bin_bash.to_path_buf();
        }
        std::env::var_os("PATH")
            .and_then(|path| find_on_path(&path, super::SHELL))
            .unwrap_or_else(|| PathBuf::from("sh"))
    })
}

fn find_on_path(path: &OsString, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The running shell and its process group. Dropping it while the shell is unreaped kills the
/// whole group and reaps the shell in the background, so a dropped run leaves nothing behind.
struct ProcessGroup {
    child: Option<Child>,
    pgid: Option<Pid>,
}

impl ProcessGroup {
    fn new(child: Child) -> Self {
        // The shell leads its own group (`process_group(0)`), so its pid is the group id.
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        ProcessGroup {
            child: Some(child),
            pgid,
        }
    }

    /// Wait for the shell to exit (reaping it).
    async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self.child.as_mut() {
            Some(child) => child.wait().await,
            None => Err(io::Error::other("the command was already reaped")),
        }
    }

    /// SIGKILL every process in the group (falling back to the shell alone).
    fn kill(&mut self) {
        match self.pgid {
            // ESRCH just means the group is already gone.
            Some(pgid) => {
                let _ = kill_process_group(pgid, Signal::KILL);
            }
            None => {
                if let Some(child) = self.child.as_mut() {
                    let _ = child.start_kill();
                }
            }
        }
    }

    /// Kill the group, reap the shell and disarm the drop guard.
    async fn kill_and_reap(&mut self) -> io::Result<ExitStatus> {
        self.kill();
        let status = self.wait().await?;
        self.child = None;
        self.pgid = None;
        Ok(status)
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        self.kill();
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    let _ = child.wait().await;
                });
            }
            // Without a runtime, tokio's orphan queue reaps it on a best-effort basis.
            Err(_) => drop(child),
        }
    }
}
