//! The scripted server: accepts connections, records requests, and answers
//! each POST with the next turn of the script.

use crate::anthropic::AnthropicEncoder;
use crate::http::{Head, read_head, read_request_body, write_response, write_stream};
use crate::openai::OpenAiEncoder;
use crate::record::RecordedRequest;
use crate::script::{Script, Turn};
use crate::wire::{StreamContext, WireFormat, render};
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

/// Called with each request as it is recorded, before it is answered.
pub type RequestHook = Arc<dyn Fn(&RecordedRequest) + Send + Sync>;

/// How to start a [`ScriptedServer`] beyond its script.
#[derive(Clone, Default)]
pub struct ServerOptions {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Observer for every recorded request (the binary appends them to a file).
    pub on_request: Option<RequestHook>,
}

impl fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerOptions")
            .field("port", &self.port)
            .field("on_request", &self.on_request.is_some())
            .finish()
    }
}

/// A real HTTP server on 127.0.0.1 playing back a [`Script`].
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

/// State the accept loop and every connection share.
struct Shared {
    models: Vec<String>,
    state: Mutex<State>,
    /// Number of recorded requests, so tests can wait for arrivals.
    recorded: watch::Sender<usize>,
    hook: Option<RequestHook>,
}

struct State {
    turns: VecDeque<Turn>,
    requests: Vec<RecordedRequest>,
    /// Turns handed out so far; numbers the response ids.
    consumed: u64,
}

impl Shared {
    fn record(&self, request: RecordedRequest) {
        if let Some(hook) = &self.hook {
            hook(&request);
        }
        let count = {
            let mut state = self.state.lock();
            state.requests.push(request);
            state.requests.len()
        };
        self.recorded.send_modify(|c| *c = count);
    }

    fn next_turn(&self) -> Option<(u64, Turn)> {
        let mut state = self.state.lock();
        let turn = state.turns.pop_front()?;
        state.consumed += 1;
        Some((state.consumed, turn))
    }
}

impl ScriptedServer {
    /// Starts serving `script` on a free port of 127.0.0.1.
    pub async fn start(script: Script) -> io::Result<ScriptedServer> {
        Self::start_with(script, ServerOptions::default()).await
    }

    /// Starts serving `script` with explicit options.
    pub async fn start_with(script: Script, options: ServerOptions) -> io::Result<ScriptedServer> {
        let listener = TcpListener::bind(("127.0.0.1", options.port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            models: script.models,
            state: Mutex::new(State {
                turns: script.turns.into(),
                requests: Vec::new(),
                consumed: 0,
            }),
            recorded: watch::channel(0).0,
            hook: options.on_request,
        });
        let accept = tokio::spawn(accept_loop(listener, shared.clone()));
        Ok(ScriptedServer {
            addr,
            shared,
            accept,
        })
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The API base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request recorded so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.state.lock().requests.clone()
    }

    /// Waits until at least `count` requests have been recorded, then returns them all.
    pub async fn wait_for_requests(&self, count: usize) -> Vec<RecordedRequest> {
        let mut seen = self.shared.recorded.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = seen.wait_for(|n| *n >= count).await;
        self.requests()
    }

    /// Appends a turn to the queue.
    pub fn push_turn(&self, turn: Turn) {
        self.shared.state.lock().turns.push_back(turn);
    }

    /// Turns not yet consumed.
    pub fn remaining_turns(&self) -> usize {
        self.shared.state.lock().turns.len()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        // Aborting the loop drops the listener and, with its JoinSet, every open stream.
        self.accept.abort();
    }
}

