//! Model providers: the transport boundary (auth, request, streaming) behind `StreamFn`.
//!
//! Every failure becomes an `error` event with a message; nothing here returns an error to the
//! loop. Retries happen only before the first content block arrives.

mod anthropic;
mod emitter;
mod error;
mod openai;
mod quiet;
pub mod retry;
pub mod sse;
pub mod transform;

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use emitter::INVALID_ARGUMENTS_KEY;
use emitter::{Closed, Emitter};
pub use error::RequestError;
pub use retry::{RetryPolicy, StallPolicy};

use crate::event::AssistantStreamEvent;
use crate::message::{Message, StopReason};
use crate::model::{Api, Model, ThinkingLevel};
use crate::structured::ResponseSchema;
use crate::tool::ToolSpec;

/// What one model call sends: the system prompt, the transcript and the tools.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LlmContext {
    /// System prompt.
    pub system_prompt: String,
    /// Conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// The schema the final answer must match, asked for in the wire's own shape where the
    /// model has one, otherwise in the system prompt.
    pub response_schema: Option<ResponseSchema>,
}

/// Sees raw requests and responses (logging, debugging, tests).
pub trait PayloadObserver: Send + Sync {
    /// The JSON body about to be sent.
    fn on_payload(&self, _model: &Model, _payload: &serde_json::Value) {}
    /// The status and headers of a response (every attempt).
    fn on_response(&self, _model: &Model, _status: u16, _headers: &HeaderMap) {}
}

/// Per-call options.
#[derive(Clone, Default)]
pub struct StreamOptions {
    /// Credential; local servers may need none.
    pub api_key: Option<String>,
    /// Reasoning effort; applied only to reasoning models.
    pub thinking: ThinkingLevel,
    /// Output limit; the model's maximum when unset (Anthropic requires one).
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Retry policy before the first token.
    pub retry: RetryPolicy,
    /// Extra HTTP headers (from config).
    pub headers: Vec<(String, String)>,
    /// Raw request/response observer.
    pub observer: Option<Arc<dyn PayloadObserver>>,
    /// How long a silent server is waited on, and how often a stalled request is sent
    /// again: a hung server ends the turn with an error instead of holding it.
    pub stall: StallPolicy,
}

/// A stream of assistant events ending with `done` or `error`.
pub struct AssistantEventStream {
    rx: mpsc::Receiver<AssistantStreamEvent>,
}

impl AssistantEventStream {
    /// Wrap a channel; the sender side ends the stream by sending a terminal event.
    pub fn from_channel(rx: mpsc::Receiver<AssistantStreamEvent>) -> Self {
        AssistantEventStream { rx }
    }

    /// The next event, `None` if the producer vanished without a terminal event.
    pub async fn next(&mut self) -> Option<AssistantStreamEvent> {
        self.rx.recv().await
    }
}

/// Something that turns a context into a stream of assistant events. Must never fail the
/// caller: failures are `error` events.
pub trait StreamFn: Send + Sync {
    /// Start streaming a response.
    fn stream(
        &self,
        model: &Model,
        context: LlmContext,
        options: StreamOptions,
        cancel: CancellationToken,
    ) -> AssistantEventStream;
}

/// The real providers over HTTP: dispatches on the model's wire API.
#[derive(Clone)]
pub struct HttpProvider {
    client: reqwest::Client,
}

impl HttpProvider {
    /// A provider with a fresh client.
    pub fn new() -> Result<Self, reqwest::Error> {
        Ok(HttpProvider {
            client: crate::http::client(Duration::from_secs(30))?,
        })
    }

    /// A provider sharing an existing client.
    pub fn with_client(client: reqwest::Client) -> Self {
        HttpProvider { client }
    }
}

impl StreamFn for HttpProvider {
    fn stream(
        &self,
        model: &Model,
        context: LlmContext,
        options: StreamOptions,
        cancel: CancellationToken,
    ) -> AssistantEventStream {
        let (tx, rx) = mpsc::channel(64);
        let client = self.client.clone();
        let model = model.clone();
        tokio::spawn(async move {
            run(client, model, context, options, cancel, tx).await;
        });
        AssistantEventStream::from_channel(rx)
    }
}

/// Why an attempt failed.
#[derive(Debug)]
pub(crate) struct Failure {
    message: String,
    retryable: bool,
    retry_after: Option<Duration>,
    /// The server went silent (retried at most [`StallPolicy::max_stall_retries`] times).
    stalled: bool,
    /// The provider said the model declined to answer; never retried.
    refusal: bool,
}

