//! The line transport under every ACP connection March makes, on either side: the runner's
//! stdin and stdout, and the app's pipes to each runner (or third-party agent) child.
//!
//! The ACP crate's own byte transport reads lines as `String`s, so one line that is not UTF-8
//! ends the whole connection, and a line without an end is held whole in memory. Here lines
//! are read as bytes: one that is not UTF-8, or longer than [`MAX_LINE_BYTES`], is answered
//! with a JSON-RPC parse error (`-32700`, id `null`) and skipped, and service goes on. Lines
//! that are UTF-8 but not JSON reach the crate, which answers those `-32700` itself.

use std::io;
use std::pin::Pin;
use std::sync::Arc;

use agent_client_protocol::Lines;
use futures_util::{Sink, Stream};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest line either side accepts (32 MiB): room for a prompt with several images, while
/// a runaway writer costs a bounded amount of memory.
pub const MAX_LINE_BYTES: usize = 32 << 20;

/// Lines going out, one JSON-RPC message each.
pub type LineSink = Pin<Box<dyn Sink<String, Error = io::Error> + Send + Sync>>;
/// Lines coming in that are UTF-8 and within the size limit.
pub type LineStream = Pin<Box<dyn Stream<Item = io::Result<String>> + Send + Sync>>;
/// A connection's transport: what the ACP crate's `connect_to` takes.
pub type LineTransport = Lines<LineSink, LineStream>;

/// A transport reading JSON-RPC lines from `reader` and writing them to `writer`, with lines
/// up to [`MAX_LINE_BYTES`].
pub fn line_transport<R, W>(reader: R, writer: W) -> LineTransport
where
    R: AsyncRead + Send + Sync + Unpin + 'static,
    W: AsyncWrite + Send + Sync + Unpin + 'static,
{
    line_transport_with_limit(reader, writer, MAX_LINE_BYTES)
}

/// [`line_transport`] with lines up to `max_line` bytes.
pub fn line_transport_with_limit<R, W>(reader: R, writer: W, max_line: usize) -> LineTransport
where
    R: AsyncRead + Send + Sync + Unpin + 'static,
    W: AsyncWrite + Send + Sync + Unpin + 'static,
{
    let (sink, incoming) = line_halves(reader, writer, max_line);
    Lines::new(sink, incoming)
}

/// The two halves [`line_transport_with_limit`] joins: the outgoing sink and the incoming
/// stream (benchmarks read the stream alone).
pub fn line_halves<R, W>(reader: R, writer: W, max_line: usize) -> (LineSink, LineStream)
where
    R: AsyncRead + Send + Sync + Unpin + 'static,
    W: AsyncWrite + Send + Sync + Unpin + 'static,
{
    // Shared: the reader answers bad lines itself, between the connection's own messages.
    let writer = Arc::new(Mutex::new(writer));
    let sink = futures_util::sink::unfold(writer.clone(), |writer, line: String| async move {
        write_line(&writer, line.as_bytes()).await?;
        Ok::<_, io::Error>(writer)
    });
    let reader = LineReader {
        reader: BufReader::with_capacity(64 * 1024, reader),
        buf: Vec::new(),
        max_line,
    };
    let incoming =
        futures_util::stream::unfold((reader, writer), |(mut reader, writer)| async move {
            loop {
                match reader.next().await {
                    Ok(None) => return None,
                    Ok(Some(RawLine::Text(line))) => return Some((Ok(line), (reader, writer))),
                    Ok(Some(RawLine::Bad(why))) => {
                        tracing::warn!(%why, "malformed JSON-RPC line answered -32700");
                        if let Err(e) = write_line(&writer, parse_error(&why).as_bytes()).await {
                            return Some((Err(e), (reader, writer)));
                        }
                    }
                    Err(e) => return Some((Err(e), (reader, writer))),
                }
            }
        });
    (Box::pin(sink), Box::pin(incoming))
}

/// The JSON-RPC answer to a line that could not be read as a message.
fn parse_error(why: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32700, "message": "Parse error", "data": why },
    })
    .to_string()
}

async fn write_line<W: AsyncWrite + Unpin>(writer: &Mutex<W>, line: &[u8]) -> io::Result<()> {
    let mut writer = writer.lock().await;
    // One write per message, so a reader on the other side never sees half a line first.
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line);
    bytes.push(b'\n');
    writer.write_all(&bytes).await?;
    writer.flush().await
}

