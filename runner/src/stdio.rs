//! The runner's stdin and stdout as its ACP transport.
//!
//! tokio's own stdio reads and writes on its blocking pool: every message sent is a hand-off
//! to a pool thread and back, a dozen futex calls for each streamed delta. A workspace server
//! or an editor connects a runner with pipes (or, with libuv, Unix sockets), which the
//! runtime's reactor reads and writes directly. Anything else (a terminal someone typed
//! `march acp` in, a file) keeps tokio's stdio: a terminal must not be left non-blocking.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::FileType;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::wire::{LineTransport, line_transport};

type Reader = Box<dyn AsyncRead + Send + Sync + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Sync + Unpin>;

/// This process's stdin and stdout as a line transport.
pub(crate) fn transport() -> LineTransport {
    let input = reactor_reader(io::stdin().as_fd().try_clone_to_owned());
    let output = reactor_writer(io::stdout().as_fd().try_clone_to_owned());
    match (input, output) {
        (Ok(Some(input)), Ok(Some(output))) => line_transport(input, output),
        (input, output) => {
            tracing::debug!(
                input = input.is_ok(),
                output = output.is_ok(),
                "stdio is not a pipe or socket: read and written on the blocking pool"
            );
            line_transport(tokio::io::stdin(), tokio::io::stdout())
        }
    }
}

/// What a descriptor is, as far as the reactor cares.
enum Kind {
    Pipe,
    UnixSocket,
    Other,
}

fn kind(fd: &OwnedFd) -> io::Result<Kind> {
    Ok(
        match FileType::from_raw_mode(rustix::fs::fstat(fd)?.st_mode) {
            FileType::Fifo => Kind::Pipe,
            FileType::Socket
                if rustix::net::sockopt::socket_domain(fd)? == rustix::net::AddressFamily::UNIX =>
            {
                Kind::UnixSocket
            }
            _ => Kind::Other,
        },
    )
}

/// `fd` read by the reactor, or `None` when it is not a pipe or Unix socket.
fn reactor_reader(fd: io::Result<OwnedFd>) -> io::Result<Option<Reader>> {
    let fd = fd?;
    Ok(match kind(&fd)? {
        Kind::Pipe => Some(Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(
            fd,
        )?)),
        Kind::UnixSocket => Some(Box::new(unix_stream(fd)?)),
        Kind::Other => None,
    })
}

/// `fd` written by the reactor, or `None` when it is not a pipe or Unix socket.
fn reactor_writer(fd: io::Result<OwnedFd>) -> io::Result<Option<Writer>> {
    let fd = fd?;
    Ok(match kind(&fd)? {
        Kind::Pipe => Some(Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(fd)?)),
        Kind::UnixSocket => Some(Box::new(unix_stream(fd)?)),
        Kind::Other => None,
    })
}

fn unix_stream(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_and_unix_sockets_go_to_the_reactor_and_files_do_not() {
        let (read, write) = std::io::pipe().unwrap();
        assert!(matches!(kind(&OwnedFd::from(read)).unwrap(), Kind::Pipe));
        assert!(matches!(kind(&OwnedFd::from(write)).unwrap(), Kind::Pipe));
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert!(matches!(kind(&OwnedFd::from(a)).unwrap(), Kind::UnixSocket));
        let file = tempfile::tempfile().unwrap();
        assert!(matches!(kind(&OwnedFd::from(file)).unwrap(), Kind::Other));
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(matches!(kind(&OwnedFd::from(tcp)).unwrap(), Kind::Other));
    }
}
