//! `/export [PATH]`: a session's transcript written as a markdown document (the pane's
//! [`march_panes::agent::AgentPane::export_markdown`]) by a job, and the outcome said in
//! the pane.

use std::path::{Path, PathBuf};

use march_core::atomic_file::{FileMode, write_file};

use super::Workspace;
use super::jobs::JobDone;
use super::router::SessionKey;

impl Workspace {
    /// Writes session `key` as markdown to `args` (relative to its project), or to
    /// `march-<title>.md` in the project, off the loop.
    pub(super) fn export_session(&mut self, key: SessionKey, args: &str) {
        let Some(slot) = self.sessions.get(&key) else {
            return;
        };
        let file = export_path(&slot.project, args, &slot.view, slot.session_id.as_ref());
        let text = slot.view.export_markdown();
        self.launcher.jobs.blocking(move || {
            let result = write_file(&file, text.as_bytes(), FileMode::Kept)
                .map(|()| file.clone())
                .map_err(|e| format!("cannot write {}: {e}", file.display()));
            JobDone::Exported {
                session: key,
                result,
            }
        });
    }

    /// An export came back: the pane says where it went, or why it did not.
    pub(super) fn exported(&mut self, key: SessionKey, result: Result<PathBuf, String>) -> bool {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return false;
        };
        match result {
            Ok(file) => slot.view.notice(format!("Exported to {}", file.display())),
            Err(e) => slot.view.set_error(e),
        }
        true
    }
}

/// Where `/export ARGS` writes session `view`: the path given (relative to `project`), or
/// `march-<title or id>.md` in the project.
fn export_path(
    project: &Path,
    args: &str,
    view: &march_panes::agent::AgentPane,
    id: Option<&agent_client_protocol::v1::schema::SessionId>,
) -> PathBuf {
    if !args.is_empty() {
        let given = Path::new(args);
        return project.join(given);
    }
    let name = view
        .session_title()
        .map(str::to_string)
        .or_else(|| id.map(|id| id.0.to_string()))
        .unwrap_or_else(|| "session".to_string());
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .take(48)
        .collect();
    project.join(format!(
        "march-{}.md",
        if slug.is_empty() { "session" } else { &slug }
    ))
}
