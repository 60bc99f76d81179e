//! The model registry: built-in providers merged with `config.toml`, credentials from
//! `auth.json` and the environment, and model discovery over HTTP.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use serde::Deserialize;

use super::{Api, Model, ModelCost, ReasoningFormat, builtin_providers};
use crate::auth::{AuthError, AuthStore};
use crate::config::{Config, ConfigError, ModelConfig, ProviderConfig};
use crate::paths::MarchPaths;

/// The `anthropic-version` header sent to Anthropic's API.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A provider with its connection settings and known models.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderInfo {
    /// Registry key, the `provider` in `provider/model-id`.
    pub name: String,
    /// Wire format.
    pub api: Api,
    /// Base URL including the version path, without a trailing slash.
    pub base_url: String,
    /// Environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// A server on this machine that needs no key and whose models are discovered.
    pub local: bool,
    /// Extra HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// How reasoning is requested from models that do not say otherwise.
    pub reasoning_format: ReasoningFormat,
    /// Known models, the suggested default first.
    pub models: Vec<Model>,
}

impl ProviderInfo {
    /// A model on this provider with the provider's defaults, for ids the catalog does not know.
    pub fn default_model(&self, id: &str) -> Model {
        let mut model = match self.api {
            Api::OpenAiCompletions => Model::openai_compatible(&self.name, id, &self.base_url),
            Api::AnthropicMessages => Model::anthropic(&self.name, id, &self.base_url),
        };
        model.reasoning_format = self.reasoning_format;
        model
    }

    /// The known model with this id.
    pub fn model(&self, id: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.id == id)
    }
}

/// Where a provider's API key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialSource {
    /// An `api_key` entry in `auth.json`.
    AuthFile,
    /// The named environment variable.
    Env(String),
    /// A local server that needs no key.
    NotNeeded,
    /// No key found; the environment variable to set, if the provider has one.
    Missing(Option<String>),
}

impl CredentialSource {
    /// Whether requests to the provider can be made.
    pub fn is_usable(&self) -> bool {
        !matches!(self, CredentialSource::Missing(_))
    }
}

/// Why the registry could not be built, a model not resolved or discovery failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// `config.toml` could not be read.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `auth.json` could not be read.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// A provider in `config.toml` is not built in and has no `api`.
    #[error(
        "provider `{provider}` in config.toml is not built in, so it needs \
         `api = \"openai-completions\"` or `api = \"anthropic-messages\"`"
    )]
    MissingApi {
        /// The provider name.
        provider: String,
    },
    /// A provider in `config.toml` is not built in and has no `base_url`.
    #[error("provider `{provider}` in config.toml is not built in, so it needs a `base_url`")]
    MissingBaseUrl {
        /// The provider name.
        provider: String,
    },
    /// No provider has this name.
    #[error("unknown provider `{provider}` (known: {})", known.join(", "))]
    UnknownProvider {
        /// The name asked for.
        provider: String,
        /// All provider names.
        known: Vec<String>,
    },
    /// The spec names no known model and no known provider.
    #[error(
        "unknown model `{spec}`: write it as `provider/model-id` with one of the providers {}",
        providers.join(", ")
    )]
    UnknownModel {
        /// The spec asked for.
        spec: String,
        /// All provider names.
        providers: Vec<String>,
    },
    /// A bare model id is offered by several providers.
    #[error("model `{id}` is offered by several providers; choose one of {}", candidates.join(", "))]
    AmbiguousModel {
        /// The bare id.
        id: String,
        /// `provider/id` for every match.
        candidates: Vec<String>,
    },
    /// The HTTP client could not be created.
    #[error("cannot set up the HTTP client: {0}")]
    Client(reqwest::Error),
    /// The server did not accept a connection.
    #[error("the server at {url} is not reachable ({detail})")]
    Unreachable {
        /// The URL requested.
        url: String,
        /// The underlying cause, e.g. "Connection refused".
        detail: String,
    },
    /// The server accepted the connection but did not answer in time.
    #[error("the server at {url} did not answer within {} s", timeout.as_secs_f64())]
    Timeout {
        /// The URL requested.
        url: String,
        /// The limit.
        timeout: Duration,
    },
    /// The request failed for another reason.
    #[error("request to {url} failed: {detail}")]
    Request {
        /// The URL requested.
        url: String,
        /// The underlying cause.
        detail: String,
    },
    /// The server answered with a non-success status.
    #[error("{url} answered HTTP {status}: {excerpt}")]
    Status {
        /// The URL requested.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// A short, tag-free excerpt of the body.
        excerpt: String,
    },
    /// The answer was not an OpenAI-style model list.
    #[error("{url} did not answer with a model list: {detail}")]
    BadModelList {
        /// The URL requested.
        url: String,
        /// What was wrong.
        detail: String,
    },
}

