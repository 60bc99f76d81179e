//! Terminal input for the loop. When stdin is the terminal, the loop's own reactor waits
//! for it to be readable and crossterm reads and parses the bytes on the loop's thread: a
//! keystroke wakes one thread, not crossterm's helper thread and then the loop (each wake-up
//! costs tens of microseconds of a keystroke's echo). Otherwise crossterm's `EventStream`.

use std::io::{self, IsTerminal, Stdin};
use std::time::Duration;

use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;
use tokio::io::unix::AsyncFd;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// Where terminal events come from.
pub enum TerminalInput {
    /// stdin, watched by the loop's reactor; a resize is seen through SIGWINCH.
    Direct {
        stdin: AsyncFd<Stdin>,
        resized: Signal,
        /// Whether crossterm may hold or see more events than the last one returned.
        more: bool,
        /// A resize was signalled and crossterm has not reported it yet.
        resize_due: bool,
    },
    /// crossterm's stream, which waits on a thread of its own.
    Stream(EventStream),
}

impl TerminalInput {
    /// Input from the terminal March runs in.
    pub fn new() -> TerminalInput {
        let stdin = io::stdin();
        if stdin.is_terminal()
            && let Ok(stdin) = watch(stdin)
            && let Ok(resized) = signal(SignalKind::window_change())
        {
            return TerminalInput::Direct {
                stdin,
                resized,
                more: true,
                resize_due: false,
            };
        }
        TerminalInput::Stream(EventStream::new())
    }

    /// The next event; `None` when input has ended. Cancel-safe: an event is read only when
    /// it is returned.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        let (stdin, resized, more, resize_due) = match self {
            TerminalInput::Stream(stream) => return stream.next().await,
            TerminalInput::Direct {
                stdin,
                resized,
                more,
                resize_due,
            } => (stdin, resized, more, resize_due),
        };
        loop {
            if *more {
                // A terminal that went away reads as an error crossterm retries forever:
                // asked first, it is the end of input.
                if hung_up(stdin.get_ref()) {
                    return None;
                }
                match crossterm::event::poll(Duration::ZERO) {
                    Ok(true) => {
                        let event = crossterm::event::read();
                        if matches!(event, Ok(Event::Resize(..))) {
                            *resize_due = false;
                        }
                        return Some(event);
                    }
                    Ok(false) => *more = false,
                    Err(e) => return Some(Err(e)),
                }
            }
            if *resize_due {
                // crossterm missed the signal (it sees signals only once its own reader
                // exists): the size is asked here.
                *resize_due = false;
                return Some(crossterm::terminal::size().map(|(c, r)| Event::Resize(c, r)));
            }
            tokio::select! {
                ready = stdin.readable() => match ready {
                    // Readiness set after this is kept; crossterm reads what is there.
                    Ok(mut guard) => guard.clear_ready(),
                    Err(e) => return Some(Err(e)),
                },
                // crossterm is asked at once, so its signal pipe is empty again before the
                // next key (with both pending it reports the resize and drops the key's
                // readiness, leaving the key unread until another comes).
                got = resized.recv() => {
                    got?;
                    *resize_due = true;
                }
            }
            *more = true;
        }
    }
}

/// Whether the terminal behind `stdin` hung up (its other end closed).
fn hung_up(stdin: &Stdin) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(stdin, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    loop {
        match rustix::event::poll(&mut fds, Some(&now)) {
            Ok(_) => {
                return fds[0]
                    .revents()
                    .intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL);
            }
            // Even a poll that does not wait is interrupted by a signal (SIGWINCH, say).
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return true,
        }
    }
}

/// Registers stdin with the loop's reactor.
// Deprecated for owners whose descriptor may be closed and reused while registered; fd 0
// stays open for the life of the process.
#[allow(deprecated)]
fn watch(stdin: Stdin) -> io::Result<AsyncFd<Stdin>> {
    AsyncFd::with_interest(stdin, tokio::io::Interest::READABLE)
}