/// One line as read: a message to parse, or why it cannot be one.
#[derive(Debug, PartialEq)]
enum RawLine {
    Text(String),
    Bad(String),
}

/// Reads lines as bytes, holding at most `max_line` bytes of one.
struct LineReader<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
    max_line: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// The next non-blank line, `None` at the end of the input.
    async fn next(&mut self) -> io::Result<Option<RawLine>> {
        loop {
            let Some(length) = self.read_raw().await? else {
                return Ok(None);
            };
            if length > self.max_line {
                self.buf = Vec::new();
                return Ok(Some(RawLine::Bad(format!(
                    "line of more than {} bytes (at most {} are read)",
                    self.max_line, self.max_line
                ))));
            }
            let mut line = std::mem::take(&mut self.buf);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                self.buf = line;
                self.buf.clear();
                continue;
            }
            return Ok(Some(match String::from_utf8(line) {
                Ok(text) => RawLine::Text(text),
                Err(e) => RawLine::Bad(format!(
                    "line is not valid UTF-8 (invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                )),
            }));
        }
    }

    /// Reads up to the next newline (or the end), keeping at most `max_line + 1` bytes in
    /// `buf`; returns how long the line was (capped at `max_line + 1`), `None` at the end.
    async fn read_raw(&mut self) -> io::Result<Option<usize>> {
        self.buf.clear();
        let mut length = 0usize;
        let mut read_any = false;
        loop {
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                return Ok(read_any.then_some(length));
            }
            read_any = true;
            let (part, used, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], i + 1, true),
                None => (chunk, chunk.len(), false),
            };
            if length <= self.max_line {
                let room = self.max_line + 1 - length;
                let kept = part.len().min(room);
                self.buf.extend_from_slice(&part[..kept]);
            }
            length = length.saturating_add(part.len()).min(self.max_line + 1);
            self.reader.consume(used);
            if done {
                return Ok(Some(length));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use tokio::io::AsyncReadExt;

    async fn lines_of(input: &[u8], max: usize) -> (Vec<String>, String) {
        let (mut peer_out, ours_in) = tokio::io::duplex(1 << 20);
        let (ours_out, mut peer_in) = tokio::io::duplex(1 << 20);
        let (_sink, incoming) = line_halves(ours_in, ours_out, max);
        peer_out.write_all(input).await.unwrap();
        drop(peer_out);
        let lines: Vec<String> = incoming.map(|l| l.unwrap()).collect().await;
        drop(_sink);
        let mut answers = String::new();
        peer_in.read_to_string(&mut answers).await.unwrap();
        (lines, answers)
    }

    #[tokio::test]
    async fn invalid_utf8_is_answered_and_reading_goes_on() {
        let input = b"{\"a\":1}\n{\"s\":\"\xff\xfe\"}\n{\"b\":2}\r\n";
        let (lines, answers) = lines_of(input, 1024).await;
        assert_eq!(lines, ["{\"a\":1}", "{\"b\":2}"]);
        let answer: serde_json::Value = serde_json::from_str(answers.trim()).unwrap();
        assert_eq!(answer["error"]["code"], -32700);
        assert_eq!(answer["id"], serde_json::Value::Null);
        assert!(
            answer["error"]["data"]
                .as_str()
                .unwrap()
                .contains("not valid UTF-8")
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_without_being_kept() {
        let mut input = vec![b'x'; 10_000];
        input.extend_from_slice(b"\n{\"ok\":true}\n\n   \n");
        let (lines, answers) = lines_of(&input, 100).await;
        assert_eq!(lines, ["{\"ok\":true}"]);
        assert_eq!(answers.lines().count(), 1);
        assert!(answers.contains("more than 100 bytes"), "{answers}");
    }

    #[tokio::test]
    async fn a_last_line_without_newline_is_read() {
        let (lines, answers) = lines_of(b"{\"a\":1}\n{\"b\":2}", 100).await;
        assert_eq!(lines, ["{\"a\":1}", "{\"b\":2}"]);
        assert!(answers.is_empty());
    }

    #[tokio::test]
    async fn a_line_exactly_at_the_limit_is_read() {
        let line = "y".repeat(100);
        let (lines, _) = lines_of(format!("{line}\n").as_bytes(), 100).await;
        assert_eq!(lines, [line]);
    }
}