/// Providers and models from the built-in catalog and `config.toml`, with credentials.
#[derive(Debug, Clone)]
pub struct ModelRegistry {
    providers: Vec<ProviderInfo>,
    auth: AuthStore,
    /// Values of the providers' `api_key_env` variables, read once at construction so the
    /// registry is plain data that can be shared across tasks.
    env_keys: BTreeMap<String, String>,
}

impl ModelRegistry {
    /// Merge `config` into `builtins`, with keys from `auth` and from `env` (a variable lookup).
    pub fn new(
        builtins: Vec<ProviderInfo>,
        config: &Config,
        auth: AuthStore,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, RegistryError> {
        let mut providers = builtins;
        for (name, pc) in &config.providers {
            if let Some(existing) = providers.iter_mut().find(|p| &p.name == name) {
                apply_provider(existing, pc);
                continue;
            }
            let api = pc.api.ok_or_else(|| RegistryError::MissingApi {
                provider: name.clone(),
            })?;
            let base_url = pc
                .base_url
                .as_deref()
                .ok_or_else(|| RegistryError::MissingBaseUrl {
                    provider: name.clone(),
                })?;
            let mut info = ProviderInfo {
                name: name.clone(),
                api,
                base_url: base_url.trim_end_matches('/').to_string(),
                api_key_env: None,
                local: is_loopback(base_url),
                headers: BTreeMap::new(),
                reasoning_format: ReasoningFormat::default(),
                models: Vec::new(),
            };
            apply_provider(&mut info, pc);
            providers.push(info);
        }
        let env_keys = providers
            .iter()
            .filter_map(|p| p.api_key_env.as_deref())
            .filter_map(|var| Some((var.to_string(), env(var).filter(|v| !v.is_empty())?)))
            .collect();
        Ok(ModelRegistry {
            providers,
            auth,
            env_keys,
        })
    }

    /// Build the registry from `config.toml`, `auth.json` and the process environment.
    pub fn load(paths: &MarchPaths) -> Result<Self, RegistryError> {
        let config = Config::load(paths)?;
        let auth = AuthStore::load(paths)?;
        Self::new(builtin_providers(), &config, auth, |var| {
            std::env::var(var).ok()
        })
    }

    /// All providers: built-in ones in catalog order, then those added in `config.toml`.
    pub fn providers(&self) -> &[ProviderInfo] {
        &self.providers
    }

    /// The provider with this name.
    pub fn provider(&self, name: &str) -> Option<&ProviderInfo> {
        self.providers.iter().find(|p| p.name == name)
    }

    /// The known model `id` on `provider`.
    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        self.provider(provider)?.model(id)
    }

    /// Resolve `provider/model-id` or a bare model id to a model.
    ///
    /// The provider is split off at the first `/` (OpenRouter ids contain `/` themselves). An
    /// id that a known provider's catalog lacks still resolves, with the provider's defaults,
    /// so new and locally served models work before anyone lists them.
    pub fn resolve(&self, spec: &str) -> Result<Model, RegistryError> {
        let spec = spec.trim();
        let split = spec
            .split_once('/')
            .filter(|(p, id)| !id.is_empty() && self.provider(p).is_some());
        if let Some(model) = split.and_then(|(provider, id)| self.find(provider, id)) {
            return Ok(model.clone());
        }
        // `anthropic/claude-sonnet-4.5` is OpenRouter's id, not Anthropic's, so bare ids are
        // tried before falling back to a default model on the prefix provider.
        let matches: Vec<&Model> = self
            .providers
            .iter()
            .filter_map(|p| p.model(spec))
            .collect();
        match (matches.as_slice(), split) {
            ([model], _) => Ok((*model).clone()),
            ([], Some((provider, id))) => match self.provider(provider) {
                Some(info) => Ok(info.default_model(id)),
                None => Err(self.unknown_model(spec)),
            },
            ([], None) => Err(self.unknown_model(spec)),
            (many, _) => Err(RegistryError::AmbiguousModel {
                id: spec.to_string(),
                candidates: many
                    .iter()
                    .map(|m| format!("{}/{}", m.provider, m.id))
                    .collect(),
            }),
        }
    }

