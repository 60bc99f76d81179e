//! A web server on loopback serving fixed pages by path, for tests of the web tools: real
//! HTTP over TCP, with redirects, large and stalled bodies besides ordinary pages. It keeps
//! every request, so a test of an API client (a search provider's) can see what was sent.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use crate::http::{read_head, read_request_body, write_response};

/// What the server answers for a path.
#[derive(Debug, Clone)]
pub enum PageReply {
    /// A whole body with this status and media type.
    Page {
        /// The HTTP status.
        status: u16,
        /// The `Content-Type` header.
        media_type: String,
        /// The body.
        body: Vec<u8>,
    },
    /// A redirect (302) to this location.
    Redirect(String),
    /// `Content-Length` of `size` bytes of `x`, written until the reader stops reading.
    Large {
        /// The declared and written length.
        size: usize,
    },
    /// Headers and the start of a body, then nothing more, ever.
    Stalled,
}

impl PageReply {
    /// A 200 answer of this media type.
    pub fn ok(media_type: &str, body: impl Into<Vec<u8>>) -> Self {
        PageReply::Page {
            status: 200,
            media_type: media_type.to_string(),
            body: body.into(),
        }
    }
}

/// A request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The path with its query, as sent.
    pub target: String,
    /// The headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body (empty for none).
    pub body: Vec<u8>,
}

impl PageRequest {
    /// The value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        crate::http::find_header(&self.headers, name)
    }
}

/// The server; it runs until the runtime ends.
#[derive(Debug, Clone)]
pub struct PageServer {
    base: String,
    seen: Arc<Mutex<Vec<PageRequest>>>,
}

impl PageServer {
    /// Serves `routes` (path, without query → reply; any other path is a 404) on a loopback
    /// port.
    pub async fn start(routes: HashMap<String, PageReply>) -> io::Result<PageServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let routes = Arc::new(routes);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let routes = routes.clone();
                let log = log.clone();
                tokio::spawn(async move {
                    let mut stream = BufReader::new(stream);
                    let Ok(Some(head)) = read_head(&mut stream).await else {
                        return;
                    };
                    let Ok(body) = read_request_body(&mut stream, &head).await else {
                        return;
                    };
                    let [method, target, _] = head.start.clone();
                    let path = target.split('?').next().unwrap_or_default().to_string();
                    log.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(PageRequest {
                            method,
                            target,
                            headers: head.headers.clone(),
                            body,
                        });
                    let reply = routes.get(&path).cloned();
                    let _ = answer(stream.get_mut(), reply).await;
                });
            }
        });
        Ok(PageServer { base, seen })
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<PageRequest> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

async fn answer(stream: &mut tokio::net::TcpStream, reply: Option<PageReply>) -> io::Result<()> {
    match reply {
        None => write_response(stream, 404, &[("Content-Type", "text/plain")], b"no page").await,
        Some(PageReply::Page {
            status,
            media_type,
            body,
        }) => write_response(stream, status, &[("Content-Type", &media_type)], &body).await,
        Some(PageReply::Redirect(to)) => {
            write_response(stream, 302, &[("Location", &to)], b"").await
        }
        Some(PageReply::Large { size }) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {size}\r\n\r\n"
            );
            stream.write_all(head.as_bytes()).await?;
            let block = [b'x'; 64 * 1024];
            let mut left = size;
            while left > 0 {
                let n = left.min(block.len());
                stream.write_all(&block[..n]).await?;
                left -= n;
            }
            Ok(())
        }
        Some(PageReply::Stalled) => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n\
                        started";
            stream.write_all(head.as_bytes()).await?;
            std::future::pending::<io::Result<()>>().await
        }
    }
}
