//! Text matching for the edit tool: line endings, BOM, fuzzy normalisation and applying
//! several replacements matched against the same original content (pi's `edit-diff.ts`).

use crate::truncate::{MAX_LINE_CHARS, truncate_line};

/// One replacement requested by the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// Text to find; must be unique in the original content.
    pub old_text: String,
    /// Text to put in its place.
    pub new_text: String,
}

/// Content before and after applying edits, both LF-normalised and without BOM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The LF-normalised original.
    pub base: String,
    /// The LF-normalised result.
    pub new: String,
}

/// Line ending of a file, decided by its first newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n`.
    Lf,
    /// `\r\n`.
    CrLf,
}

/// CRLF iff the first `\n` is preceded by `\r`.
pub fn detect_line_ending(content: &str) -> LineEnding {
    match content.find('\n') {
        Some(i) if i > 0 && content.as_bytes()[i - 1] == b'\r' => LineEnding::CrLf,
        _ => LineEnding::Lf,
    }
}

/// `\r\n` and lone `\r` become `\n`.
pub fn normalize_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Turn LF-normalised text back into the file's line ending.
pub fn restore_line_endings(text: &str, ending: LineEnding) -> String {
    match ending {
        LineEnding::Lf => text.to_string(),
        LineEnding::CrLf => text.replace('\n', "\r\n"),
    }
}

/// Split off a leading UTF-8 BOM: `(bom, rest)`.
pub fn strip_bom(content: &str) -> (&str, &str) {
    match content.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", content),
    }
}

/// Map one character to its fuzzy form, pushing the result onto `out`.
///
/// pi runs full NFKC first; without a Unicode-tables crate we cover the compatibility
/// mappings that realistically appear when a model retypes code: full-width ASCII
/// (U+FF01–U+FF5E), the Unicode spaces (U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000),
/// the ellipsis family (U+2024–U+2026) and the Latin ligatures U+FB00–U+FB04. Not covered:
/// canonical composition (precomposed vs combining accents), super/subscripts, other
/// compatibility forms. On top of that, pi's own mappings: smart quotes and Unicode
/// dashes/minus to ASCII.
fn push_fuzzy_char(c: char, out: &mut String) {
    let mapped: &str = match c {
        '\u{FF01}'..='\u{FF5E}' => {
            // Full-width forms sit at a fixed offset above ASCII.
            let ascii = char::from_u32(c as u32 - 0xFEE0).unwrap_or(c);
            out.push(ascii);
            return;
        }
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => " ",
        '\u{2018}'..='\u{201B}' => "'",
        '\u{201C}'..='\u{201F}' => "\"",
        '\u{2010}'..='\u{2015}' | '\u{2212}' => "-",
        '\u{2024}' => ".",
        '\u{2025}' => "..",
        '\u{2026}' => "...",
        '\u{FB00}' => "ff",
        '\u{FB01}' => "fi",
        '\u{FB02}' => "fl",
        '\u{FB03}' => "ffi",
        '\u{FB04}' => "ffl",
        c => {
            out.push(c);
            return;
        }
    };
    out.push_str(mapped);
}

/// The fuzzy view of a text: character mappings above plus trailing whitespace stripped
/// from every line. Never adds or removes `\n`, so line numbers stay aligned.
pub fn normalize_for_fuzzy(text: &str) -> String {
    let mut mapped = String::with_capacity(text.len());
    for c in text.chars() {
        push_fuzzy_char(c, &mut mapped);
    }
    let mut out = String::with_capacity(mapped.len());
    for (i, line) in mapped.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line.trim_end());
    }
    out
}

/// A match: byte offset and length in the content it was found in.
#[derive(Debug, Clone, Copy)]
struct Found {
    index: usize,
    len: usize,
    fuzzy: bool,
}

/// Exact search first, then search in fuzzy space (offsets then refer to the fuzzy content).
fn find_text(content: &str, old_text: &str) -> Option<Found> {
    if let Some(index) = content.find(old_text) {
        return Some(Found {
            index,
            len: old_text.len(),
            fuzzy: false,
        });
    }
    let needle = normalize_for_fuzzy(old_text);
    // A needle that normalises to nothing (only trailing whitespace) matches nowhere useful.
    if needle.is_empty() {
        return None;
    }
    normalize_for_fuzzy(content)
        .find(&needle)
        .map(|index| Found {
            index,
            len: needle.len(),
            fuzzy: true,
        })
}

