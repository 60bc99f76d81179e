//! Models: what a model is, how reasoning is requested from it, and the registry of known ones.

mod catalog;
mod registry;

pub use catalog::builtin_providers;
pub use registry::{CredentialSource, ModelRegistry, ProviderInfo, RegistryError};

use serde::{Deserialize, Serialize};

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Api {
    /// OpenAI Chat Completions with SSE streaming (also xAI, DeepSeek, OpenRouter, local servers).
    #[serde(rename = "openai-completions")]
    OpenAiCompletions,
    /// Anthropic Messages with SSE streaming.
    #[serde(rename = "anthropic-messages")]
    AnthropicMessages,
}

impl Api {
    /// The name pi records in `AssistantMessage.api`.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::OpenAiCompletions => "openai-completions",
            Api::AnthropicMessages => "anthropic-messages",
        }
    }
}

/// How much the model should reason before answering.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No reasoning parameters are sent.
    #[default]
    Off,
    /// The least reasoning the provider allows.
    Minimal,
    /// Light reasoning.
    Low,
    /// Moderate reasoning.
    Medium,
    /// Deep reasoning.
    High,
    /// The most reasoning the provider allows.
    Xhigh,
}

impl ThinkingLevel {
    /// All levels, lowest first.
    pub const ALL: [ThinkingLevel; 6] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
    ];

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
        }
    }
}

impl std::str::FromStr for ThinkingLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ThinkingLevel::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| {
                format!("unknown thinking level `{s}` (off, minimal, low, medium, high, xhigh)")
            })
    }
}

/// How a provider wants reasoning requested on the OpenAI-compatible wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReasoningFormat {
    /// `reasoning_effort: low|medium|high` (OpenAI, xAI).
    #[default]
    #[serde(rename = "openai-effort")]
    OpenAiEffort,
    /// `thinking: {type: enabled|disabled}` plus `reasoning_effort`; reasoning replayed as
    /// `reasoning_content` (DeepSeek's official API, which thinks by default).
    Deepseek,
    /// `reasoning: {effort}` (OpenRouter).
    #[serde(rename = "openrouter")]
    OpenRouter,
    /// `chat_template_kwargs: {enable_thinking}` (Qwen-style templates on vLLM / llama.cpp).
    TemplateKwargs,
    /// Reasoning cannot be steered by parameters.
    None,
}

/// How a model is asked for a final answer in a JSON schema (`march -p --schema`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StructuredOutputFormat {
    /// The wire's own shape: `response_format: {type: json_schema}` on the OpenAI-compatible
    /// wire, an answer tool the model is made to call on Anthropic's.
    #[default]
    Native,
    /// The schema is given in the system prompt (servers without either shape).
    Prompt,
}

/// Prices in currency units per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelCost {
    /// Input price.
    pub input: f64,
    /// Output price.
    pub output: f64,
    /// Cache read price.
    pub cache_read: f64,
    /// Cache write price.
    pub cache_write: f64,
}

/// One model on one provider, with everything a request needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// Model id as the provider spells it.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Provider name (registry key).
    pub provider: String,
    /// Wire format.
    pub api: Api,
    /// Base URL including the version path, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Whether the model reasons; thinking parameters are sent only when true.
    pub reasoning: bool,
    /// How reasoning is requested on the OpenAI-compatible wire.
    pub reasoning_format: ReasoningFormat,
    /// Whether the model accepts image input.
    pub images: bool,
    /// Context window in tokens.
    pub context_window: u64,
    /// Maximum output tokens.
    pub max_tokens: u64,
    /// Prices.
    pub cost: ModelCost,
    /// How a JSON answer is asked for.
    #[serde(default)]
    pub structured_output: StructuredOutputFormat,
}

impl Model {
    /// A model on an OpenAI-compatible endpoint with conservative defaults.
    pub fn openai_compatible(provider: &str, id: &str, base_url: &str) -> Self {
        Model {
            id: id.to_string(),
            name: id.to_string(),
            provider: provider.to_string(),
            api: Api::OpenAiCompletions,
            base_url: base_url.trim_end_matches('/').to_string(),
            reasoning: false,
            reasoning_format: ReasoningFormat::OpenAiEffort,
            images: false,
            context_window: 128_000,
            max_tokens: 16_384,
            cost: ModelCost::default(),
            structured_output: StructuredOutputFormat::Native,
        }
    }

    /// An Anthropic Messages model with conservative defaults.
    pub fn anthropic(provider: &str, id: &str, base_url: &str) -> Self {
        Model {
            api: Api::AnthropicMessages,
            images: true,
            context_window: 200_000,
            max_tokens: 32_000,
            ..Model::openai_compatible(provider, id, base_url)
        }
    }
}
