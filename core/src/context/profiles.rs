//! `profiles`: the agent profile (how this agent should behave for the user) and the user
//! profile (who the user is), markdown files in the config dir.

use std::path::{Path, PathBuf};

/// The profile files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profiles {
    /// `profiles/agent.md`, if present.
    pub agent: Option<String>,
    /// `profiles/user.md`, if present.
    pub user: Option<String>,
}

/// Where the profiles live under a config dir.
pub fn profile_paths(config_dir: &Path) -> (PathBuf, PathBuf) {
    let dir = config_dir.join("profiles");
    (dir.join("agent.md"), dir.join("user.md"))
}

fn read(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    (!text.is_empty()).then_some(text)
}

impl Profiles {
    /// Read both profiles from `config_dir/profiles/`.
    pub fn load(config_dir: &Path) -> Self {
        let (agent, user) = profile_paths(config_dir);
        Profiles {
            agent: read(&agent),
            user: read(&user),
        }
    }

    /// The section text; empty without profiles.
    pub fn render(&self) -> String {
        let mut parts = Vec::new();
        if let Some(a) = &self.agent {
            parts.push(format!("<agent_profile>\n{a}\n</agent_profile>"));
        }
        if let Some(u) = &self.user {
            parts.push(format!("<user_profile>\n{u}\n</user_profile>"));
        }
        parts.join("\n\n")
    }
}
