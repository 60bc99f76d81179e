//! A file's change as hunks of numbered lines, with the words that changed inside changed
//! lines marked: what the diff pane draws, unified or side by side.

use std::ops::Range;
use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// Lines of context around each change.
pub const CONTEXT: usize = 3;

/// Bytes of text, before and after together, above which a file is not diffed (a clear
/// "too large" view instead).
pub const MAX_DIFF_BYTES: usize = 16 << 20;

/// How long a diff may search before it settles for a coarser answer.
const DEADLINE: Duration = Duration::from_millis(500);

/// What a line of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// In both texts.
    Context,
    /// Only in the new text.
    Added,
    /// Only in the old text.
    Removed,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    /// What it is.
    pub kind: LineKind,
    /// Its number in the old text (1-based), unless added.
    pub old: Option<usize>,
    /// Its number in the new text (1-based), unless removed.
    pub new: Option<usize>,
    /// Its text, without the line ending.
    pub text: String,
    /// Byte ranges of `text` that changed within a changed line (word level).
    pub changed: Vec<Range<usize>>,
}

/// A run of changes with their context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// Its lines, in order.
    pub lines: Vec<DiffLine>,
}

impl Hunk {
    /// The `@@ -a,b +c,d @@` header.
    pub fn header(&self) -> String {
        let span = |n: fn(&DiffLine) -> Option<usize>| {
            let numbers: Vec<usize> = self.lines.iter().filter_map(n).collect();
            match (numbers.first(), numbers.len()) {
                (Some(first), len) => format!("{first},{len}"),
                (None, _) => "0,0".to_string(),
            }
        };
        format!("@@ -{} +{} @@", span(|l| l.old), span(|l| l.new))
    }
}

/// Why a file has no hunks to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoDiff {
    /// The texts are the same.
    Unchanged,
    /// One side holds a NUL byte: not text.
    Binary,
    /// Too large to diff here (bytes before and after).
    TooLarge(usize, usize),
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The file, as shown.
    pub path: String,
    /// Lines added and removed.
    pub added: usize,
    pub removed: usize,
    /// The file did not exist before, or does not after.
    pub created: bool,
    pub deleted: bool,
    /// The changes.
    pub hunks: Vec<Hunk>,
    /// Why there are no hunks, when there are none to show.
    pub none: Option<NoDiff>,
}

