//! Prompt history per project: the prompts sent from a project's agent panes, kept in the
//! data dir (`prompt-history/<project>-<hash>.jsonl`, one JSON string a line, newest last),
//! read when a pane opens and appended as prompts are sent, both off the loop. The file is
//! bounded: past [`CUT_BYTES`] it is rewritten with the newest [`LIMIT`] entries only.

use std::fs::{self, OpenOptions};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use march_core::atomic_file::{FileMode, write_file};

/// Prompts kept per project.
pub const LIMIT: usize = 1000;
/// A history file this large is cut back to the newest [`LIMIT`] prompts.
const CUT_BYTES: u64 = 512 * 1024;
/// Prompts longer than this are not kept (a pasted file is no history to walk).
const MAX_ENTRY_BYTES: usize = 64 * 1024;

/// The history file of `project` under `data_dir`.
pub fn file_for(data_dir: &Path, project: &Path) -> PathBuf {
    data_dir.join("prompt-history").join(format!(
        "{}.jsonl",
        super::persist::file_stem(&[project.to_path_buf()])
    ))
}

/// The newest [`LIMIT`] prompts of `file`, oldest first; lines that are not a JSON string
/// are passed over, a missing file is an empty history.
pub fn read(file: &Path) -> Vec<String> {
    let Ok(f) = fs::File::open(file) else {
        return Vec::new();
    };
    let mut entries: Vec<String> = io::BufReader::new(f)
        .split(b'\n')
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_slice::<String>(&line).ok())
        .collect();
    let excess = entries.len().saturating_sub(LIMIT);
    entries.drain(..excess);
    entries
}

/// Appends `text` to `file`; when the file has grown past [`CUT_BYTES`] it is rewritten
/// (atomically) with the newest [`LIMIT`] entries (only its size is looked at otherwise).
pub fn append(file: &Path, text: &str) -> io::Result<()> {
    if text.len() > MAX_ENTRY_BYTES || text.trim().is_empty() {
        return Ok(());
    }
    if let Some(dir) = file.parent() {
        fs::create_dir_all(dir)?;
    }
    let mut line = serde_json::to_string(text).map_err(io::Error::other)?;
    line.push('\n');
    let mut f = OpenOptions::new().create(true).append(true).open(file)?;
    f.write_all(line.as_bytes())?;
    if f.metadata()?.len() > CUT_BYTES {
        let kept: String = read(file)
            .iter()
            .filter_map(|e| serde_json::to_string(e).ok())
            .map(|e| e + "\n")
            .collect();
        write_file(file, kept.as_bytes(), FileMode::Kept).map_err(io::Error::other)?;
    }
    Ok(())
}

impl super::Workspace {
    /// Reads `project`'s prompt history off the loop, for its agent panes.
    pub(super) fn read_history(&self, project: &Path) {
        let Some(paths) = &self.launcher.paths else {
            return;
        };
        let file = file_for(&paths.data_dir, project);
        let project = project.to_path_buf();
        self.launcher
            .jobs
            .blocking(move || super::jobs::JobDone::HistoryRead {
                entries: read(&file),
                project,
            });
    }

    /// `project`'s history was read: its panes walk it, before what they sent since.
    pub(super) fn history_read(&mut self, project: &Path, entries: Vec<String>) -> bool {
        for slot in self.sessions.values_mut().filter(|s| s.project == project) {
            let since: Vec<String> = slot
                .view
                .history()
                .iter()
                .filter(|h| !entries.contains(h))
                .cloned()
                .collect();
            let mut all = entries.clone();
            all.extend(since);
            slot.view.set_history(all);
        }
        false
    }

    /// A prompt sent from session `key`: the project's other panes remember it, and it is
    /// added to the project's history file off the loop.
    pub(super) fn save_prompt(&mut self, key: super::router::SessionKey, text: &str) {
        let Some(project) = self.sessions.get(&key).map(|s| s.project.clone()) else {
            return;
        };
        for (other, slot) in self.sessions.iter_mut() {
            if other != key && slot.project == project {
                slot.view.remember_prompt(text);
            }
        }
        let Some(paths) = &self.launcher.paths else {
            return;
        };
        let file = file_for(&paths.data_dir, &project);
        let text = text.to_string();
        self.launcher.jobs.blocking(move || {
            super::jobs::JobDone::HistorySaved(append(&file, &text).map_err(|e| e.to_string()))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_kept_per_project_bounded_and_bad_lines_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let a = file_for(dir.path(), Path::new("/work/a"));
        let b = file_for(dir.path(), Path::new("/work/b"));
        assert_ne!(a, b);
        assert!(read(&a).is_empty(), "no file yet");
        append(&a, "first\nwith a line break").unwrap();
        append(&a, "  ").unwrap();
        append(&a, "second").unwrap();
        let mut raw = fs::read(&a).unwrap();
        raw.extend(b"not json\n\xff\xfe\n");
        fs::write(&a, raw).unwrap();
        append(&a, "third").unwrap();
        assert_eq!(read(&a), ["first\nwith a line break", "second", "third"]);
        assert!(read(&b).is_empty());
        // Prompts of a kilobyte: the file passes its size bound twice over.
        let long = "x".repeat(1000);
        for i in 0..2 * LIMIT + 5 {
            append(&b, &format!("p{i} {long}")).unwrap();
        }
        let kept = read(&b);
        assert_eq!(kept.len(), LIMIT);
        assert_eq!(
            kept.last().map(String::as_str),
            Some(&*format!("p{} {long}", 2 * LIMIT + 4))
        );
        let lines = fs::read_to_string(&b).unwrap().lines().count();
        assert!(lines <= 2 * LIMIT, "the file was cut back ({lines} lines)");
    }
}