/// Non-overlapping occurrences, counted in fuzzy space so near-duplicates are caught too.
fn count_occurrences(content: &str, old_text: &str) -> usize {
    let needle = normalize_for_fuzzy(old_text);
    if needle.is_empty() {
        // Whitespace-only text: fall back to exact counting instead of "everywhere".
        return content.matches(old_text).count();
    }
    normalize_for_fuzzy(content).matches(&needle).count()
}

/// Byte range of each line (including its `\n`), as `split_inclusive` yields them.
fn line_spans(content: &str) -> Vec<(usize, usize)> {
    let mut offset = 0;
    content
        .split_inclusive('\n')
        .map(|line| {
            let span = (offset, offset + line.len());
            offset = span.1;
            span
        })
        .collect()
}

/// The half-open line range `[start, end)` a replacement touches.
fn touched_lines(spans: &[(usize, usize)], index: usize, len: usize) -> Option<(usize, usize)> {
    let start = spans.iter().position(|&(s, e)| index >= s && index < e)?;
    let end_offset = index + len;
    let mut end = start;
    while end < spans.len() && spans[end].1 < end_offset {
        end += 1;
    }
    (end < spans.len()).then_some((start, end + 1))
}

/// A located edit, in the coordinates of the content it will be applied to.
#[derive(Debug, Clone)]
struct Matched {
    edit_index: usize,
    index: usize,
    len: usize,
    new_text: String,
}

/// Apply sorted, disjoint replacements back to front; `offset` is where `content` starts in
/// the coordinates the matches use.
fn apply_replacements(content: &str, matches: &[Matched], offset: usize) -> String {
    let mut result = content.to_string();
    for m in matches.iter().rev() {
        let start = m.index - offset;
        result.replace_range(start..start + m.len, &m.new_text);
    }
    result
}

/// Apply replacements matched in `fuzzy` (the normalised view of `original`) so that only
/// the lines they touch come from the normalised text; every other line keeps its bytes.
fn apply_preserving_untouched(
    original: &str,
    fuzzy: &str,
    matches: &[Matched],
) -> Result<String, String> {
    let original_lines: Vec<&str> = original.split_inclusive('\n').collect();
    let spans = line_spans(fuzzy);
    if original_lines.len() != spans.len() {
        return Err("Internal error: the normalised text has a different line count.".into());
    }
    // Group replacements whose touched line ranges overlap, so a shared line is rebuilt once.
    let mut groups: Vec<(usize, usize, Vec<Matched>)> = Vec::new();
    for m in matches {
        let (start, end) = touched_lines(&spans, m.index, m.len)
            .ok_or("Internal error: a replacement lies outside the file.")?;
        match groups.last_mut() {
            Some(group) if start < group.1 => {
                group.1 = group.1.max(end);
                group.2.push(m.clone());
            }
            _ => groups.push((start, end, vec![m.clone()])),
        }
    }
    let mut result = String::with_capacity(original.len());
    let mut next_line = 0;
    for (start, end, group) in &groups {
        result.extend(original_lines[next_line..*start].iter().copied());
        let from = spans[*start].0;
        let to = spans[*end - 1].1;
        result.push_str(&apply_replacements(&fuzzy[from..to], group, from));
        next_line = *end;
    }
    result.extend(original_lines[next_line..].iter().copied());
    Ok(result)
}

