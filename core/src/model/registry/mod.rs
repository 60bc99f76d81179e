//! The model registry: built-in providers merged with `config.toml`, credentials from
//! `auth.json` and the environment. Discovery over HTTP lives in `discovery.rs`.

mod discovery;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use super::{Api, Model, ModelCost, ReasoningFormat, builtin_providers};
use crate::auth::{AuthError, AuthStore};
use crate::config::{Config, ConfigError, ModelConfig, ProviderConfig};
use crate::paths::MarchPaths;

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
    if let Some(format) = mc.structured_output {
        model.structured_output = format;
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

#[cfg(test)]
mod tests;
