//! `project_context`: AGENTS.md / CLAUDE.md from the global config dir, then from the
//! repository root down to the working directory.

use std::path::{Path, PathBuf};

/// File names looked for in each directory; the first that exists wins.
pub const CONTEXT_FILES: [&str; 4] = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

/// Largest context file read in full; longer files are cut with a note.
pub const MAX_FILE_BYTES: usize = 64 * 1024;

/// One instructions file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its text (lossy UTF-8, possibly cut).
    pub content: String,
}

/// The project's instruction files, outermost first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectContext {
    /// The files in order.
    pub files: Vec<ContextFile>,
}

/// The nearest ancestor of `cwd` (itself included) that holds `.git`.
pub fn repository_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

fn read_first(dir: &Path) -> Option<ContextFile> {
    let path = CONTEXT_FILES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())?;
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read context file");
            return None;
        }
    };
    let cut = bytes.len() > MAX_FILE_BYTES;
    let mut content =
        String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_FILE_BYTES)]).into_owned();
    if cut {
        content.push_str(&format!(
            "\n[... cut: the file is {} bytes; only the first {MAX_FILE_BYTES} are included]",
            bytes.len()
        ));
    }
    Some(ContextFile { path, content })
}

impl ProjectContext {
    /// Collect: `global_dir` first, then each directory from the repository root (or `cwd`
    /// when it is not in a repository) down to `cwd`.
    pub fn discover(global_dir: Option<&Path>, cwd: &Path) -> Self {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(g) = global_dir {
            dirs.push(g.to_path_buf());
        }
        let root = repository_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
        let mut chain: Vec<PathBuf> = cwd
            .ancestors()
            .take_while(|d| d.starts_with(&root))
            .map(Path::to_path_buf)
            .collect();
        chain.reverse();
        dirs.extend(chain);
        let mut files: Vec<ContextFile> = Vec::new();
        for dir in dirs {
            if let Some(f) = read_first(&dir)
                && !files.iter().any(|x| x.path == f.path)
            {
                files.push(f);
            }
        }
        ProjectContext { files }
    }

    /// The section text; empty without files.
    pub fn render(&self) -> String {
        if self.files.is_empty() {
            return String::new();
        }
        let mut out =
            String::from("<project_context>\nProject-specific instructions and guidelines:\n");
        for f in &self.files {
            out.push_str(&format!(
                "\n<project_instructions path=\"{}\">\n{}\n</project_instructions>\n",
                f.path.display(),
                f.content.trim_end()
            ));
        }
        out.push_str("</project_context>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_then_root_down_to_cwd_first_name_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let global = tmp.path().join("config");
        let repo = tmp.path().join("repo");
        let cwd = repo.join("crates/app");
        std::fs::create_dir_all(&global).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(tmp.path().join("AGENTS.md"), "outside the repo").unwrap();
        std::fs::write(global.join("AGENTS.md"), "global rules").unwrap();
        std::fs::write(repo.join("AGENTS.md"), "repo rules").unwrap();
        std::fs::write(repo.join("CLAUDE.md"), "shadowed").unwrap();
        std::fs::write(cwd.join("CLAUDE.md"), "app rules").unwrap();
        let ctx = ProjectContext::discover(Some(&global), &cwd);
        let texts: Vec<&str> = ctx.files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(texts, ["global rules", "repo rules", "app rules"]);
        let rendered = ctx.render();
        assert!(rendered.starts_with("<project_context>"));
        assert!(rendered.find("repo rules") < rendered.find("app rules"));
    }

    #[test]
    fn outside_a_repository_only_cwd_counts_and_huge_files_are_cut() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("p");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(cwd.join("AGENTS.md"), "x".repeat(MAX_FILE_BYTES + 10)).unwrap();
        let ctx = ProjectContext::discover(None, &cwd);
        assert_eq!(ctx.files.len(), 1);
        assert!(ctx.files[0].content.contains("only the first"));
        assert!(ProjectContext::default().render().is_empty());
    }
}
