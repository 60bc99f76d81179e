//! What the client's terminal says: the bytes it sends, when the client forwards them (the
//! server reads the terminal itself when it can open it), and its size when SIGWINCH says it
//! changed. The bytes go to the server as they are (it parses them, see
//! [`march_wire::InputDecoder`]).

use std::fs::File;
use std::io::{self, IsTerminal};
use std::os::fd::{AsFd, OwnedFd};

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::tty_reader::{self, TtyRead, TtyReader};

/// What the terminal said.
pub enum Input<'a> {
    /// Bytes it sent; `partial` when they filled the buffer (more of a sequence may follow).
    Bytes { bytes: &'a [u8], partial: bool },
    /// Its new size, columns and rows.
    Resized(u16, u16),
    /// It hung up: nobody types any more.
    Ended,
}

/// The client's terminal.
pub struct TerminalInput {
    /// The terminal when the client forwards its bytes. Not watched otherwise: a terminal
    /// in the reactor wakes the client at every keystroke, read or not.
    tty: Option<TtyReader>,
    resized: Signal,
    /// The terminal again, asked for its size while a read may be pending.
    size_of: OwnedFd,
}

impl TerminalInput {
    /// The terminal March runs in: stdin, or the controlling terminal when stdin is
    /// redirected. Its bytes are read here when `forward`, else the server reads them.
    pub fn new(forward: bool) -> io::Result<TerminalInput> {
        let stdin = io::stdin();
        let tty: OwnedFd = if stdin.is_terminal() {
            stdin.as_fd().try_clone_to_owned()?
        } else {
            File::open("/dev/tty")
                .map_err(|e| io::Error::new(e.kind(), format!("no terminal to read keys: {e}")))?
                .into()
        };
        Ok(TerminalInput {
            size_of: tty.try_clone()?,
            tty: if forward {
                Some(TtyReader::new(tty)?)
            } else {
                None
            },
            resized: signal(SignalKind::window_change())?,
        })
    }

    /// The next thing the terminal says. Cancel-safe: bytes are read only when returned.
    pub async fn next(&mut self) -> io::Result<Input<'_>> {
        tokio::select! {
            read = tty_reader::read_if(&mut self.tty) => Ok(match read? {
                TtyRead::Bytes { bytes, partial } => Input::Bytes { bytes, partial },
                TtyRead::Ended => Input::Ended,
            }),
            got = self.resized.recv() => {
                if got.is_none() {
                    return Ok(Input::Ended);
                }
                let size = rustix::termios::tcgetwinsize(&self.size_of)?;
                Ok(Input::Resized(size.ws_col, size.ws_row))
            }
        }
    }
}
