//! A shell's output, read where it costs least: by the app's event loop when it comes a
//! little at a time, so an echo wakes one thread and not two, and by a thread of the pane's
//! own through a burst, so a flood is parsed beside the loop and not on it.
//!
//! Reading is held by one side at a time. The loop reads while output is quiet; a read that
//! fills the kernel's buffer (a burst) is handed to the pane's parser thread, which parses it
//! while a read-ahead thread reads on until the PTY stays empty (see `read_ahead.rs`), and
//! then hands reading back ([`PtyOutput::resumed`]). So bytes are parsed in the order they
//! were written, and the loop never waits on either.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use super::pty::{InputQueue, SharedTerminal};
use super::read_ahead::{Ahead, ReadAhead};
use super::{ShellNotice, Wake};

/// Bytes read from the PTY at once.
pub(super) const READ_SIZE: usize = 64 * 1024;

/// A read at least this long is a burst (the PTY hands out about 4 KiB at a time, so a
/// program writing faster than it is read fills each read): it goes to the parser thread.
const BURST: usize = 2048;

/// How long the parser thread waits for more output before it hands reading back.
pub(super) const LINGER: std::time::Duration = std::time::Duration::from_millis(5);

/// Bytes the loop parses in one go at most before it hands the rest over.
const INLINE_LIMIT: usize = 16 * 1024;

/// How the parser thread gives reading back after a burst.
pub type Resume = Arc<dyn Fn() + Send + Sync>;

/// Where the driver's [`Resume`] is kept, for the parser thread.
type ResumeSlot = Arc<parking_lot::Mutex<Option<Resume>>>;

/// Where a shell pane's output is read.
#[derive(Clone)]
pub enum OutputReader {
    /// On a thread of the pane's own (no event loop to read it on).
    Thread,
    /// By the caller's event loop, given each new program's [`PtyOutput`] to drive: wait
    /// until its descriptor is readable (or its sync deadline passes), then
    /// [`PtyOutput::read_now`].
    Loop(Arc<dyn Fn(PtyOutput) + Send + Sync>),
}

impl std::fmt::Debug for OutputReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutputReader::Thread => "Thread",
            OutputReader::Loop(_) => "Loop",
        })
    }
}

/// What [`PtyOutput::read_now`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Everything was read: wait until the descriptor is readable again, or until
    /// [`PtyOutput::sync_deadline`].
    Quiet,
    /// A burst went to the parser thread, which reads until the PTY is empty: wait for
    /// [`PtyOutput::resumed`] to be called, then read again.
    Handed,
    /// Every process holding the terminal closed it: nothing more will come.
    Ended,
}

/// What the app does with a pane's output, shared with whoever reads it.
#[derive(Default)]
pub(super) struct Viewing {
    /// Output came that the app has not drawn yet (it was woken once for it).
    pub(super) pending: AtomicBool,
    /// The pane is the one the user works in: a flood in it is read at a lower priority
    /// than the program writing it, which gets its core (see [`FLOOD_NICENESS`]).
    pub(super) focused: AtomicBool,
}

/// Parses bytes into the pane's emulator and tells the app.
#[derive(Clone)]
struct Feed {
    term: SharedTerminal,
    viewing: Arc<Viewing>,
    input: InputQueue,
    wake: Wake,
}

impl Feed {
    fn feed(&self, bytes: &[u8]) {
        let replies = {
            let mut term = self.term.lock();
            term.feed(bytes);
            term.take_replies()
        };
        if !replies.is_empty() {
            self.input.send(replies);
        }
        self.output();
    }

    /// Tells the app there is something to draw, once until it looks.
    fn output(&self) {
        if !self.viewing.pending.swap(true, Ordering::AcqRel) {
            (self.wake)(ShellNotice::Output);
        }
    }
}

/// The result of one non-blocking read.
pub(super) enum Read {
    Bytes(usize),
    Empty,
    Ended,
}

pub(super) fn read(fd: &OwnedFd, buf: &mut [u8]) -> Read {
    loop {
        match rustix::io::read(fd, &mut *buf) {
            Ok(0) => return Read::Ended,
            Ok(n) => return Read::Bytes(n),
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => return Read::Empty,
            // EIO: every process holding the terminal closed it.
            Err(_) => return Read::Ended,
        }
    }
}

