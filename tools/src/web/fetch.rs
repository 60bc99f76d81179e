//! Fetching one URL for a reader: redirects followed one by one (each target checked by the
//! address guard, each reported), a time limit for the whole exchange, a size limit on the
//! body, and the body made readable by its type: HTML as markdown, text and JSON as they are;
//! PDFs and other binary bodies are refused with what they are.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, LOCATION};

use super::guard::{GuardedResolver, is_public, refusal};
use super::{charset, page};

/// How far a fetch may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FetchLimits {
    /// The body is cut here (and the result says so).
    pub max_bytes: usize,
    /// The whole exchange, redirects and body included.
    pub timeout: Duration,
    /// Redirects followed, at most.
    pub max_redirects: usize,
    /// Addresses that are not public may be reached (`[web] allow_private`).
    pub allow_private: bool,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            max_bytes: 5 << 20,
            timeout: Duration::from_secs(30),
            max_redirects: 10,
            allow_private: false,
        }
    }
}

impl FetchLimits {
    /// The limits the `[web]` table sets.
    pub fn from_config(config: &march_core::config::WebConfig) -> Self {
        FetchLimits {
            max_bytes: usize::try_from(config.max_kib.saturating_mul(1024)).unwrap_or(usize::MAX),
            timeout: Duration::from_secs(config.timeout_secs),
            allow_private: config.allow_private,
            ..FetchLimits::default()
        }
    }
}

/// A page fetched and made readable.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// Where the content came from, after redirects.
    pub url: String,
    /// The URLs redirected from, in order (the first is the one asked for).
    pub redirects: Vec<String>,
    /// The response's media type (`text/html`), without parameters.
    pub media_type: String,
    /// The page's title, for HTML.
    pub title: String,
    /// The content: markdown for HTML, else the text as sent.
    pub text: String,
    /// The body was longer than the limit and was cut.
    pub truncated: bool,
}

/// Why a fetch gave nothing to read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FetchError {
    /// Not a URL, or not one of http and https.
    #[error("{0}")]
    Url(String),
    /// The address guard refused the host.
    #[error("{0}")]
    Refused(String),
    /// More redirects than allowed.
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
    /// The time limit ran out.
    #[error("no complete answer within {}", span(.0))]
    Timeout(Duration),
    /// The server answered with an error status.
    #[error("the server answered {status}{}", if .excerpt.is_empty() { String::new() } else { format!(": {}", .excerpt) })]
    Status {
        /// The HTTP status.
        status: u16,
        /// What the error page says, briefly.
        excerpt: String,
    },
    /// A body that is not text.
    #[error("{media_type} is not text ({size}); web_fetch reads HTML, text and JSON")]
    NotText {
        /// Its media type.
        media_type: String,
        /// Its size as sent, or "size unknown".
        size: String,
    },
    /// The connection or the request failed.
    #[error("{0}")]
    Request(String),
}

/// Fetches web pages within limits.
#[derive(Clone)]
pub struct WebClient {
    client: reqwest::Client,
    limits: FetchLimits,
}

