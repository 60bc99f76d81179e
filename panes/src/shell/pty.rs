//! The process side of a shell pane: a program on a PTY, its output read into the emulator
//! ([`super::output`]), a thread that writes input to it, one that waits for it to exit;
//! hang-up and reaping when the pane goes.
//!
//! The PTY's master is non-blocking: output is read without waiting by whoever holds
//! reading, and input that finds it full waits for room on the writer thread.

use parking_lot::Mutex;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use alacritty_terminal::sync::FairMutex;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

use super::output::{OutputReader, PtyOutput, Viewing};
use super::{ShellError, ShellNotice, Wake};
use crate::terminal::TerminalEmulator;

/// The emulator a shell pane draws, shared with the thread that feeds it. The lock is fair:
/// a frame waiting for it gets it before the reader takes it again, so a flood cannot keep
/// the screen from being drawn.
pub type SharedTerminal = Arc<FairMutex<Box<dyn TerminalEmulator + Send>>>;

/// How a shell's program ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    /// Its exit status (128 + n when a signal ended it, as shells report).
    pub code: u32,
    /// The signal that ended it, by name, if one did.
    pub signal: Option<String>,
}

impl ExitInfo {
    /// Whether it succeeded.
    pub fn success(&self) -> bool {
        self.code == 0 && self.signal.is_none()
    }
}

/// Input written from the caller's thread at most, when nothing waits before it and the
/// PTY takes it now: a keystroke need not wake the writer thread.
const DIRECT_INPUT: usize = 64;

/// Input on its way to the program: queued for the writer thread, which counts down what
/// it has not written yet.
#[derive(Clone)]
pub(super) struct InputQueue {
    tx: mpsc::Sender<Vec<u8>>,
    queued: Arc<AtomicUsize>,
}

