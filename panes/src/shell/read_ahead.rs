//! A shell's output read ahead of its parser through a burst: a thread of its own reads the
//! PTY while the parser thread parses what came before, so the reads (and the kernel's work
//! behind each, which wakes the PTY's worker on every 4 KiB taken) run on the other core
//! instead of between two pieces of parsing.
//!
//! The two hand chunks over through a queue and wake each other only when it turns: the
//! parser when the queue was empty, the reader when it drained from [`HIGH`] down to
//! [`LOW`]. The reader stops at [`HIGH`], so a program that writes faster than it is parsed
//! still waits on its PTY and memory stays bounded.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::output::{LINGER, READ_SIZE, Read, give_way, read, readable_within};

/// Bytes queued at most: past it the reader waits.
const HIGH: usize = 256 * 1024;

/// Bytes queued when a waiting reader is woken again.
const LOW: usize = 64 * 1024;

/// What the parser takes next.
pub(super) enum Ahead {
    /// Bytes, in the order read.
    Bytes(Vec<u8>),
    /// The PTY stayed empty: the burst is over.
    Quiet,
    /// Every process holding the terminal closed it.
    Ended,
}

/// How a burst's reading ended.
#[derive(Clone, Copy)]
enum End {
    Quiet,
    Ended,
}

#[derive(Default)]
struct Queue {
    chunks: VecDeque<Vec<u8>>,
    bytes: usize,
    /// A burst is on: the reader reads.
    reading: bool,
    /// How the reader's part of the burst ended, once it has.
    end: Option<End>,
    parser_waits: bool,
    reader_waits: bool,
    /// The parser is gone: the reader ends.
    closed: bool,
    /// The reader thread's id, once it runs (for the tests, which look at its niceness).
    #[cfg(test)]
    tid: Option<i32>,
}

struct Shared {
    queue: Mutex<Queue>,
    /// The parser waits here for bytes or the end.
    for_parser: Condvar,
    /// The reader waits here for a burst or for room.
    for_reader: Condvar,
}

/// The parser's side: starts the reader for a burst and takes what it read.
pub(super) struct ReadAhead {
    shared: Arc<Shared>,
}

impl ReadAhead {
    /// A reader thread for `fd` (the PTY's master, non-blocking); `None` when no thread can
    /// be started.
    pub(super) fn start(fd: Arc<OwnedFd>) -> Option<ReadAhead> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            for_parser: Condvar::new(),
            for_reader: Condvar::new(),
        });
        let theirs = shared.clone();
        let started = std::thread::Builder::new()
            .name("march-pty-read".to_string())
            .spawn(move || read_bursts(&theirs, &fd));
        match started {
            Ok(_) => Some(ReadAhead { shared }),
            Err(e) => {
                tracing::warn!("cannot start a read-ahead thread: {e}");
                None
            }
        }
    }

    /// The reader ends the burst after its current read, as if the PTY had stayed empty
    /// (the loop reads again, and hands the next burst over afresh).
    pub(super) fn stop(&self) {
        self.shared.queue.lock().reading = false;
    }

    /// The reader reads until the PTY stays empty.
    pub(super) fn begin(&self) {
        let mut q = self.shared.queue.lock();
        q.reading = true;
        q.end = None;
        self.shared.for_reader.notify_one();
    }

    /// The next bytes of the burst, or how it ended (then the reader has stopped).
    pub(super) fn next(&self) -> Ahead {
        let mut q = self.shared.queue.lock();
        loop {
            if let Some(chunk) = q.chunks.pop_front() {
                q.bytes -= chunk.len();
                if q.reader_waits && q.bytes <= LOW {
                    q.reader_waits = false;
                    self.shared.for_reader.notify_one();
                }
                return Ahead::Bytes(chunk);
            }
            match q.end.take() {
                Some(End::Quiet) => return Ahead::Quiet,
                Some(End::Ended) => return Ahead::Ended,
                None => {}
            }
            q.parser_waits = true;
            self.shared.for_parser.wait(&mut q);
            q.parser_waits = false;
        }
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        let mut q = self.shared.queue.lock();
        q.closed = true;
        self.shared.for_reader.notify_one();
    }
}