/// The output side of a running program's PTY.
pub struct PtyOutput {
    fd: Arc<OwnedFd>,
    feed: Feed,
    buf: Vec<u8>,
    /// Bursts for the parser thread, when the loop reads.
    bursts: Option<mpsc::Sender<Vec<u8>>>,
    /// The parser thread gives reading back: whoever drives this waits for it to call.
    resume: ResumeSlot,
    /// Told once the output has ended.
    drained: mpsc::Sender<()>,
}

impl PtyOutput {
    /// Output from `fd` (the PTY's master, made non-blocking here) into `term`.
    pub(super) fn new(
        fd: OwnedFd,
        term: SharedTerminal,
        viewing: Arc<Viewing>,
        input: InputQueue,
        wake: Wake,
        drained: mpsc::Sender<()>,
    ) -> std::io::Result<PtyOutput> {
        rustix::io::ioctl_fionbio(&fd, true)?;
        Ok(PtyOutput {
            fd: Arc::new(fd),
            feed: Feed {
                term,
                viewing,
                input,
                wake,
            },
            buf: vec![0; READ_SIZE],
            bursts: None,
            resume: Arc::default(),
            drained,
        })
    }

    /// The descriptor to wait on for reading.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Says how the parser thread gives reading back after a burst (called from that
    /// thread).
    pub fn resumed(&mut self, resume: Resume) {
        *self.resume.lock() = Some(resume);
    }

    /// Reads and parses what the PTY holds now, without waiting. Bursts go to the parser
    /// thread when one can be started; otherwise everything is parsed here.
    pub fn read_now(&mut self) -> ReadOutcome {
        let mut inline = 0;
        loop {
            let n = match read(&self.fd, &mut self.buf) {
                Read::Bytes(n) => n,
                Read::Empty => return ReadOutcome::Quiet,
                Read::Ended => {
                    let _ = self.drained.send(());
                    return ReadOutcome::Ended;
                }
            };
            inline += n;
            if (n >= BURST || inline > INLINE_LIMIT) && self.parser().is_some() {
                let burst = self.buf[..n].to_vec();
                match self.bursts.as_ref().map(|parser| parser.send(burst)) {
                    Some(Ok(())) => return ReadOutcome::Handed,
                    // The thread is gone (it panicked): this burst is parsed here, and the
                    // next starts another.
                    Some(Err(mpsc::SendError(burst))) => {
                        self.bursts = None;
                        self.feed.feed(&burst);
                    }
                    None => self.feed.feed(&self.buf[..n]),
                }
                continue;
            }
            self.feed.feed(&self.buf[..n]);
            if n < self.buf.len() {
                // A short read took all there was: more output makes the descriptor
                // readable again (so the loop need not read once more to be told so).
                return ReadOutcome::Quiet;
            }
        }
    }

    /// The parser thread's queue, started on the first burst; `None` when no thread can
    /// be started (then bursts are parsed where they are read).
    fn parser(&mut self) -> Option<&mpsc::Sender<Vec<u8>>> {
        if self.bursts.is_none() && self.resume.lock().is_some() {
            let (tx, rx) = mpsc::channel::<Vec<u8>>();
            let (fd, feed, resume) = (self.fd.clone(), self.feed.clone(), self.resume.clone());
            let drained = self.drained.clone();
            let started = std::thread::Builder::new()
                .name("march-pty-parse".to_string())
                .spawn(move || parse_bursts(&rx, &fd, &feed, &resume, &drained));
            match started {
                Ok(_) => self.bursts = Some(tx),
                Err(e) => tracing::warn!("cannot start a parser thread: {e}"),
            }
        }
        self.bursts.as_ref()
    }

    /// When a synchronized update the program is in must be drawn even if it never ends.
    pub fn sync_deadline(&self) -> Option<Instant> {
        self.feed.term.lock().sync_deadline()
    }

    /// The sync deadline passed with the program quiet: what it drew is shown.
    pub fn expire_sync(&self) {
        if self.feed.term.lock().expire_sync(Instant::now()) {
            self.feed.output();
        }
    }

