//! The memory server (`march memory serve`): one directory of markdown memory served over
//! HTTP (HTTPS with a certificate), so several machines and workspaces share it. It offers
//! what the memory tool does with global memory (list, read, search, append under a
//! heading) to clients that show a token of their own; appends go through the same
//! serialised append as the tool's, so concurrent ones are neither lost nor interleaved.
//! Every request is logged with the client's name. The wire is in docs/MEMORY-SERVER.md.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use march_core::http_serve::{accept, bearer, serve_connection};
use march_core::memory::{Memory, MemoryScope};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Largest request body (an append's text).
const MAX_BODY_BYTES: usize = 1 << 20;
/// Most hits a search answers with.
const MAX_HITS: usize = 500;

/// A client the server knows, by the token it shows.
pub type MemoryClient = march_core::auth::TokenClient;

/// A certificate chain and its key, PEM files.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate chain.
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
}

/// Why the server cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum MemoryServerError {
    /// The certificate or key cannot be used.
    #[error("TLS: {0}")]
    Tls(String),
    /// No client could be heard.
    #[error("no client tokens: add one with `march memory token add NAME`")]
    NoClients,
}

/// What the server serves and to whom.
#[derive(Debug, Clone)]
pub struct MemoryServerConfig {
    /// The memory's directory (`*.md` files).
    pub dir: PathBuf,
    /// The clients it hears.
    pub clients: Vec<MemoryClient>,
    /// HTTPS with these, else plain HTTP.
    pub tls: Option<TlsFiles>,
}

struct State {
    memory: Memory,
    clients: Vec<MemoryClient>,
}

/// Serves `config` on `listener` until `stop` is cancelled (connections in flight finish).
pub async fn serve_memory(
    listener: TcpListener,
    config: MemoryServerConfig,
    stop: CancellationToken,
) -> Result<(), MemoryServerError> {
    if config.clients.is_empty() {
        return Err(MemoryServerError::NoClients);
    }
    let tls = config.tls.as_ref().map(acceptor).transpose()?;
    let state = Arc::new(State {
        // Only the global scope is served: the "project" is never read.
        memory: Memory::new(config.dir.clone(), config.dir.clone(), Path::new(""), 0),
        clients: config.clients,
    });
    while let Some((stream, peer)) = accept(&listener, &stop, "memory server").await {
        let state = state.clone();
        let tls = tls.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(answer(&state, peer, request).await) }
            });
            let served = match tls {
                Some(tls) => match tls.accept(stream).await {
                    Ok(stream) => serve_connection(TokioIo::new(stream), service, &stop).await,
                    Err(e) => {
                        tracing::info!(%peer, "memory server: TLS handshake failed: {e}");
                        return;
                    }
                },
                None => serve_connection(TokioIo::new(stream), service, &stop).await,
            };
            if let Err(e) = served {
                tracing::debug!(%peer, "memory server: connection ended: {e}");
            }
        });
    }
    Ok(())
}