impl WebClient {
    /// A client for `limits`.
    pub fn new(limits: FetchLimits) -> Result<Self, FetchError> {
        let client = march_core::http::client_builder(Duration::from_secs(10))
            // Each redirect is followed here, so its target is checked and reported.
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(GuardedResolver {
                allow_private: limits.allow_private,
            }))
            .build()
            .map_err(|e| FetchError::Request(e.to_string()))?;
        Ok(WebClient { client, limits })
    }

    /// Fetches `url` and makes it readable.
    pub async fn fetch(&self, url: &str) -> Result<Fetched, FetchError> {
        tokio::time::timeout(self.limits.timeout, self.fetch_within(url))
            .await
            .map_err(|_| FetchError::Timeout(self.limits.timeout))?
    }

    async fn fetch_within(&self, url: &str) -> Result<Fetched, FetchError> {
        let mut url = self.checked(url)?;
        let mut redirects = Vec::new();
        let response = loop {
            let response = self
                .client
                .get(url.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "text/html,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5",
                )
                .send()
                .await
                .map_err(|e| FetchError::Request(error_chain(&e)))?;
            if !response.status().is_redirection() {
                break response;
            }
            let Some(to) = response
                .headers()
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
            else {
                break response;
            };
            if redirects.len() >= self.limits.max_redirects {
                return Err(FetchError::TooManyRedirects(self.limits.max_redirects));
            }
            let next = url
                .join(to)
                .map_err(|e| FetchError::Url(format!("bad redirect to {to}: {e}")))?;
            redirects.push(url.to_string());
            url = self.checked(next.as_str())?;
        };
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let media_type = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_lowercase();
        let declared = response.content_length();
        let (body, truncated) = self.body(response).await?;
        if !status.is_success() {
            return Err(FetchError::Status {
                status: status.as_u16(),
                excerpt: march_core::http::error_excerpt(&body),
            });
        }
        let kind = Kind::of(&media_type, &body);
        let (title, text) = match kind {
            Kind::Html => {
                // Parsing is CPU work that grows with the page: off the async threads.
                let at = url.clone();
                let page = tokio::task::spawn_blocking(move || {
                    page::readable(&charset::decode(&body, &content_type, true), Some(&at))
                })
                .await
                .map_err(|e| FetchError::Request(format!("reading the page failed: {e}")))?;
                (page.title, page.markdown)
            }
            Kind::Text => (String::new(), charset::decode(&body, &content_type, false)),
            Kind::Binary => {
                return Err(FetchError::NotText {
                    media_type: if media_type.is_empty() {
                        "a body without a media type".into()
                    } else {
                        media_type
                    },
                    size: declared.map_or("size unknown".into(), |n| format!("{n} bytes")),
                });
            }
        };
        Ok(Fetched {
            url: url.to_string(),
            redirects,
            media_type,
            title,
            text,
            truncated,
        })
    }

    /// `url` parsed, of http or https, and not a literal address the guard refuses (names
    /// are checked when they are resolved).
    fn checked(&self, url: &str) -> Result<Url, FetchError> {
        let parsed = Url::parse(url).map_err(|e| FetchError::Url(format!("{url}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(FetchError::Url(format!(
                "{url}: only http and https URLs are fetched"
            )));
        }
        let Some(host) = parsed.host_str() else {
            return Err(FetchError::Url(format!("{url}: no host")));
        };
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .ok();
        if let Some(ip) = literal
            && !self.limits.allow_private
            && !is_public(ip)
        {
            return Err(FetchError::Refused(refusal(&ip.to_string())));
        }
        Ok(parsed)
    }

    /// The body, cut at the size limit.
    async fn body(&self, response: reqwest::Response) -> Result<(Vec<u8>, bool), FetchError> {
        let max = self.limits.max_bytes;
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| FetchError::Request(error_chain(&e)))?;
            let room = max - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body, true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((body, false))
    }
}

/// What a body is, by its media type, else by a look at it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Html,
    Text,
    Binary,
}

impl Kind {
    fn of(media_type: &str, body: &[u8]) -> Kind {
        match media_type {
            "text/html" | "application/xhtml+xml" => Kind::Html,
            t if t.starts_with("text/")
                || t == "application/json"
                || t.ends_with("+json")
                || t == "application/xml"
                || t.ends_with("+xml")
                || t == "application/javascript" =>
            {
                Kind::Text
            }
            "" => {
                let head = &body[..body.len().min(1024)];
                // Invalid UTF-8 (not a character cut at the end of the look) or a NUL: binary.
                let invalid = std::str::from_utf8(head).is_err_and(|e| e.error_len().is_some());
                if invalid || head.contains(&0) {
                    return Kind::Binary;
                }
                let head = String::from_utf8_lossy(head).to_lowercase();
                if head.trim_start().starts_with("<!doctype html") || head.contains("<html") {
                    Kind::Html
                } else {
                    Kind::Text
                }
            }
            _ => Kind::Binary,
        }
    }
}

/// A time limit as people write it: seconds, or milliseconds under one.
fn span(limit: &Duration) -> String {
    if limit.as_secs() >= 1 {
        format!("{} s", limit.as_secs())
    } else {
        format!("{} ms", limit.as_millis())
    }
}