impl FileDiff {
    /// The change of `path` from `before` (`None`: it did not exist) to `after` (`None`: it
    /// was deleted).
    pub fn new(path: &str, before: Option<&str>, after: Option<&str>) -> FileDiff {
        let mut diff = FileDiff {
            path: path.to_string(),
            added: 0,
            removed: 0,
            created: before.is_none(),
            deleted: after.is_none(),
            hunks: Vec::new(),
            none: None,
        };
        let (old, new) = (before.unwrap_or(""), after.unwrap_or(""));
        if old.len() + new.len() > MAX_DIFF_BYTES {
            diff.none = Some(NoDiff::TooLarge(old.len(), new.len()));
            return diff;
        }
        if old.contains('\0') || new.contains('\0') {
            diff.none = Some(NoDiff::Binary);
            return diff;
        }
        let text = TextDiff::configure().timeout(DEADLINE).diff_lines(old, new);
        for group in text.grouped_ops(CONTEXT) {
            let mut hunk = Hunk { lines: Vec::new() };
            for op in &group {
                for change in text.iter_inline_changes(op) {
                    let kind = match change.tag() {
                        ChangeTag::Equal => LineKind::Context,
                        ChangeTag::Insert => {
                            diff.added += 1;
                            LineKind::Added
                        }
                        ChangeTag::Delete => {
                            diff.removed += 1;
                            LineKind::Removed
                        }
                    };
                    let mut line = DiffLine {
                        kind,
                        old: change.old_index().map(|i| i + 1),
                        new: change.new_index().map(|i| i + 1),
                        text: String::new(),
                        changed: Vec::new(),
                    };
                    // A line wholly changed marks nothing: the marks are for the words that
                    // changed in a line that otherwise stayed.
                    let parts: Vec<(bool, String)> = change
                        .iter_strings_lossy()
                        .map(|(emphasized, s)| (emphasized, s.into_owned()))
                        .collect();
                    let partly = parts.iter().any(|(e, _)| !e) && parts.iter().any(|(e, _)| *e);
                    for (emphasized, part) in parts {
                        let start = line.text.len();
                        line.text.push_str(&part);
                        if partly && emphasized && kind != LineKind::Context {
                            line.changed.push(start..line.text.len());
                        }
                    }
                    let trimmed = line.text.trim_end_matches(['\n', '\r']).len();
                    line.text.truncate(trimmed);
                    line.changed.retain_mut(|r| {
                        r.end = r.end.min(trimmed);
                        r.start < r.end
                    });
                    hunk.lines.push(line);
                }
            }
            diff.hunks.push(hunk);
        }
        if diff.hunks.is_empty() && before.is_some() && after.is_some() {
            diff.none = Some(NoDiff::Unchanged);
        }
        diff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(h: &Hunk) -> String {
        h.lines
            .iter()
            .map(|l| match l.kind {
                LineKind::Context => ' ',
                LineKind::Added => '+',
                LineKind::Removed => '-',
            })
            .collect()
    }

    #[test]
    fn a_changed_line_is_numbered_with_context_and_its_changed_word_marked() {
        let old = "a\nb\nc\nlet x = 1;\nd\ne\nf\ng\n";
        let new = "a\nb\nc\nlet x = 2;\nd\ne\nf\ng\n";
        let d = FileDiff::new("src/x.rs", Some(old), Some(new));
        assert_eq!((d.added, d.removed, d.none), (1, 1, None));
        assert_eq!(d.hunks.len(), 1);
        let h = &d.hunks[0];
        assert_eq!(kinds(h), "   -+   ");
        assert_eq!(h.header(), "@@ -1,7 +1,7 @@");
        let removed = &h.lines[3];
        assert_eq!((removed.old, removed.new), (Some(4), None));
        assert_eq!(removed.text, "let x = 1;");
        assert_eq!(&removed.text[removed.changed[0].clone()], "1;");
        let added = &h.lines[4];
        assert_eq!((added.old, added.new), (None, Some(4)));
        assert_eq!(&added.text[added.changed[0].clone()], "2;");
    }

    #[test]
    fn far_apart_changes_make_two_hunks() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 28\n", "");
        let d = FileDiff::new("f", Some(&old), Some(&new));
        assert_eq!(d.hunks.len(), 2);
        assert_eq!((d.added, d.removed), (1, 2));
        assert_eq!(d.hunks[1].header(), "@@ -25,6 +25,5 @@");
    }

    #[test]
    fn new_binary_unchanged_and_huge_files() {
        let created = FileDiff::new("n", None, Some("one\ntwo\n"));
        assert!(created.created && created.added == 2);
        assert!(created.hunks[0].lines.iter().all(|l| l.changed.is_empty()));
        let binary = FileDiff::new("b", Some("a\0b"), Some("a\0c"));
        assert_eq!(binary.none, Some(NoDiff::Binary));
        let same = FileDiff::new("s", Some("x\n"), Some("x\n"));
        assert_eq!(same.none, Some(NoDiff::Unchanged));
        let huge = "x\n".repeat(MAX_DIFF_BYTES / 2);
        let big = FileDiff::new("h", Some(&huge), Some("y\n"));
        assert_eq!(big.none, Some(NoDiff::TooLarge(huge.len(), 2)));
    }

    #[test]
    fn crlf_lines_lose_their_endings_and_keep_their_numbers() {
        let d = FileDiff::new("w", Some("a\r\nb\r\n"), Some("a\r\nc\r\n"));
        let h = &d.hunks[0];
        assert_eq!(kinds(h), " -+");
        assert_eq!(h.lines[2].text, "c");
        assert_eq!(h.lines[2].new, Some(2));
    }

    #[test]
    fn crlf_files_diff_by_line_without_their_carriage_returns() {
        let old = "one\r\ntwo\r\nthree\r\n";
        let new = "one\r\n2\r\nthree\r\n";
        let d = FileDiff::new("w.txt", Some(old), Some(new));
        assert_eq!((d.added, d.removed, d.hunks.len()), (1, 1, 1));
        let texts: Vec<&str> = d.hunks[0].lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["one", "two", "2", "three"]);
        // Only the line endings changed: every line differs, and says so.
        let d = FileDiff::new("w.txt", Some("a\nb\n"), Some("a\r\nb\r\n"));
        assert_eq!((d.added, d.removed), (2, 2));
    }
}
