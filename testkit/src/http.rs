//! Just enough HTTP/1.1 for the scripted server and its test client: request
//! and response heads, fixed-length bodies, and chunked bodies both ways.

use crate::wire::Step;
use std::io;
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest request or response head accepted, so garbage cannot grow memory.
const MAX_HEAD: u64 = 64 * 1024;
/// Largest body accepted.
const MAX_BODY: u64 = 64 * 1024 * 1024;

/// A parsed message head: the start line split into words, plus headers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Head {
    /// The start line's three parts (method, target, version or version, code, reason).
    pub(crate) start: [String; 3],
    /// Headers with lowercased names, in arrival order.
    pub(crate) headers: Vec<(String, String)>,
}

impl Head {
    /// The first header with this (case-insensitive) name.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// Whether the body uses chunked transfer encoding.
    pub(crate) fn is_chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    }

    /// The declared body length, if any.
    pub(crate) fn content_length(&self) -> io::Result<Option<u64>> {
        self.header("content-length")
            .map(|v| {
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| invalid("bad Content-Length"))
            })
            .transpose()
    }
}

/// Case-insensitive header lookup over lowercased-name pairs.
pub(crate) fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Reads a message head; `Ok(None)` when the peer closed before sending anything.
pub(crate) async fn read_head<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Option<Head>> {
    let mut limited = reader.take(MAX_HEAD);
    let mut line = Vec::new();
    // Tolerate stray blank lines before the start line, as RFC 9112 allows.
    loop {
        line.clear();
        if limited.read_until(b'\n', &mut line).await? == 0 {
            return Ok(None);
        }
        if !trim_eol(&line).is_empty() {
            break;
        }
    }
    let start_line = String::from_utf8_lossy(trim_eol(&line)).into_owned();
    let mut parts = start_line.splitn(3, ' ');
    let start = [(); 3].map(|_| parts.next().unwrap_or_default().to_string());
    if start[1].is_empty() {
        return Err(invalid("malformed start line"));
    }
    let mut headers = Vec::new();
    loop {
        line.clear();
        if limited.read_until(b'\n', &mut line).await? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "head cut off"));
        }
        let text = trim_eol(&line);
        if text.is_empty() {
            break;
        }
        let text = String::from_utf8_lossy(text);
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| invalid("malformed header"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    Ok(Some(Head { start, headers }))
}

/// Reads a request body framed by Content-Length or chunked encoding.
pub(crate) async fn read_request_body<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    head: &Head,
) -> io::Result<Vec<u8>> {
    if head.is_chunked() {
        let mut chunks = Vec::new();
        if !read_chunked(reader, &mut chunks).await? {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "body cut off"));
        }
        return Ok(chunks.concat());
    }
    let len = head.content_length()?.unwrap_or(0);
    if len > MAX_BODY {
        return Err(invalid("body too large"));
    }
    let mut body = Vec::new();
    reader.take(len).read_to_end(&mut body).await?;
    if (body.len() as u64) < len {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "body cut off"));
    }
    Ok(body)
}

/// Reads a chunked body into `chunks`; returns whether the terminating
/// 0-chunk arrived. Partial data stays in `chunks` even on error, so a
/// client can see how far a cut-off body got.
pub(crate) async fn read_chunked<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    chunks: &mut Vec<Vec<u8>>,
) -> io::Result<bool> {
    let mut total = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        if (&mut *reader)
            .take(MAX_HEAD)
            .read_until(b'\n', &mut line)
            .await?
            == 0
        {
            return Ok(false);
        }
        let size_text = String::from_utf8_lossy(trim_eol(&line)).into_owned();
        // Chunk extensions after ';' carry nothing we need.
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = u64::from_str_radix(size_text, 16).map_err(|_| invalid("bad chunk size"))?;
        if size == 0 {
            // Skip trailers up to the final blank line.
            loop {
                line.clear();
                let n = (&mut *reader)
                    .take(MAX_HEAD)
                    .read_until(b'\n', &mut line)
                    .await?;
                if n == 0 || trim_eol(&line).is_empty() {
                    return Ok(n > 0);
                }
            }
        }
        total += size;
        if total > MAX_BODY {
            return Err(invalid("body too large"));
        }
        let mut data = Vec::new();
        (&mut *reader).take(size).read_to_end(&mut data).await?;
        let short = (data.len() as u64) < size;
        chunks.push(data);
        if short {
            return Ok(false);
        }
        line.clear();
        (&mut *reader).take(2).read_to_end(&mut line).await?;
        if line != b"\r\n" {
            return Ok(false);
        }
    }
}

