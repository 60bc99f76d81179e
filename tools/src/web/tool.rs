//! `web_fetch`: a URL as readable text for the model.

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::fetch::{FetchLimits, Fetched, WebClient};
use crate::args::required_str;
use crate::truncate::{format_size, head_with_notice};

/// Fetches a web page as markdown.
pub struct WebFetchTool {
    limits: FetchLimits,
    /// Built at the first call and kept: its TLS setup and connection pool serve every call.
    client: std::sync::OnceLock<Result<WebClient, String>>,
    parameters: Value,
}

impl WebFetchTool {
    /// A tool fetching within `limits`.
    pub fn new(limits: FetchLimits) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "description": "The http or https URL to fetch"
                }
            },
            "required": ["url"]
        });
        WebFetchTool {
            limits,
            client: std::sync::OnceLock::new(),
            parameters,
        }
    }
}

#[async_trait]
impl Tool for WebFetchTool {
    fn name(&self) -> &str {
        "web_fetch"
    }

    fn description(&self) -> &str {
        "Fetch a web page (http or https) and read it as markdown: the page's main content \
         first, without navigation or scripts; text and JSON come as sent. Redirects are \
         followed and reported. Output stops at 2000 lines or 50KB. Private and local \
         addresses are refused unless the user allows them."
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
        Some("Fetch a web page as markdown")
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Fetch
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("url").and_then(Value::as_str))
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let url = required_str(&args, "url")?;
        let web = self
            .client
            .get_or_init(|| WebClient::new(self.limits).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| ToolError::new(e.clone()))?;
        let fetched = tokio::select! {
            fetched = web.fetch(url) => fetched,
            () = cancel.cancelled() => return Err(ToolError::new("Fetch cancelled")),
        };
        let fetched = fetched.map_err(|e| ToolError::new(format!("Cannot fetch {url}: {e}")))?;
        Ok(outcome(&fetched, self.limits.max_bytes))
    }
}

/// What the model reads: where the text came from, then the text within the output limits.
fn outcome(fetched: &Fetched, max_bytes: usize) -> ToolOutcome {
    let mut head = String::new();
    if !fetched.title.is_empty() {
        head.push_str(&format!("Title: {}\n", fetched.title));
    }
    head.push_str(&format!("URL: {}\n", fetched.url));
    if !fetched.redirects.is_empty() {
        head.push_str(&format!(
            "Redirected from: {}\n",
            fetched.redirects.join(" → ")
        ));
    }
    if fetched.truncated {
        head.push_str(&format!(
            "(the body was cut at {}: the page is larger)\n",
            format_size(max_bytes)
        ));
    }
    let (shown, cut) = head_with_notice(&fetched.text);
    let mut outcome = ToolOutcome::text(format!("{head}\n{shown}"));
    outcome.details = json!({
        "url": fetched.url,
        "redirects": fetched.redirects,
        "mediaType": fetched.media_type,
        "title": fetched.title,
        "bodyCut": fetched.truncated,
        "truncation": cut,
    });
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_reads_where_the_text_came_from_and_what_was_cut() {
        let fetched = Fetched {
            url: "https://example.org/new".into(),
            redirects: vec!["https://example.org/old".into()],
            media_type: "text/html".into(),
            title: "Notes".into(),
            text: "line\n".repeat(3000),
            truncated: true,
        };
        let outcome = outcome(&fetched, 5 << 20);
        let march_core::message::UserContent::Text(text) = &outcome.content[0] else {
            panic!("not text");
        };
        assert!(
            text.text.starts_with(
                "Title: Notes\nURL: https://example.org/new\n\
             Redirected from: https://example.org/old\n(the body was cut at 5.0MB"
            ),
            "{}",
            text.text
        );
        assert!(
            text.text
                .ends_with("[Showing 2000 of 3000 lines (9.8KB of 14.6KB).]"),
            "{}",
            text.text
        );
        assert_eq!(outcome.details["redirects"][0], "https://example.org/old");
    }
}
