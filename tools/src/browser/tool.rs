//! `browser` and `browser_evaluate`: a session's tabs in the browser daemon, for the model.
//! Running JavaScript is a tool of its own, so allowing the browser for a session does not
//! allow scripts: each asks, like bash.

use std::time::Duration;

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::message::{ImageContent, UserContent};
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::BrowserAccess;
use super::protocol::{Request, Target};
use crate::args::required_str;
use crate::truncate::head_with_notice;

/// How long a navigation or a page's answer may take (the browser's own start included).
const CALL_LIMIT: Duration = Duration::from_secs(90);
/// `wait_for`'s default wait.
const DEFAULT_WAIT_MS: u64 = 10_000;

const ACTIONS: [&str; 11] = [
    "navigate",
    "read",
    "outline",
    "click",
    "type",
    "scroll",
    "wait_for",
    "screenshot",
    "tabs",
    "switch_tab",
    "close_tab",
];

/// Drives the session's browser tabs.
pub struct BrowserTool {
    access: Option<BrowserAccess>,
    parameters: Value,
}

impl BrowserTool {
    /// A tool reaching the daemon through `access`; `None` when no browser can be used
    /// (every call says why).
    pub fn new(access: Option<BrowserAccess>) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ACTIONS,
                    "description": "navigate (url, new_tab); read (the page as markdown); \
                        outline (elements with refs); click (ref or selector); type (ref or \
                        selector, text, submit); scroll (pixels, or ref/selector into view); \
                        wait_for (text, timeout_ms); screenshot (full_page); tabs; \
                        switch_tab (tab); close_tab (tab)"
                },
                "url": { "type": "string" },
                "new_tab": { "type": "boolean" },
                "ref": { "type": "integer", "description": "An element's ref from outline" },
                "selector": { "type": "string", "description": "A CSS selector" },
                "text": { "type": "string" },
                "submit": { "type": "boolean", "description": "Press Enter after typing" },
                "pixels": { "type": "integer" },
                "full_page": { "type": "boolean" },
                "tab": { "type": "integer" },
                "timeout_ms": { "type": "integer" }
            },
            "required": ["action"]
        });
        BrowserTool { access, parameters }
    }
}

