//! A project's own settings, `<project>/.march/settings.toml`: what the user decided for this
//! project (today, the tools that run there without asking). Kept with the project, so it
//! holds for every session there and can be committed or ignored as the team likes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_file::{FileMode, write_file};

/// Where a project's settings live, relative to the project.
pub const SETTINGS_FILE: &str = ".march/settings.toml";

/// Why the settings could not be read or saved.
#[derive(Debug, thiserror::Error)]
pub enum ProjectSettingsError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not valid TOML of this shape.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its line.
        message: String,
    },
    /// The file could not be written.
    #[error("cannot save {path}: {message}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        message: String,
    },
}

/// `[permissions]`: tool calls allowed in this project without asking.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PermissionSettings {
    /// Tools (by name) whose calls inside the project run without asking.
    pub allow: BTreeSet<String>,
}

/// The settings of one project.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProjectSettings {
    /// What runs without asking.
    pub permissions: PermissionSettings,
}

impl ProjectSettings {
    /// The settings file of `project`.
    pub fn path(project: &Path) -> PathBuf {
        project.join(SETTINGS_FILE)
    }

    /// The settings of `project`; none saved yet is the defaults.
    pub fn load(project: &Path) -> Result<Self, ProjectSettingsError> {
        let path = Self::path(project);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(ProjectSettingsError::Read { path, source }),
        };
        toml::from_str(&text).map_err(|e| ProjectSettingsError::Parse {
            path,
            message: e.to_string(),
        })
    }

    /// Allow `tool` in `project` from now on: read, add, save atomically (the directory made
    /// when missing). A file that does not parse is not overwritten.
    pub fn allow_tool(project: &Path, tool: &str) -> Result<(), ProjectSettingsError> {
        let mut settings = Self::load(project)?;
        if !settings.permissions.allow.insert(tool.to_string()) {
            return Ok(());
        }
        let path = Self::path(project);
        let write = |message: String| ProjectSettingsError::Write {
            path: path.clone(),
            message,
        };
        let text = toml::to_string(&settings).map_err(|e| write(e.to_string()))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| write(e.to_string()))?;
        }
        write_file(&path, text.as_bytes(), FileMode::Kept).map_err(|e| write(e.to_string()))
    }

    /// Whether calls of `tool` run in this project without asking.
    pub fn allows(&self, tool: &str) -> bool {
        self.permissions.allow.contains(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowing_a_tool_saves_it_beside_what_was_there() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        assert_eq!(
            ProjectSettings::load(project).unwrap(),
            ProjectSettings::default()
        );
        ProjectSettings::allow_tool(project, "bash").unwrap();
        ProjectSettings::allow_tool(project, "edit").unwrap();
        ProjectSettings::allow_tool(project, "bash").unwrap();
        let settings = ProjectSettings::load(project).unwrap();
        assert!(settings.allows("bash") && settings.allows("edit") && !settings.allows("write"));
        let text = std::fs::read_to_string(project.join(SETTINGS_FILE)).unwrap();
        assert!(text.contains("[permissions]"), "{text}");

        // A damaged file is reported with its path and left alone.
        std::fs::write(project.join(SETTINGS_FILE), "[permissions\nallow = 3").unwrap();
        let err = ProjectSettings::allow_tool(project, "write")
            .unwrap_err()
            .to_string();
        assert!(err.contains("settings.toml"), "{err}");
        assert_eq!(
            std::fs::read_to_string(project.join(SETTINGS_FILE)).unwrap(),
            "[permissions\nallow = 3"
        );
    }
}
