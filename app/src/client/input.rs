//! Terminal input for the client: the bytes its terminal sends, read on the loop's own
//! thread when the reactor says they are there, and the terminal's size when SIGWINCH says it
//! changed. The bytes go to the server as they are (it parses them, see
//! [`march_wire::InputDecoder`]), so a keystroke costs the client one read and one write, as
//! tmux's client does.

use std::fs::File;
use std::io::{self, IsTerminal};
use std::os::fd::{AsFd, OwnedFd};

use tokio::io::unix::AsyncFd;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// One read's worth: a paste arrives in pieces this large at most.
const READ_SIZE: usize = 16 << 10;

/// What the terminal said.
pub enum Input<'a> {
    /// Bytes it sent; `partial` when they filled the buffer (more of a sequence may follow).
    Bytes { bytes: &'a [u8], partial: bool },
    /// Its new size, columns and rows.
    Resized(u16, u16),
    /// It hung up: nobody types any more.
    Ended,
}

/// The terminal the client reads.
pub struct TerminalInput {
    tty: AsyncFd<OwnedFd>,
    resized: Signal,
    buf: Vec<u8>,
}

impl TerminalInput {
    /// Input from the terminal March runs in: stdin, or the controlling terminal when stdin is
    /// redirected.
    pub fn new() -> io::Result<TerminalInput> {
        let stdin = io::stdin();
        let tty: OwnedFd = if stdin.is_terminal() {
            stdin.as_fd().try_clone_to_owned()?
        } else {
            File::open("/dev/tty")
                .map_err(|e| io::Error::new(e.kind(), format!("no terminal to read keys: {e}")))?
                .into()
        };
        Ok(TerminalInput {
            tty: watch(tty)?,
            resized: signal(SignalKind::window_change())?,
            buf: vec![0; READ_SIZE],
        })
    }

    /// The next thing the terminal says. Cancel-safe: bytes are read only when returned.
    pub async fn next(&mut self) -> io::Result<Input<'_>> {
        loop {
            tokio::select! {
                ready = self.tty.readable() => {
                    let mut ready = ready?;
                    // The descriptor blocks (it is the user's terminal, shared with the shell
                    // March was started from), so it is read once per readiness.
                    let n = match rustix::io::read(ready.get_inner(), &mut self.buf[..]) {
                        Ok(0) => return Ok(Input::Ended),
                        Ok(n) => n,
                        Err(rustix::io::Errno::INTR) => continue,
                        // A terminal whose other end closed reads as EIO.
                        Err(rustix::io::Errno::IO) => return Ok(Input::Ended),
                        Err(e) => return Err(e.into()),
                    };
                    let partial = n == self.buf.len();
                    if !partial {
                        // Drained: the reactor says when more comes (readiness it saw since
                        // the wait began is kept).
                        ready.clear_ready();
                    }
                    return Ok(Input::Bytes { bytes: &self.buf[..n], partial });
                }
                got = self.resized.recv() => {
                    if got.is_none() {
                        return Ok(Input::Ended);
                    }
                    let size = rustix::termios::tcgetwinsize(self.tty.get_ref())?;
                    return Ok(Input::Resized(size.ws_col, size.ws_row));
                }
            }
        }
    }
}

/// Registers the terminal with the loop's reactor.
// Deprecated for owners whose descriptor may be closed and reused while registered; this copy
// is closed only when the AsyncFd is dropped (and deregistered).
#[allow(deprecated)]
fn watch(tty: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    AsyncFd::with_interest(tty, tokio::io::Interest::READABLE)
}
