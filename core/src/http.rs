//! The one HTTP client setup shared by providers and model discovery.

use std::time::Duration;

/// Build a reqwest client with rustls (ring) and March's user agent.
///
/// `connect_timeout` bounds connection setup only; streams may run as long as the model talks.
pub fn client(connect_timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    client_builder(connect_timeout).build()
}

/// One [`client`] for the whole process, made at first use: for tools that call APIs the user
/// configured (a search provider, an images API), so TLS setup and connections are shared.
pub fn shared_client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, String>> =
        std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| client(Duration::from_secs(10)).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(Clone::clone)
}

/// Installs rustls's process-wide crypto provider (ring), which every TLS client needs before
/// it is built, ours or a library's (chromiumoxide's); installing twice is harmless.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The setup of [`client`], for clients that add to it (redirects, name resolution).
pub fn client_builder(connect_timeout: Duration) -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(concat!("march/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(connect_timeout)
}

/// A short, printable excerpt of an HTTP error body, for messages the user reads.
///
/// JSON errors yield their message, an HTML page its `<title>`, anything else its first
/// 200 characters without tags. Whitespace is collapsed and control characters dropped, so the
/// text is safe to draw in a terminal.
pub fn error_excerpt(body: &[u8]) -> String {
    const MAX: usize = 200;
    let body = String::from_utf8_lossy(body);
    let body = body.trim();
    if body.is_empty() {
        return "(empty body)".into();
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let message = ["/error/message", "/message", "/error", "/detail"]
            .iter()
            .find_map(|p| json.pointer(p).and_then(|v| v.as_str()));
        if let Some(message) = message {
            return truncate(&clean(message), MAX);
        }
    }
    if let Some(title) = html_title(body) {
        return truncate(&title, MAX);
    }
    let mut text = String::with_capacity(body.len().min(4 * MAX));
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => {
                in_tag = true;
                text.push(' ');
            }
            '>' if in_tag => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    truncate(&clean(&text), MAX)
}

/// The text of an HTML page's `<title>`, if it has a non-empty one.
fn html_title(body: &str) -> Option<String> {
    // ASCII lowercasing keeps byte offsets, so indices found in `lower` are valid in `body`.
    let lower = body.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')?;
    let close = start + lower[start..].find("</title")?;
    let title = clean(body.get(open_end + 1..close)?);
    (!title.is_empty()).then_some(title)
}

/// Collapse whitespace and drop control characters (escape sequences included).
fn clean(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::error_excerpt;

    #[test]
    fn excerpts_of_json_html_and_text() {
        let html = "<!DOCTYPE html><html><head><TITLE>401 Authorization\n Required</TITLE></head><body><h1>nope</h1></body></html>";
        assert_eq!(error_excerpt(html.as_bytes()), "401 Authorization Required");
        assert_eq!(error_excerpt(b"<p>Bad <b>key</b></p>"), "Bad key");
        assert_eq!(
            error_excerpt(br#"{"error":{"message":"Incorrect API key","type":"invalid"}}"#),
            "Incorrect API key"
        );
        assert_eq!(error_excerpt(br#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(error_excerpt(b"  "), "(empty body)");
        assert_eq!(
            error_excerpt("é".repeat(500).as_bytes()).chars().count(),
            201
        );
        assert_eq!(
            error_excerpt(b"\x1b[31mred\x1b[0m\nplain \xff"),
            "[31mred [0m plain \u{fffd}"
        );
    }
}
