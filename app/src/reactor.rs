//! Descriptors registered with the loop's reactor (tokio's `AsyncFd`): the terminal, the
//! server's socket on the client's side, shells' PTYs, a full descriptor waited on for room.

use std::io;
use std::os::fd::AsRawFd;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// Registers `fd` for `interest`. The caller hands over a descriptor of its own (a copy where
/// the original lives on elsewhere), which the `AsyncFd` closes only when it is dropped.
// Deprecated for owners whose descriptor may be closed and reused while registered; an owned
// descriptor moved in here cannot be.
#[allow(deprecated)]
pub fn watch<T: AsRawFd>(fd: T, interest: Interest) -> io::Result<AsyncFd<T>> {
    AsyncFd::with_interest(fd, interest)
}