impl fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("addr", &self.addr)
            .field("remaining_turns", &self.remaining_turns())
            .finish()
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        match listener.accept().await {
            Ok((stream, _)) => {
                let shared = shared.clone();
                connections.spawn(async move {
                    // A client that hangs up mid-response is normal in tests: stay quiet.
                    let _ = serve(stream, &shared).await;
                });
            }
            // Accept errors (e.g. out of descriptors) are transient; back off briefly.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// What a request is asking for.
enum Route {
    Turn(WireFormat),
    Models,
    NotFound,
}

fn route(method: &str, target: &str) -> Route {
    let path = target.split('?').next().unwrap_or_default();
    let path = path.trim_end_matches('/');
    match method {
        "POST" if path.ends_with("/chat/completions") => Route::Turn(WireFormat::OpenAi),
        "POST" if path.ends_with("/messages") => Route::Turn(WireFormat::Anthropic),
        "GET" if path.ends_with("/models") => Route::Models,
        _ => Route::NotFound,
    }
}

/// Answers one request on `stream`, then closes it.
async fn serve(mut stream: TcpStream, shared: &Shared) -> io::Result<()> {
    // Events must reach the client as they are written, not batched by Nagle.
    let _ = stream.set_nodelay(true);
    let (read_half, mut writer) = stream.split();
    let mut reader = BufReader::new(read_half);
    let head = match read_head(&mut reader).await {
        Ok(Some(head)) => head,
        Ok(None) => return Ok(()),
        Err(err) => return bad_request(&mut writer, &err).await,
    };
    if head
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
    }
    let body = match read_request_body(&mut reader, &head).await {
        Ok(body) => body,
        Err(err) => return bad_request(&mut writer, &err).await,
    };
    let Head { start, headers } = head;
    let [method, target, _] = start;
    let request = RecordedRequest::new(&method, &target, headers, &body);
    let model = request.model().unwrap_or("scripted-model").to_string();
    shared.record(request);

    match route(&method, &target) {
        Route::Models => {
            let body = models_body(&shared.models);
            write_response(&mut writer, 200, &[JSON], body.as_bytes()).await
        }
        Route::NotFound => {
            let message = format!("scripted server: no route for {method} {target}");
            let body = WireFormat::OpenAi.error_body("not_found", &message);
            write_response(&mut writer, 404, &[JSON], body.as_bytes()).await
        }
        Route::Turn(format) => {
            let Some((number, turn)) = shared.next_turn() else {
                let body = format.error_body("scripted_error", "scripted server: script exhausted");
                return write_response(&mut writer, 500, &[JSON], body.as_bytes()).await;
            };
            if turn == Turn::Silent {
                // Hold the connection until the client gives up on it.
                tokio::io::copy(&mut reader, &mut tokio::io::sink()).await?;
                return Ok(());
            }
            answer(&mut writer, format, number, model, turn).await
        }
    }
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

/// Plays one turn back in the request's wire format.
async fn answer(
    writer: &mut (impl tokio::io::AsyncWrite + Unpin),
    format: WireFormat,
    turn_number: u64,
    model: String,
    turn: Turn,
) -> io::Result<()> {
    match turn {
        Turn::Stream {
            events,
            usage,
            stop,
            delay_ms,
        } => {
            let ctx = StreamContext {
                turn_number,
                model,
                usage,
            };
            // Render fully before writing, so no encoder lives across an await.
            let steps = match format {
                WireFormat::OpenAi => render(&events, stop, delay_ms, &mut OpenAiEncoder::new(ctx)),
                WireFormat::Anthropic => {
                    render(&events, stop, delay_ms, &mut AnthropicEncoder::new(ctx))
                }
            };
            write_stream(writer, &steps).await
        }
        // `serve` holds these (it has the reading half); nothing is ever written.
        Turn::Silent => Ok(()),
        Turn::Status {
            code,
            retry_after,
            body,
            content_type,
        } => {
            let body = body.unwrap_or_else(|| {
                format.error_body("scripted_error", &format!("scripted status {code}"))
            });
            let content_type = content_type.unwrap_or_else(|| JSON.1.to_string());
            let mut headers = vec![("Content-Type", content_type.as_str())];
            if let Some(value) = &retry_after {
                headers.push(("Retry-After", value));
            }
            write_response(writer, code, &headers, body.as_bytes()).await
        }
    }
}

async fn bad_request(
    writer: &mut (impl tokio::io::AsyncWrite + Unpin),
    err: &io::Error,
) -> io::Result<()> {
    let message = format!("scripted server: bad request: {err}");
    let body = WireFormat::OpenAi.error_body("invalid_request_error", &message);
    write_response(writer, 400, &[JSON], body.as_bytes()).await
}

fn models_body(models: &[String]) -> String {
    #[derive(Serialize)]
    struct List<'a> {
        object: &'static str,
        data: Vec<Model<'a>>,
    }
    #[derive(Serialize)]
    struct Model<'a> {
        id: &'a str,
        object: &'static str,
        created: u64,
        owned_by: &'static str,
    }
    let list = List {
        object: "list",
        data: models
            .iter()
            .map(|id| Model {
                id,
                object: "model",
                created: 0,
                owned_by: "scripted",
            })
            .collect(),
    };
    serde_json::to_string(&list).unwrap_or_default()
}

#[cfg(test)]
mod tests;
