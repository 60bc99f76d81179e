//! Path arguments: resolved against the session's working directory, never trusted blindly.

use std::path::{Component, Path, PathBuf};

/// A path argument after resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute, lexically normalised path (symlinks not followed).
    pub absolute: PathBuf,
    /// Whether it lies inside the project (the session's working directory).
    pub inside_project: bool,
}

impl ResolvedPath {
    /// The path as shown to the model: relative to the project when inside it.
    pub fn display(&self, cwd: &Path) -> String {
        match self.absolute.strip_prefix(cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
            _ => self.absolute.to_string_lossy().into_owned(),
        }
    }
}

/// Spaces some systems put in file names (narrow no-break before AM/PM, and so on) that a
/// model will type as plain spaces.
fn normalize_spaces(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

/// The user's home directory.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Resolve a path argument: strips a leading `@` (mention syntax), normalises Unicode
/// spaces, expands `~`, joins relative paths to `cwd` and removes `.` and `..` lexically.
pub fn resolve(cwd: &Path, raw: &str) -> ResolvedPath {
    let raw = normalize_spaces(raw.trim());
    let raw = raw.strip_prefix('@').unwrap_or(&raw);
    let expanded: PathBuf = if raw == "~" {
        home().unwrap_or_else(|| PathBuf::from(raw))
    } else if let Some(rest) = raw.strip_prefix("~/") {
        home().map_or_else(|| PathBuf::from(raw), |h| h.join(rest))
    } else {
        PathBuf::from(raw)
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    let absolute = normalize(&joined);
    let inside_project = absolute.starts_with(normalize(cwd));
    ResolvedPath {
        absolute,
        inside_project,
    }
}

/// Remove `.` and `..` without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The key that identifies a file for serialising mutations: the canonical path if the file
/// (or its parent) exists, else the normalised absolute path.
pub fn canonical_key(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|p| p.join(name))
            .unwrap_or_else(|_| normalize(path)),
        _ => normalize(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_absolute_mentions_and_dots() {
        let cwd = Path::new("/work/proj");
        let r = resolve(cwd, "src/../lib/./a.rs");
        assert_eq!(r.absolute, PathBuf::from("/work/proj/lib/a.rs"));
        assert!(r.inside_project);
        assert_eq!(r.display(cwd), "lib/a.rs");
        let r = resolve(cwd, "@README.md");
        assert_eq!(r.absolute, PathBuf::from("/work/proj/README.md"));
        let r = resolve(cwd, "../other/x");
        assert!(!r.inside_project);
        assert_eq!(r.display(cwd), "/work/other/x");
        let r = resolve(cwd, "/etc/passwd");
        assert!(!r.inside_project);
        assert!(
            !resolve(cwd, "/work/project2").inside_project,
            "prefix of a name is not inside"
        );
    }

    #[test]
    fn unicode_spaces_and_home() {
        let cwd = Path::new("/p");
        assert_eq!(
            resolve(cwd, "Screen Shot 10.00\u{202F}AM.png").absolute,
            PathBuf::from("/p/Screen Shot 10.00 AM.png")
        );
        if let Some(h) = home() {
            assert_eq!(resolve(cwd, "~/x").absolute, normalize(&h.join("x")));
        }
    }
}