impl Failure {
    pub(crate) fn fatal(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            retryable: false,
            retry_after: None,
            stalled: false,
            refusal: false,
        }
    }

    pub(crate) fn transient(message: impl Into<String>) -> Self {
        Failure {
            retryable: true,
            ..Failure::fatal(message)
        }
    }

    /// The model declined to answer, in the provider's own stop reason.
    pub(crate) fn refusal(message: impl Into<String>) -> Self {
        Failure {
            refusal: true,
            ..Failure::fatal(message)
        }
    }
}

impl From<RequestError> for Failure {
    fn from(error: RequestError) -> Self {
        Failure {
            retryable: error.is_retryable(),
            stalled: error.is_stall(),
            ..Failure::fatal(error.to_string())
        }
    }
}

enum AttemptError {
    Failed(Failure),
    Closed,
}

impl From<Closed> for AttemptError {
    fn from(_: Closed) -> Self {
        AttemptError::Closed
    }
}

impl From<Failure> for AttemptError {
    fn from(f: Failure) -> Self {
        AttemptError::Failed(f)
    }
}

/// A wire request: where to send what.
pub(crate) struct WireRequest {
    url: String,
    headers: Vec<(String, String)>,
    body: serde_json::Value,
    /// The tool the model calls with its final answer (Anthropic's shape of structured
    /// output): its call is decoded as the answer's text.
    answer_tool: Option<String>,
}

/// Decodes one wire format's SSE events into emitter calls.
enum Decoder {
    OpenAi(openai::Decoder),
    Anthropic(anthropic::Decoder),
}

impl Decoder {
    fn new(api: Api, answer_tool: Option<String>) -> Self {
        match api {
            Api::OpenAiCompletions => Decoder::OpenAi(openai::Decoder::default()),
            Api::AnthropicMessages => Decoder::Anthropic(anthropic::Decoder::new(answer_tool)),
        }
    }

    async fn event(
        &mut self,
        em: &mut Emitter,
        ev: sse::SseEvent,
    ) -> Result<Option<StopReason>, AttemptError> {
        match self {
            Decoder::OpenAi(d) => d.event(em, ev).await,
            Decoder::Anthropic(d) => d.event(em, ev).await,
        }
    }

    fn at_eof(&self) -> Result<StopReason, Failure> {
        match self {
            Decoder::OpenAi(d) => d.at_eof(),
            Decoder::Anthropic(d) => d.at_eof(),
        }
    }
}

async fn run(
    client: reqwest::Client,
    model: Model,
    context: LlmContext,
    options: StreamOptions,
    cancel: CancellationToken,
    tx: mpsc::Sender<AssistantStreamEvent>,
) {
    let mut em = Emitter::new(tx, &model);
    let mut context = LlmContext {
        messages: transform::prepare_messages(&context.messages, &model),
        ..context
    };
    // Without the wire's own shape, the model reads the schema.
    if let Some(schema) = context
        .response_schema
        .as_ref()
        .filter(|s| !s.native_for(&model))
    {
        append_paragraph(&mut context.system_prompt, &schema.prompt_instructions());
    }
    let request = match model.api {
        Api::OpenAiCompletions => openai::request(&model, &context, &options),
        Api::AnthropicMessages => anthropic::request(&model, &context, &options),
    };
    if let Some(obs) = &options.observer {
        obs.on_payload(&model, &request.body);
    }
    let body = serde_json::to_vec(&request.body).unwrap_or_default();
    let mut attempt = 0u32;
    let mut stalls = 0u32;
    let outcome = loop {
        let result = tokio::select! {
            biased;
            _ = cancel.cancelled() => break Err(None),
            r = attempt_once(&client, &model, &request, &body, &options, &mut em) => r,
        };
        match result {
            Ok(reason) => break Ok(reason),
            Err(AttemptError::Closed) => return,
            Err(AttemptError::Failed(f))
                if f.retryable
                    && !em.has_content()
                    && attempt < options.retry.max_retries
                    && (!f.stalled || stalls < options.stall.max_stall_retries) =>
            {
                stalls += u32::from(f.stalled);
                let Some(delay) = options.retry.delay(attempt, f.retry_after) else {
                    let asked = f.retry_after.unwrap_or_default().as_secs();
                    break Err(Some(Failure::fatal(format!(
                        "{} (server asked to retry after {asked}s, longer than allowed)",
                        f.message
                    ))));
                };
                attempt += 1;
                tracing::info!(model = %model.id, attempt, ?delay, error = %f.message, "retrying model request");
                tokio::select! {
                    _ = cancel.cancelled() => break Err(None),
                    _ = tokio::time::sleep(delay) => {}
                }
            }
            Err(AttemptError::Failed(f)) if f.stalled => {
                let tries = match attempt + 1 {
                    1 => "1 attempt".to_string(),
                    n => format!("{n} attempts"),
                };
                break Err(Some(Failure::fatal(format!(
                    "{} (gave up after {tries}; [requests] in config.toml sets how long to wait)",
                    f.message
                ))));
            }
            Err(AttemptError::Failed(f)) => break Err(Some(f)),
        }
    };
    let _ = match outcome {
        Ok(reason) => em.done(reason).await,
        Err(None) => {
            em.fail(StopReason::Aborted, "Request was aborted".into())
                .await
        }
        Err(Some(f)) => {
            // Typed, so nobody downstream has to guess a refusal from the words.
            em.message_mut().refused = f.refusal;
            em.fail(StopReason::Error, f.message).await
        }
    };
}