/// An error with its causes, which reqwest keeps apart (the guard's refusal is a cause).
pub(super) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_testkit::{PageReply, PageServer};

    const ARTICLE: &str = "<html><head><title>Release notes</title></head><body>\
        <nav>Home · Docs</nav><main><h1>Version 2</h1><p>Faster <em>parsing</em>.</p></main>\
        </body></html>";

    /// The pages the tests read, on loopback.
    async fn server() -> PageServer {
        let routes = [
            (
                "/article",
                PageReply::ok("text/html; charset=utf-8", ARTICLE),
            ),
            ("/old", PageReply::Redirect("/article".into())),
            ("/loop", PageReply::Redirect("/loop".into())),
            (
                "/json",
                PageReply::ok("application/json", r#"{"ok": true}"#),
            ),
            (
                "/latin",
                PageReply::ok(
                    "text/html; charset=iso-8859-1",
                    b"<main><p>caf\xe9 cr\xe8me</p></main>".to_vec(),
                ),
            ),
            (
                "/png",
                PageReply::ok("image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()),
            ),
            ("/pdf", PageReply::ok("application/pdf", "%PDF-1.7\n")),
            (
                "/missing",
                PageReply::Page {
                    status: 404,
                    media_type: "text/html".into(),
                    body: b"<html><title>No such page</title></html>".to_vec(),
                },
            ),
            ("/big", PageReply::Large { size: 50 << 20 }),
            ("/slow", PageReply::Stalled),
        ];
        PageServer::start(
            routes
                .into_iter()
                .map(|(p, r)| (p.to_string(), r))
                .collect(),
        )
        .await
        .unwrap()
    }

    fn local(limits: FetchLimits) -> WebClient {
        WebClient::new(FetchLimits {
            allow_private: true,
            ..limits
        })
        .unwrap()
    }

    #[tokio::test]
    async fn a_page_comes_as_markdown_with_its_title_and_redirects() {
        let pages = server().await;
        let web = local(FetchLimits::default());
        let page = web.fetch(&pages.url("/old")).await.unwrap();
        assert_eq!(page.url, pages.url("/article"));
        assert_eq!(page.redirects, [pages.url("/old")]);
        assert_eq!(page.title, "Release notes");
        assert_eq!(page.media_type, "text/html");
        assert!(page.text.starts_with("# Version 2"), "{}", page.text);
        assert!(page.text.contains("*parsing*"), "{}", page.text);
        assert!(!page.text.contains("Home"), "{}", page.text);
        assert!(!page.truncated);
        let json = web.fetch(&pages.url("/json")).await.unwrap();
        assert_eq!(json.text, r#"{"ok": true}"#);
        let latin = web.fetch(&pages.url("/latin")).await.unwrap();
        assert_eq!(latin.text, "café crème");
    }

    #[tokio::test]
    async fn limits_hold_and_failures_say_what_they_are() {
        let pages = server().await;
        let web = local(FetchLimits {
            max_bytes: 1 << 20,
            timeout: Duration::from_secs(60),
            max_redirects: 3,
            allow_private: true,
        });
        let big = web.fetch(&pages.url("/big")).await.unwrap();
        assert!(big.truncated);
        assert_eq!(big.text.len(), 1 << 20);
        let looped = web.fetch(&pages.url("/loop")).await.unwrap_err();
        assert_eq!(looped, FetchError::TooManyRedirects(3));
        for (path, media) in [("/png", "image/png"), ("/pdf", "application/pdf")] {
            let e = web.fetch(&pages.url(path)).await.unwrap_err();
            assert!(
                matches!(&e, FetchError::NotText { media_type, .. } if media_type == media),
                "{e}"
            );
        }
        let missing = web.fetch(&pages.url("/missing")).await.unwrap_err();
        assert_eq!(missing.to_string(), "the server answered 404: No such page");
        let bad = web.fetch("file:///etc/passwd").await.unwrap_err();
        assert!(matches!(bad, FetchError::Url(_)), "{bad}");
        // A body that never ends runs into the time limit (which the server cannot meet).
        let stalled = local(FetchLimits {
            timeout: Duration::from_millis(300),
            ..FetchLimits::default()
        });
        let e = stalled.fetch(&pages.url("/slow")).await.unwrap_err();
        assert_eq!(e.to_string(), "no complete answer within 300 ms");
    }

    /// A real page saved under tests/fixtures/web (see its README for where each came from).
    fn fixture(name: &str) -> Vec<u8> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/web");
        std::fs::read(format!("{dir}/{name}")).unwrap()
    }

    #[tokio::test]
    async fn real_pages_read_as_their_main_content() {
        // (page, title, how the text starts, what it holds, what it must not: navigation,
        // scripts, icon links)
        let cases = [
            (
                "article.html",
                "What is Ownership? - The Rust Programming Language",
                "## What Is Ownership?\n\n*Ownership* is a set of rules",
                vec![
                    "### The Stack and the Heap",
                    "```rust\nfn main() {\n    let s1 = String::from(\"hello\");",
                ],
                vec!["Previous chapter", "Keyboard shortcuts", "path_to_root"],
            ),
            (
                "docs.html",
                "Option in std::option - Rust",
                "[std]({base}/index.html)::[option]({base}/index.html)\n\n# Enum Option",
                vec![
                    "#### pub const fn is\\_some(&self) -> [bool]({base}/primitive.bool.html)",
                    "assert_eq!(x.is_some(), true);",
                ],
                vec!["59807616e", "play.rust-lang.org", "](#"],
            ),
            (
                "scripts-nav.html",
                "HashMap - Rust By Example",
                "# HashMap\n\nWhere vectors store values by an integer index",
                vec!["contacts.insert(\"Daniel\", \"798-1364\");"],
                vec!["Print this book", "Search this book", "default_dark_theme"],
            ),
            (
                "landing.html",
                "Rust Documentation",
                "# Rust Documentation\n\nWelcome to an overview",
                vec!["[Rust API documentation]({base}/std/index.html)"],
                vec!["isExternalLink", "function"],
            ),
        ];
        let routes = cases.iter().map(|(name, ..)| {
            let reply = PageReply::ok("text/html; charset=utf-8", fixture(name));
            (format!("/{name}"), reply)
        });
        let pages = PageServer::start(routes.collect()).await.unwrap();
        let base = pages.url("");
        let web = local(FetchLimits::default());
        for (name, title, start, held, left) in cases {
            let page = web.fetch(&pages.url(&format!("/{name}"))).await.unwrap();
            let text = &page.text;
            assert_eq!(page.title, title);
            assert!(
                text.starts_with(&start.replace("{base}", &base)),
                "{name}: {text}"
            );
            for held in held {
                let held = held.replace("{base}", &base);
                assert!(text.contains(&held), "{name}: {held} in {text}");
            }
            for left in left {
                assert!(!text.contains(left), "{name}: {left} in {text}");
            }
        }
    }

    #[test]
    fn the_web_table_sets_the_limits() {
        let config = march_core::config::Config::parse(
            "[web]\nallow_private = true\nmax_kib = 64\ntimeout_secs = 5\n",
            std::path::Path::new("config.toml"),
        )
        .unwrap();
        assert_eq!(
            FetchLimits::from_config(&config.web),
            FetchLimits {
                max_bytes: 64 * 1024,
                timeout: Duration::from_secs(5),
                max_redirects: 10,
                allow_private: true,
            }
        );
        let defaults = march_core::config::WebConfig::default();
        assert_eq!(FetchLimits::from_config(&defaults), FetchLimits::default());
    }

    #[test]
    fn a_body_without_a_media_type_is_looked_at() {
        assert_eq!(Kind::of("", b"<!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(Kind::of("", b"plain words"), Kind::Text);
        assert_eq!(Kind::of("", b"\x89PNG\r\n\x1a\n\0"), Kind::Binary);
        assert_eq!(Kind::of("", b"caf\xe9 latin-1"), Kind::Binary);
        // A character cut at the end of the look is not a reason.
        let mut long = vec![b'a'; 1023];
        long.extend_from_slice("é and more".as_bytes());
        assert_eq!(Kind::of("", &long), Kind::Text);
        assert_eq!(Kind::of("application/vnd.api+json", b"{}"), Kind::Text);
        assert_eq!(Kind::of("application/octet-stream", b"text"), Kind::Binary);
    }

    #[tokio::test]
    async fn private_addresses_are_refused_unless_allowed() {
        let pages = server().await;
        let web = WebClient::new(FetchLimits::default()).unwrap();
        let literal = web.fetch(&pages.url("/article")).await.unwrap_err();
        assert!(matches!(literal, FetchError::Refused(_)), "{literal}");
        let base = pages.url("");
        let port = base.rsplit(':').next().unwrap();
        let named = web
            .fetch(&format!("http://localhost:{port}/article"))
            .await
            .unwrap_err();
        assert!(named.to_string().contains("allow_private"), "{named}");
        for url in ["http://[::1]/", "http://169.254.169.254/latest/meta-data/"] {
            let e = web.fetch(url).await.unwrap_err();
            assert!(matches!(e, FetchError::Refused(_)), "{url}: {e}");
        }
    }
}
