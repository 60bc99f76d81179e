//! Listing a project's files and directories for `@` mentions, with ripgrep's walker:
//! ignore files honoured, hidden files and `.git` left out, as `fd` does. Kept free of the
//! rest of the app so the mention benchmark can time it alone.

use std::path::Path;

/// Entries listed at most (a home directory opened as a project stays usable).
pub const MAX_FILES: usize = 500_000;

/// The files and directories under `project`, relative, `/`-separated, directories ending
/// in `/`, sorted; at most [`MAX_FILES`].
pub fn list(project: &Path) -> Vec<String> {
    let found = std::sync::Mutex::new(Vec::new());
    let walker = ignore::WalkBuilder::new(project)
        .hidden(true)
        .parents(true)
        .git_ignore(true)
        .require_git(false)
        .threads(2)
        .build_parallel();
    walker.run(|| {
        let mut mine = Collector {
            found: &found,
            mine: Vec::new(),
        };
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            let Ok(rel) = entry.path().strip_prefix(project) else {
                return ignore::WalkState::Continue;
            };
            if rel.as_os_str().is_empty() {
                return ignore::WalkState::Continue;
            }
            // A name that is not UTF-8 could not be mentioned and found again.
            let Some(text) = rel.to_str() else {
                return ignore::WalkState::Continue;
            };
            let mut text = text.to_string();
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                text.push('/');
            }
            mine.mine.push(text);
            if mine.mine.len() >= 1024 && mine.flush() >= MAX_FILES {
                return ignore::WalkState::Quit;
            }
            ignore::WalkState::Continue
        })
    });
    let mut all = found.into_inner().unwrap_or_else(|e| e.into_inner());
    all.sort_unstable();
    all.truncate(MAX_FILES);
    all
}

/// One walker thread's finds, added to the shared list in batches and when the thread
/// is done (its visitor dropped).
struct Collector<'a> {
    found: &'a std::sync::Mutex<Vec<String>>,
    mine: Vec<String>,
}

impl Collector<'_> {
    /// Adds the batch; how many the list holds now.
    fn flush(&mut self) -> usize {
        let mut all = self.found.lock().unwrap_or_else(|e| e.into_inner());
        all.append(&mut self.mine);
        all.len()
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}
