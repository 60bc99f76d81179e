//! The tool contract: what a capability declares and how the loop runs it.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::event::ToolOutcome;
use crate::message::UserContent;

/// Whether a tool may run alongside the others of its batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    /// Run concurrently with the batch (pi's default).
    #[default]
    Parallel,
    /// Any sequential tool in a batch makes the whole batch sequential.
    Sequential,
}

/// Permission hints a tool declares about itself (MCP-style annotations).
///
/// Defaults follow MCP: not read-only, destructive, open-world — so an undeclared tool asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Only reads; never changes anything.
    pub read_only: bool,
    /// May destroy or overwrite data.
    pub destructive: bool,
    /// Touches things outside the project (network, arbitrary processes).
    pub open_world: bool,
}

impl Default for ToolAnnotations {
    fn default() -> Self {
        ToolAnnotations {
            read_only: false,
            destructive: true,
            open_world: true,
        }
    }
}

impl ToolAnnotations {
    /// A tool that only reads inside the project.
    pub const READ_ONLY: ToolAnnotations = ToolAnnotations {
        read_only: true,
        destructive: false,
        open_world: false,
    };

    /// Harmless tools run without asking: they stay inside (not open-world) and only read or
    /// destroy nothing. An open-world read asks too: the address it reads can carry the
    /// project's data out (a page fetched after a prompt injection), so the user lets it.
    pub fn is_harmless(&self) -> bool {
        !self.open_world && (self.read_only || !self.destructive)
    }
}

/// What a call does, so clients can pick icons and follow along (ACP's tool kinds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolKind {
    /// Reads files or data.
    Read,
    /// Changes files.
    Edit,
    /// Removes files.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches for information.
    Search,
    /// Runs a command.
    Execute,
    /// Thinks or plans.
    Think,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    #[default]
    Other,
}

/// A file a call changed: its text before and after, for a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The absolute path.
    pub path: PathBuf,
    /// The text before; `None` when the call created the file.
    pub old_text: Option<String>,
    /// The text after.
    pub new_text: String,
}

impl FileChange {
    /// Files past this size get no diff (the text result still says what happened).
    pub const MAX_BYTES: usize = 1024 * 1024;

    /// The change from `old` (`None`: no file) to `new` at `path`, when both are UTF-8 text
    /// small enough to show.
    pub fn new(path: impl Into<PathBuf>, old: Option<&[u8]>, new: &[u8]) -> Option<Self> {
        let text = |bytes: &[u8]| {
            (bytes.len() <= Self::MAX_BYTES)
                .then(|| std::str::from_utf8(bytes).ok().map(str::to_string))
                .flatten()
        };
        let old_text = match old {
            Some(bytes) => Some(text(bytes)?),
            None => None,
        };
        Some(FileChange {
            path: path.into(),
            old_text,
            new_text: text(new)?,
        })
    }
}

/// A call's title: the tool's name and the first line of its main argument, if any.
pub fn call_title(name: &str, main: Option<&str>) -> String {
    match main.and_then(|m| m.lines().next()) {
        Some(first) if !first.trim().is_empty() => format!("{name} {first}"),
        _ => name.to_string(),
    }
}

/// A tool's failure, shown to the model as an error result it can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    /// An error with a message for the model.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError(message.into())
    }
}

/// Where a running tool reports partial output; each call becomes `tool_execution_update`.
#[derive(Clone)]
pub struct ToolUpdates {
    sink: Arc<dyn Fn(ToolOutcome) + Send + Sync>,
}

impl ToolUpdates {
    /// Wrap a callback.
    pub fn new(sink: impl Fn(ToolOutcome) + Send + Sync + 'static) -> Self {
        ToolUpdates {
            sink: Arc::new(sink),
        }
    }

    /// A sink that drops everything.
    pub fn discard() -> Self {
        ToolUpdates::new(|_| {})
    }

    /// Report partial output.
    pub fn send(&self, partial: ToolOutcome) {
        (self.sink)(partial)
    }

