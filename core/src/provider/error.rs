//! Why a request to a model server got no answer from the model, in words that say what
//! happened, where, and what to check. One classification for every wire: transport failures
//! are read from reqwest's error chain, error statuses from the response.

use std::error::Error as StdError;
use std::io;
use std::time::Duration;

use reqwest::StatusCode;

/// A request to a model server that the model did not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// Nothing accepts connections at the address (the server is not running, or the port
    /// is wrong).
    #[error("connection refused by {url}; is the model server running, and is the base URL right?")]
    ConnectionRefused {
        /// The request's URL.
        url: String,
    },
    /// The host name does not resolve.
    #[error(
        "cannot look up the host of {url} ({detail}); is the base URL right, and is the \
         network up?"
    )]
    Dns {
        /// The request's URL.
        url: String,
        /// The resolver's words.
        detail: String,
    },
    /// The TLS handshake failed: a certificate this machine does not trust, or a server that
    /// does not speak TLS at all.
    #[error(
        "TLS with {url} failed ({detail}); does the server speak HTTPS (a local server \
         usually wants http://), with a certificate this machine trusts?"
    )]
    Tls {
        /// The request's URL.
        url: String,
        /// rustls's words.
        detail: String,
    },
    /// Connecting took longer than the client allows.
    #[error("connecting to {url} timed out; is the host reachable, and is the base URL right?")]
    ConnectTimeout {
        /// The request's URL.
        url: String,
    },
    /// Connecting failed another way (no route to host, network unreachable, …).
    #[error(
        "cannot connect to {url} ({detail}); is the host reachable, and is the base URL right?"
    )]
    Connect {
        /// The request's URL.
        url: String,
        /// The innermost cause.
        detail: String,
    },
    /// The request was sent but no response came within the first-byte timeout.
    #[error("the model server at {url} did not answer for {}", seconds(*.waited))]
    NoAnswer {
        /// The request's URL.
        url: String,
        /// How long it was waited on.
        waited: Duration,
    },
    /// The answer had started, then nothing came for the idle timeout.
    #[error(
        "the model server at {url} went silent for {} in the middle of its answer",
        seconds(*.waited)
    )]
    WentSilent {
        /// The request's URL.
        url: String,
        /// How long it was quiet.
        waited: Duration,
    },
    /// The server answered with an error status.
    #[error("HTTP {status} from {url}: {excerpt}{}", status_hint(*.status))]
    Status {
        /// The request's URL.
        url: String,
        /// The status it answered.
        status: StatusCode,
        /// What its body says, shortened and safe to print.
        excerpt: String,
    },
    /// The request failed another way (the connection dropped while it was sent, …).
    #[error("could not reach {url}: {detail}")]
    Other {
        /// The request's URL.
        url: String,
        /// The error's causes.
        detail: String,
    },
}

impl RequestError {
    /// What a failed send of a request to `url` means, read from reqwest's error chain.
    pub fn classify(url: &str, error: &reqwest::Error) -> Self {
        let url = shown_url(url);
        let causes = causes(error);
        let innermost = causes
            .last()
            .map(ToString::to_string)
            .unwrap_or_else(|| error.to_string());
        if causes
            .iter()
            .any(|e| io_kind(*e) == Some(io::ErrorKind::ConnectionRefused))
        {
            return RequestError::ConnectionRefused { url };
        }
        if let Some(tls) = causes
            .iter()
            .find_map(|e| e.downcast_ref::<rustls::Error>())
        {
            return RequestError::Tls {
                url,
                detail: tls.to_string(),
            };
        }
        if causes.iter().any(|e| is_dns(*e)) {
            return RequestError::Dns {
                url,
                detail: innermost,
            };
        }
        if error.is_connect() && error.is_timeout() {
            return RequestError::ConnectTimeout { url };
        }
        if error.is_connect() {
            return RequestError::Connect {
                url,
                detail: innermost,
            };
        }
        // The first cause is reqwest's "error sending request for url (…)": the URL is said
        // already.
        let detail = match causes.get(1..) {
            Some(rest) if !rest.is_empty() => rest
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(": "),
            _ => error.to_string(),
        };
        RequestError::Other { url, detail }
    }

    /// No response to `url` within `waited` (the first-byte timeout).
    pub fn no_answer(url: &str, waited: Duration) -> Self {
        RequestError::NoAnswer {
            url: shown_url(url),
            waited,
        }
    }

    /// The answer from `url` stopped for `waited` (the idle timeout).
    pub fn went_silent(url: &str, waited: Duration) -> Self {
        RequestError::WentSilent {
            url: shown_url(url),
            waited,
        }
    }

    /// An error status answered to `url`, with what its `body` says.
    pub fn status(url: &str, status: StatusCode, body: &[u8]) -> Self {
        RequestError::Status {
            url: shown_url(url),
            status,
            excerpt: crate::http::error_excerpt(body),
        }
    }

    /// Whether sending the request again may help: not for a TLS failure (a certificate or
    /// a plain-HTTP server does not change within seconds) nor a status that is the
    /// request's fault.
    pub fn is_retryable(&self) -> bool {
        match self {
            RequestError::Tls { .. } => false,
            RequestError::Status { status, .. } => super::retry::is_retryable_status(*status),
            _ => true,
        }
    }

    /// Whether the server went quiet (these retries have their own cap).
    pub fn is_stall(&self) -> bool {
        matches!(
            self,
            RequestError::NoAnswer { .. } | RequestError::WentSilent { .. }
        )
    }
}

