//! The `diagnostics` tool: what the language servers say about a file or the project.

use std::path::PathBuf;

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Severity, render_report};
use crate::args::optional_str;
use crate::context::ToolContext;

/// Asks the project's language servers for diagnostics.
pub struct DiagnosticsTool {
    ctx: ToolContext,
    parameters: Value,
}

impl DiagnosticsTool {
    /// A diagnostics tool for the session described by `ctx`.
    pub fn new(ctx: ToolContext) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File to check (default: every file of the project the language servers have reported on)"
                },
                "severity": {
                    "type": "string",
                    "enum": ["error", "warning", "information", "hint"],
                    "description": "Least severe kind to show (default: warning)"
                }
            }
        });
        DiagnosticsTool { ctx, parameters }
    }
}

#[async_trait]
impl Tool for DiagnosticsTool {
    fn name(&self) -> &str {
        "diagnostics"
    }

    fn description(&self) -> &str {
        "Get errors and warnings from the project's language servers (rust-analyzer, clangd, \
         pyright/pylsp/ruff, typescript-language-server, gopls, as installed and configured). \
         With a path, that file is checked as it is on disk now; without one, every file the \
         servers have reported on is listed. Lines are `line:column severity: message [code] \
         (source)`."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Errors and warnings from language servers")
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Read
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("path").and_then(Value::as_str))
    }

    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        match args.get("path").and_then(Value::as_str) {
            Some(p) => vec![self.ctx.resolve(p).absolute],
            None => vec![self.ctx.cwd.clone()],
        }
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let path = optional_str(&args, "path")?.map(|p| self.ctx.resolve(p).absolute);
        let severity = match optional_str(&args, "severity")? {
            None | Some("warning") => Severity::Warning,
            Some("error") => Severity::Error,
            Some("information") | Some("info") => Severity::Information,
            Some("hint") => Severity::Hint,
            Some(other) => {
                return Err(ToolError::new(format!(
                    "severity must be error, warning, information or hint, not `{other}`"
                )));
            }
        };
        let Some(lsp) = &self.ctx.lsp else {
            return Err(ToolError::new(
                "Diagnostics are off: `[lsp] enabled = false` in config.toml.",
            ));
        };
        if let Some(p) = &path {
            if !p.is_file() {
                return Err(ToolError::new(format!(
                    "{} is not a file.",
                    self.ctx.display(p)
                )));
            }
            if !lsp.handles(p) {
                return Err(ToolError::new(format!(
                    "No language server is configured for {} (see [lsp.servers] in config.toml).",
                    self.ctx.display(p)
                )));
            }
        }
        let query = lsp.source.query(path.as_deref(), lsp.wait);
        let files = tokio::select! {
            files = query => files.map_err(|e| ToolError::new(e.to_string()))?,
            () = cancel.cancelled() => return Err(ToolError::new("Aborted")),
        };
        let text = render_report(&files, severity, |p| self.ctx.display(p));
        Ok(ToolOutcome {
            content: vec![march_core::message::UserContent::text(text)],
            details: json!({ "files": files }),
            terminate: false,
            change: None,
            usage: None,
        })
    }
}
