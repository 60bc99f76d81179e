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

/// The name March's own agent goes by where agents are named (its avatar's file name).
pub const OWN_AGENT: &str = "march";

/// File name endings an avatar may have, in the order they are looked for.
pub const AVATAR_ENDINGS: [&str; 5] = ["png", "jpg", "jpeg", "webp", "gif"];

/// Where agents' avatars live: `<config>/profiles/avatars/<agent>.<png|jpg|jpeg|webp|gif>`.
pub fn avatar_dir(config_dir: &Path) -> PathBuf {
    config_dir.join("profiles").join("avatars")
}

/// The avatar file of `agent` ([`OWN_AGENT`] for March's own), if there is one.
pub fn find_avatar(config_dir: &Path, agent: &str) -> Option<PathBuf> {
    let dir = avatar_dir(config_dir);
    AVATAR_ENDINGS
        .iter()
        .map(|ending| dir.join(format!("{agent}.{ending}")))
        .find(|path| path.is_file())
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
    fn an_avatar_is_found_by_the_agents_name_under_any_image_ending() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(find_avatar(tmp.path(), OWN_AGENT), None);
        let dir = avatar_dir(tmp.path());
        std::fs::create_dir_all(dir.join("claude.png")).unwrap();
        std::fs::write(dir.join("march.webp"), b"x").unwrap();
        std::fs::write(dir.join("march.txt"), b"x").unwrap();
        assert_eq!(
            find_avatar(tmp.path(), OWN_AGENT),
            Some(dir.join("march.webp"))
        );
        // A directory is not an avatar.
        assert_eq!(find_avatar(tmp.path(), "claude"), None);
    }

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