/// `url` as messages show it: a password in it is hidden.
pub(crate) fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// `error` and its causes, outermost first. `io::Error::source` skips the error it wraps
/// (where rustls's and the resolver's errors sit), so that one is taken instead.
fn causes<'a>(error: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut out = Vec::new();
    let mut next = Some(error);
    // Bounded: a cycle in a hand-written source() must not hang a failing request.
    while let Some(e) = next.filter(|_| out.len() < 32) {
        out.push(e);
        next = match e.downcast_ref::<io::Error>().and_then(io::Error::get_ref) {
            Some(inner) => Some(inner),
            None => e.source(),
        };
    }
    out
}

fn io_kind(error: &(dyn StdError + 'static)) -> Option<io::ErrorKind> {
    error.downcast_ref::<io::Error>().map(io::Error::kind)
}

/// hyper-util names a failed name resolution "dns error"; getaddrinfo's own words start
/// "failed to lookup address".
fn is_dns(error: &(dyn StdError + 'static)) -> bool {
    let text = error.to_string();
    text.starts_with("dns error") || text.contains("failed to lookup address")
}

/// What to check for a status, after the server's own words.
fn status_hint(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "; is the API key right?",
        403 => "; is the API key right, and may it use this model?",
        404 => "; is the base URL right, and does the server serve this model?",
        429 => "; the server is rate limiting, or the account is out of quota",
        500..=599 => "; the server itself failed (try again later, or see its log)",
        _ => "",
    }
}

/// A duration for people: `90 s`, `0.2 s`.
fn seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// The error of one POST to `url` by the providers' client.
    async fn send_error(url: &str) -> reqwest::Error {
        let client = crate::http::client(Duration::from_secs(30)).unwrap();
        match client.post(url).body("{}").send().await {
            Ok(response) => panic!("{url} answered {}", response.status()),
            Err(e) => e,
        }
    }

    /// A loopback port nothing listens on.
    fn closed_port() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        port
    }

    #[tokio::test]
    async fn a_closed_port_is_connection_refused_with_the_url_and_a_hint() {
        let url = format!("http://127.0.0.1:{}/v1/chat/completions", closed_port());
        let error = RequestError::classify(&url, &send_error(&url).await);
        assert_eq!(error, RequestError::ConnectionRefused { url: url.clone() });
        assert_eq!(
            error.to_string(),
            format!(
                "connection refused by {url}; is the model server running, and is the base \
                 URL right?"
            )
        );
        assert!(error.is_retryable());
    }

    #[tokio::test]
    async fn a_host_that_does_not_resolve_is_a_lookup_failure() {
        // `.invalid` never resolves (RFC 2606).
        let url = "http://nonexistent.invalid/v1/messages";
        let error = RequestError::classify(url, &send_error(url).await);
        let RequestError::Dns { url: said, detail } = &error else {
            panic!("not a lookup failure: {error:?}");
        };
        assert_eq!(said, url);
        assert!(!detail.is_empty());
        assert!(
            error
                .to_string()
                .starts_with("cannot look up the host of http://nonexistent.invalid/v1/messages"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn https_to_a_plain_http_server_is_a_tls_failure_not_retried() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        // A plain HTTP server: whatever arrives is answered in clear text.
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf).await;
                let _ = stream
                    .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                    .await;
            }
        });
        let url = format!("https://127.0.0.1:{port}/v1/chat/completions");
        let error = RequestError::classify(&url, &send_error(&url).await);
        assert!(
            matches!(&error, RequestError::Tls { url: said, .. } if *said == url),
            "{error:?}"
        );
        assert!(error.to_string().contains("http://"), "{error}");
        assert!(!error.is_retryable());
    }

    #[test]
    fn statuses_name_the_url_the_body_and_what_to_check() {
        let url = "http://127.0.0.1:1/v1/chat/completions";
        let unauthorized = RequestError::status(
            url,
            StatusCode::UNAUTHORIZED,
            br#"{"error":{"message":"invalid x-api-key"}}"#,
        );
        assert_eq!(
            unauthorized.to_string(),
            format!("HTTP 401 Unauthorized from {url}: invalid x-api-key; is the API key right?")
        );
        assert!(!unauthorized.is_retryable());
        let failed = RequestError::status(
            url,
            StatusCode::BAD_GATEWAY,
            b"<html><head><title>502 Bad Gateway</title></head></html>",
        );
        assert_eq!(
            failed.to_string(),
            format!(
                "HTTP 502 Bad Gateway from {url}: 502 Bad Gateway; the server itself failed \
                 (try again later, or see its log)"
            )
        );
        assert!(failed.is_retryable());
        let bad = RequestError::status(url, StatusCode::BAD_REQUEST, b"");
        assert_eq!(
            bad.to_string(),
            format!("HTTP 400 Bad Request from {url}: (empty body)")
        );
    }

    #[test]
    fn a_password_in_the_url_is_not_shown() {
        let error = RequestError::status(
            "https://me:secret@example.com/v1/messages",
            StatusCode::FORBIDDEN,
            b"no",
        );
        let text = error.to_string();
        assert!(!text.contains("secret"), "{text}");
        assert!(
            text.contains("https://me:***@example.com/v1/messages"),
            "{text}"
        );
    }

    #[test]
    fn timeouts_say_how_long_and_where() {
        let url = "http://10.0.0.1:8080/v1/chat/completions".to_string();
        let quiet = RequestError::no_answer(&url, Duration::from_millis(300));
        assert_eq!(
            quiet.to_string(),
            format!("the model server at {url} did not answer for 0.3 s")
        );
        assert!(quiet.is_stall() && quiet.is_retryable());
        let silent = RequestError::went_silent(&url, Duration::from_secs(300));
        assert_eq!(
            silent.to_string(),
            format!("the model server at {url} went silent for 300 s in the middle of its answer")
        );
        assert!(!RequestError::ConnectTimeout { url }.is_stall());
    }
}
