//! The diffs an edit reports: pi's numbered display diff and a standard unified patch.

use std::time::Duration;

use similar::{DiffTag, TextDiff};

/// Lines of unchanged context shown around each change.
const CONTEXT_LINES: usize = 4;

/// Pathological inputs make Myers quadratic; past this the diff is approximated, not wrong.
const DIFF_TIMEOUT: Duration = Duration::from_secs(5);

/// What an edit's `details` carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditDiff {
    /// Display diff: `+N text`, `-N text`, ` N text` and ` <pad> ...` lines.
    pub diff: String,
    /// Unified diff with the same path on both sides.
    pub patch: String,
    /// First changed line (1-based) in the new content.
    pub first_changed_line: Option<usize>,
}

/// One run of the line diff.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Kind {
    Equal,
    Removed,
    Added,
}

/// Maximal runs of equal lines, and change runs as removed-then-added, like jsdiff's parts.
fn parts<'a>(diff: &'a TextDiff<'a, 'a, str>) -> Vec<(Kind, Vec<&'a str>)> {
    let old: Vec<&str> = diff.iter_old_slices().collect();
    let new: Vec<&str> = diff.iter_new_slices().collect();
    let strip = |l: &&'a str| -> &'a str { l.strip_suffix('\n').unwrap_or(l) };
    let mut out: Vec<(Kind, Vec<&'a str>)> = Vec::new();
    let mut removed: Vec<&str> = Vec::new();
    let mut added: Vec<&str> = Vec::new();
    let flush =
        |out: &mut Vec<(Kind, Vec<&'a str>)>, r: &mut Vec<&'a str>, a: &mut Vec<&'a str>| {
            if !r.is_empty() {
                out.push((Kind::Removed, std::mem::take(r)));
            }
            if !a.is_empty() {
                out.push((Kind::Added, std::mem::take(a)));
            }
        };
    for op in diff.ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {
                flush(&mut out, &mut removed, &mut added);
                let lines = old.get(old_range).unwrap_or_default().iter().map(strip);
                match out.last_mut() {
                    Some((Kind::Equal, run)) => run.extend(lines),
                    _ => out.push((Kind::Equal, lines.collect())),
                }
            }
            _ => {
                removed.extend(old.get(old_range).unwrap_or_default().iter().map(strip));
                added.extend(new.get(new_range).unwrap_or_default().iter().map(strip));
            }
        }
    }
    flush(&mut out, &mut removed, &mut added);
    out
}

/// Numbered display diff and first changed line, following pi's `generateDiffString`.
fn display_diff(old: &str, new: &str, diff: &TextDiff<'_, '_, str>) -> (String, Option<usize>) {
    let parts = parts(diff);
    let max_line = old.split('\n').count().max(new.split('\n').count());
    let width = max_line.to_string().len();
    let mut out: Vec<String> = Vec::new();
    let mut old_num = 1;
    let mut new_num = 1;
    let mut last_was_change = false;
    let mut first_changed = None;
    let skipped = |out: &mut Vec<String>| out.push(format!(" {:width$} ...", ""));

    for (i, (kind, lines)) in parts.iter().enumerate() {
        match kind {
            Kind::Removed => {
                first_changed.get_or_insert(new_num);
                for line in lines {
                    out.push(format!("-{old_num:>width$} {line}"));
                    old_num += 1;
                }
                last_was_change = true;
            }
            Kind::Added => {
                first_changed.get_or_insert(new_num);
                for line in lines {
                    out.push(format!("+{new_num:>width$} {line}"));
                    new_num += 1;
                }
                last_was_change = true;
            }
            Kind::Equal => {
                let next_is_change = parts.get(i + 1).is_some_and(|(k, _)| *k != Kind::Equal);
                let n = lines.len();
                // Which lines of this run to show; anything between them is one `...` row.
                let (head, tail) = match (last_was_change, next_is_change) {
                    (true, true) if n <= 2 * CONTEXT_LINES => (n, 0),
                    (true, true) => (CONTEXT_LINES, CONTEXT_LINES),
                    (true, false) => (n.min(CONTEXT_LINES), 0),
                    (false, true) => (0, n.min(CONTEXT_LINES)),
                    (false, false) => (0, 0),
                };
                let shown_anything = last_was_change || next_is_change;
                for line in &lines[..head] {
                    out.push(format!(" {old_num:>width$} {line}"));
                    old_num += 1;
                    new_num += 1;
                }
                let skip = n - head - tail;
                if skip > 0 && shown_anything {
                    skipped(&mut out);
                }
                old_num += skip;
                new_num += skip;
                for line in &lines[n - tail..] {
                    out.push(format!(" {old_num:>width$} {line}"));
                    old_num += 1;
                    new_num += 1;
                }
                last_was_change = false;
            }
        }
    }
    (out.join("\n"), first_changed)
}

/// Both diffs of an edit of `path` from `old` to `new` (LF-normalised contents).
pub fn edit_diff(path: &str, old: &str, new: &str) -> EditDiff {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let (display, first_changed_line) = display_diff(old, new, &diff);
    let patch = diff
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(path, path)
        .to_string();
    EditDiff {
        diff: display,
        patch,
        first_changed_line,
    }
}