    /// Report partial text output.
    pub fn text(&self, text: impl Into<String>) {
        self.send(ToolOutcome::text(text));
    }
}

impl ToolOutcome {
    /// A result with one text block and no details.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutcome {
            content: vec![UserContent::text(text)],
            details: Value::Null,
            terminate: false,
            change: None,
            usage: None,
        }
    }

    /// All text blocks joined, for logs and tests.
    pub fn text_content(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                UserContent::Text(t) => Some(t.text.as_str()),
                UserContent::Image(_) => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A capability the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name the model calls it by.
    fn name(&self) -> &str;

    /// Human-readable label for UIs.
    fn label(&self) -> &str {
        self.name()
    }

    /// Description for the model.
    fn description(&self) -> &str;

    /// JSON schema of the arguments object.
    fn parameters(&self) -> &Value;

    /// Parallel unless the tool must run alone.
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }

    /// Permission hints.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// What a call with these arguments does; tools whose arguments decide say so per call.
    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Other
    }

    /// A one-line title for a call with these arguments, for people (see [`call_title`]).
    fn title(&self, _args: &Value) -> String {
        self.label().to_string()
    }

    /// Permission hints for one call, for tools whose arguments decide (read vs append).
    fn call_annotations(&self, _args: &Value) -> ToolAnnotations {
        self.annotations()
    }

    /// One line for the system prompt's tool list, if the tool wants to be listed.
    fn prompt_snippet(&self) -> Option<&str> {
        None
    }

    /// Guidelines added to the system prompt while the tool is active.
    fn prompt_guidelines(&self) -> &[&str] {
        &[]
    }

    /// Absolute paths a call with these (validated) arguments would read or write, so a
    /// permission gate can ask before the tool runs. Empty when the tool touches no files.
    fn target_paths(&self, _args: &Value) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// What a call with these (validated) arguments would do, for a permission request to
    /// show before it runs: the file change, the command and where. May read files (callers
    /// run it off async threads); `None` when there is nothing more to show than the
    /// arguments, or the call would fail anyway.
    fn preview(&self, _args: &Value) -> Option<CallPreview> {
        None
    }

    /// Whether a call with these arguments runs a command in the session's sandbox, and
    /// whether it asks the user to run it outside.
    fn sandbox_use(&self, _args: &Value) -> SandboxUse {
        SandboxUse::None
    }

    /// Compatibility shim applied to raw arguments before validation.
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }

    /// Run the tool. Honour `cancel`; report progress through `updates`.
    async fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError>;
}

/// How a tool call meets the session's command sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SandboxUse {
    /// It runs no command.
    #[default]
    None,
    /// It runs a command in the sandbox.
    Confined,
    /// It runs a command and asks to run it outside the sandbox (the user decides).
    AsksOutside {
        /// Why, in the model's words (shown to the user with the question).
        reason: Option<String>,
    },
}

/// What a call would do, shown before the user allows it.
#[derive(Debug, Clone, PartialEq)]
pub enum CallPreview {
    /// The change to a file (a new file has no old text).
    Change(FileChange),
    /// A shell command and the directory it runs in.
    Command {
        /// The command line.
        command: String,
        /// Its working directory.
        cwd: std::path::PathBuf,
    },
    /// Text the call adds somewhere, and where (memory's file).
    Text {
        /// Where it goes, for people.
        target: String,
        /// The text.
        text: String,
    },
    /// A picture the call puts somewhere, and where (a new avatar).
    Image {
        /// Where it goes, for people.
        target: String,
        /// The picture.
        image: crate::message::ImageContent,
    },
}

/// The schema a provider sends for a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: Value,
}

impl ToolSpec {
    /// The spec of a tool.
    pub fn of(tool: &dyn Tool) -> Self {
        ToolSpec {
            name: tool.name().to_string(),
            description: tool.description().to_string(),
            parameters: tool.parameters().clone(),
        }
    }
}
