//! The built-in providers and their known models, from `catalog.toml` shipped in the binary.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::registry::ProviderInfo;
use super::{Api, ModelCost, ReasoningFormat, StructuredOutputFormat};

const CATALOG: &str = include_str!("catalog.toml");

// The catalog is our own file, so unknown keys are typos and are rejected (caught by a test).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    providers: Vec<CatalogProvider>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogProvider {
    name: String,
    api: Api,
    base_url: String,
    #[serde(default)]
    api_key_env: Option<String>,
    #[serde(default)]
    local: bool,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    reasoning_format: ReasoningFormat,
    #[serde(default)]
    models: Vec<CatalogModel>,
}

// Every field but the name and format is required: a catalog entry must be complete data.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogModel {
    id: String,
    #[serde(default)]
    name: Option<String>,
    reasoning: bool,
    images: bool,
    context_window: u64,
    max_tokens: u64,
    #[serde(default)]
    reasoning_format: Option<ReasoningFormat>,
    #[serde(default)]
    structured_output: StructuredOutputFormat,
    cost: ModelCost,
}

/// The built-in providers with their known models, in catalog order.
pub fn builtin_providers() -> Vec<ProviderInfo> {
    static PARSED: OnceLock<Vec<ProviderInfo>> = OnceLock::new();
    PARSED
        .get_or_init(|| {
            parse_catalog(CATALOG).unwrap_or_else(|e| {
                // A bug in the shipped file (the unit test catches it); degrade, don't panic.
                tracing::error!("the built-in model catalog is invalid: {e}");
                Vec::new()
            })
        })
        .clone()
}

fn parse_catalog(text: &str) -> Result<Vec<ProviderInfo>, toml::de::Error> {
    let file: CatalogFile = toml::from_str(text)?;
    Ok(file.providers.into_iter().map(into_provider).collect())
}

fn into_provider(p: CatalogProvider) -> ProviderInfo {
    let mut info = ProviderInfo {
        name: p.name,
        api: p.api,
        base_url: p.base_url.trim_end_matches('/').to_string(),
        api_key_env: p.api_key_env,
        local: p.local,
        headers: p.headers,
        reasoning_format: p.reasoning_format,
        models: Vec::new(),
    };
    info.models = p
        .models
        .into_iter()
        .map(|m| {
            let mut model = info.default_model(&m.id);
            if let Some(name) = m.name {
                model.name = name;
            }
            model.reasoning = m.reasoning;
            model.images = m.images;
            model.context_window = m.context_window;
            model.max_tokens = m.max_tokens;
            if let Some(format) = m.reasoning_format {
                model.reasoning_format = format;
            }
            model.cost = m.cost;
            model.structured_output = m.structured_output;
            model
        })
        .collect();
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_parses_and_is_complete() {
        let providers = parse_catalog(CATALOG).unwrap();
        assert_eq!(builtin_providers(), providers);
        let names: Vec<&str> = providers.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "openai",
                "anthropic",
                "xai",
                "deepseek",
                "openrouter",
                "ollama",
                "llamacpp",
                "lmstudio",
                "vllm"
            ]
        );
        for p in &providers {
            assert_eq!(p.local, p.api_key_env.is_none(), "{}", p.name);
            assert!(p.local || !p.models.is_empty(), "{} has no models", p.name);
            assert!(p.base_url.starts_with("http"), "{}", p.name);
            for m in &p.models {
                assert!(m.context_window > 0, "{}/{}", p.name, m.id);
                assert!(m.max_tokens > 0, "{}/{}", p.name, m.id);
                assert!(m.max_tokens <= m.context_window, "{}/{}", p.name, m.id);
                assert!(
                    m.cost.input > 0.0 && m.cost.output > 0.0,
                    "{}/{}",
                    p.name,
                    m.id
                );
                assert_eq!(m.provider, p.name);
                assert_eq!(m.api, p.api);
                assert_eq!(m.base_url, p.base_url);
            }
            let mut ids: Vec<&str> = p.models.iter().map(|m| m.id.as_str()).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), p.models.len(), "duplicate ids in {}", p.name);
        }
    }

    #[test]
    fn catalog_details() {
        let providers = builtin_providers();
        let find = |p: &str, id: &str| {
            providers
                .iter()
                .find(|x| x.name == p)
                .and_then(|x| x.models.iter().find(|m| m.id == id))
                .cloned()
                .unwrap()
        };
        let chat = find("deepseek", "deepseek-chat");
        assert!(!chat.reasoning);
        assert_eq!(chat.reasoning_format, ReasoningFormat::Deepseek);
        assert!(find("deepseek", "deepseek-reasoner").reasoning);
        let sonnet = find("anthropic", "claude-sonnet-4-5");
        assert_eq!(sonnet.api, Api::AnthropicMessages);
        assert_eq!(sonnet.base_url, "https://api.anthropic.com/v1");
        let or = find("openrouter", "anthropic/claude-sonnet-4.5");
        assert_eq!(or.reasoning_format, ReasoningFormat::OpenRouter);
        assert_eq!(
            find("xai", "grok-4").reasoning_format,
            ReasoningFormat::None
        );
        assert_eq!(find("openai", "gpt-4.1").context_window, 1_047_576);
    }

    #[test]
    fn typos_in_the_catalog_are_rejected() {
        let text = "[[providers]]\nname = \"x\"\napi = \"openai-completions\"\nbase_url = \"u\"\nbase_ur = 1\n";
        assert!(parse_catalog(text).is_err());
    }
}
