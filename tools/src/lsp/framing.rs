//! LSP's base protocol: a `Content-Length` header, a blank line, then that many bytes of JSON.
//!
//! Servers are not always clean: some print log lines to stdout, some send a message larger
//! than anyone wants to hold. Lines that are not headers are skipped, and a body over the
//! limit is read and thrown away, so one bad message never ends the connection.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest message body kept; larger ones are discarded (diagnostics never need more).
pub const MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;

/// A message that could not be read; the connection goes on after every kind but `Io`.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream failed.
    #[error("reading the server's output failed: {0}")]
    Io(#[from] std::io::Error),
    /// A body longer than [`MAX_MESSAGE_BYTES`] (skipped).
    #[error("skipped a {0}-byte message (larger than the limit)")]
    TooLarge(usize),
    /// A body that is not JSON.
    #[error("skipped a message that is not JSON: {0}")]
    NotJson(serde_json::Error),
}

/// Read the next message; `Ok(None)` at the end of the stream.
pub async fn read_message<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> Result<Option<Value>, FrameError> {
    read_message_limited(reader, MAX_MESSAGE_BYTES).await
}

/// [`read_message`] with a chosen size limit.
pub async fn read_message_limited<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Option<Value>, FrameError> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        // Header lines are short; a "line" of garbage without a newline is cut off at 8 KiB
        // (the rest is read as further lines and skipped the same way).
        let read = read_line_capped(reader, &mut line, 8192).await?;
        if read == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            match length {
                Some(n) => break read_body(reader, n, limit).await.map(Some),
                // A blank line before any header: stray output, keep looking.
                None => continue,
            }
        }
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
        // Content-Type and lines that are not headers at all are ignored.
    }
}

async fn read_body<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    length: usize,
    limit: usize,
) -> Result<Value, FrameError> {
    if length > limit {
        let skipped =
            tokio::io::copy(&mut reader.take(length as u64), &mut tokio::io::sink()).await?;
        if (skipped as usize) < length {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
        return Err(FrameError::TooLarge(length));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    serde_json::from_slice(&body).map_err(FrameError::NotJson)
}

/// Read up to and including a newline, keeping at most `cap` bytes.
pub(crate) async fn read_line_capped<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    out: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(total);
        }
        let room = cap.saturating_sub(out.len()).max(1);
        let window = &available[..available.len().min(room)];
        let (used, done) = match memchr_newline(window) {
            Some(i) => (i + 1, true),
            None => (window.len(), out.len() + window.len() >= cap),
        };
        out.extend_from_slice(&window[..used]);
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}

/// The longest line of the host's socket protocol: a check carries a whole file (up to 8 MiB,
/// more once JSON-escaped).
pub const MAX_SOCKET_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One line of a line-per-message stream, read as bytes.
#[derive(Debug, PartialEq)]
pub enum RawLine {
    /// The line without its newline.
    Line(Vec<u8>),
    /// A line longer than the cap: read to its end and thrown away.
    TooLong,
}

