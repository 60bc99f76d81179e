//! The agent's plan: a task list the model keeps (the `todo` tool), carried in a tool
//! result's details under [`PLAN_KEY`] so whoever maps results (live or replayed) can show it
//! without knowing which tool made it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The key of a tool result's details that holds the session's plan.
pub const PLAN_KEY: &str = "plan";

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// How much a task matters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanPriority {
    /// First.
    High,
    /// The usual.
    #[default]
    Medium,
    /// When there is time.
    Low,
}

/// One task of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanEntry {
    /// What the task is.
    pub content: String,
    /// Where it stands.
    pub status: PlanStatus,
    /// How much it matters.
    #[serde(default)]
    pub priority: PlanPriority,
}

/// The plan a tool result's details carry, if they carry one.
pub fn plan_in(details: &Value) -> Option<Vec<PlanEntry>> {
    serde_json::from_value(details.get(PLAN_KEY)?.clone()).ok()
}

/// Details that carry `entries` as the session's plan.
pub fn plan_details(entries: &[PlanEntry]) -> Value {
    serde_json::json!({ PLAN_KEY: entries })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_goes_into_details_and_comes_back() {
        let entries = vec![
            PlanEntry {
                content: "read the parser".into(),
                status: PlanStatus::Completed,
                priority: PlanPriority::High,
            },
            PlanEntry {
                content: "fix nesting".into(),
                status: PlanStatus::InProgress,
                priority: PlanPriority::Medium,
            },
        ];
        let details = plan_details(&entries);
        assert_eq!(details["plan"][1]["status"], "in_progress");
        assert_eq!(plan_in(&details), Some(entries));
        assert_eq!(plan_in(&serde_json::json!({"diff": "x"})), None);
        assert_eq!(plan_in(&serde_json::json!({"plan": "not a list"})), None);
    }
}