    /// The API key for `provider`: `auth.json` first, then its environment variable.
    pub fn api_key(&self, provider: &str) -> Option<String> {
        if let Some(key) = self.auth.get(provider) {
            return Some(key.to_string());
        }
        let var = self.provider(provider)?.api_key_env.as_deref()?;
        self.env_keys.get(var).cloned()
    }

    /// Where `provider`'s key would come from, for display and for deciding what to query.
    pub fn credential_source(&self, provider: &str) -> CredentialSource {
        if self.auth.get(provider).is_some() {
            return CredentialSource::AuthFile;
        }
        let Some(info) = self.provider(provider) else {
            return CredentialSource::Missing(None);
        };
        match &info.api_key_env {
            Some(var) if self.env_keys.contains_key(var) => CredentialSource::Env(var.clone()),
            _ if info.local => CredentialSource::NotNeeded,
            var => CredentialSource::Missing(var.clone()),
        }
    }

    /// The auth file keys are read from (to tell the user where to add one).
    pub fn auth_file(&self) -> &std::path::Path {
        self.auth.path()
    }

    /// The model to use when none is chosen: `default_model` from the config, else the first
    /// model of the first provider with a key; `None` when nothing is usable.
    pub fn default_model(&self, config: &Config) -> Result<Option<Model>, RegistryError> {
        if let Some(spec) = &config.default_model {
            return self.resolve(spec).map(Some);
        }
        Ok(self
            .providers
            .iter()
            .filter(|p| {
                matches!(
                    self.credential_source(&p.name),
                    CredentialSource::AuthFile | CredentialSource::Env(_)
                )
            })
            .find_map(|p| p.models.first().cloned()))
    }

    /// Ask `provider`'s server which models it serves (`GET {base_url}/models`).
    ///
    /// Ids the registry knows keep their data; others get the provider's defaults.
    pub async fn discover(
        &self,
        provider: &str,
        timeout: Duration,
    ) -> Result<Vec<Model>, RegistryError> {
        let info = self
            .provider(provider)
            .ok_or_else(|| RegistryError::UnknownProvider {
                provider: provider.to_string(),
                known: self.provider_names(),
            })?;
        let url = format!("{}/models", info.base_url);
        let client = crate::http::client(timeout).map_err(RegistryError::Client)?;
        let key = self.api_key(provider);
        let mut request = match info.api {
            Api::OpenAiCompletions => {
                let request = client.get(&url);
                match key {
                    Some(key) => request.bearer_auth(key),
                    None => request,
                }
            }
            Api::AnthropicMessages => {
                // Anthropic pages the list (20 by default); one large page is enough.
                let request = client
                    .get(format!("{url}?limit=1000"))
                    .header("anthropic-version", ANTHROPIC_VERSION);
                match key {
                    Some(key) => request.header("x-api-key", key),
                    None => request,
                }
            }
        };
        for (name, value) in &info.headers {
            request = request.header(name, value);
        }
        let response = request
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| request_error(e, &url, &info.base_url, timeout))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| request_error(e, &url, &info.base_url, timeout))?;
        if !status.is_success() {
            return Err(RegistryError::Status {
                url,
                status: status.as_u16(),
                excerpt: body_excerpt(&body),
            });
        }
        let list: ModelList =
            serde_json::from_str(&body).map_err(|e| RegistryError::BadModelList {
                url: url.clone(),
                detail: e.to_string(),
            })?;
        let mut entries = list.data;
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        entries.dedup_by(|a, b| a.id == b.id);
        Ok(entries
            .into_iter()
            .map(|entry| match info.model(&entry.id) {
                Some(known) => known.clone(),
                None => {
                    let mut model = info.default_model(&entry.id);
                    if let Some(name) = entry.display_name.filter(|n| !n.is_empty()) {
                        model.name = name;
                    }
                    model
                }
            })
            .collect())
    }

    fn provider_names(&self) -> Vec<String> {
        self.providers.iter().map(|p| p.name.clone()).collect()
    }

    fn unknown_model(&self, spec: &str) -> RegistryError {
        RegistryError::UnknownModel {
            spec: spec.to_string(),
            providers: self.provider_names(),
        }
    }
}