async fn attempt_once(
    client: &reqwest::Client,
    model: &Model,
    request: &WireRequest,
    body: &[u8],
    options: &StreamOptions,
    em: &mut Emitter,
) -> Result<StopReason, AttemptError> {
    let mut builder = client
        .post(&request.url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream");
    for (k, v) in request.headers.iter().chain(options.headers.iter()) {
        builder = builder.header(k.as_str(), v.as_str());
    }
    let stall = options.stall;
    let response = tokio::time::timeout(stall.first_byte, builder.body(body.to_vec()).send())
        .await
        .map_err(|_| Failure::from(RequestError::no_answer(&request.url, stall.first_byte)))?
        .map_err(|e| Failure::from(RequestError::classify(&request.url, &e)))?;
    let status = response.status();
    if let Some(obs) = &options.observer {
        obs.on_response(model, status.as_u16(), response.headers());
    }
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !status.is_success() {
        let retry_after = retry::server_retry_after(response.headers());
        let body = read_limited(response, stall.idle).await;
        return Err(Failure {
            retry_after,
            ..RequestError::status(&request.url, status, &body).into()
        }
        .into());
    }
    if content_type.contains("text/html") || content_type.contains("application/json") {
        let body = read_limited(response, stall.idle).await;
        return Err(Failure::fatal(format!(
            "expected an event stream from {} but the server sent {content_type}: {}",
            error::shown_url(&request.url),
            crate::http::error_excerpt(&body)
        ))
        .into());
    }
    let mut decoder = Decoder::new(model.api, request.answer_tool.clone());
    let mut events = sse::SseStream::new(quiet::Quiet::new(response.bytes_stream(), stall.idle));
    loop {
        match events.next_event().await {
            Ok(Some(ev)) => {
                if let Some(reason) = decoder.event(em, ev).await? {
                    return Ok(reason);
                }
            }
            Ok(None) => return Ok(decoder.at_eof()?),
            Err(_) if events.body().went_silent() => {
                return Err(
                    Failure::from(RequestError::went_silent(&request.url, stall.idle)).into(),
                );
            }
            Err(e) => return Err(Failure::transient(e.0).into()),
        }
    }
}

/// Adds `paragraph` to `text` after a blank line.
pub(crate) fn append_paragraph(text: &mut String, paragraph: &str) {
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(paragraph);
}

/// Read at most 64 KiB of an error body, giving up on a server quiet for `idle`.
async fn read_limited(mut response: reqwest::Response, idle: Duration) -> Vec<u8> {
    let mut out = Vec::new();
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout(idle, response.chunk()).await {
        out.extend_from_slice(&chunk);
        if out.len() > 64 * 1024 {
            break;
        }
    }
    out
}

/// Parse an SSE data payload as JSON, or fail with a clear message.
pub(crate) fn parse_data(provider: &str, data: &str) -> Result<serde_json::Value, Failure> {
    serde_json::from_str(data).map_err(|e| {
        let excerpt: String = data.chars().take(120).collect();
        Failure::fatal(format!(
            "malformed stream data from {provider}: {e} (data: {excerpt})"
        ))
    })
}

#[cfg(test)]
mod tests;
