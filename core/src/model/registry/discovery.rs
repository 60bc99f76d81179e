//! Model discovery: ask a provider's server which models it serves.

use std::time::Duration;

use serde::Deserialize;

use super::{ModelRegistry, ProviderInfo, RegistryError};
use crate::model::{Api, Model};

/// The `anthropic-version` header sent to Anthropic's API.
const ANTHROPIC_VERSION: &str = "2023-06-01";

impl ModelRegistry {
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
        info.discover(self.api_key(provider).as_deref(), timeout)
            .await
    }
}

impl ProviderInfo {
    /// Ask this provider's server which models it serves with `key`, whether or not the
    /// provider is in any config yet (setup checks a server before saving it).
    pub async fn discover(
        &self,
        key: Option<&str>,
        timeout: Duration,
    ) -> Result<Vec<Model>, RegistryError> {
        let info = self;
        let url = format!("{}/models", info.base_url);
        let client = crate::http::client(timeout).map_err(RegistryError::Client)?;
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
                excerpt: crate::http::error_excerpt(body.as_bytes()),
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