/// Writes a complete fixed-length response and closes the write side.
pub(crate) async fn write_response<W: AsyncWrite + Unpin>(
    writer: &mut W,
    code: u16,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<()> {
    let mut out = status_line(code);
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    writer.write_all(&bytes).await?;
    writer.flush().await?;
    writer.shutdown().await
}

/// Streams `steps` as a chunked `text/event-stream` response, one chunk per
/// frame so clients see each event as soon as it is written.
pub(crate) async fn write_stream<W: AsyncWrite + Unpin>(
    writer: &mut W,
    steps: &[Step],
) -> io::Result<()> {
    let mut head = status_line(200);
    head.push_str(
        "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
    );
    writer.write_all(head.as_bytes()).await?;
    writer.flush().await?;
    for step in steps {
        match step {
            // An empty chunk would read as the end of the body.
            Step::Chunk(data) if data.is_empty() => {}
            Step::Chunk(data) => {
                let mut chunk = format!("{:x}\r\n", data.len()).into_bytes();
                chunk.extend_from_slice(data);
                chunk.extend_from_slice(b"\r\n");
                writer.write_all(&chunk).await?;
                writer.flush().await?;
            }
            Step::Sleep(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
            Step::WaitForFile(path) => {
                // Bounded, so a test that never opens its gate fails instead of hanging.
                let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
                while !path.exists() && tokio::time::Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
            Step::Drop => return writer.shutdown().await,
            Step::CutChunk => {
                writer.write_all(b"40\r\ndata: {\"id").await?;
                writer.flush().await?;
                return writer.shutdown().await;
            }
        }
    }
    writer.write_all(b"0\r\n\r\n").await?;
    writer.flush().await?;
    writer.shutdown().await
}

/// `HTTP/1.1 <code> <reason>\r\n`.
fn status_line(code: u16) -> String {
    format!("HTTP/1.1 {code} {}\r\n", reason(code))
}

/// The usual reason phrase, which clients show in error messages.
fn reason(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Scripted",
    }
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parses_head_with_lowercased_headers_and_chunked_body() -> anyhow::Result<()> {
        let raw: &[u8] =
            b"POST /v1/messages HTTP/1.1\r\nX-Api-Key: k\r\nTransfer-Encoding: chunked\r\n\r\n\
            3\r\n{\"a\r\n4;ext=1\r\n\":1}\r\n0\r\nTrailer: x\r\n\r\n";
        let mut reader = tokio::io::BufReader::new(raw);
        let head = read_head(&mut reader)
            .await?
            .ok_or_else(|| anyhow::anyhow!("no head"))?;
        assert_eq!(head.start[0], "POST");
        assert_eq!(head.start[1], "/v1/messages");
        assert_eq!(head.header("x-api-key"), Some("k"));
        assert_eq!(head.headers[0].0, "x-api-key");
        let body = read_request_body(&mut reader, &head).await?;
        assert_eq!(body, b"{\"a\":1}");
        Ok(())
    }

    #[tokio::test]
    async fn cut_off_chunk_keeps_partial_data() -> anyhow::Result<()> {
        let raw: &[u8] = b"5\r\nhello\r\n40\r\nshort";
        let mut chunks = Vec::new();
        let complete = read_chunked(&mut tokio::io::BufReader::new(raw), &mut chunks).await?;
        assert!(!complete);
        assert_eq!(chunks, vec![b"hello".to_vec(), b"short".to_vec()]);
        Ok(())
    }

    #[tokio::test]
    async fn empty_input_is_no_request() -> anyhow::Result<()> {
        let mut reader = tokio::io::BufReader::new(&b""[..]);
        assert_eq!(read_head(&mut reader).await?, None);
        Ok(())
    }
}
