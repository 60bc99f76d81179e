//! `profiles`: the agent profile (how this agent should behave for the user) and the user
//! profile (who the user is), markdown files in the config dir, and memory (global and
//! project notes, within a token budget; see [`MemoryLayer`]).

use std::path::{Path, PathBuf};

use super::memory::MemoryLayer;

/// The profile files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profiles {
    /// `profiles/agent.md`, if present.
    pub agent: Option<String>,
    /// `profiles/user.md`, if present.
    pub user: Option<String>,
    /// Memory files within their budget.
    pub memory: MemoryLayer,
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
            memory: MemoryLayer::default(),
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
        let memory = self.memory.render();
        if !memory.is_empty() {
            parts.push(memory);
        }
        parts.join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_profiles_render_tagged_and_missing_ones_are_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(Profiles::load(tmp.path()), Profiles::default());
        assert!(Profiles::default().render().is_empty());
        let (agent, user) = profile_paths(tmp.path());
        std::fs::create_dir_all(agent.parent().unwrap()).unwrap();
        std::fs::write(&agent, "  Prefer small diffs.\n").unwrap();
        std::fs::write(&user, b"Name: Ana \xff").unwrap();
        let p = Profiles::load(tmp.path());
        assert_eq!(p.agent.as_deref(), Some("Prefer small diffs."));
        assert_eq!(p.user.as_deref(), Some("Name: Ana \u{fffd}"));
        assert_eq!(
            p.render(),
            "<agent_profile>\nPrefer small diffs.\n</agent_profile>\n\n<user_profile>\nName: Ana \u{fffd}\n</user_profile>"
        );
    }
}