/// The reader thread: for each burst, reads until the PTY stays empty (or ends). It reads
/// the focused pane's floods only, giving way to the program writing them.
fn read_bursts(shared: &Shared, fd: &OwnedFd) {
    give_way();
    #[cfg(test)]
    {
        shared.queue.lock().tid = Some(rustix::thread::gettid().as_raw_nonzero().get());
    }
    let mut buf = vec![0u8; READ_SIZE];
    loop {
        {
            let mut q = shared.queue.lock();
            while !q.reading && !q.closed {
                shared.for_reader.wait(&mut q);
            }
            if q.closed {
                return;
            }
        }
        let end = loop {
            match read(fd, &mut buf) {
                Read::Bytes(n) => match push(shared, buf[..n].to_vec()) {
                    Pushed::Closed => return,
                    Pushed::Stopped => break End::Quiet,
                    Pushed::Go => {}
                },
                // A flood often outruns its program for a moment: reading goes on a little
                // rather than handed back and forth (two wake-ups each time).
                Read::Empty if readable_within(fd, Some(LINGER)) => {}
                Read::Empty => break End::Quiet,
                Read::Ended => break End::Ended,
            }
        };
        let mut q = shared.queue.lock();
        q.reading = false;
        q.end = Some(end);
        if q.parser_waits {
            shared.for_parser.notify_one();
        }
    }
}

/// What became of a chunk pushed.
enum Pushed {
    /// Read on.
    Go,
    /// The parser stopped the burst.
    Stopped,
    /// The parser is gone.
    Closed,
}

/// Queues `chunk` for the parser, waiting while the queue is full.
fn push(shared: &Shared, chunk: Vec<u8>) -> Pushed {
    let mut q = shared.queue.lock();
    q.bytes += chunk.len();
    q.chunks.push_back(chunk);
    if q.parser_waits {
        shared.for_parser.notify_one();
    }
    while q.bytes > HIGH && !q.closed {
        q.reader_waits = true;
        shared.for_reader.wait(&mut q);
    }
    if q.closed {
        Pushed::Closed
    } else if !q.reading {
        Pushed::Stopped
    } else {
        Pushed::Go
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn bytes_come_in_order_through_bursts_and_the_end_is_told() {
        let (ours, theirs) = rustix::pipe::pipe().unwrap();
        rustix::io::ioctl_fionbio(&ours, true).unwrap();
        let ahead = ReadAhead::start(Arc::new(ours)).unwrap();
        // Far more than the queue holds, so the reader waits for the parser on the way.
        let data: Vec<u8> = (0..(3 * HIGH) as u32).map(|i| (i % 251) as u8).collect();
        let expected = data.clone();
        let mut writer = std::fs::File::from(theirs);
        let wrote = std::thread::spawn(move || writer.write_all(&data).unwrap());
        let mut got = Vec::new();
        let mut ended = false;
        // Bursts until the writer is done and gone: each ends quiet or at the end.
        while !ended {
            ahead.begin();
            loop {
                match ahead.next() {
                    Ahead::Bytes(bytes) => got.extend_from_slice(&bytes),
                    Ahead::Quiet => break,
                    Ahead::Ended => {
                        ended = true;
                        break;
                    }
                }
            }
        }
        wrote.join().unwrap();
        assert_eq!(got.len(), expected.len());
        assert!(got == expected, "the bytes came out of order");
    }

    /// The niceness of thread `tid` of this process, from /proc.
    fn niceness(tid: i32) -> i64 {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
        // The fields after the name (which is in parentheses); nice is the 19th of all.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        rest.split(' ').nth(16).unwrap().parse().unwrap()
    }

    #[test]
    fn the_reader_gives_way_to_the_program_writing() {
        let (ours, theirs) = rustix::pipe::pipe().unwrap();
        rustix::io::ioctl_fionbio(&ours, true).unwrap();
        let ahead = ReadAhead::start(Arc::new(ours)).unwrap();
        let mut writer = std::fs::File::from(theirs);
        // One burst read: the thread runs (and has said its id).
        writer.write_all(b"flood").unwrap();
        ahead.begin();
        while !matches!(ahead.next(), Ahead::Quiet | Ahead::Ended) {}
        let before = niceness(rustix::thread::gettid().as_raw_nonzero().get());
        let reader = ahead.shared.queue.lock().tid.unwrap();
        assert_eq!(niceness(reader), (before + 5).min(19));
    }
}
