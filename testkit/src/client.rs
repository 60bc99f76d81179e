//! A tiny raw HTTP/1.1 client for tests: it shows exactly what went over the
//! wire, chunk by chunk, including bodies that were cut off.

use crate::http::{find_header, read_chunked, read_head};
use std::io;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A response as received, with its body de-chunked.
#[derive(Debug, Clone, PartialEq)]
pub struct RawResponse {
    /// Status code.
    pub status: u16,
    /// Headers with lowercased names.
    pub headers: Vec<(String, String)>,
    /// The body: for chunked responses, the chunks concatenated.
    pub body: Vec<u8>,
    /// Each HTTP chunk of a chunked body (empty otherwise).
    pub chunks: Vec<Vec<u8>>,
    /// False when the body ended early: no 0-chunk, or short of Content-Length.
    pub complete: bool,
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with newlines.
    pub data: String,
}

impl RawResponse {
    /// The first header with this name, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// The body as text, lossily decoded.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON.
    pub fn json(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_slice(&self.body)
    }

    /// The body split into SSE events; blocks with neither field are skipped.
    pub fn sse_events(&self) -> Vec<SseEvent> {
        let text = self.text().replace("\r\n", "\n");
        text.split("\n\n").filter_map(parse_sse_block).collect()
    }

    /// The `data:` payloads of the SSE events, in order.
    pub fn sse_data(&self) -> Vec<String> {
        self.sse_events().into_iter().map(|e| e.data).collect()
    }
}

fn parse_sse_block(block: &str) -> Option<SseEvent> {
    let mut event = None;
    let mut data: Option<String> = None;
    for line in block.lines() {
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => event = Some(value.to_string()),
            "data" => match &mut data {
                Some(existing) => {
                    existing.push('\n');
                    existing.push_str(value);
                }
                None => data = Some(value.to_string()),
            },
            _ => {}
        }
    }
    if event.is_none() && data.is_none() {
        return None;
    }
    Some(SseEvent {
        event,
        data: data.unwrap_or_default(),
    })
}

/// Sends one request with `Connection: close` and reads the whole response.
pub async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<RawResponse> {
    let mut stream = TcpStream::connect(addr).await?;
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    stream.write_all(&bytes).await?;
    stream.flush().await?;

    let mut reader = BufReader::new(stream);
    let head = read_head(&mut reader)
        .await?
        .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "no response"))?;
    let status = head.start[1]
        .parse::<u16>()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad status code"))?;
    let mut response = RawResponse {
        status,
        headers: head.headers.clone(),
        body: Vec::new(),
        chunks: Vec::new(),
        complete: false,
    };
    // Errors while reading the body just mean it was cut off, which tests inspect.
    if head.is_chunked() {
        response.complete = read_chunked(&mut reader, &mut response.chunks)
            .await
            .unwrap_or(false);
        response.body = response.chunks.concat();
    } else {
        let expected = head.content_length()?;
        let read = match expected {
            Some(len) => {
                (&mut reader)
                    .take(len)
                    .read_to_end(&mut response.body)
                    .await
            }
            None => reader.read_to_end(&mut response.body).await,
        };
        response.complete =
            read.is_ok() && expected.is_none_or(|len| response.body.len() as u64 == len);
    }
    Ok(response)
}

/// POSTs `body` as JSON.
pub async fn post_json(
    addr: SocketAddr,
    path: &str,
    body: &serde_json::Value,
) -> io::Result<RawResponse> {
    let body = body.to_string();
    let headers = [("Content-Type", "application/json")];
    send(addr, "POST", path, &headers, body.as_bytes()).await
}

/// Sends a bodiless GET.
pub async fn get(addr: SocketAddr, path: &str) -> io::Result<RawResponse> {
    send(addr, "GET", path, &[], &[]).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(body: &str) -> RawResponse {
        RawResponse {
            status: 200,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
            chunks: Vec::new(),
            complete: true,
        }
    }

    #[test]
    fn sse_parsing_handles_names_multiline_data_and_noise() {
        let r = response("event: ping\ndata: {}\n\ndata: a\ndata: b\n\n: comment\n\n");
        assert_eq!(
            r.sse_events(),
            vec![
                SseEvent {
                    event: Some("ping".to_string()),
                    data: "{}".to_string()
                },
                SseEvent {
                    event: None,
                    data: "a\nb".to_string()
                },
            ]
        );
    }
}