/// Where the model probably aimed, to make a not-found error actionable.
fn closest_match_context(content: &str, old_text: &str) -> Option<String> {
    let lines: Vec<&str> = content.split('\n').collect();
    let old_lines: Vec<&str> = old_text.split('\n').collect();
    // pi looks at the first line only; a leading blank line would make that useless.
    let first = old_lines.iter().map(|l| l.trim()).find(|l| !l.is_empty())?;
    let show = |start: usize, end: usize| {
        lines[start..end]
            .iter()
            .enumerate()
            .map(|(i, line)| {
                format!(
                    "  {}: {}",
                    start + i + 1,
                    truncate_line(line, MAX_LINE_CHARS).0
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let first_chars: Vec<char> = first.chars().collect();
    let mut len = first_chars.len().min(60);
    while len >= 10 {
        let needle: String = first_chars[..len].iter().collect();
        let needle = needle.trim();
        if !needle.is_empty()
            && let Some(idx) = lines.iter().position(|l| l.contains(needle))
        {
            let start = idx.saturating_sub(2);
            let end = lines.len().min(idx + old_lines.len() + 3);
            return Some(format!(
                "Closest match is around line {}:\n{}",
                idx + 1,
                show(start, end)
            ));
        }
        len -= 10;
    }
    Some(format!(
        "File starts with:\n{}",
        show(0, lines.len().min(5))
    ))
}

fn not_found_error(path: &str, i: usize, total: usize, content: &str, old_text: &str) -> String {
    let header = if total == 1 {
        format!("Could not find the exact text in {path}.")
    } else {
        format!("Could not find edits[{i}] in {path}.")
    };
    let context = if content.is_empty() {
        "\nFile is empty.".to_string()
    } else {
        closest_match_context(content, old_text)
            .map(|c| format!("\n{c}"))
            .unwrap_or_default()
    };
    format!(
        "{header} The old text must match exactly including all whitespace and newlines.{context}"
    )
}

fn duplicate_error(path: &str, i: usize, total: usize, occurrences: usize) -> String {
    if total == 1 {
        format!(
            "Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
        )
    } else {
        format!(
            "Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
        )
    }
}

fn empty_old_text_error(path: &str, i: usize, total: usize) -> String {
    if total == 1 {
        format!("oldText must not be empty in {path}.")
    } else {
        format!("edits[{i}].oldText must not be empty in {path}.")
    }
}

fn no_change_error(path: &str, total: usize) -> String {
    if total == 1 {
        format!(
            "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
        )
    } else {
        format!("No changes made to {path}. The replacements produced identical content.")
    }
}

/// Apply `edits` to LF-normalised `content`, every edit matched against the original.
/// `path` is only used in error messages.
pub fn apply_edits(content: &str, edits: &[Edit], path: &str) -> Result<Applied, String> {
    let total = edits.len();
    let edits: Vec<Edit> = edits
        .iter()
        .map(|e| Edit {
            old_text: normalize_to_lf(&e.old_text),
            new_text: normalize_to_lf(&e.new_text),
        })
        .collect();
    if let Some(i) = edits.iter().position(|e| e.old_text.is_empty()) {
        return Err(empty_old_text_error(path, i, total));
    }

    // One fuzzy match switches every edit to fuzzy space, so all offsets share coordinates.
    let any_fuzzy = edits
        .iter()
        .any(|e| find_text(content, &e.old_text).is_some_and(|f| f.fuzzy));
    let fuzzy_content;
    let base: &str = if any_fuzzy {
        fuzzy_content = normalize_for_fuzzy(content);
        &fuzzy_content
    } else {
        content
    };

    let mut matched = Vec::with_capacity(total);
    for (i, edit) in edits.iter().enumerate() {
        let found = find_text(base, &edit.old_text)
            .ok_or_else(|| not_found_error(path, i, total, content, &edit.old_text))?;
        let occurrences = count_occurrences(base, &edit.old_text);
        if occurrences > 1 {
            return Err(duplicate_error(path, i, total, occurrences));
        }
        matched.push(Matched {
            edit_index: i,
            index: found.index,
            len: found.len,
            new_text: edit.new_text.clone(),
        });
    }

    matched.sort_by_key(|m| m.index);
    for pair in matched.windows(2) {
        let (prev, cur) = (&pair[0], &pair[1]);
        if prev.index + prev.len > cur.index {
            return Err(format!(
                "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target disjoint regions.",
                prev.edit_index, cur.edit_index
            ));
        }
    }

    let new = if any_fuzzy {
        apply_preserving_untouched(content, base, &matched)?
    } else {
        apply_replacements(base, &matched, 0)
    };
    if new == content {
        return Err(no_change_error(path, total));
    }
    Ok(Applied {
        base: content.to_string(),
        new,
    })
}
