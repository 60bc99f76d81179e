//! Web search through the API the user configured (`[web.search]`): Brave, Tavily, Exa or a
//! SearXNG instance, each answer read into the same hits (title, URL, snippet).

use std::time::Duration;

use march_core::config::{SearchProviderName, WebConfig};
use reqwest::Url;
use serde_json::{Value, json};

/// Most results one search returns.
pub const MAX_RESULTS: usize = 20;
/// Snippets longer than this many characters are cut.
const MAX_SNIPPET_CHARS: usize = 500;

/// One search result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Hit {
    /// The page's title.
    pub title: String,
    /// Its address.
    pub url: String,
    /// What the provider says of it, as plain text.
    pub snippet: String,
}

/// Why a search has no results.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    /// `[web.search]` names a provider that cannot be used as configured.
    #[error("{0}")]
    Setup(String),
    /// The request did not get an answer.
    #[error("{0}")]
    Request(String),
    /// The API answered with an error status.
    #[error("the search API answered {status}: {excerpt}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of its body.
        excerpt: String,
    },
    /// The answer is not what the API sends.
    #[error("the search API's answer is not readable: {0}")]
    Answer(String),
}

/// The configured search API.
#[derive(Clone)]
pub struct SearchApi {
    provider: SearchProviderName,
    endpoint: Url,
    key: Option<String>,
    /// Results unless the model asks for another number.
    pub results: usize,
    /// How long one search may take.
    pub timeout: Duration,
}

impl std::fmt::Debug for SearchApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key: a debug print or a log line could carry it.
        f.debug_struct("SearchApi")
            .field("provider", &self.provider)
            .field("endpoint", &self.endpoint.as_str())
            .finish_non_exhaustive()
    }
}

impl SearchApi {
    /// The API `[web.search]` configures, its key read with `env`; `None` without a
    /// provider.
    pub fn from_config(
        config: &WebConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<SearchApi>, SearchError> {
        let search = &config.search;
        let Some(provider) = search.provider else {
            return Ok(None);
        };
        let name = provider_name(provider);
        let base = match (&search.url, provider) {
            (Some(url), _) => url.as_str(),
            (None, SearchProviderName::Brave) => "https://api.search.brave.com",
            (None, SearchProviderName::Tavily) => "https://api.tavily.com",
            (None, SearchProviderName::Exa) => "https://api.exa.ai",
            (None, SearchProviderName::Searxng) => {
                return Err(SearchError::Setup(
                    "[web.search] provider \"searxng\" needs the instance's url".into(),
                ));
            }
        };
        let path = match provider {
            SearchProviderName::Brave => "res/v1/web/search",
            _ => "search",
        };
        let endpoint = Url::parse(&format!("{}/", base.trim_end_matches('/')))
            .and_then(|b| b.join(path))
            .map_err(|e| SearchError::Setup(format!("[web.search] url {base}: {e}")))?;
        let key_env = search.api_key_env.as_deref().or(provider.default_key_env());
        let key = match key_env {
            Some(var) => match env(var).filter(|k| !k.trim().is_empty()) {
                Some(key) => Some(key.trim().to_string()),
                None => {
                    return Err(SearchError::Setup(format!(
                        "[web.search] provider \"{name}\" needs its key in ${var}"
                    )));
                }
            },
            None => None,
        };
        Ok(Some(SearchApi {
            provider,
            endpoint,
            key,
            results: search.results.clamp(1, MAX_RESULTS),
            timeout: Duration::from_secs(config.timeout_secs.max(1)),
        }))
    }

    /// The provider's name as the config spells it.
    pub fn provider(&self) -> &'static str {
        provider_name(self.provider)
    }

