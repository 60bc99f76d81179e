//! The HTTP adapter: prompts to a named session or a new one on a project, their answers
//! streamed back as server-sent events or returned whole, permission answers, and the
//! sessions' state. Clients show a token of their own (`Authorization: Bearer …`); the
//! token's name is the sender the gateway logs. The wire is in docs/GATEWAY.md.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use march_core::http_serve::{accept, bearer, serve_connection};
use march_wire::WatchEvent;
use march_wire::control::Watch;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::HttpClient;
use crate::deliver::{Deliverer, Delivery};
use crate::queue::{Message, Target};
use crate::workspace::{LinkError, WorkspaceLink};

/// Largest request body.
const MAX_BODY_BYTES: usize = 1 << 20;

/// A response body: whole or streamed.
type Body = BoxBody<Bytes, Infallible>;

/// What the API serves with.
pub struct Api {
    clients: Vec<HttpClient>,
    workspace: WorkspaceLink,
    deliverer: Arc<Deliverer>,
}

impl Api {
    /// The API for `clients` on `workspace`, delivering through `deliverer`.
    pub(crate) fn new(
        clients: Vec<HttpClient>,
        workspace: WorkspaceLink,
        deliverer: Arc<Deliverer>,
    ) -> Api {
        Api {
            clients,
            workspace,
            deliverer,
        }
    }
}

/// Serves `api` on `listener` until `stop` is cancelled (an answer in flight goes on
/// until it ends or the gateway's process does).
pub async fn serve(listener: TcpListener, api: Api, stop: CancellationToken) {
    let api = Arc::new(api);
    while let Some((stream, peer)) = accept(&listener, &stop, "gateway").await {
        let api = api.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let api = api.clone();
                async move { Ok::<_, Infallible>(answer(&api, peer, request).await) }
            });
            if let Err(e) = serve_connection(TokioIo::new(stream), service, &stop).await {
                tracing::debug!(%peer, "gateway: connection ended: {e}");
            }
        });
    }
}

fn reply(status: StatusCode, body: Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn error(status: StatusCode, message: impl Into<String>) -> Response<Body> {
    reply(status, json!({ "error": message.into() }))
}

async fn answer(api: &Api, peer: SocketAddr, request: Request<Incoming>) -> Response<Body> {
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    if method == Method::GET && path == "/v1/health" {
        return reply(
            StatusCode::OK,
            json!({ "ok": true, "queued": api.deliverer.queued() }),
        );
    }
    let Some(client) = HttpClient::find(&api.clients, bearer(&request)).cloned() else {
        tracing::warn!(%peer, %method, path, "gateway: refused a sender with no valid token");
        return error(
            StatusCode::UNAUTHORIZED,
            "this sender is not on the gateway's allow-list (a valid token is needed)",
        );
    };
    let response = match (&method, path.as_str()) {
        (&Method::GET, "/v1/sessions") => match api.workspace.sessions().await {
            Ok(sessions) => reply(StatusCode::OK, json!({ "sessions": sessions })),
            Err(e) => link_error(&e),
        },
        (&Method::POST, "/v1/prompt") => match body::<PromptBody>(request).await {
            Ok(body) => prompt(api, &client, body).await,
            Err(response) => response,
        },
        (&Method::POST, "/v1/answer") => match body::<AnswerBody>(request).await {
            Ok(body) => permission(api, &client, body).await,
            Err(response) => response,
        },
        _ => error(StatusCode::NOT_FOUND, format!("no {method} {path}")),
    };
    tracing::info!(
        sender = client.name,
        %peer,
        %method,
        path,
        status = response.status().as_u16(),
        "gateway: http"
    );
    response
}

fn link_error(e: &LinkError) -> Response<Body> {
    match e {
        LinkError::Unreachable(why) => error(StatusCode::SERVICE_UNAVAILABLE, why.clone()),
        LinkError::Refused(why) => error(StatusCode::NOT_FOUND, why.clone()),
    }
}

async fn body<T: for<'de> Deserialize<'de>>(
    request: Request<Incoming>,
) -> Result<T, Response<Body>> {
    let bytes = Limited::new(request.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
        .map_err(|e| error(StatusCode::PAYLOAD_TOO_LARGE, format!("the body: {e}")))?
        .to_bytes();
    serde_json::from_slice(&bytes).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            format!("the body is not the JSON expected: {e}"),
        )
    })
}