    /// Reads on a thread of its own until the output ends, parsing everything there.
    pub fn read_on_thread(mut self) -> std::io::Result<()> {
        // Everything is parsed on that thread: no bursts are handed over.
        *self.resume.lock() = None;
        self.bursts = None;
        std::thread::Builder::new()
            .name("march-pty-read".to_string())
            .spawn(move || {
                while self.read_now() == ReadOutcome::Quiet {
                    let wait = self
                        .sync_deadline()
                        .map(|at| at.saturating_duration_since(Instant::now()));
                    if !readable_within(&self.fd, wait) {
                        self.expire_sync();
                    }
                }
            })
            .map(drop)
    }
}

/// Whether `fd` has something to read (or hung up) within `wait` (`None`: however long).
pub(super) fn readable_within(fd: &OwnedFd, wait: Option<std::time::Duration>) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let timeout = wait.map(|w| Timespec {
        tv_sec: i64::try_from(w.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(w.subsec_nanos()),
    });
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    // An error (EINTR) counts as readable: the read decides.
    rustix::event::poll(&mut fds, timeout.as_ref()).map_or(true, |n| n > 0)
}

/// How much the thread reading a flood in the focused pane gives way to the program writing
/// it: its writes into the PTY cost it more than the parsing costs March (the kernel's output
/// processing, a newline at a time; `seq` spends most of its time there), so it gets its
/// core. Floods in other panes are read by the parser thread alone, at the normal priority:
/// held back by their parsing, they leave the cores to what the user types into (measured:
/// a flood read ahead two tabs away made the echo's p95 2.0–2.4 ms; parsed where it is
/// read, 0.3–0.8 ms, docs/BENCHMARKS.md).
const FLOOD_NICENESS: i32 = 5;

/// Lowers this thread's priority (Linux counts niceness per thread).
pub(super) fn give_way() {
    if let Err(e) = rustix::process::nice(FLOOD_NICENESS) {
        tracing::debug!("flood thread's priority not lowered: {e}");
    }
}

/// The parser thread: each burst parsed, then what is read until the PTY stays empty (by
/// the read-ahead thread in the focused pane, by this one elsewhere), then reading given
/// back. Ends when the loop's side is dropped.
fn parse_bursts(
    bursts: &mpsc::Receiver<Vec<u8>>,
    fd: &Arc<OwnedFd>,
    feed: &Feed,
    resume: &parking_lot::Mutex<Option<Resume>>,
    drained: &mpsc::Sender<()>,
) {
    // The focused pane's read-ahead thread; other panes' floods are read here.
    let mut ahead: Option<ReadAhead> = None;
    let mut buf = vec![0u8; READ_SIZE];
    while let Ok(burst) = bursts.recv() {
        feed.feed(&burst);
        if feed.viewing.focused.load(Ordering::Acquire) {
            if ahead.is_none() {
                ahead = ReadAhead::start(fd.clone());
            }
        } else {
            // Its thread ends: a flood out of focus is held back by this one's parsing.
            ahead = None;
        }
        match &ahead {
            Some(ahead) => {
                ahead.begin();
                loop {
                    match ahead.next() {
                        Ahead::Bytes(bytes) => {
                            feed.feed(&bytes);
                            // Focus left the pane: the burst ends, and the next is read
                            // by this thread alone.
                            if !feed.viewing.focused.load(Ordering::Relaxed) {
                                ahead.stop();
                            }
                        }
                        Ahead::Quiet => break,
                        Ahead::Ended => {
                            let _ = drained.send(());
                            break;
                        }
                    }
                }
            }
            // Out of focus, or no second thread: this one reads too.
            None => loop {
                match read(fd, &mut buf) {
                    Read::Bytes(n) => feed.feed(&buf[..n]),
                    Read::Empty if readable_within(fd, Some(LINGER)) => {}
                    Read::Empty => break,
                    Read::Ended => {
                        let _ = drained.send(());
                        break;
                    }
                }
            },
        }
        // The loop reads again (and sees the end itself, if that is what came).
        if let Some(resume) = resume.lock().as_ref() {
            resume();
        }
    }
}