/// The OpenAI-style model list (`{"data": [{"id": …}]}`), which Anthropic also follows.
#[derive(Deserialize)]
struct ModelList {
    data: Vec<ModelEntry>,
}

#[derive(Deserialize)]
struct ModelEntry {
    id: String,
    #[serde(default)]
    display_name: Option<String>,
}

/// Merge one `[providers.<name>]` table into a provider.
fn apply_provider(info: &mut ProviderInfo, pc: &ProviderConfig) {
    if let Some(api) = pc.api {
        info.api = api;
        info.models.iter_mut().for_each(|m| m.api = api);
    }
    if let Some(url) = &pc.base_url {
        info.base_url = url.trim_end_matches('/').to_string();
        let base = info.base_url.clone();
        info.models
            .iter_mut()
            .for_each(|m| m.base_url = base.clone());
    }
    if let Some(var) = &pc.api_key_env {
        info.api_key_env = Some(var.clone());
    }
    info.headers
        .extend(pc.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
    if let Some(format) = pc.reasoning_format {
        // Models that differ from the provider's old format chose theirs explicitly; keep it.
        let old = std::mem::replace(&mut info.reasoning_format, format);
        info.models
            .iter_mut()
            .filter(|m| m.reasoning_format == old)
            .for_each(|m| m.reasoning_format = format);
    }
    for mc in &pc.models {
        match info.models.iter_mut().find(|m| m.id == mc.id) {
            Some(model) => apply_model(model, mc),
            None => {
                let mut model = info.default_model(&mc.id);
                apply_model(&mut model, mc);
                info.models.push(model);
            }
        }
    }
}

/// Overwrite the fields a config model entry sets.
fn apply_model(model: &mut Model, mc: &ModelConfig) {
    if let Some(name) = &mc.name {
        model.name = name.clone();
    }
    if let Some(reasoning) = mc.reasoning {
        model.reasoning = reasoning;
    }
    if let Some(images) = mc.images {
        model.images = images;
    }
    if let Some(window) = mc.context_window {
        model.context_window = window;
    }
    if let Some(max) = mc.max_tokens {
        model.max_tokens = max;
    }
    if let Some(format) = mc.reasoning_format {
        model.reasoning_format = format;
    }
    if let Some(cost) = mc.cost {
        let ModelCost {
            input,
            output,
            cache_read,
            cache_write,
        } = model.cost;
        model.cost = ModelCost {
            input: cost.input.unwrap_or(input),
            output: cost.output.unwrap_or(output),
            cache_read: cost.cache_read.unwrap_or(cache_read),
            cache_write: cost.cache_write.unwrap_or(cache_write),
        };
    }
}

/// Whether a base URL points at this machine (such a custom provider needs no key).
fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    match url.host_str() {
        Some("localhost") => true,
        Some(host) => host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}

/// Classify a request failure; `base_url` names the server when it cannot be reached.
fn request_error(e: reqwest::Error, url: &str, base_url: &str, timeout: Duration) -> RegistryError {
    // The innermost cause ("Connection refused (os error 111)") is what the user needs.
    let mut cause: &dyn std::error::Error = &e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let detail = cause.to_string();
    if e.is_connect() {
        RegistryError::Unreachable {
            url: base_url.to_string(),
            detail,
        }
    } else if e.is_timeout() {
        RegistryError::Timeout {
            url: url.to_string(),
            timeout,
        }
    } else {
        RegistryError::Request {
            url: url.to_string(),
            detail,
        }
    }
}

/// A short, readable excerpt of an error body: the API's error message for JSON, the
/// `<title>` of an HTML page, else the first 200 characters without tags.
fn body_excerpt(body: &str) -> String {
    const MAX: usize = 200;
    let body = body.trim();
    if body.is_empty() {
        return "(empty body)".into();
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let message = json
            .pointer("/error/message")
            .or_else(|| json.get("message"))
            .or_else(|| json.get("error"))
            .and_then(|v| v.as_str());
        if let Some(message) = message {
            return truncate(&collapse_whitespace(message), MAX);
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
    truncate(&collapse_whitespace(&text), MAX)
}

/// The text of an HTML page's `<title>`, if it has a non-empty one.
fn html_title(body: &str) -> Option<String> {
    // ASCII lowercasing keeps byte offsets, so indices found in `lower` are valid in `body`.
    let lower = body.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')?;
    let close = start + lower[start..].find("</title")?;
    let title = collapse_whitespace(body.get(open_end + 1..close)?);
    (!title.is_empty()).then_some(title)
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.get(name).cloned()
    }

    fn config(text: &str) -> Config {
        Config::parse(text, Path::new("config.toml")).unwrap()
    }

    fn registry(text: &str, vars: &[(&str, &str)]) -> ModelRegistry {
        ModelRegistry::new(
            builtin_providers(),
            &config(text),
            AuthStore::empty("/nonexistent/auth.json"),
            env(vars),
        )
        .unwrap()
    }

    #[test]
    fn builtins_without_config() {
        let reg = registry("", &[]);
        assert_eq!(reg.providers().len(), builtin_providers().len());
        assert!(reg.find("openai", "gpt-4.1").is_some());
        assert!(reg.find("openai", "nope").is_none());
        assert!(reg.provider("ollama").unwrap().local);
    }

    #[test]
    fn config_overrides_builtin_provider() {
        let reg = registry(
            r#"
[providers.openai]
base_url = "https://proxy.example/v1/"
api_key_env = "PROXY_KEY"
headers = { "X-Team" = "a" }

[[providers.openai.models]]
id = "gpt-4.1"
max_tokens = 1000
cost = { output = 9.5 }

[[providers.openai.models]]
id = "my-finetune"
reasoning = true
"#,
            &[("PROXY_KEY", "pk")],
        );
        let openai = reg.provider("openai").unwrap();
        assert_eq!(openai.base_url, "https://proxy.example/v1");
        assert_eq!(openai.headers["X-Team"], "a");
        let builtin = builtin_providers()
            .into_iter()
            .find(|p| p.name == "openai")
            .unwrap();
        assert_eq!(openai.models.len(), builtin.models.len() + 1);

        // Replaced: set fields change, the rest is inherited from the built-in entry.
        let gpt = reg.find("openai", "gpt-4.1").unwrap();
        let old = builtin.model("gpt-4.1").unwrap();
        assert_eq!(gpt.max_tokens, 1000);
        assert_eq!(gpt.cost.output, 9.5);
        assert_eq!(gpt.cost.input, old.cost.input);
        assert_eq!(gpt.context_window, old.context_window);
        assert_eq!(gpt.name, old.name);
        assert_eq!(gpt.base_url, "https://proxy.example/v1");

        // Added: provider defaults plus what is set.
        let ft = reg.find("openai", "my-finetune").unwrap();
        let defaults =
            Model::openai_compatible("openai", "my-finetune", "https://proxy.example/v1");
        assert_eq!(
            ft,
            &Model {
                reasoning: true,
                ..defaults
            }
        );
        assert_eq!(reg.api_key("openai").as_deref(), Some("pk"));
        assert_eq!(
            reg.credential_source("openai"),
            CredentialSource::Env("PROXY_KEY".into())
        );
    }

    #[test]
    fn provider_reasoning_format_respects_model_choices() {
        let reg = registry(
            "[providers.xai]\nreasoning_format = \"template-kwargs\"\n",
            &[],
        );
        // grok-4 chose `none` in the catalog; grok-3-mini followed the provider.
        assert_eq!(
            reg.find("xai", "grok-4").unwrap().reasoning_format,
            ReasoningFormat::None
        );
        assert_eq!(
            reg.find("xai", "grok-3-mini").unwrap().reasoning_format,
            ReasoningFormat::TemplateKwargs
        );
    }

    #[test]
    fn new_provider_needs_api() {
        let err = ModelRegistry::new(
            builtin_providers(),
            &config("[providers.together]\nbase_url = \"https://api.together.xyz/v1\"\n"),
            AuthStore::empty("a.json"),
            env(&[]),
        )
        .unwrap_err();
        assert!(matches!(err, RegistryError::MissingApi { .. }));
        assert!(err.to_string().contains("`together`"), "{err}");
    }

    #[test]
    fn new_providers() {
        let reg = registry(
            r#"
[providers.claude-proxy]
api = "anthropic-messages"
base_url = "https://proxy.example/anthropic/v1"
api_key_env = "CP_KEY"
models = [{ id = "claude-x", max_tokens = 4096 }]

[providers.box]
api = "openai-completions"
base_url = "http://localhost:9000/v1"
reasoning_format = "template-kwargs"
models = [{ id = "qwen3" }]
"#,
            &[],
        );
        let cp = reg.provider("claude-proxy").unwrap();
        assert!(!cp.local);
        let model = reg.find("claude-proxy", "claude-x").unwrap();
        assert_eq!(model.api, Api::AnthropicMessages);
        assert_eq!(model.max_tokens, 4096);
        assert_eq!(
            model.context_window,
            Model::anthropic("p", "m", "u").context_window
        );
        assert_eq!(
            reg.credential_source("claude-proxy"),
            CredentialSource::Missing(Some("CP_KEY".into()))
        );

        let local = reg.provider("box").unwrap();
        assert!(local.local);
        assert_eq!(
            reg.find("box", "qwen3").unwrap().reasoning_format,
            ReasoningFormat::TemplateKwargs
        );
        assert_eq!(reg.credential_source("box"), CredentialSource::NotNeeded);
        assert_eq!(reg.api_key("box"), None);
    }

    #[test]
    fn resolve_specs() {
        let reg = registry(
            "[providers.azure]\napi = \"openai-completions\"\nbase_url = \"https://az.example/v1\"\nmodels = [{ id = \"gpt-4.1\" }]\n",
            &[],
        );
        assert_eq!(reg.resolve("openai/gpt-5").unwrap().provider, "openai");
        assert_eq!(reg.resolve("gpt-5").unwrap().provider, "openai");

        // OpenRouter ids contain '/': split at the first one only.
        let or = reg
            .resolve("openrouter/anthropic/claude-sonnet-4.5")
            .unwrap();
        assert_eq!(
            (or.provider.as_str(), or.id.as_str()),
            ("openrouter", "anthropic/claude-sonnet-4.5")
        );
        // A bare OpenRouter id whose prefix is also a provider name still finds OpenRouter's.
        let or = reg.resolve("anthropic/claude-sonnet-4.5").unwrap();
        assert_eq!(or.provider, "openrouter");
        let or = reg.resolve("google/gemini-2.5-pro").unwrap();
        assert_eq!(or.provider, "openrouter");

        // Unlisted ids on a known provider get its defaults (local servers, new models).
        let local = reg.resolve("ollama/qwen3:8b").unwrap();
        assert_eq!(local.id, "qwen3:8b");
        assert_eq!(local.base_url, "http://127.0.0.1:11434/v1");

        match reg.resolve("gpt-4.1").unwrap_err() {
            RegistryError::AmbiguousModel { candidates, .. } => {
                assert_eq!(candidates, ["openai/gpt-4.1", "azure/gpt-4.1"]);
            }
            other => panic!("{other}"),
        }
        assert_eq!(reg.resolve("azure/gpt-4.1").unwrap().provider, "azure");

        for spec in ["no-such-model", "nowhere/gpt-5", "", "openai/"] {
            let err = reg.resolve(spec).unwrap_err();
            assert!(
                matches!(err, RegistryError::UnknownModel { .. }),
                "{spec}: {err}"
            );
        }
    }

    #[test]
    fn credential_sources() {
        let dir = tempfile::tempdir().unwrap();
        let mut auth = AuthStore::empty(dir.path().join("auth.json"));
        auth.set("anthropic", "from-file").unwrap();
        let reg = ModelRegistry::new(
            builtin_providers(),
            &Config::default(),
            auth,
            env(&[
                ("OPENAI_API_KEY", "sk"),
                ("ANTHROPIC_API_KEY", "from-env"),
                ("XAI_API_KEY", ""),
            ]),
        )
        .unwrap();
        assert_eq!(
            reg.credential_source("openai"),
            CredentialSource::Env("OPENAI_API_KEY".into())
        );
        assert_eq!(reg.api_key("openai").as_deref(), Some("sk"));
        // auth.json wins over the environment.
        assert_eq!(
            reg.credential_source("anthropic"),
            CredentialSource::AuthFile
        );
        assert_eq!(reg.api_key("anthropic").as_deref(), Some("from-file"));
        // An empty variable counts as unset.
        assert_eq!(
            reg.credential_source("xai"),
            CredentialSource::Missing(Some("XAI_API_KEY".into()))
        );
        assert_eq!(reg.api_key("xai"), None);
        assert_eq!(reg.credential_source("vllm"), CredentialSource::NotNeeded);
        assert_eq!(
            reg.credential_source("nope"),
            CredentialSource::Missing(None)
        );
        assert!(!CredentialSource::Missing(None).is_usable());
        assert!(CredentialSource::NotNeeded.is_usable());
    }

    #[test]
    fn default_model_choice() {
        let reg = registry("", &[("ANTHROPIC_API_KEY", "k")]);
        let model = reg.default_model(&Config::default()).unwrap().unwrap();
        assert_eq!(model.provider, "anthropic");
        let chosen = config("default_model = \"openai/gpt-4.1\"\n");
        assert_eq!(reg.default_model(&chosen).unwrap().unwrap().id, "gpt-4.1");
        assert!(
            registry("", &[])
                .default_model(&Config::default())
                .unwrap()
                .is_none()
        );
        let bad = config("default_model = \"nope\"\n");
        assert!(reg.default_model(&bad).is_err());
    }

    #[test]
    fn load_reports_config_errors() {
        let dir = tempfile::tempdir().unwrap();
        let paths = MarchPaths::at(dir.path());
        assert!(ModelRegistry::load(&paths).is_ok());
        std::fs::write(paths.config_file(), "default_model = [1]\n").unwrap();
        let err = ModelRegistry::load(&paths).unwrap_err();
        assert!(err.to_string().contains("config.toml"), "{err}");
    }

    #[test]
    fn excerpts() {
        let html = "<!DOCTYPE html><html><head><TITLE>401 Authorization\n Required</TITLE></head><body><h1>nope</h1></body></html>";
        assert_eq!(body_excerpt(html), "401 Authorization Required");
        assert_eq!(body_excerpt("<p>Bad <b>key</b></p>"), "Bad key");
        assert_eq!(
            body_excerpt(r#"{"error":{"message":"Incorrect API key","type":"invalid"}}"#),
            "Incorrect API key"
        );
        assert_eq!(body_excerpt("  "), "(empty body)");
        let long = "é".repeat(500);
        assert_eq!(body_excerpt(&long).chars().count(), 201);
    }

    #[test]
    fn loopback_detection() {
        assert!(is_loopback("http://localhost:8080/v1"));
        assert!(is_loopback("http://127.0.0.2/v1"));
        assert!(is_loopback("http://[::1]:8000/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("not a url"));
    }

    /// Serve one canned HTTP response per connection, recording the request heads.
    async fn canned_server(
        response: &'static str,
    ) -> (String, tokio::sync::mpsc::UnboundedReceiver<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            }
        });
        (format!("http://{addr}/v1"), rx)
    }

    fn with_provider(
        name: &str,
        api: &str,
        base_url: &str,
        vars: &[(&str, &str)],
    ) -> ModelRegistry {
        registry(
            &format!(
                "[providers.{name}]\napi = \"{api}\"\nbase_url = \"{base_url}\"\napi_key_env = \"K\"\nheaders = {{ \"X-Extra\" = \"1\" }}\n"
            ),
            vars,
        )
    }

    #[tokio::test]
    async fn discovery_against_scripted_server() {
        let server = march_testkit::ScriptedServer::start(march_testkit::Script {
            turns: vec![],
            models: vec!["m1".into(), "m2".into()],
        })
        .await
        .unwrap();
        let reg = registry(
            &format!(
                "[providers.scripted]\napi = \"openai-completions\"\nbase_url = \"{}\"\napi_key_env = \"SCRIPTED_KEY\"\nheaders = {{ \"X-Extra\" = \"yes\" }}\nmodels = [{{ id = \"m2\", context_window = 4096 }}]\n",
                server.base_url()
            ),
            &[("SCRIPTED_KEY", "secret")],
        );
        let models = reg
            .discover("scripted", Duration::from_secs(3))
            .await
            .unwrap();
        let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["m1", "m2"]);
        assert_eq!(
            models[0],
            reg.provider("scripted").unwrap().default_model("m1")
        );
        // A configured model keeps its data.
        assert_eq!(models[1].context_window, 4096);

        let requests = server.requests();
        let request = requests.last().unwrap();
        assert!(request.path.ends_with("/models"), "{}", request.path);
        assert_eq!(request.header("authorization"), Some("Bearer secret"));
        assert_eq!(request.header("x-extra"), Some("yes"));
    }

    #[tokio::test]
    async fn anthropic_discovery_headers() {
        let (url, mut heads) = canned_server(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n\
             {\"data\":[{\"id\":\"claude-x\",\"display_name\":\"Claude X\"}],\"has_more\":false}",
        )
        .await;
        let reg = with_provider("ant", "anthropic-messages", &url, &[("K", "ak")]);
        let models = reg.discover("ant", Duration::from_secs(3)).await.unwrap();
        assert_eq!(models.len(), 1);
        assert_eq!(models[0].name, "Claude X");
        assert_eq!(models[0].api, Api::AnthropicMessages);
        let head = heads.recv().await.unwrap().to_ascii_lowercase();
        assert!(head.starts_with("get /v1/models?limit=1000 "), "{head}");
        assert!(head.contains("\r\nx-api-key: ak\r\n"), "{head}");
        assert!(
            head.contains("\r\nanthropic-version: 2023-06-01\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nx-extra: 1\r\n"), "{head}");
        assert!(!head.contains("authorization"), "{head}");
    }

    #[tokio::test]
    async fn discovery_reports_http_errors() {
        let (url, _heads) = canned_server(
            "HTTP/1.1 401 Unauthorized\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n\
             <html><head><title>401 Authorization Required</title></head><body><center><h1>401</h1></center></body></html>",
        )
        .await;
        let reg = with_provider("web", "openai-completions", &url, &[]);
        let err = reg
            .discover("web", Duration::from_secs(3))
            .await
            .unwrap_err();
        assert!(
            matches!(err, RegistryError::Status { status: 401, .. }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            format!("{url}/models answered HTTP 401: 401 Authorization Required")
        );

        let (url, _heads) =
            canned_server("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n<html>not json</html>")
                .await;
        let reg = with_provider("web", "openai-completions", &url, &[]);
        let err = reg
            .discover("web", Duration::from_secs(3))
            .await
            .unwrap_err();
        assert!(matches!(err, RegistryError::BadModelList { .. }), "{err}");
    }

    #[tokio::test]
    async fn discovery_against_closed_port() {
        // Bind then drop a listener so the port is very likely closed.
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let url = format!("http://127.0.0.1:{port}/v1");
        let reg = with_provider("gone", "openai-completions", &url, &[]);
        let err = reg
            .discover("gone", Duration::from_secs(3))
            .await
            .unwrap_err();
        assert!(matches!(err, RegistryError::Unreachable { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("the server at {url} is not reachable")),
            "{msg}"
        );

        let err = reg
            .discover("nope", Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(matches!(err, RegistryError::UnknownProvider { .. }));
    }
}