/// The TLS acceptor of `files`.
fn acceptor(files: &TlsFiles) -> Result<tokio_rustls::TlsAcceptor, MemoryServerError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let fail = |what: &str, path: &Path, e: &dyn std::fmt::Display| {
        MemoryServerError::Tls(format!("{what} {}: {e}", path.display()))
    };
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| fail("cannot read the certificate", &files.cert, &e))?;
    if certs.is_empty() {
        return Err(fail("no certificate in", &files.cert, &"empty"));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| fail("cannot read the key", &files.key, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| MemoryServerError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| MemoryServerError::Tls(format!("the certificate and key: {e}")))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// A JSON answer.
fn reply(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn error(status: StatusCode, message: impl Into<String>) -> Response<Full<Bytes>> {
    reply(status, json!({ "error": message.into() }))
}

/// An append's body.
#[derive(Deserialize)]
struct AppendBody {
    section: String,
    text: String,
}

/// Answers one request, and logs it with its client.
async fn answer(
    state: &State,
    peer: SocketAddr,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let Some(client) = MemoryClient::find(&state.clients, bearer(&request)).cloned() else {
        tracing::warn!(%peer, %method, path, "memory server: refused (no valid token)");
        return error(StatusCode::UNAUTHORIZED, "a valid token is needed");
    };
    let response = route(state, &method, &path, request).await;
    tracing::info!(
        client = client.name,
        %peer,
        %method,
        path,
        status = response.status().as_u16(),
        "memory server"
    );
    response
}

async fn route(
    state: &State,
    method: &Method,
    path: &str,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    // Each segment decoded after splitting: an encoded `/` stays inside its name, which the
    // name check then refuses.
    let decoded: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .map(|p| {
            percent_encoding::percent_decode_str(p)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let parts: Vec<&str> = decoded.iter().map(String::as_str).collect();
    match (method, parts.as_slice()) {
        (&Method::GET, ["v1", "status"]) => status(&state.memory).await,
        (&Method::GET, ["v1", "files"]) => list(&state.memory).await,
        (&Method::GET, ["v1", "files", name]) => read(&state.memory, name).await,
        (&Method::GET, ["v1", "search"]) => {
            let query = query_param(request.uri().query(), "q").unwrap_or_default();
            search(&state.memory, query).await
        }
        (&Method::POST, ["v1", "files", name, "append"]) => {
            let name = name.to_string();
            append(&state.memory, &name, request).await
        }
        (_, ["v1", ..]) => error(
            StatusCode::NOT_FOUND,
            format!("no such request: {method} {path}"),
        ),
        _ => error(
            StatusCode::NOT_FOUND,
            "not a memory server path (they start with /v1/)",
        ),
    }
}

/// The value of `key` in a URL query, percent-decoded.
fn query_param(query: Option<&str>, key: &str) -> Option<String> {
    let url = reqwest::Url::parse(&format!("http://m/?{}", query?)).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// Runs `work` off the async threads (file reads and searches).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Response<Full<Bytes>>> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

/// The served files and their sizes, read off the async threads.
async fn sized_files(memory: &Memory) -> Result<Vec<(String, u64)>, Response<Full<Bytes>>> {
    let memory = memory.clone();
    let listed = blocking(move || {
        memory.global_files().map(|files| {
            files
                .into_iter()
                .map(|f| {
                    let bytes = std::fs::metadata(&f.path).map_or(0, |m| m.len());
                    (f.name, bytes)
                })
                .collect::<Vec<_>>()
        })
    })
    .await?;
    listed.map_err(|e| error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

async fn status(memory: &Memory) -> Response<Full<Bytes>> {
    match sized_files(memory).await {
        Ok(files) => {
            let bytes: u64 = files.iter().map(|(_, bytes)| bytes).sum();
            reply(
                StatusCode::OK,
                json!({ "server": "march-memory", "version": env!("CARGO_PKG_VERSION"), "files": files.len(), "bytes": bytes }),
            )
        }
        Err(response) => response,
    }
}

async fn list(memory: &Memory) -> Response<Full<Bytes>> {
    match sized_files(memory).await {
        Ok(files) => {
            let files: Vec<Value> = files
                .into_iter()
                .map(|(name, bytes)| json!({ "name": name, "bytes": bytes }))
                .collect();
            reply(StatusCode::OK, json!({ "files": files }))
        }
        Err(response) => response,
    }
}

async fn read(memory: &Memory, name: &str) -> Response<Full<Bytes>> {
    let file = match memory.global(name) {
        Ok(file) => file,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let path = file.path.clone();
    let text =
        blocking(move || march_core::memory::read_file(&path, march_core::memory::MAX_READ_BYTES))
            .await;
    match text {
        Ok(Ok(Some(text))) => reply(
            StatusCode::OK,
            json!({ "name": file.name, "text": text.text, "totalBytes": text.total_bytes, "cut": text.cut }),
        ),
        Ok(Ok(None)) => error(
            StatusCode::NOT_FOUND,
            format!("no memory file {}", file.name),
        ),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(response) => response,
    }
}

async fn search(memory: &Memory, query: String) -> Response<Full<Bytes>> {
    if query.trim().is_empty() {
        return error(StatusCode::BAD_REQUEST, "the query (q) is empty");
    }
    let memory = memory.clone();
    let found = blocking(move || memory.search(&query, Some(MemoryScope::Global))).await;
    match found {
        Ok(found) => {
            let hits: Vec<Value> = found
                .hits
                .iter()
                .take(MAX_HITS)
                .map(|h| json!({ "file": h.file.name, "line": h.line, "text": h.text }))
                .collect();
            let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
            reply(
                StatusCode::OK,
                json!({ "hits": hits, "more": found.hits.len() > MAX_HITS, "errors": errors }),
            )
        }
        Err(response) => response,
    }
}

async fn append(memory: &Memory, name: &str, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let file = match memory.global(name) {
        Ok(file) => file,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let body = match Limited::new(request.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body could not be read (at most {MAX_BODY_BYTES} bytes): {e}"),
            );
        }
    };
    let body: AppendBody = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the body is not {{\"section\", \"text\"}} JSON: {e}"),
            );
        }
    };
    // Never cancelled: a client that hangs up mid-append still gets it written whole.
    let never = CancellationToken::new();
    match super::append_to(&file.path, body.section, body.text, &never).await {
        Ok((created, _)) => reply(
            StatusCode::OK,
            json!({ "file": file.name, "newSection": created }),
        ),
        Err(e) => error(StatusCode::BAD_REQUEST, e.to_string()),
    }
}

#[cfg(test)]
mod tests;
