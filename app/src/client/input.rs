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
            };
        }
        TerminalInput::Stream(EventStream::new())
    }

    /// The next event; `None` when input has ended. Cancel-safe: an event is read only when
    /// it is returned.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        let (stdin, resized, more) = match self {
            TerminalInput::Stream(stream) => return stream.next().await,
            TerminalInput::Direct {
                stdin,
                resized,
                more,
            } => (stdin, resized, more),
        };
        loop {
            if *more {
                match crossterm::event::poll(Duration::ZERO) {
                    Ok(true) => return Some(crossterm::event::read()),
                    Ok(false) => *more = false,
                    Err(e) => return Some(Err(e)),
                }
            }
            tokio::select! {
                ready = stdin.readable() => match ready {
                    // Readiness set after this is kept; crossterm reads what is there.
                    Ok(mut guard) => guard.clear_ready(),
                    Err(e) => return Some(Err(e)),
                },
                // The size is asked here: crossterm sees the signal only once its own
                // reader exists, and one that came before would be lost.
                got = resized.recv() => {
                    got?;
                    return Some(crossterm::terminal::size().map(|(c, r)| Event::Resize(c, r)));
                }
            }
            *more = true;
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