fn target(args: &Value) -> Target {
    Target {
        reference: args.get("ref").and_then(Value::as_i64),
        selector: args
            .get("selector")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

fn tab(args: &Value) -> Result<u32, ToolError> {
    args.get("tab")
        .and_then(Value::as_u64)
        .map(|t| t as u32)
        .ok_or_else(|| ToolError::new("Missing `tab`: a number from the tabs action"))
}

/// The request a call makes, for `session`.
fn request(args: &Value, session: String) -> Result<Request, ToolError> {
    let flag = |key: &str| args.get(key).and_then(Value::as_bool).unwrap_or(false);
    Ok(match required_str(args, "action")? {
        "navigate" => Request::Navigate {
            session,
            url: required_str(args, "url")?.to_string(),
            new_tab: flag("new_tab"),
        },
        "read" => Request::Read {
            session,
            outline: false,
        },
        "outline" => Request::Read {
            session,
            outline: true,
        },
        "click" => Request::Click {
            session,
            target: target(args),
        },
        "type" => Request::Type {
            session,
            target: target(args),
            text: required_str(args, "text")?.to_string(),
            submit: flag("submit"),
        },
        "scroll" => {
            let target = target(args);
            let named = target.reference.is_some() || target.selector.is_some();
            Request::Scroll {
                session,
                target: named.then_some(target),
                pixels: args.get("pixels").and_then(Value::as_i64).unwrap_or(600),
            }
        }
        "wait_for" => Request::WaitFor {
            session,
            text: required_str(args, "text")?.to_string(),
            timeout_ms: args
                .get("timeout_ms")
                .and_then(Value::as_u64)
                .unwrap_or(DEFAULT_WAIT_MS)
                .min(60_000),
        },
        "screenshot" => Request::Screenshot {
            session,
            full_page: flag("full_page"),
        },
        "tabs" => Request::Tabs { session },
        "switch_tab" => Request::SwitchTab {
            session,
            tab: tab(args)?,
        },
        "close_tab" => Request::CloseTab {
            session,
            tab: tab(args)?,
        },
        other => {
            return Err(ToolError::new(format!(
                "Unknown action `{other}` (one of: {})",
                ACTIONS.join(", ")
            )));
        }
    })
}

/// Sends `request` to the daemon, giving up when the call is cancelled.
async fn ask(
    access: &Option<BrowserAccess>,
    build: impl FnOnce(String) -> Result<Request, ToolError>,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    let Some(access) = access else {
        return Err(ToolError::new(
            "No browser: install Chromium (or Chrome), or set [browser] executable or \
             [browser] connect in the config",
        ));
    };
    let request = build(access.session.clone())?;
    tokio::select! {
        answer = access.client.call(&request, CALL_LIMIT) => {
            answer.map_err(|e| ToolError::new(format!("Browser: {e}")))
        }
        () = cancel.cancelled() => Err(ToolError::new("Cancelled")),
    }
}

/// The page the answer names, then what else it says.
fn page_text(answer: &Value) -> String {
    let mut text = String::new();
    if let Some(title) = answer["title"].as_str().filter(|t| !t.is_empty()) {
        text.push_str(&format!("Title: {title}\n"));
    }
    if let Some(url) = answer["url"].as_str() {
        text.push_str(&format!("URL: {url}\n"));
    }
    if let Some(tab) = answer["tab"].as_u64() {
        text.push_str(&format!("Tab: {tab}\n"));
    }
    text
}

fn tabs_text(answer: &Value) -> String {
    let tabs = answer["tabs"].as_array().cloned().unwrap_or_default();
    if tabs.is_empty() {
        return "No tabs are open.".into();
    }
    tabs.iter()
        .map(|t| {
            format!(
                "{} tab {}: {} — {}",
                if t["current"] == true { "*" } else { " " },
                t["tab"],
                t["title"].as_str().unwrap_or_default(),
                t["url"].as_str().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn long_text(head: String, body: &str) -> String {
    format!("{head}\n{}", head_with_notice(body).0)
}

#[async_trait]
impl Tool for BrowserTool {
    fn name(&self) -> &str {
        "browser"
    }

    fn description(&self) -> &str {
        "Drive a web browser (your own tabs): open pages, read them as markdown or as an \
         outline of elements with refs, click, type into forms, scroll, wait for text, take \
         screenshots, list and switch tabs. Use outline to find an element's ref, then click \
         or type with it."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        // Clicking and typing change what a site holds (a form sent, an order placed).
        ToolAnnotations {
            read_only: false,
            destructive: false,
            open_world: true,
        }
    }

    fn call_annotations(&self, args: &Value) -> ToolAnnotations {
        let action = args.get("action").and_then(Value::as_str).unwrap_or("");
        let reads = matches!(
            action,
            "navigate" | "read" | "outline" | "wait_for" | "screenshot" | "tabs" | "scroll"
        );
        ToolAnnotations {
            read_only: reads,
            ..self.annotations()
        }
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Drive a web browser")
    }

    fn kind(&self, args: &Value) -> ToolKind {
        match args.get("action").and_then(Value::as_str) {
            Some("navigate") => ToolKind::Fetch,
            Some("read" | "outline" | "screenshot" | "tabs" | "wait_for") => ToolKind::Read,
            _ => ToolKind::Other,
        }
    }

    fn title(&self, args: &Value) -> String {
        let action = args.get("action").and_then(Value::as_str).unwrap_or("?");
        let detail = ["url", "text", "selector"]
            .iter()
            .find_map(|k| args.get(*k).and_then(Value::as_str).map(str::to_string))
            .or_else(|| args.get("ref").map(|r| format!("ref {r}")));
        call_title(&format!("browser {action}"), detail.as_deref())
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let action = required_str(&args, "action")?.to_string();
        let answer = ask(&self.access, |session| request(&args, session), &cancel).await?;
        let mut outcome = match action.as_str() {
            "read" | "outline" => ToolOutcome::text(long_text(
                page_text(&answer),
                answer["text"].as_str().unwrap_or_default(),
            )),
            "screenshot" => {
                let png = answer["png"].as_str().unwrap_or_default().to_string();
                let note = format!("Screenshot, {}×{} px.", answer["width"], answer["height"]);
                let mut outcome = ToolOutcome::text(note);
                outcome.content.push(UserContent::Image(ImageContent {
                    data: png,
                    mime_type: "image/png".into(),
                }));
                outcome
            }
            "tabs" | "close_tab" => ToolOutcome::text(tabs_text(&answer)),
            "scroll" => ToolOutcome::text(format!(
                "Scrolled: now at {} of {} px.",
                answer["scroll"][0], answer["scroll"][1]
            )),
            _ => ToolOutcome::text(page_text(&answer).trim_end().to_string()),
        };
        let mut details = answer;
        if let Some(map) = details.as_object_mut() {
            map.remove("png");
            map.remove("text");
        }
        outcome.details = details;
        Ok(outcome)
    }
}

/// Runs JavaScript in the session's current tab.
pub struct BrowserEvaluateTool {
    access: Option<BrowserAccess>,
    parameters: Value,
}

impl BrowserEvaluateTool {
    /// See [`BrowserTool::new`].
    pub fn new(access: Option<BrowserAccess>) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "expression": {
                    "type": "string",
                    "description": "JavaScript to run in the current tab; its value comes back as JSON"
                }
            },
            "required": ["expression"]
        });
        BrowserEvaluateTool { access, parameters }
    }
}

#[async_trait]
impl Tool for BrowserEvaluateTool {
    fn name(&self) -> &str {
        "browser_evaluate"
    }

    fn description(&self) -> &str {
        "Run JavaScript in the browser's current tab (see the browser tool) and get its value \
         as JSON."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        // A script can do anything the page's site lets a logged-in user do.
        ToolAnnotations::default()
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Execute
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("expression").and_then(Value::as_str))
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let expression = required_str(&args, "expression")?.to_string();
        let answer = ask(
            &self.access,
            |session| {
                Ok(Request::Evaluate {
                    session,
                    expression,
                })
            },
            &cancel,
        )
        .await?;
        let value = serde_json::to_string_pretty(&answer["value"]).unwrap_or_default();
        let mut outcome = ToolOutcome::text(long_text(String::new(), &value).trim().to_string());
        outcome.details = answer;
        Ok(outcome)
    }
}
