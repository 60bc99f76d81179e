//! Which projects' `.mcp.json` the user trusted: a project's file starts programs, so its
//! servers run only after the user said yes once, for that exact file. The answers live in
//! March's data dir (never in the project, which could otherwise trust itself).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_file::{FileMode, write_file};

/// One project's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Answer {
    /// The `.mcp.json` the answer was given for, as it was then.
    file: String,
    /// Whether its servers may run.
    trusted: bool,
}

/// The answers, by project directory.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct McpTrust {
    projects: BTreeMap<PathBuf, Answer>,
}

/// Why the answers could not be saved.
#[derive(Debug, thiserror::Error)]
#[error("cannot save MCP trust answers to {}: {error}", path.display())]
pub struct TrustError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub error: String,
}

impl McpTrust {
    /// The answers in `file`; none when it is missing or unreadable (then March asks again).
    pub fn load(file: &Path) -> McpTrust {
        match std::fs::read_to_string(file) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::warn!(path = %file.display(), "MCP trust answers not read: {e}");
                McpTrust::default()
            }),
            Err(_) => McpTrust::default(),
        }
    }

    /// The answer for `project` whose `.mcp.json` reads `text`: `None` when none was given
    /// or the file changed since.
    pub fn answer(&self, project: &Path, text: &str) -> Option<bool> {
        self.projects
            .get(project)
            .filter(|a| a.file == text)
            .map(|a| a.trusted)
    }

    /// Record the answer for `project`'s `.mcp.json` as `text` reads, and save all answers
    /// to `file` (re-read first, so answers given by other runners are kept).
    pub fn remember(
        file: &Path,
        project: &Path,
        text: &str,
        trusted: bool,
    ) -> Result<(), TrustError> {
        let mut all = McpTrust::load(file);
        all.projects.insert(
            project.to_path_buf(),
            Answer {
                file: text.to_string(),
                trusted,
            },
        );
        let error = |error: String| TrustError {
            path: file.to_path_buf(),
            error,
        };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| error(e.to_string()))?;
        }
        let json = serde_json::to_vec_pretty(&all).map_err(|e| error(e.to_string()))?;
        write_file(file, &json, FileMode::Private).map_err(|e| error(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_holds_for_the_file_it_was_given_for() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data/mcp-trust.json");
        let project = Path::new("/work/p");
        assert_eq!(McpTrust::load(&file).answer(project, "{}"), None);
        McpTrust::remember(&file, project, "{\"a\":1}", true).unwrap();
        McpTrust::remember(&file, Path::new("/work/q"), "{}", false).unwrap();
        let trust = McpTrust::load(&file);
        assert_eq!(trust.answer(project, "{\"a\":1}"), Some(true));
        assert_eq!(trust.answer(Path::new("/work/q"), "{}"), Some(false));
        // The file changed: asked again.
        assert_eq!(trust.answer(project, "{\"a\":2}"), None);
        std::fs::write(&file, "not json").unwrap();
        assert_eq!(McpTrust::load(&file).answer(project, "{\"a\":1}"), None);
    }
}
