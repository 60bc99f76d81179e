//! A file change as a unified diff (3 lines of context), for tool calls that edit files.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// How long a diff may take before similar settles for a coarser answer.
const DIFF_TIMEOUT: Duration = Duration::from_millis(200);
const CONTEXT_LINES: usize = 3;

/// What a diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiffLineKind {
    Hunk,
    Added,
    Removed,
    Context,
}

/// A unified diff: its lines and how many were added and removed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct UnifiedDiff {
    pub lines: Vec<(DiffLineKind, String)>,
    pub added: usize,
    pub removed: usize,
}

/// The diff from `old` (none for a new file) to `new`.
pub(crate) fn unified(old: Option<&str>, new: &str) -> UnifiedDiff {
    let old = old.unwrap_or("");
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mut out = UnifiedDiff::default();
    let mut udiff = diff.unified_diff();
    udiff.context_radius(CONTEXT_LINES);
    for hunk in udiff.iter_hunks() {
        out.lines
            .push((DiffLineKind::Hunk, hunk.header().to_string()));
        for change in hunk.iter_changes() {
            let text = change.value().trim_end_matches(['\n', '\r']).to_string();
            let kind = match change.tag() {
                ChangeTag::Insert => {
                    out.added += 1;
                    DiffLineKind::Added
                }
                ChangeTag::Delete => {
                    out.removed += 1;
                    DiffLineKind::Removed
                }
                ChangeTag::Equal => DiffLineKind::Context,
            };
            out.lines.push((kind, text));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_line_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let d = unified(Some(old), new);
        assert_eq!((d.added, d.removed), (1, 1));
        assert_eq!(d.lines[0], (DiffLineKind::Hunk, "@@ -2,7 +2,7 @@".into()));
        assert!(d.lines.contains(&(DiffLineKind::Removed, "e".into())));
        assert!(d.lines.contains(&(DiffLineKind::Added, "E".into())));
        assert_eq!(d.lines.len(), 1 + 7 + 1);
    }

    #[test]
    fn new_file_is_all_added() {
        let d = unified(None, "one\ntwo\n");
        assert_eq!((d.added, d.removed), (2, 0));
    }

    #[test]
    fn identical_texts_have_no_hunks() {
        assert!(unified(Some("same\n"), "same\n").lines.is_empty());
    }
}
