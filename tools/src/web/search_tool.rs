//! `web_search`: the configured search API's results for the model.

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::search::{Hit, MAX_RESULTS, SearchApi};
use crate::args::required_str;

/// Searches the web through the API of `[web.search]`.
pub struct WebSearchTool {
    api: Option<SearchApi>,
    parameters: Value,
}

impl WebSearchTool {
    /// A tool asking `api`; `None` when no search is configured (every call says so).
    pub fn new(api: Option<SearchApi>) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What to search for"
                },
                "count": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS,
                    "description": "How many results (default: the user's setting, usually 5)"
                }
            },
            "required": ["query"]
        });
        WebSearchTool { api, parameters }
    }
}

#[async_trait]
impl Tool for WebSearchTool {
    fn name(&self) -> &str {
        "web_search"
    }

    fn description(&self) -> &str {
        "Search the web. Returns results as title, URL and snippet; read a result's page with \
         web_fetch."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: true,
            destructive: false,
            open_world: true,
        }
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Search the web")
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Search
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("query").and_then(Value::as_str))
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let query = required_str(&args, "query")?.trim();
        if query.is_empty() {
            return Err(ToolError::new("The query is empty"));
        }
        let Some(api) = &self.api else {
            return Err(ToolError::new(
                "Web search is not configured: the user sets a provider in [web.search]",
            ));
        };
        let count = args
            .get("count")
            .and_then(Value::as_u64)
            .map_or(api.results, |n| n as usize);
        let client = march_core::http::shared_client().map_err(ToolError::new)?;
        let hits = tokio::select! {
            hits = api.search(client, query, count) => hits,
            () = cancel.cancelled() => return Err(ToolError::new("Search cancelled")),
        };
        let hits = hits.map_err(|e| ToolError::new(format!("Search failed: {e}")))?;
        Ok(outcome(api.provider(), query, &hits))
    }
}

/// The results as the model reads them: numbered, each with its address and snippet.
fn outcome(provider: &str, query: &str, hits: &[Hit]) -> ToolOutcome {
    let mut text = if hits.is_empty() {
        format!("No results for \"{query}\" ({provider}).")
    } else {
        format!("Results for \"{query}\" ({provider}):\n")
    };
    for (n, hit) in hits.iter().enumerate() {
        text.push_str(&format!("\n{}. {}\n   {}\n", n + 1, hit.title, hit.url));
        if !hit.snippet.is_empty() {
            text.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    let mut outcome = ToolOutcome::text(text.trim_end().to_string());
    outcome.details = json!({ "provider": provider, "query": query, "results": hits });
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(outcome: &ToolOutcome) -> &str {
        let march_core::message::UserContent::Text(text) = &outcome.content[0] else {
            panic!("not text");
        };
        &text.text
    }

    #[test]
    fn results_are_numbered_with_address_and_snippet() {
        let hits = [
            Hit {
                title: "One".into(),
                url: "https://a.example/".into(),
                snippet: "first".into(),
            },
            Hit {
                title: "Two".into(),
                url: "https://b.example/".into(),
                snippet: String::new(),
            },
        ];
        let outcome = outcome("brave", "q", &hits);
        assert_eq!(
            text(&outcome),
            "Results for \"q\" (brave):\n\n1. One\n   https://a.example/\n   first\n\n\
             2. Two\n   https://b.example/"
        );
        assert_eq!(outcome.details["results"][1]["url"], "https://b.example/");
        assert_eq!(
            text(&super::outcome("exa", "z", &[])),
            "No results for \"z\" (exa)."
        );
    }

    #[tokio::test]
    async fn without_a_provider_a_call_says_how_to_set_one() {
        let tool = WebSearchTool::new(None);
        let e = tool
            .execute(
                "c",
                json!({"query": "x"}),
                CancellationToken::new(),
                ToolUpdates::discard(),
            )
            .await
            .unwrap_err();
        assert!(e.to_string().contains("[web.search]"), "{e}");
        assert_eq!(tool.title(&json!({"query": "rust"})), "web_search rust");
        assert_eq!(tool.kind(&json!({})), ToolKind::Search);
    }
}
