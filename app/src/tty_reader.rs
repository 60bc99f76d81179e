//! A terminal's input, read on the loop's own thread when its reactor says bytes are there:
//! the client's when it forwards them, the server's when it reads an attached terminal
//! itself (as tmux's server does, so a keystroke wakes no client on its way).

use std::io;
use std::os::fd::OwnedFd;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::reactor::watch;

/// One read's worth: a paste arrives in pieces this large at most.
const READ_SIZE: usize = 16 << 10;

/// What a read of the terminal gave.
pub enum TtyRead<'a> {
    /// Bytes it sent; `partial` when they filled the buffer (a sequence may go on).
    Bytes { bytes: &'a [u8], partial: bool },
    /// It hung up: nobody types any more.
    Ended,
}

/// A terminal watched by the loop's reactor for input.
pub struct TtyReader {
    fd: AsyncFd<OwnedFd>,
    buf: Vec<u8>,
}

impl TtyReader {
    /// Watches `fd`, a terminal (blocking or not: it is read once per readiness).
    pub fn new(fd: OwnedFd) -> io::Result<TtyReader> {
        Ok(TtyReader {
            fd: watch(fd, Interest::READABLE)?,
            buf: vec![0; READ_SIZE],
        })
    }

    /// The next bytes. Cancel-safe: bytes are read only when returned.
    pub async fn read(&mut self) -> io::Result<TtyRead<'_>> {
        loop {
            let mut ready = self.fd.readable().await?;
            let n = match rustix::io::read(ready.get_inner(), &mut self.buf[..]) {
                Ok(0) => return Ok(TtyRead::Ended),
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(rustix::io::Errno::AGAIN) => {
                    ready.clear_ready();
                    continue;
                }
                // A terminal whose other end closed reads as EIO.
                Err(rustix::io::Errno::IO) => return Ok(TtyRead::Ended),
                Err(e) => return Err(e.into()),
            };
            let partial = n == self.buf.len();
            if !partial {
                // Drained: the reactor says when more comes (readiness it saw since the wait
                // began is kept).
                ready.clear_ready();
            }
            return Ok(TtyRead::Bytes {
                bytes: &self.buf[..n],
                partial,
            });
        }
    }
}

/// The next bytes of `tty` when there is one to read; never otherwise (a `select!` branch).
pub async fn read_if(tty: &mut Option<TtyReader>) -> io::Result<TtyRead<'_>> {
    match tty {
        Some(reader) => reader.read().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bytes_come_as_written_and_a_closed_terminal_is_the_end() {
        let pty = rustix_openpty();
        let (master, slave) = pty;
        let mut reader = TtyReader::new(slave).unwrap();
        rustix::io::write(&master, b"ab\x1b[A").unwrap();
        match reader.read().await.unwrap() {
            TtyRead::Bytes { bytes, partial } => {
                assert_eq!(bytes, b"ab\x1b[A");
                assert!(!partial);
            }
            TtyRead::Ended => panic!("ended early"),
        }
        drop(master);
        assert!(matches!(reader.read().await.unwrap(), TtyRead::Ended));
    }

    /// A PTY pair in raw mode, so bytes pass as written.
    fn rustix_openpty() -> (OwnedFd, OwnedFd) {
        use rustix::fs::{Mode, OFlags};
        let master =
            rustix::pty::openpt(rustix::pty::OpenptFlags::RDWR | rustix::pty::OpenptFlags::NOCTTY)
                .unwrap();
        rustix::pty::grantpt(&master).unwrap();
        rustix::pty::unlockpt(&master).unwrap();
        let name = rustix::pty::ptsname(&master, Vec::new()).unwrap();
        let slave = rustix::fs::open(
            name.as_c_str(),
            OFlags::RDWR | OFlags::NOCTTY,
            Mode::empty(),
        )
        .unwrap();
        let mut termios = rustix::termios::tcgetattr(&slave).unwrap();
        termios.make_raw();
        rustix::termios::tcsetattr(&slave, rustix::termios::OptionalActions::Now, &termios)
            .unwrap();
        (master, slave)
    }
}