    /// Up to `count` results for `query`.
    pub async fn search(
        &self,
        client: &reqwest::Client,
        query: &str,
        count: usize,
    ) -> Result<Vec<Hit>, SearchError> {
        let count = count.clamp(1, MAX_RESULTS);
        let key = self.key.as_deref().unwrap_or_default();
        let request = match self.provider {
            SearchProviderName::Brave => client
                .get(self.with_query(&[("q", query), ("count", &count.to_string())]))
                .header("X-Subscription-Token", key),
            SearchProviderName::Tavily => client
                .post(self.endpoint.clone())
                .bearer_auth(key)
                .json(&json!({ "query": query, "max_results": count })),
            SearchProviderName::Exa => client
                .post(self.endpoint.clone())
                .header("x-api-key", key)
                .json(&json!({
                    "query": query,
                    "numResults": count,
                    "contents": { "text": { "maxCharacters": MAX_SNIPPET_CHARS } },
                })),
            SearchProviderName::Searxng => {
                client.get(self.with_query(&[("q", query), ("format", "json")]))
            }
        };
        let response = request
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|e| SearchError::Request(super::fetch::error_chain(&e)))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| SearchError::Request(super::fetch::error_chain(&e)))?;
        if !status.is_success() {
            return Err(SearchError::Status {
                status: status.as_u16(),
                excerpt: march_core::http::error_excerpt(&body),
            });
        }
        let answer: Value =
            serde_json::from_slice(&body).map_err(|e| SearchError::Answer(e.to_string()))?;
        let mut hits = hits(self.provider, &answer)?;
        hits.truncate(count);
        Ok(hits)
    }
}

impl SearchApi {
    fn with_query(&self, pairs: &[(&str, &str)]) -> Url {
        let mut url = self.endpoint.clone();
        url.query_pairs_mut().extend_pairs(pairs);
        url
    }
}

fn provider_name(provider: SearchProviderName) -> &'static str {
    match provider {
        SearchProviderName::Brave => "brave",
        SearchProviderName::Tavily => "tavily",
        SearchProviderName::Exa => "exa",
        SearchProviderName::Searxng => "searxng",
    }
}

