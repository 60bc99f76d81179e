//! Where session files live: one directory per working directory, one file per session,
//! named as pi names them so the layouts stay interchangeable.

use std::path::{Path, PathBuf};

use crate::paths::MarchPaths;

/// The directory for the sessions of `cwd`: `<sessions_dir>/--<cwd encoded>--`.
///
/// The leading `/` or `\` is dropped and every `/`, `\` and `:` becomes `-`, as in pi.
pub fn session_dir(sessions_dir: &Path, cwd: &Path) -> PathBuf {
    let cwd = cwd.to_string_lossy();
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(&cwd);
    let encoded: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    sessions_dir.join(format!("--{encoded}--"))
}

/// The session directory for `cwd` under March's data directory.
pub fn march_session_dir(paths: &MarchPaths, cwd: &Path) -> PathBuf {
    session_dir(&paths.sessions_dir(), cwd)
}

/// The file name of a session: `<timestamp with : and . as ->_<session id>.jsonl`.
pub fn session_file_name(timestamp: &str, session_id: &str) -> String {
    // Separators are replaced too: the timestamp must never leave the directory.
    let stamp: String = timestamp
        .chars()
        .map(|c| {
            if matches!(c, ':' | '.' | '/' | '\\') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("{stamp}_{session_id}.jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_encoding_matches_pi() {
        let base = Path::new("/s");
        assert_eq!(
            session_dir(base, Path::new("/Users/badlogic/workspaces/pi-mono")),
            PathBuf::from("/s/--Users-badlogic-workspaces-pi-mono--")
        );
        assert_eq!(
            session_dir(base, Path::new("C:\\work\\proj")),
            PathBuf::from("/s/--C--work-proj--")
        );
        assert_eq!(session_dir(base, Path::new("/")), PathBuf::from("/s/----"));
        let paths = MarchPaths::at(Path::new("/h"));
        assert_eq!(
            march_session_dir(&paths, Path::new("/p")),
            PathBuf::from("/h/data/sessions/--p--")
        );
    }

    #[test]
    fn file_name_matches_pi() {
        assert_eq!(
            session_file_name(
                "2025-12-09T00:52:54.397Z",
                "d97339c6-6c10-4827-846b-9ff1d9c3dc37"
            ),
            "2025-12-09T00-52-54-397Z_d97339c6-6c10-4827-846b-9ff1d9c3dc37.jsonl"
        );
        assert_eq!(session_file_name("a/../b", "x"), "a----b_x.jsonl");
    }
}
