//! Where March keeps its files: one config directory and one data directory.
//!
//! `$MARCH_HOME` puts everything under one directory (tests always set it); otherwise the XDG
//! base directories are used.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Why March's directories could not be determined.
#[derive(Debug, thiserror::Error)]
pub enum PathsError {
    /// Neither `MARCH_HOME` nor `HOME` (nor both XDG directories) is set.
    #[error(
        "cannot locate March's directories: HOME is not set (set HOME or MARCH_HOME to a directory)"
    )]
    NoHome,
}

/// March's config and data directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarchPaths {
    /// Config, keymaps, themes and `auth.json`.
    pub config_dir: PathBuf,
    /// Sessions, history, memory, logs and workspace state.
    pub data_dir: PathBuf,
}

impl MarchPaths {
    /// Resolve the directories from the process environment.
    pub fn from_env() -> Result<Self, PathsError> {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// Resolve the directories from `var`, a lookup of environment variables by name.
    ///
    /// Pure apart from calling `var`, so tests can pass a fake environment.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Result<Self, PathsError> {
        // Empty values count as unset, as the XDG spec asks and shells make easy to produce.
        let get = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(home) = get("MARCH_HOME") {
            return Ok(Self::at(&home));
        }
        // The XDG spec says relative paths are invalid and must be ignored.
        let xdg = |name: &str| get(name).filter(|p| p.is_absolute());
        let home = get("HOME");
        let base = |xdg_name: &str, fallback: &[&str]| -> Result<PathBuf, PathsError> {
            match xdg(xdg_name) {
                Some(dir) => Ok(dir),
                None => {
                    let mut dir = home.clone().ok_or(PathsError::NoHome)?;
                    dir.extend(fallback);
                    Ok(dir)
                }
            }
        };
        Ok(MarchPaths {
            config_dir: base("XDG_CONFIG_HOME", &[".config"])?.join("march"),
            data_dir: base("XDG_DATA_HOME", &[".local", "share"])?.join("march"),
        })
    }

    /// The single-directory layout used for `$MARCH_HOME`: config in `home`, data in `home/data`.
    pub fn at(home: &Path) -> Self {
        MarchPaths {
            config_dir: home.to_path_buf(),
            data_dir: home.join("data"),
        }
    }

    /// `config.toml` in the config directory.
    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    /// `auth.json` (API keys, mode 0600) in the config directory.
    pub fn auth_file(&self) -> PathBuf {
        self.config_dir.join("auth.json")
    }

    /// The directory for log files.
    pub fn log_dir(&self) -> PathBuf {
        self.data_dir.join("logs")
    }

    /// The directory for session transcripts.
    pub fn sessions_dir(&self) -> PathBuf {
        self.data_dir.join("sessions")
    }

    /// The directory for March's own session state (title, timeline, restore data), kept
    /// apart from the transcripts.
    pub fn march_sessions_dir(&self) -> PathBuf {
        self.data_dir.join("march-sessions")
    }

    /// The user's answers about projects' `.mcp.json` servers.
    pub fn mcp_trust_file(&self) -> PathBuf {
        self.data_dir.join("mcp-trust.json")
    }

    /// The directory for global memory files (`*.md`), read into every project's context.
    pub fn memory_dir(&self) -> PathBuf {
        self.data_dir.join("memory")
    }

    /// The history index database (searchable turns of all sessions), kept apart from the
    /// transcripts.
    pub fn history_db(&self) -> PathBuf {
        self.data_dir.join("history.sqlite")
    }
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

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            vars.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn march_home_wins() {
        let paths = MarchPaths::from_vars(env(&[
            ("MARCH_HOME", "/tmp/mh"),
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/xdg/config"),
        ]))
        .unwrap();
        assert_eq!(paths.config_dir, PathBuf::from("/tmp/mh"));
        assert_eq!(paths.data_dir, PathBuf::from("/tmp/mh/data"));
        assert_eq!(paths, MarchPaths::at(Path::new("/tmp/mh")));
    }

    #[test]
    fn home_fallbacks() {
        let paths = MarchPaths::from_vars(env(&[("HOME", "/home/u"), ("MARCH_HOME", "")])).unwrap();
        assert_eq!(paths.config_dir, PathBuf::from("/home/u/.config/march"));
        assert_eq!(paths.data_dir, PathBuf::from("/home/u/.local/share/march"));
    }

    #[test]
    fn xdg_dirs() {
        let paths = MarchPaths::from_vars(env(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/xdg/config"),
            ("XDG_DATA_HOME", "/xdg/data"),
        ]))
        .unwrap();
        assert_eq!(paths.config_dir, PathBuf::from("/xdg/config/march"));
        assert_eq!(paths.data_dir, PathBuf::from("/xdg/data/march"));
    }

    #[test]
    fn relative_xdg_is_ignored() {
        let paths =
            MarchPaths::from_vars(env(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "rel")])).unwrap();
        assert_eq!(paths.config_dir, PathBuf::from("/home/u/.config/march"));
    }

    #[test]
    fn missing_home_is_an_error() {
        let err = MarchPaths::from_vars(env(&[])).unwrap_err();
        assert!(err.to_string().contains("HOME"));
        // Both XDG dirs set: HOME is not needed.
        let paths =
            MarchPaths::from_vars(env(&[("XDG_CONFIG_HOME", "/c"), ("XDG_DATA_HOME", "/d")]))
                .unwrap();
        assert_eq!(paths.data_dir, PathBuf::from("/d/march"));
    }

    #[test]
    fn helpers() {
        let paths = MarchPaths::at(Path::new("/h"));
        assert_eq!(paths.config_file(), PathBuf::from("/h/config.toml"));
        assert_eq!(paths.auth_file(), PathBuf::from("/h/auth.json"));
        assert_eq!(paths.log_dir(), PathBuf::from("/h/data/logs"));
        assert_eq!(paths.sessions_dir(), PathBuf::from("/h/data/sessions"));
        assert_eq!(
            paths.march_sessions_dir(),
            PathBuf::from("/h/data/march-sessions")
        );
        assert_eq!(paths.history_db(), PathBuf::from("/h/data/history.sqlite"));
        assert_eq!(paths.memory_dir(), PathBuf::from("/h/data/memory"));
    }
}