/// The results of one provider's answer.
fn hits(provider: SearchProviderName, answer: &Value) -> Result<Vec<Hit>, SearchError> {
    let (list, snippet_of): (_, fn(&Value) -> String) = match provider {
        // Brave marks the words matched with HTML (`<strong>`) and escapes entities.
        SearchProviderName::Brave => (&answer["web"]["results"], |r| {
            html_text(r["description"].as_str().unwrap_or_default())
        }),
        SearchProviderName::Tavily => (&answer["results"], |r| text(&r["content"])),
        SearchProviderName::Exa => (&answer["results"], |r| {
            let highlights: Vec<&str> = r["highlights"]
                .as_array()
                .map(|h| h.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if highlights.is_empty() {
                text(&r["summary"]).or_if_empty(|| text(&r["text"]))
            } else {
                clean(&highlights.join(" … "))
            }
        }),
        SearchProviderName::Searxng => (&answer["results"], |r| text(&r["content"])),
    };
    // Brave leaves `web` out when nothing matched.
    if list.is_null() && provider == SearchProviderName::Brave && answer.is_object() {
        return Ok(Vec::new());
    }
    let list = list
        .as_array()
        .ok_or_else(|| SearchError::Answer(format!("no list of results in {}", excerpt(answer))))?;
    Ok(list
        .iter()
        .filter_map(|r| {
            let url = r["url"].as_str()?.to_string();
            let title = text(&r["title"]).or_if_empty(|| url.clone());
            Some(Hit {
                title,
                url,
                snippet: snippet_of(r),
            })
        })
        .collect())
}

trait OrIfEmpty {
    fn or_if_empty(self, other: impl FnOnce() -> String) -> String;
}

impl OrIfEmpty for String {
    fn or_if_empty(self, other: impl FnOnce() -> String) -> String {
        if self.is_empty() { other() } else { self }
    }
}

/// A JSON string as one clean line (anything else is empty).
fn text(value: &Value) -> String {
    clean(value.as_str().unwrap_or_default())
}

/// HTML text (tags and entities) as plain text.
fn html_text(html: &str) -> String {
    let page = super::page::readable(html, None);
    clean(&page.markdown.replace("**", ""))
}

/// Whitespace collapsed, control characters out, at most [`MAX_SNIPPET_CHARS`].
fn clean(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let line: String = words
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    match line.char_indices().nth(MAX_SNIPPET_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

fn excerpt(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_testkit::{PageReply, PageServer};

    /// `[web.search]` for `provider` at `url`, its key in `KEY_VAR`.
    fn api(provider: &str, url: &str) -> SearchApi {
        let config = march_core::config::Config::parse(
            &format!(
                "[web.search]\nprovider = \"{provider}\"\nurl = \"{url}\"\n\
                 api_key_env = \"KEY_VAR\"\nresults = 2\n"
            ),
            std::path::Path::new("config.toml"),
        )
        .unwrap();
        let env = |var: &str| (var == "KEY_VAR").then(|| "secret-key".to_string());
        SearchApi::from_config(&config.web, env).unwrap().unwrap()
    }

    async fn serving(path: &str, body: Value) -> PageServer {
        let reply = PageReply::ok("application/json", body.to_string());
        PageServer::start([(path.to_string(), reply)].into_iter().collect())
            .await
            .unwrap()
    }

    fn client() -> reqwest::Client {
        march_core::http::client(Duration::from_secs(5)).unwrap()
    }

    fn body_json(body: &[u8]) -> Value {
        serde_json::from_slice(body).unwrap()
    }

    #[tokio::test]
    async fn brave_is_asked_by_get_with_its_token_and_its_html_made_text() {
        let server = serving(
            "/res/v1/web/search",
            json!({"type": "search", "web": {"type": "search", "results": [
                {"title": "Rust &amp; Cargo", "url": "https://www.rust-lang.org/",
                 "description": "Build <strong>reliable</strong> and\n efficient software."},
                {"title": "", "url": "https://doc.rust-lang.org/"},
                {"title": "dropped: beyond the count", "url": "https://example.org/"}
            ]}}),
        )
        .await;
        let api = api("brave", &server.url(""));
        let hits = api.search(&client(), "rust lang", 2).await.unwrap();
        assert_eq!(
            hits,
            [
                Hit {
                    title: "Rust &amp; Cargo".into(),
                    url: "https://www.rust-lang.org/".into(),
                    snippet: "Build reliable and efficient software.".into(),
                },
                Hit {
                    title: "https://doc.rust-lang.org/".into(),
                    url: "https://doc.rust-lang.org/".into(),
                    snippet: String::new(),
                },
            ]
        );
        let sent = &server.requests()[0];
        assert_eq!(sent.method, "GET");
        assert_eq!(sent.target, "/res/v1/web/search?q=rust+lang&count=2");
        assert_eq!(sent.header("x-subscription-token"), Some("secret-key"));
        assert_eq!(sent.header("accept"), Some("application/json"));
        // Nothing matched: Brave leaves `web` out.
        let empty = serving("/res/v1/web/search", json!({"type": "search"})).await;
        let none = api_for(&empty, "brave").search(&client(), "zzz", 5).await;
        assert_eq!(none.unwrap(), []);
    }

    fn api_for(server: &PageServer, provider: &str) -> SearchApi {
        api(provider, &server.url(""))
    }

    #[tokio::test]
    async fn tavily_exa_and_searxng_read_into_the_same_hits() {
        let tavily = serving(
            "/search",
            json!({"query": "q", "results": [
                {"title": "Vec<T>", "url": "https://t.example/", "content": "A vector <T> of things", "score": 0.9}
            ]}),
        )
        .await;
        let hits = api_for(&tavily, "tavily")
            .search(&client(), "vectors", 5)
            .await
            .unwrap();
        // Tavily's text is plain: angle brackets stay.
        assert_eq!(hits[0].title, "Vec<T>");
        assert_eq!(hits[0].snippet, "A vector <T> of things");
        let sent = &tavily.requests()[0];
        assert_eq!(sent.method, "POST");
        assert_eq!(sent.header("authorization"), Some("Bearer secret-key"));
        assert_eq!(
            body_json(&sent.body),
            json!({"query": "vectors", "max_results": 5})
        );

        let exa = serving(
            "/search",
            json!({"results": [
                {"title": "Highlights", "url": "https://e.example/1", "highlights": ["one", "two"]},
                {"title": "Text", "url": "https://e.example/2", "text": "the page's\ttext"}
            ]}),
        )
        .await;
        let hits = api_for(&exa, "exa")
            .search(&client(), "exa", 2)
            .await
            .unwrap();
        assert_eq!(hits[0].snippet, "one … two");
        assert_eq!(hits[1].snippet, "the page's text");
        let sent = &exa.requests()[0];
        assert_eq!(sent.header("x-api-key"), Some("secret-key"));
        let body = body_json(&sent.body);
        assert_eq!(
            (body["query"].as_str(), body["numResults"].as_u64()),
            (Some("exa"), Some(2))
        );

        let searx = serving(
            "/search",
            json!({"query": "q", "results": [
                {"title": "S", "url": "https://s.example/", "content": "snippet", "engine": "ddg"}
            ]}),
        )
        .await;
        let hits = api_for(&searx, "searxng")
            .search(&client(), "é & more", 5)
            .await
            .unwrap();
        assert_eq!(hits[0].snippet, "snippet");
        let sent = &searx.requests()[0];
        assert_eq!(sent.target, "/search?q=%C3%A9+%26+more&format=json");
    }

    #[tokio::test]
    async fn failures_say_what_they_are() {
        let refused = PageServer::start(
            [(
                "/search".to_string(),
                PageReply::Page {
                    status: 401,
                    media_type: "application/json".into(),
                    body: br#"{"detail": {"error": "Unauthorized: missing or invalid API key."}}"#
                        .to_vec(),
                },
            )]
            .into_iter()
            .collect(),
        )
        .await
        .unwrap();
        let e = api_for(&refused, "tavily")
            .search(&client(), "q", 5)
            .await
            .unwrap_err();
        assert!(matches!(e, SearchError::Status { status: 401, .. }), "{e}");
        let garbled = PageServer::start(
            [(
                "/search".to_string(),
                PageReply::ok("application/json", "<html>"),
            )]
            .into_iter()
            .collect(),
        )
        .await
        .unwrap();
        let e = api_for(&garbled, "searxng")
            .search(&client(), "q", 5)
            .await
            .unwrap_err();
        assert!(matches!(e, SearchError::Answer(_)), "{e}");
        let shapeless = serving("/search", json!({"answer": "no list"})).await;
        let e = api_for(&shapeless, "exa")
            .search(&client(), "q", 5)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("no list of results"), "{e}");
    }

    #[test]
    fn the_table_decides_whether_and_where_search_goes() {
        let parse = |text: &str| {
            march_core::config::Config::parse(text, std::path::Path::new("config.toml"))
                .unwrap()
                .web
        };
        let none = SearchApi::from_config(&parse(""), |_| None).unwrap();
        assert!(none.is_none(), "no provider, no search");
        let brave = parse("[web.search]\nprovider = \"brave\"\n");
        let e = SearchApi::from_config(&brave, |_| None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "[web.search] provider \"brave\" needs its key in $BRAVE_API_KEY"
        );
        let env = |var: &str| (var == "BRAVE_API_KEY").then(|| " brave-secret ".to_string());
        let api = SearchApi::from_config(&brave, env).unwrap().unwrap();
        assert_eq!(
            api.endpoint.as_str(),
            "https://api.search.brave.com/res/v1/web/search"
        );
        assert_eq!(api.key.as_deref(), Some("brave-secret"));
        assert_eq!(api.results, 5);
        assert!(
            !format!("{api:?}").contains("brave-secret"),
            "a debug print keeps the key"
        );
        let searx = parse("[web.search]\nprovider = \"searxng\"\n");
        let e = SearchApi::from_config(&searx, |_| None).unwrap_err();
        assert!(e.to_string().contains("needs the instance's url"), "{e}");
        let proxied = parse(
            "[web.search]\nprovider = \"searxng\"\nurl = \"http://10.0.0.2/searx/\"\nresults = 99\n",
        );
        let api = SearchApi::from_config(&proxied, |_| None).unwrap().unwrap();
        assert_eq!(api.endpoint.as_str(), "http://10.0.0.2/searx/search");
        assert_eq!(api.results, MAX_RESULTS);
    }
}
