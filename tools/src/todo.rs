//! The `todo` tool: the model keeps its task list for the work at hand, as Claude Code's and
//! Codex's agents do. Each call gives the whole list; the result carries it as the session's
//! plan ([`march_core::plan`]), which clients show with each task's state.

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::message::UserContent;
use march_core::plan::{PlanEntry, PlanStatus, plan_details};
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Tasks a list may hold.
const MAX_TASKS: usize = 100;
/// Characters a task's text may have.
const MAX_TASK_CHARS: usize = 500;

const DESCRIPTION: &str = "Keep a task list for the current work, shown to the user as your \
plan. Give the whole list every time (it replaces the previous one): each task's content, its \
status (pending, in_progress, completed) and optionally its priority (high, medium, low). Use it \
for work of three steps or more: write the list when you start, mark a task in_progress when \
you begin it (one at a time) and completed as soon as it is done, and add tasks you discover.";

/// Keeps the model's task list.
pub struct TodoTool {
    parameters: Value,
}

impl Default for TodoTool {
    fn default() -> Self {
        Self::new()
    }
}

impl TodoTool {
    /// A todo tool.
    pub fn new() -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The whole task list, in order",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "What the task is"},
                            "status": {
                                "type": "string",
                                "enum": ["pending", "in_progress", "completed"]
                            },
                            "priority": {
                                "type": "string",
                                "enum": ["high", "medium", "low"]
                            }
                        },
                        "required": ["content", "status"]
                    }
                }
            },
            "required": ["todos"]
        });
        TodoTool { parameters }
    }
}

/// The list a call gives, checked.
fn entries(args: &Value) -> Result<Vec<PlanEntry>, ToolError> {
    let todos = args
        .get("todos")
        .cloned()
        .ok_or_else(|| ToolError::new("Argument \"todos\" is required"))?;
    let entries: Vec<PlanEntry> = serde_json::from_value(todos)
        .map_err(|e| ToolError::new(format!("Argument \"todos\" is not a task list: {e}")))?;
    if entries.len() > MAX_TASKS {
        return Err(ToolError::new(format!(
            "The list has {} tasks; keep it to {MAX_TASKS} at most",
            entries.len()
        )));
    }
    if let Some(long) = entries
        .iter()
        .find(|e| e.content.chars().count() > MAX_TASK_CHARS)
    {
        return Err(ToolError::new(format!(
            "A task is longer than {MAX_TASK_CHARS} characters: \"{}…\"; keep tasks short",
            long.content.chars().take(40).collect::<String>()
        )));
    }
    if entries.iter().any(|e| e.content.trim().is_empty()) {
        return Err(ToolError::new("Every task needs content"));
    }
    Ok(entries)
}

/// The list as the model reads it back.
fn summary(entries: &[PlanEntry]) -> String {
    if entries.is_empty() {
        return "The task list is empty.".to_string();
    }
    let done = entries
        .iter()
        .filter(|e| e.status == PlanStatus::Completed)
        .count();
    let mut text = format!("Task list updated ({done} of {} done):\n", entries.len());
    for e in entries {
        let mark = match e.status {
            PlanStatus::Pending => "[ ]",
            PlanStatus::InProgress => "[~]",
            PlanStatus::Completed => "[x]",
        };
        text.push_str(&format!("{mark} {}\n", e.content));
    }
    text
}

#[async_trait]
impl Tool for TodoTool {
    fn name(&self) -> &str {
        "todo"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// It changes nothing outside the session: never worth a question.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Think
    }

    fn title(&self, args: &Value) -> String {
        match entries(args) {
            Ok(list) => {
                let done = list
                    .iter()
                    .filter(|e| e.status == PlanStatus::Completed)
                    .count();
                format!("todo {done}/{} done", list.len())
            }
            Err(_) => "todo".to_string(),
        }
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Keep a task list for multi-step work, shown to the user as your plan")
    }

    fn prompt_guidelines(&self) -> &[&str] {
        &[
            "For work of three steps or more, keep the todo list current: one task in_progress \
           at a time, completed as soon as done.",
        ]
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        _cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let list = entries(&args)?;
        Ok(ToolOutcome {
            content: vec![UserContent::text(summary(&list))],
            details: plan_details(&list),
            terminate: false,
            change: None,
            usage: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::run_tool;
    use march_core::plan::plan_in;

    #[tokio::test]
    async fn the_list_comes_back_as_the_plan_and_as_text() {
        let tool = TodoTool::new();
        let args = json!({"todos": [
            {"content": "read the parser", "status": "completed", "priority": "high"},
            {"content": "fix nesting", "status": "in_progress"},
            {"content": "add tests", "status": "pending"}
        ]});
        assert_eq!(tool.title(&args), "todo 1/3 done");
        let out = run_tool(&tool, args).await.unwrap();
        let plan = plan_in(&out.details).unwrap();
        assert_eq!(plan.len(), 3);
        assert_eq!(plan[1].status, PlanStatus::InProgress);
        let text = out.text_content();
        assert!(
            text.starts_with("Task list updated (1 of 3 done)"),
            "{text}"
        );
        assert!(text.contains("[~] fix nesting"), "{text}");
        assert!(tool.annotations().is_harmless());
    }

    #[tokio::test]
    async fn bad_lists_are_explained() {
        let tool = TodoTool::new();
        for (args, says) in [
            (json!({}), "required"),
            (
                json!({"todos": [{"content": "x", "status": "done"}]}),
                "not a task list",
            ),
            (
                json!({"todos": [{"content": " ", "status": "pending"}]}),
                "needs content",
            ),
            (
                json!({"todos": [{"content": "x".repeat(600), "status": "pending"}]}),
                "longer than 500",
            ),
        ] {
            let err = run_tool(&tool, args).await.unwrap_err();
            assert!(err.0.contains(says), "{}", err.0);
        }
    }
}
