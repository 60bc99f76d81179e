//! Server-sent events over a byte stream, tolerant of bad bytes and cut-off bodies.

use futures_util::{Stream, StreamExt};

/// One dispatched SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Splits a body into events. Lines are cut on bytes first, so a multi-byte character split
/// across network chunks survives; invalid UTF-8 is replaced, never fatal.
#[derive(Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    /// Feed bytes; complete events are appended to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(pos) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let end = start + pos;
            let mut line = &self.buf[start..end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let line = String::from_utf8_lossy(line).into_owned();
            self.line(&line, out);
            start = end + 1;
        }
        self.buf.drain(..start);
    }

    /// The body ended: dispatch what is pending (servers may omit the final blank line).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = String::from_utf8_lossy(&rest).into_owned();
            self.line(line.trim_end_matches('\r'), out);
        }
        self.dispatch(out);
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => self.data.push(value.to_string()),
            "event" => self.event = Some(value.to_string()),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.data.is_empty() {
            self.event = None;
            return;
        }
        out.push(SseEvent {
            event: self.event.take(),
            data: std::mem::take(&mut self.data).join("\n"),
        });
    }
}

/// Why reading a stream stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyError(pub String);

/// Pull events from a reqwest body, one batch per network chunk.
pub struct SseStream<S> {
    body: S,
    parser: SseParser,
    pending: std::collections::VecDeque<SseEvent>,
    ended: bool,
}

impl<S, B, E> SseStream<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    /// Wrap a byte stream.
    pub fn new(body: S) -> Self {
        SseStream {
            body,
            parser: SseParser::default(),
            pending: Default::default(),
            ended: false,
        }
    }

    /// The body being read.
    pub fn body(&self) -> &S {
        &self.body
    }

    /// The next event; `Ok(None)` at a clean end of body; `Err` when the body broke off.
    pub async fn next_event(&mut self) -> Result<Option<SseEvent>, BodyError> {
        loop {
            if let Some(ev) = self.pending.pop_front() {
                return Ok(Some(ev));
            }
            if self.ended {
                return Ok(None);
            }
            let mut out = Vec::new();
            match self.body.next().await {
                Some(Ok(bytes)) => self.parser.feed(bytes.as_ref(), &mut out),
                Some(Err(e)) => {
                    self.ended = true;
                    return Err(BodyError(format!("connection lost mid-stream: {e}")));
                }
                None => {
                    self.ended = true;
                    self.parser.finish(&mut out);
                }
            }
            self.pending.extend(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out);
        }
        p.finish(&mut out);
        out
    }

    #[test]
    fn events_split_across_chunks_and_crlf() {
        let evs = parse_all(&[
            b"event: a\r\nda",
            b"ta: {\"x\":1}\r\n\r\n: comment\n\ndata: 2\n",
        ]);
        assert_eq!(
            evs,
            vec![
                SseEvent {
                    event: Some("a".into()),
                    data: "{\"x\":1}".into()
                },
                SseEvent {
                    event: None,
                    data: "2".into()
                }
            ]
        );
    }

    #[test]
    fn multibyte_characters_survive_chunk_boundaries_and_bad_bytes_are_replaced() {
        let text = "data: héllo\n\n".as_bytes();
        let (a, b) = text.split_at(8); // inside the two-byte é
        let evs = parse_all(&[a, b, b"data: \xff\xfe ok\n\n"]);
        assert_eq!(evs[0].data, "héllo");
        assert_eq!(evs[1].data, "\u{fffd}\u{fffd} ok");
    }

    #[test]
    fn multiple_data_lines_join_and_unknown_fields_are_ignored() {
        let evs = parse_all(&[b"id: 7\nretry: 5\ndata: a\ndata: b\nbogus line\n\n"]);
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].data, "a\nb");
    }
}
