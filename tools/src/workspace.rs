//! The `workspace` tool: March's own agent opens a helper session in the workspace it runs
//! in (a pane of its own, on this project or another), gives it a prompt, waits for its
//! turn to end and reads its answer. It talks to the workspace server over the socket the
//! server gave the runner (`MARCH_WORKSPACE`), with the control requests `march new-pane`,
//! `wait` and `capture` send; outside a workspace (headless, an editor) it is not offered.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use march_wire::ControlRequest;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::args::{optional_str, required_str};
use crate::context::ToolContext;

/// The environment variable with the workspace server's socket, set for the runners the
/// server starts.
pub use march_wire::rendezvous::WORKSPACE_VAR as SOCKET_VAR;

/// Opens a helper session and returns its answer.
pub struct WorkspaceTool {
    ctx: ToolContext,
    parameters: Value,
}

impl WorkspaceTool {
    /// A workspace tool for the session described by `ctx`.
    pub fn new(ctx: ToolContext) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "prompt": {
                    "type": "string",
                    "description": "What the helper session is asked to do"
                },
                "dir": {
                    "type": "string",
                    "description": "The project directory it works in (default: this one)"
                },
                "agent": {
                    "type": "string",
                    "description": "A configured agent to run instead of March"
                }
            },
            "required": ["prompt"]
        });
        WorkspaceTool { ctx, parameters }
    }

    fn dir(&self, args: &Value) -> PathBuf {
        match args.get("dir").and_then(Value::as_str) {
            Some(dir) => self.ctx.resolve(dir).absolute,
            None => self.ctx.cwd.clone(),
        }
    }
}

#[async_trait]
impl Tool for WorkspaceTool {
    fn name(&self) -> &str {
        "workspace"
    }

    fn description(&self) -> &str {
        "Open a helper agent session in a new pane of the user's workspace (in this project or \
         another directory), give it a prompt, wait until its turn ends and return its answer. \
         Use it for work that is independent of yours; the user sees the helper's pane."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    // It starts work that changes things on the user's behalf: asked like a write.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: false,
            destructive: true,
            open_world: false,
        }
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Open a helper session in the workspace and get its answer")
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Other
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("prompt").and_then(Value::as_str))
    }

    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        vec![self.dir(args)]
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let prompt = required_str(&args, "prompt")?.to_string();
        let agent = optional_str(&args, "agent")?.map(str::to_string);
        let Some(socket) = self.ctx.workspace.clone() else {
            return Err(ToolError::new(
                "no workspace to open a session in (March runs without one here)",
            ));
        };
        let dir = self.dir(&args);
        if !dir.is_dir() {
            return Err(ToolError::new(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        let opened = ask(
            &socket,
            ControlRequest::NewPane {
                dir,
                agent,
                prompt: Some(prompt),
            },
        )
        .await?;
        let (Some(key), Some(target)) = (opened["key"].as_u64(), opened["target"].as_str()) else {
            return Err(ToolError::new(
                "the workspace did not say which session it opened",
            ));
        };
        let target = target.to_string();
        updates.text(format!("helper session {target} is working"));
        let ended = tokio::select! {
            ended = ask(&socket, ControlRequest::Wait { session: key }) => ended?,
            () = cancel.cancelled() => {
                return Err(ToolError::new(format!(
                    "cancelled; the helper session {target} goes on in its pane"
                )));
            }
        };
        let captured = ask(
            &socket,
            ControlRequest::Capture {
                session: key,
                last: Some(1),
            },
        )
        .await?;
        let answer = answer_of(captured["markdown"].as_str().unwrap_or_default());
        let how = match (ended["stop_reason"].as_str(), ended["error"].as_str()) {
            (_, Some(error)) => format!("failed: {error}"),
            (Some("end_turn"), _) | (None, None) => "answered".to_string(),
            (Some(other), _) => format!("stopped ({other})"),
        };
        let mut outcome = ToolOutcome::text(format!("Helper session {target} {how}:\n\n{answer}"));
        outcome.details = json!({ "target": target, "stop_reason": ended["stop_reason"] });
        Ok(outcome)
    }
}

/// A captured turn without its quoted prompt: what the helper answered.
fn answer_of(markdown: &str) -> String {
    markdown
        .lines()
        .skip_while(|l| l.starts_with("> ") || *l == ">")
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// One control request to the workspace server at `socket`, and its answer.
async fn ask(socket: &Path, request: ControlRequest) -> Result<Value, ToolError> {
    march_wire::control::ask(socket, request)
        .await
        .map_err(|e| ToolError::new(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_the_turn_without_its_prompt() {
        assert_eq!(
            answer_of("> find the bug\n> in parse\n\nIt is on line 3.\n\n- ✓ read parse.rs\n"),
            "It is on line 3.\n\n- ✓ read parse.rs"
        );
        assert_eq!(answer_of(""), "");
    }
}
