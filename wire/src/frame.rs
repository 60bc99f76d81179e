//! Frames: a 4-byte big-endian length, then that many bytes (a kind byte and its body).
//! A reader takes bytes as they come and yields whole frames; a half-written one waits.

use crate::WireError;

/// The longest frame (kind and body) March sends or takes: a whole frame of a large
/// terminal is well under it.
pub const MAX_FRAME: usize = 16 << 20;

/// One message as framed: its kind and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// What the body is.
    pub kind: u8,
    /// The body.
    pub body: Vec<u8>,
}

impl Frame {
    /// The bytes that carry this frame.
    pub fn encode(&self) -> Vec<u8> {
        let len = u32::try_from(self.body.len() + 1).unwrap_or(u32::MAX);
        let mut out = Vec::with_capacity(self.body.len() + 5);
        out.extend_from_slice(&len.to_be_bytes());
        out.push(self.kind);
        out.extend_from_slice(&self.body);
        out
    }
}

/// Gathers bytes from the socket into frames.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
}

impl FrameReader {
    /// Bytes read from the socket.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, `None` until one has arrived whole. An error means the peer
    /// speaks something else: the connection is to be dropped (what follows cannot be
    /// framed either).
    pub fn next_frame(&mut self) -> Result<Option<Frame>, WireError> {
        let Some(head) = self.buf.get(..4) else {
            return Ok(None);
        };
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        if len == 0 {
            return Err(WireError::Empty);
        }
        if len > MAX_FRAME {
            return Err(WireError::TooLarge(len));
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let kind = self.buf[4];
        let body = self.buf[5..4 + len].to_vec();
        self.buf.drain(..4 + len);
        Ok(Some(Frame { kind, body }))
    }

    /// Bytes held that make no whole frame yet.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_whole_however_the_bytes_are_cut() {
        let frames = [
            Frame {
                kind: 1,
                body: b"hello".to_vec(),
            },
            Frame {
                kind: 2,
                body: Vec::new(),
            },
            Frame {
                kind: 3,
                body: vec![0, 255, 10, 13],
            },
        ];
        let bytes: Vec<u8> = frames.iter().flat_map(Frame::encode).collect();
        for cut in 1..bytes.len() {
            let mut reader = FrameReader::default();
            let mut got = Vec::new();
            for chunk in bytes.chunks(cut) {
                reader.push(chunk);
                while let Some(frame) = reader.next_frame().unwrap() {
                    got.push(frame);
                }
            }
            assert_eq!(got, frames, "in chunks of {cut}");
            assert_eq!(reader.pending(), 0);
        }
    }

    #[test]
    fn a_half_written_frame_waits_and_garbage_is_refused() {
        let mut reader = FrameReader::default();
        let whole = Frame {
            kind: 7,
            body: b"abc".to_vec(),
        }
        .encode();
        reader.push(&whole[..5]);
        assert_eq!(reader.next_frame(), Ok(None));
        assert_eq!(reader.pending(), 5);

        let mut garbage = FrameReader::default();
        garbage.push(b"GET / HTTP/1.1\r\n");
        assert!(matches!(
            garbage.next_frame(),
            Err(WireError::TooLarge(n)) if n > MAX_FRAME
        ));
        let mut empty = FrameReader::default();
        empty.push(&[0, 0, 0, 0, 9]);
        assert_eq!(empty.next_frame(), Err(WireError::Empty));
    }
}