/// `POST /v1/prompt`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptBody {
    /// An open session: `N`, `WORKSPACE:N` or the start of its session id.
    #[serde(default)]
    session: Option<String>,
    /// Else a new session on this project directory.
    #[serde(default)]
    project: Option<PathBuf>,
    /// The new session's agent.
    #[serde(default)]
    agent: Option<String>,
    /// The prompt.
    text: String,
    /// Stream the answer as server-sent events (else it comes whole, as JSON).
    #[serde(default)]
    stream: bool,
    /// Wait for the answer (the default); without, the answer is that the prompt is queued.
    #[serde(default = "yes")]
    wait: bool,
}

fn yes() -> bool {
    true
}

/// `POST /v1/answer`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerBody {
    session: String,
    allow: bool,
}

async fn prompt(api: &Api, client: &HttpClient, body: PromptBody) -> Response<Body> {
    let to = match (body.session, body.project) {
        (Some(session), None) => Target::Session { session },
        (None, Some(dir)) => Target::Project {
            dir: Some(dir),
            agent: body.agent,
        },
        _ => {
            return error(
                StatusCode::BAD_REQUEST,
                "name either a `session` or a `project` to open one on",
            );
        }
    };
    if let Some(why) = crate::refused_prompt(&body.text) {
        return error(StatusCode::BAD_REQUEST, why);
    }
    let message = Message {
        id: String::new(),
        adapter: "http".into(),
        sender: client.name.clone(),
        chat: None,
        to,
        text: body.text.clone(),
        workspace: None,
        follow: body.wait,
    };
    let submitted = api.deliverer.submit(message, body.wait).await;
    let (id, outcome) = match submitted {
        Ok(submitted) => submitted,
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the message could not be queued: {e}"),
            );
        }
    };
    let Some(outcome) = outcome else {
        return reply(StatusCode::ACCEPTED, json!({ "id": id, "queued": true }));
    };
    match outcome.await {
        Ok(Delivery::Taken {
            session,
            queued,
            watch: Some(watch),
        }) => {
            let turn = Turn {
                watch,
                session,
                text: body.text,
                sender: client.name.clone(),
            };
            if body.stream {
                stream_answer(turn, &id, queued)
            } else {
                whole_answer(turn, &id, queued).await
            }
        }
        Ok(Delivery::Taken { session, .. }) => reply(
            StatusCode::ACCEPTED,
            json!({ "id": id, "session": session }),
        ),
        Ok(Delivery::Refused(why)) => error(StatusCode::NOT_FOUND, why),
        Ok(Delivery::Waiting(why)) => reply(
            StatusCode::ACCEPTED,
            json!({ "id": id, "queued": true, "waiting": why }),
        ),
        Err(_) => error(StatusCode::SERVICE_UNAVAILABLE, "the gateway is stopping"),
    }
}

/// A prompt's turn, followed on its session's watch.
struct Turn {
    watch: Watch,
    session: u64,
    /// The prompt, which names its turn among those queued.
    text: String,
    sender: String,
}

