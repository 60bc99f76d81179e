//! Writes to a non-blocking descriptor that the loop's reactor does not watch for room.
//!
//! A descriptor registered for writability wakes its thread every time the other end reads
//! (the kernel reports room again): for a terminal or a socket written once a keystroke,
//! that is a wake-up of its own after every echo, on a thread that had nothing to do. So
//! these descriptors are written straight away, and watched for room only while one is full.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::reactor::watch;

/// Writes all of `bytes` to `fd` (non-blocking), waiting without blocking the thread when it
/// is full.
pub async fn write_all(fd: impl AsFd, mut bytes: &[u8]) -> io::Result<()> {
    let mut room: Option<AsyncFd<OwnedFd>> = None;
    while !bytes.is_empty() {
        match rustix::io::write(&fd, bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                // Full: watched for room until this write is done (then deregistered).
                let watched = match room.as_mut() {
                    Some(watched) => watched,
                    None => {
                        room.insert(watch(fd.as_fd().try_clone_to_owned()?, Interest::WRITABLE)?)
                    }
                };
                watched.writable().await?.clear_ready();
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    #[tokio::test]
    async fn a_full_descriptor_is_waited_on_and_everything_arrives_in_order() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        // Far more than a socket buffer holds, so the write must wait for the reader.
        let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
        let expected = data.clone();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            theirs.read_to_end(&mut got).unwrap();
            got
        });
        write_all(&ours, &data).await.unwrap();
        drop(ours);
        assert_eq!(reader.join().unwrap(), expected);
    }

    #[tokio::test]
    async fn a_closed_reader_is_an_error() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        drop(theirs);
        assert!(write_all(&ours, b"x").await.is_err());
    }
}