/// Read the next line as bytes, keeping at most `cap` of them; `None` at the end. Bytes that
/// are not UTF-8 do not end the stream (as `lines()` would): the caller's JSON parse refuses
/// the line and the next one is read.
pub(crate) async fn read_raw_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    cap: usize,
) -> std::io::Result<Option<RawLine>> {
    let mut line = Vec::new();
    if read_line_capped(reader, &mut line, cap).await? == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        return Ok(Some(RawLine::Line(line)));
    }
    if line.len() < cap {
        // The stream ended without a newline.
        return Ok(Some(RawLine::Line(line)));
    }
    loop {
        line.clear();
        let read = read_line_capped(reader, &mut line, 64 * 1024).await?;
        if read == 0 || line.last() == Some(&b'\n') {
            return Ok(Some(RawLine::TooLong));
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Write one message and flush it.
pub async fn write_message<W: AsyncWrite + Unpin>(
    writer: &mut W,
    message: &Value,
) -> std::io::Result<()> {
    let body = serde_json::to_vec(message)?;
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(&body);
    writer.write_all(&frame).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::BufReader;

    async fn all(input: &[u8], limit: usize) -> Vec<Result<Value, String>> {
        let mut reader = BufReader::new(input);
        let mut out = Vec::new();
        loop {
            match read_message_limited(&mut reader, limit).await {
                Ok(Some(v)) => out.push(Ok(v)),
                Ok(None) => return out,
                Err(FrameError::Io(e)) => {
                    out.push(Err(format!("io: {e}")));
                    return out;
                }
                Err(e) => out.push(Err(e.to_string())),
            }
        }
    }

    #[tokio::test]
    async fn round_trip() {
        let mut buf = Vec::new();
        write_message(&mut buf, &json!({"jsonrpc": "2.0", "id": 1}))
            .await
            .unwrap();
        write_message(&mut buf, &json!({"é": "ü"})).await.unwrap();
        assert!(buf.starts_with(b"Content-Length: 24\r\n\r\n{"));
        let got = all(&buf, 1 << 20).await;
        assert_eq!(
            got,
            vec![
                Ok(json!({"jsonrpc": "2.0", "id": 1})),
                Ok(json!({"é": "ü"}))
            ]
        );
    }

    #[tokio::test]
    async fn garbage_lines_huge_bodies_and_bad_json_are_skipped() {
        let mut input = Vec::new();
        input.extend_from_slice(b"starting server...\nINFO loaded 3 plugins\r\n\r\n");
        input.extend_from_slice(&[0xff, 0xfe, b'\n']);
        input.extend_from_slice(&vec![b'x'; 20_000]);
        input.extend_from_slice(b"\n");
        input.extend_from_slice(b"content-length: 2\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}");
        let big = vec![b' '; 5000];
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", big.len()).as_bytes());
        input.extend_from_slice(&big);
        input.extend_from_slice(b"Content-Length: 5\r\n\r\nnope!");
        input.extend_from_slice(b"Content-Length: 7\r\n\r\n{\"a\":1}");
        let got = all(&input, 1000).await;
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0], Ok(json!({})));
        assert_eq!(
            got[1],
            Err("skipped a 5000-byte message (larger than the limit)".into())
        );
        assert!(got[2].as_ref().is_err_and(|e| e.contains("not JSON")));
        assert_eq!(got[3], Ok(json!({"a": 1})));
    }

    #[tokio::test]
    async fn invalid_utf8_inside_a_json_string_skips_that_message_only() {
        let mut input = Vec::new();
        input.extend_from_slice(b"Content-Length: 10\r\n\r\n{\"a\":\"\xff\xfe\"}");
        input.extend_from_slice(b"Content-Length: 7\r\n\r\n{\"b\":2}");
        let got = all(&input, 1000).await;
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].as_ref().is_err_and(|e| e.contains("not JSON")));
        assert_eq!(got[1], Ok(json!({"b": 2})));
    }

    #[tokio::test]
    async fn raw_lines_survive_bad_bytes_and_overlong_lines() {
        let mut input = Vec::new();
        input.extend_from_slice(b"{\"a\":\"\xff\"}\n");
        input.extend_from_slice(&vec![b'x'; 300]);
        input.extend_from_slice(b"\n{\"b\":2}\nlast");
        let mut reader = tokio::io::BufReader::with_capacity(16, &input[..]);
        let mut got = Vec::new();
        while let Some(line) = read_raw_line(&mut reader, 100).await.unwrap() {
            got.push(line);
        }
        assert_eq!(
            got,
            vec![
                RawLine::Line(b"{\"a\":\"\xff\"}".to_vec()),
                RawLine::TooLong,
                RawLine::Line(b"{\"b\":2}".to_vec()),
                RawLine::Line(b"last".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn a_body_cut_short_is_an_io_error() {
        let got = all(b"Content-Length: 50\r\n\r\n{\"a\":", 1000).await;
        assert!(
            matches!(&got[..], [Err(e)] if e.starts_with("io:")),
            "{got:?}"
        );
    }
}