/// What the turn does, as the API says it: (SSE event name, data), the last one `end`.
async fn next_step(turn: &mut Turn, started: &mut bool) -> (&'static str, Value) {
    loop {
        let event = match turn.watch.next().await {
            Ok(Some(event)) => event,
            Ok(None) => {
                return (
                    "end",
                    json!({ "stop_reason": null, "error": "the workspace closed" }),
                );
            }
            Err(e) => {
                return (
                    "end",
                    json!({ "stop_reason": null, "error": e.to_string() }),
                );
            }
        };
        match event {
            // A turn queued before this prompt ran first: its events are not this answer's.
            WatchEvent::TurnStart { text, .. } if !*started && text == turn.text => {
                *started = true;
                return ("start", json!({ "session": turn.session }));
            }
            WatchEvent::Closed { .. } => {
                return (
                    "end",
                    json!({ "stop_reason": null, "error": "the session was closed" }),
                );
            }
            _ if !*started => {}
            WatchEvent::Text { text, .. } => return ("text", json!({ "text": text })),
            WatchEvent::Tool { title, .. } => return ("tool", json!({ "title": title })),
            WatchEvent::Permission { question, .. } => {
                return (
                    "permission",
                    json!({ "session": turn.session, "question": question }),
                );
            }
            WatchEvent::TurnEnd {
                stop_reason, error, ..
            } => return ("end", json!({ "stop_reason": stop_reason, "error": error })),
            WatchEvent::Attention { .. } | WatchEvent::TurnStart { .. } => {}
        }
    }
}

fn log_out(turn: &Turn, answer: &str, end: &Value) {
    tracing::info!(
        adapter = "http",
        sender = turn.sender,
        session = turn.session,
        text = answer,
        end = %end,
        "gateway: message out"
    );
}

/// The answer as server-sent events, as the turn streams.
fn stream_answer(mut turn: Turn, id: &str, queued: bool) -> Response<Body> {
    let (frames, rx) = mpsc::channel::<Bytes>(64);
    let first = sse(
        "accepted",
        &json!({ "id": id, "session": turn.session, "queued": queued }),
    );
    tokio::spawn(async move {
        if frames.send(first).await.is_err() {
            return;
        }
        let mut started = false;
        let mut answer = String::new();
        loop {
            let (name, data) = next_step(&mut turn, &mut started).await;
            if let Some(text) = data["text"].as_str().filter(|_| name == "text") {
                answer.push_str(text);
            }
            // A reader that left ends the watch with it.
            if frames.send(sse(name, &data)).await.is_err() {
                return;
            }
            if name == "end" {
                log_out(&turn, &answer, &data);
                return;
            }
        }
    });
    let body = StreamBody::new(futures_util::stream::unfold(rx, |mut rx| async move {
        let bytes = rx.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(bytes)), rx))
    }));
    let mut response = Response::new(body.boxed());
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    response
}

/// One server-sent event.
fn sse(name: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// The whole answer, once the turn ended.
async fn whole_answer(mut turn: Turn, id: &str, queued: bool) -> Response<Body> {
    let mut started = false;
    let mut answer = String::new();
    let mut asked = Vec::new();
    loop {
        let (name, data) = next_step(&mut turn, &mut started).await;
        match name {
            "text" => answer.push_str(data["text"].as_str().unwrap_or_default()),
            "permission" => asked.push(data["question"].clone()),
            "end" => {
                log_out(&turn, &answer, &data);
                return reply(
                    StatusCode::OK,
                    json!({
                        "id": id,
                        "session": turn.session,
                        "queued": queued,
                        "answer": answer,
                        "asked": asked,
                        "stop_reason": data["stop_reason"],
                        "error": data["error"],
                    }),
                );
            }
            _ => {}
        }
    }
}

/// `POST /v1/answer`: a permission request answered.
async fn permission(api: &Api, client: &HttpClient, body: AnswerBody) -> Response<Body> {
    let key = match api.workspace.resolve(&body.session).await {
        Ok(key) => key,
        Err(e) => return link_error(&e),
    };
    match api.workspace.answer(key, body.allow).await {
        Ok(question) => {
            tracing::info!(
                adapter = "http",
                sender = client.name,
                session = key,
                allow = body.allow,
                question,
                "gateway: permission answered"
            );
            reply(
                StatusCode::OK,
                json!({ "session": key, "answered": question, "allowed": body.allow }),
            )
        }
        Err(e) => link_error(&e),
    }
}
