//! `system_core`: March's rules for a model family. The model id only selects the text.

use crate::model::Model;

const DEFAULT: &str = include_str!("system_core/default.md");
const CLAUDE: &str = include_str!("system_core/claude.md");
const GPT: &str = include_str!("system_core/gpt.md");

/// The model family a `system_core` text is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFamily {
    /// Anthropic Claude models.
    Claude,
    /// OpenAI GPT and o-series models.
    Gpt,
    /// Everything else.
    Default,
}

impl ModelFamily {
    /// The family of a model, from its id (never from the provider: OpenRouter serves both).
    pub fn of(model: &Model) -> Self {
        let id = model.id.to_ascii_lowercase();
        let id = id.rsplit('/').next().unwrap_or(&id);
        if id.starts_with("claude") {
            ModelFamily::Claude
        } else if id.starts_with("gpt")
            || id.starts_with("o1")
            || id.starts_with("o3")
            || id.starts_with("o4")
        {
            ModelFamily::Gpt
        } else {
            ModelFamily::Default
        }
    }
}

/// The model-specific rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemCore {
    /// The family the text was chosen for.
    pub family: ModelFamily,
    /// The text.
    pub text: &'static str,
}

impl SystemCore {
    /// The rules for `model`.
    pub fn for_model(model: &Model) -> Self {
        let family = ModelFamily::of(model);
        let text = match family {
            ModelFamily::Claude => CLAUDE,
            ModelFamily::Gpt => GPT,
            ModelFamily::Default => DEFAULT,
        };
        SystemCore { family, text }
    }

    /// The section text.
    pub fn render(&self) -> String {
        self.text.trim().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_id_selects_the_family() {
        let m = |p: &str, id: &str| Model::openai_compatible(p, id, "http://x");
        assert_eq!(
            ModelFamily::of(&m("anthropic", "claude-sonnet-4-5")),
            ModelFamily::Claude
        );
        assert_eq!(
            ModelFamily::of(&m("openrouter", "anthropic/claude-opus-4.5")),
            ModelFamily::Claude
        );
        assert_eq!(ModelFamily::of(&m("openai", "gpt-5")), ModelFamily::Gpt);
        assert_eq!(ModelFamily::of(&m("openai", "o4-mini")), ModelFamily::Gpt);
        assert_eq!(
            ModelFamily::of(&m("ollama", "qwen3:8b")),
            ModelFamily::Default
        );
        assert_ne!(
            SystemCore::for_model(&m("a", "claude-x")).text,
            SystemCore::for_model(&m("a", "gpt-5")).text
        );
    }
}
