//! The process side of a shell pane: a program on a PTY, a thread that reads its output into
//! the emulator, one that writes input to it, one that waits for it to exit; hang-up and
//! reaping when the pane goes.
//!
//! Output is parsed on the reader thread, not on the UI's: a flood costs the UI only the
//! frames it draws. The UI is woken once per burst (a flag it clears when it looks).

use parking_lot::Mutex;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use alacritty_terminal::sync::FairMutex;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

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

/// Bytes read from the PTY at once.
const READ_SIZE: usize = 64 * 1024;

/// Input written from the caller's thread at most, when nothing waits before it and the
/// PTY takes it now: a keystroke need not wake the writer thread.
const DIRECT_INPUT: usize = 64;

/// Input on its way to the program: queued for the writer thread, which counts down what
/// it has not written yet.
#[derive(Clone)]
struct InputQueue {
    tx: mpsc::Sender<Vec<u8>>,
    queued: Arc<AtomicUsize>,
}

impl InputQueue {
    fn send(&self, bytes: Vec<u8>) {
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
    direct: Option<filedescriptor::FileDescriptor>,
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
    /// `term` fed from its output and `wake` told when there is output or it exited.
    pub(crate) fn spawn(
        cmd: &PtyCommand<'_>,
        term: SharedTerminal,
        pending: Arc<AtomicBool>,
        wake: Wake,
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
        let reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| ShellError::Pty(e.to_string()))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| ShellError::Pty(e.to_string()))?;
        let (tx, input_rx) = mpsc::channel::<Vec<u8>>();
        let input = InputQueue {
            tx,
            queued: Arc::new(AtomicUsize::new(0)),
        };
        {
            let queued = input.queued.clone();
            spawn_thread("march-pty-write", move || {
                write_loop(writer, &input_rx, &queued);
            })?;
        }
        let direct = pair
            .master
            .as_raw_fd()
            .and_then(|fd| filedescriptor::FileDescriptor::dup(&fd).ok());
        // Watched for output while a synchronized update waits on its deadline.
        let readable = pair
            .master
            .as_raw_fd()
            .and_then(|fd| filedescriptor::FileDescriptor::dup(&fd).ok());
        // Told when the reader has read everything (every holder of the terminal closed it).
        let (drained, drained_rx) = mpsc::channel::<()>();
        {
            let input = input.clone();
            let wake = wake.clone();
            spawn_thread("march-pty-read", move || {
                read_loop(reader, readable, &term, &pending, &input, &wake);
                let _ = drained.send(());
            })?;
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
        // A keystroke goes straight in when it cannot block: nothing queued before it, and
        // the PTY has room now (a program that stopped reading fills it, and then the
        // writer thread waits instead of the caller).
        if bytes.len() <= DIRECT_INPUT
            && self.input.idle()
            && let Some(direct) = self.direct.as_mut()
            && writable_now(direct)
        {
            match direct.write(&bytes) {
                Ok(n) if n == bytes.len() => return,
                Ok(n) => return self.input.send(bytes[n..].to_vec()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
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

fn write_loop(
    mut writer: Box<dyn Write + Send>,
    input: &mpsc::Receiver<Vec<u8>>,
    queued: &AtomicUsize,
) {
    while let Ok(bytes) = input.recv() {
        let written = writer.write_all(&bytes).and_then(|()| writer.flush());
        queued.fetch_sub(1, Ordering::AcqRel);
        if written.is_err() {
            // The program is gone; what is left to write goes nowhere.
            return;
        }
    }
}

/// Whether `fd` takes a write without waiting.
fn writable_now(fd: &filedescriptor::FileDescriptor) -> bool {
    use std::os::fd::AsRawFd;
    let mut poll = [filedescriptor::pollfd {
        fd: fd.as_raw_fd(),
        events: filedescriptor::POLLOUT,
        revents: 0,
    }];
    filedescriptor::poll(&mut poll, Some(Duration::ZERO)).is_ok_and(|n| n == 1)
        && poll[0].revents & filedescriptor::POLLOUT != 0
}

/// Whether `fd` has something to read within `wait`.
fn readable_within(fd: &filedescriptor::FileDescriptor, wait: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let mut poll = [filedescriptor::pollfd {
        fd: fd.as_raw_fd(),
        events: filedescriptor::POLLIN,
        revents: 0,
    }];
    // An error (EINTR) counts as readable: the read below decides.
    filedescriptor::poll(&mut poll, Some(wait)).map_or(true, |n| n > 0)
}

fn read_loop(
    mut reader: Box<dyn Read + Send>,
    readable: Option<filedescriptor::FileDescriptor>,
    term: &SharedTerminal,
    pending: &AtomicBool,
    input: &InputQueue,
    wake: &Wake,
) {
    let mut buf = vec![0u8; READ_SIZE];
    loop {
        // A synchronized update holds the screen until it ends or its deadline: when the
        // program goes quiet in the middle of one, the deadline wakes the pane instead.
        let deadline = term.lock().sync_deadline();
        if let (Some(at), Some(fd)) = (deadline, &readable) {
            let wait = at.saturating_duration_since(std::time::Instant::now());
            if !readable_within(fd, wait) {
                if term.lock().expire_sync(std::time::Instant::now())
                    && !pending.swap(true, Ordering::AcqRel)
                {
                    wake(ShellNotice::Output);
                }
                continue;
            }
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // EIO: every process holding the terminal closed it.
            Err(_) => break,
        };
        let replies = {
            let mut term = term.lock();
            term.feed(&buf[..n]);
            term.take_replies()
        };
        if !replies.is_empty() {
            input.send(replies);
        }
        if !pending.swap(true, Ordering::AcqRel) {
            wake(ShellNotice::Output);
        }
    }
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