impl InputQueue {
    pub(super) fn send(&self, bytes: Vec<u8>) {
        self.queued.fetch_add(1, Ordering::AcqRel);
        if self.tx.send(bytes).is_err() {
            // The program is gone; input to it is moot.
            self.queued.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Nothing is waiting to be written.
    fn idle(&self) -> bool {
        self.queued.load(Ordering::Acquire) == 0
    }
}

/// A running program on a PTY.
pub(crate) struct Pty {
    master: Box<dyn MasterPty + Send>,
    input: InputQueue,
    /// The PTY, written directly for small input (see [`DIRECT_INPUT`]).
    direct: Arc<OwnedFd>,
    pid: Option<i32>,
    exit: Arc<Mutex<Option<ExitInfo>>>,
}

/// What [`Pty::spawn`] needs.
pub(crate) struct PtyCommand<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub rows: u16,
    pub cols: u16,
}

impl Pty {
    /// Starts `cmd` on a new PTY (a new session, the PTY its controlling terminal), with
    /// `term` fed from its output (read where `reader` says) and `wake` told when there is
    /// output or it exited.
    pub(crate) fn spawn(
        cmd: &PtyCommand<'_>,
        term: SharedTerminal,
        viewing: Arc<Viewing>,
        wake: Wake,
        reader: &OutputReader,
    ) -> Result<Pty, ShellError> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: cmd.rows.max(1),
                cols: cmd.cols.max(1),
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| ShellError::Pty(e.to_string()))?;
        let mut builder = CommandBuilder::new(cmd.program);
        builder.args(cmd.args);
        builder.cwd(cmd.cwd);
        for (k, v) in cmd.env {
            builder.env(k, v);
        }
        let mut child = pair
            .slave
            .spawn_command(builder)
            .map_err(|e| ShellError::Spawn {
                program: cmd.program.to_string(),
                reason: e.to_string(),
            })?;
        // The child holds the slave now; ours would keep the PTY open after it exits.
        drop(pair.slave);
        let pid = child.process_id().and_then(|p| i32::try_from(p).ok());
        let master = pair
            .master
            .as_raw_fd()
            .and_then(|fd| filedescriptor::FileDescriptor::dup(&fd).ok())
            .ok_or_else(|| ShellError::Pty("cannot duplicate the PTY".to_string()))?;
        let copy = || {
            master
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| ShellError::Pty(format!("cannot duplicate the PTY: {e}")))
        };
        let output_fd = copy()?;
        // Input: written by the writer thread, and by the caller for a keystroke.
        let direct = Arc::new(copy()?);
        let writer = direct.clone();
        let (tx, input_rx) = mpsc::channel::<Vec<u8>>();
        let input = InputQueue {
            tx,
            queued: Arc::new(AtomicUsize::new(0)),
        };
        {
            let queued = input.queued.clone();
            spawn_thread("march-pty-write", move || {
                write_loop(&writer, &input_rx, &queued);
            })?;
        }
        // Told when the output has been read to its end (every holder of the terminal
        // closed it).
        let (drained, drained_rx) = mpsc::channel::<()>();
        // Non-blocking for every holder: the descriptors share one open file.
        let output = PtyOutput::new(
            output_fd,
            term,
            viewing,
            input.clone(),
            wake.clone(),
            drained,
        )
        .map_err(|e| ShellError::Pty(format!("cannot make the PTY non-blocking: {e}")))?;
        match reader {
            OutputReader::Thread => output
                .read_on_thread()
                .map_err(|e| ShellError::Pty(format!("cannot start a thread: {e}")))?,
            OutputReader::Loop(take) => take(output),
        }
        let exit = Arc::new(Mutex::new(None));
        {
            let exit = exit.clone();
            spawn_thread("march-pty-wait", move || {
                let status = child.wait();
                // The exit is reported after the output it wrote is parsed (the reader
                // ends once no process holds the terminal; one left in the background
                // may hold it for good, hence the bound).
                let _ = drained_rx.recv_timeout(Duration::from_millis(500));
                let info = match status {
                    Ok(status) => ExitInfo {
                        code: status.exit_code(),
                        signal: status.signal().map(str::to_string),
                    },
                    Err(e) => {
                        tracing::warn!("waiting for a shell failed: {e}");
                        ExitInfo {
                            code: 1,
                            signal: None,
                        }
                    }
                };
                *exit.lock() = Some(info);
                wake(ShellNotice::Exited);
            })?;
        }
        Ok(Pty {
            master: pair.master,
            input,
            direct,
            pid,
            exit,
        })
    }

    /// Queues `bytes` for the program (written by the writer thread, so a program that
    /// does not read never blocks the caller).
    pub(crate) fn write(&mut self, bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        // A keystroke goes straight in when nothing is queued before it; the PTY is
        // non-blocking, so when it is full (a program that stopped reading) the write
        // fails and the writer thread waits instead of the caller.
        if bytes.len() <= DIRECT_INPUT && self.input.idle() {
            match rustix::io::write(&*self.direct, &bytes) {
                Ok(n) if n == bytes.len() => return,
                Ok(n) => return self.input.send(bytes[n..].to_vec()),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                // The program is gone; input to it is moot.
                Err(_) => return,
            }
        }
        self.input.send(bytes);
    }

    /// Tells the program its new size (SIGWINCH).
    pub(crate) fn resize(&self, rows: u16, cols: u16) {
        let size = PtySize {
            rows: rows.max(1),
            cols: cols.max(1),
            pixel_width: 0,
            pixel_height: 0,
        };
        if let Err(e) = self.master.resize(size) {
            tracing::debug!("pty resize failed: {e}");
        }
    }

    /// The program's process id.
    pub(crate) fn pid(&self) -> Option<i32> {
        self.pid
    }

    /// How it ended, once it has.
    pub(crate) fn exit(&self) -> Option<ExitInfo> {
        self.exit.lock().clone()
    }

    /// Where its exit will be, kept past a hang-up (the waiter still reports it).
    pub(crate) fn exit_handle(&self) -> Arc<Mutex<Option<ExitInfo>>> {
        self.exit.clone()
    }

    /// The working directory of the program now (the shell's `cd`s included).
    pub(crate) fn current_dir(&self) -> Option<std::path::PathBuf> {
        std::fs::read_link(format!("/proc/{}/cwd", self.pid?)).ok()
    }

    /// Hangs up: every process of the program's session gets SIGHUP (and SIGCONT, so a
    /// stopped job sees it); those still there after `grace` are killed. The returned thread
    /// ends when all of them are gone (the program itself reaped by its waiter).
    pub(crate) fn hangup(self, grace: Duration) -> Option<JoinHandle<()>> {
        let pid = self.pid?;
        if self.exit().is_none() || !session_members(pid).is_empty() {
            signal_session(pid, rustix::process::Signal::HUP);
            signal_session(pid, rustix::process::Signal::CONT);
        }
        let exit = self.exit.clone();
        // The master closes here: the kernel hangs up the terminal too.
        drop(self);
        std::thread::Builder::new()
            .name("march-pty-hangup".into())
            .spawn(move || {
                let deadline = Instant::now() + grace;
                let gone = || exit.lock().is_some() && session_members(pid).is_empty();
                while Instant::now() < deadline {
                    if gone() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                signal_session(pid, rustix::process::Signal::KILL);
                // The waiter reaps the program; give it a moment so the caller can rely
                // on it being gone.
                let deadline = Instant::now() + Duration::from_millis(500);
                while Instant::now() < deadline && !gone() {
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
            .ok()
    }
}

fn spawn_thread(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), ShellError> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .map(drop)
        .map_err(|e| ShellError::Pty(format!("cannot start a thread: {e}")))
}

fn write_loop(writer: &OwnedFd, input: &mpsc::Receiver<Vec<u8>>, queued: &AtomicUsize) {
    while let Ok(bytes) = input.recv() {
        let written = write_all(writer, &bytes);
        queued.fetch_sub(1, Ordering::AcqRel);
        if written.is_err() {
            // The program is gone; what is left to write goes nowhere.
            return;
        }
    }
}

/// Writes all of `bytes` to the non-blocking PTY, waiting for room when it is full (a
/// program that does not read).
fn write_all(fd: &OwnedFd, mut bytes: &[u8]) -> rustix::io::Result<()> {
    use rustix::event::{PollFd, PollFlags};
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                let mut fds = [PollFd::new(fd, PollFlags::OUT)];
                match rustix::event::poll(&mut fds, None) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Processes whose session is `sid` (read from `/proc`).
fn session_members(sid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| session_of(&stat))
                == Some(sid)
        })
        .collect()
}

/// The session id in a `/proc/PID/stat` line: the 6th field, counted after the command
/// name (which may hold spaces and parentheses, so it is skipped up to its last `)`).
fn session_of(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // state ppid pgrp session
    rest.split_whitespace().nth(3)?.parse().ok()
}

/// Sends `signal` to every process of session `sid`, the leader first.
fn signal_session(sid: i32, signal: rustix::process::Signal) {
    let mut members = session_members(sid);
    members.sort_by_key(|p| *p != sid);
    for pid in members {
        if let Some(pid) = rustix::process::Pid::from_raw(pid) {
            // A process that went in between is fine.
            let _ = rustix::process::kill_process(pid, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_is_read_after_the_command_name() {
        let stat = "4242 (a (weird) name) S 1 4242 4240 34816 4242 4194560 0 0";
        assert_eq!(session_of(stat), Some(4240));
        assert_eq!(session_of("garbage"), None);
    }
}
