//! The tables of the capabilities a session is given beyond the coding tools: the web,
//! the browser, images, recall and memory (with the memory server).

use std::path::PathBuf;

use serde::Deserialize;

/// The `[images]` table; without a model `image_generate` is not offered.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct ImagesConfig {
    /// `provider/model` of an images API (`openai/gpt-image-1`, `xai/grok-2-image`); the
    /// provider's address and key are those of `[providers.NAME]`.
    pub model: Option<String>,
    /// The size asked for (`1024x1024`), unless the model asks for another; the API's default
    /// when unset.
    pub size: Option<String>,
    /// Where images are saved, relative to the project.
    pub dir: PathBuf,
    /// What one image costs in USD, counted into the session's cost; known models have a
    /// price built in.
    pub price_per_image: Option<f64>,
}

impl Default for ImagesConfig {
    fn default() -> Self {
        ImagesConfig {
            model: None,
            size: None,
            dir: PathBuf::from(".march/images"),
            price_per_image: None,
        }
    }
}

/// The `[browser]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct BrowserConfig {
    /// Chromium, Chrome or another Chromium-family browser; found on PATH when unset.
    pub executable: Option<PathBuf>,
    /// Show the browser's window (it runs headless otherwise).
    pub headed: bool,
    /// Drive the user's own browser, started with `--remote-debugging-port`, at this
    /// address (`http://127.0.0.1:9222`) instead of launching one.
    pub connect: Option<String>,
    /// The daemon stops after this many minutes without a request.
    pub idle_minutes: u64,
    /// The size of pages (and screenshots) in CSS pixels.
    pub width: u32,
    /// See `width`.
    pub height: u32,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        BrowserConfig {
            executable: None,
            headed: false,
            connect: None,
            idle_minutes: 15,
            width: 1280,
            height: 800,
        }
    }
}

/// The `[web]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WebConfig {
    /// Private, loopback and link-local addresses may be fetched (off: a page cannot send
    /// the agent into the user's own machine or network).
    pub allow_private: bool,
    /// A page's body is cut after this many KiB.
    pub max_kib: u64,
    /// Seconds one fetch may take, redirects and body included.
    pub timeout_secs: u64,
    /// The `[web.search]` table: the search provider `web_search` asks.
    pub search: WebSearchConfig,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            allow_private: false,
            max_kib: 5 * 1024,
            timeout_secs: 30,
            search: WebSearchConfig::default(),
        }
    }
}

/// A web search API March speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchProviderName {
    /// Brave Search's web search API (key in `BRAVE_API_KEY`).
    Brave,
    /// Tavily's search API (key in `TAVILY_API_KEY`).
    Tavily,
    /// Exa's search API (key in `EXA_API_KEY`).
    Exa,
    /// A SearXNG instance's JSON API (its `url`; no key).
    Searxng,
}

impl SearchProviderName {
    /// The environment variable its key is read from unless `api_key_env` names another.
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            SearchProviderName::Brave => Some("BRAVE_API_KEY"),
            SearchProviderName::Tavily => Some("TAVILY_API_KEY"),
            SearchProviderName::Exa => Some("EXA_API_KEY"),
            SearchProviderName::Searxng => None,
        }
    }
}

/// The `[web.search]` table; without a provider `web_search` is not offered.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WebSearchConfig {
    /// Which API answers searches.
    pub provider: Option<SearchProviderName>,
    /// The API's address: required for SearXNG (the instance), else it replaces the
    /// provider's own (a proxy).
    pub url: Option<String>,
    /// The environment variable holding the key, when not the provider's usual one.
    pub api_key_env: Option<String>,
    /// Results a search returns unless the model asks for another number (at most 20).
    pub results: usize,
}

impl Default for WebSearchConfig {
    fn default() -> Self {
        WebSearchConfig {
            provider: None,
            url: None,
            api_key_env: None,
            results: 5,
        }
    }
}

/// The `[recall]` table: earlier turns of the project recalled from the history index into
/// the context of a new prompt.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct RecallConfig {
    /// Whether prompts get recall hints.
    pub enabled: bool,
    /// Most turns recalled for one prompt.
    pub max_turns: usize,
    /// Most tokens (estimated as bytes / 4) the recalled turns may take.
    pub budget_tokens: u64,
}

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            enabled: true,
            max_turns: 3,
            budget_tokens: 1500,
        }
    }
}

/// The `[memory]` table: where project memory lives and how much of it the context carries.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct MemoryConfig {
    /// Whether memory is read into the context and the memory tool can use it.
    pub enabled: bool,
    /// The project memory file: relative to the project directory, or absolute.
    pub project_file: PathBuf,
    /// Most tokens (estimated as bytes / 4) of memory the system prompt carries.
    pub budget_tokens: u64,
    /// A memory server (`march memory serve` elsewhere) whose memory sessions use beside
    /// the local files, by its base URL (`https://host:7411`).
    pub remote: Option<String>,
    /// The `[memory.server]` table: how `march memory serve` serves.
    pub server: MemoryServerConfig,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            enabled: true,
            project_file: PathBuf::from(".march/memory.md"),
            budget_tokens: 4000,
            remote: None,
            server: MemoryServerConfig::default(),
        }
    }
}

/// The `[memory.server]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct MemoryServerConfig {
    /// The address to listen on.
    pub listen: String,
    /// The directory of the memory it serves (default: this machine's global memory).
    pub dir: Option<PathBuf>,
    /// A PEM certificate chain: with `tls_key`, the server speaks HTTPS only.
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of `tls_cert`.
    pub tls_key: Option<PathBuf>,
}

impl Default for MemoryServerConfig {
    fn default() -> Self {
        MemoryServerConfig {
            listen: "127.0.0.1:7411".into(),
            dir: None,
            tls_cert: None,
            tls_key: None,
        }
    }
}

/// The `[gateway]` table: how `march gateway` carries messages between the outside and a
/// workspace.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GatewayConfig {
    /// The workspace it serves, by name (default: the one used most recently).
    pub workspace: Option<String>,
    /// Where its HTTP API listens.
    pub listen: String,
    /// A URL each session's attention change is POSTed to, as JSON.
    pub webhook: Option<String>,
    /// The `[gateway.telegram]` table.
    pub telegram: TelegramConfig,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            workspace: None,
            listen: "127.0.0.1:7878".into(),
            webhook: None,
            telegram: TelegramConfig::default(),
        }
    }
}

/// The `[gateway.telegram]` table: the Telegram bot the gateway answers as (it runs when
/// the bot's token is kept: `march gateway token telegram`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct TelegramConfig {
    /// The Bot API's base URL.
    pub api: String,
    /// The senders heard: Telegram user ids, or `@username`s.
    pub allow: Vec<String>,
    /// Where a chat's first message opens a session (default: the workspace's first
    /// directory).
    pub project: Option<PathBuf>,
}

impl Default for TelegramConfig {
    fn default() -> Self {
        TelegramConfig {
            api: "https://api.telegram.org".into(),
            allow: Vec::new(),
            project: None,
        }
    }
}
