//! The `## ` sections of a memory file, and appending an entry to one.
//!
//! An append inserts whole lines (ending like the file's first line, LF or CRLF) and leaves
//! every existing byte as it was. Headings inside fenced code blocks do not count.

use super::MemoryError;

/// A level-2 (`## `) section of a memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading text, trimmed, without the `## ` or a closing `#` run.
    pub heading: String,
    /// Index (0-based) of the heading line.
    pub line: usize,
    /// Index of the first line after the section: the next level-1 or level-2 heading, or the
    /// number of lines.
    pub end: usize,
}

/// The result of [`append_entry`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The file's new content.
    pub bytes: Vec<u8>,
    /// Whether the section had to be created.
    pub new_section: bool,
}

/// A file cut into lines, remembering how to put it back together.
struct Lines<'a> {
    eol: &'static str,
    lines: Vec<&'a str>,
}

fn split(text: &str) -> Lines<'_> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let eol = match body.find('\n') {
        Some(i) if body[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    };
    let trimmed = body.strip_suffix('\n').unwrap_or(body);
    let lines = if body.is_empty() {
        Vec::new()
    } else {
        trimmed
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect()
    };
    Lines { eol, lines }
}

/// The level and text of an ATX heading line (`#` to `######`, up to three spaces indent).
fn heading(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    let after = &rest[level..];
    if !(1..=6).contains(&level) || !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let text = after.trim();
    // A closing run of `#` (preceded by a space) is not part of the text.
    let text = match text.trim_end_matches('#') {
        t if t.is_empty() => t,
        t if t.ends_with([' ', '\t']) => t.trim_end(),
        _ => text,
    };
    Some((level, text))
}

/// Tracks fenced code blocks (``` or ~~~) so headings inside them are ignored.
#[derive(Default)]
struct Fence(Option<(char, usize)>);

impl Fence {
    /// Feed one line; true when it is inside a fence (fence lines included).
    fn inside(&mut self, line: &str) -> bool {
        let t = line.trim_start_matches(' ');
        let run = |c: char| t.len() - t.trim_start_matches(c).len();
        match self.0 {
            Some((c, n)) => {
                if run(c) >= n && t.trim_start_matches(c).trim().is_empty() {
                    self.0 = None;
                }
                true
            }
            None => {
                for c in ['`', '~'] {
                    if run(c) >= 3 {
                        self.0 = Some((c, run(c)));
                        return true;
                    }
                }
                false
            }
        }
    }
}

fn sections_of(lines: &[&str]) -> Vec<Section> {
    let mut found: Vec<Section> = Vec::new();
    let mut fence = Fence::default();
    for (i, line) in lines.iter().enumerate() {
        if fence.inside(line) {
            continue;
        }
        let Some((level, text)) = heading(line) else {
            continue;
        };
        if level > 2 {
            continue;
        }
        if let Some(open) = found.last_mut().filter(|s| s.end == lines.len()) {
            open.end = i;
        }
        if level == 2 {
            found.push(Section {
                heading: text.to_string(),
                line: i,
                end: lines.len(),
            });
        }
    }
    found
}

/// The `## ` sections of `text`, in file order.
pub fn sections(text: &str) -> Vec<Section> {
    sections_of(&split(text).lines)
}

/// Whether a line starts a list item (`- `, `* `, `+ `, `1. `, `1) `).
fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") {
        return true;
    }
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "))
}

/// The section name as matched: trimmed; refused when empty or not one line.
fn section_name(section: &str) -> Result<&str, MemoryError> {
    let name = section.trim().trim_start_matches('#').trim();
    if name.is_empty() {
        return Err(MemoryError::InvalidSection("it is empty"));
    }
    if name.contains(['\n', '\r']) {
        return Err(MemoryError::InvalidSection("it must be a single line"));
    }
    Ok(name)
}

/// `existing` (a file's bytes) with `entry` added at the end of its `## <section>` section
/// (matched ignoring case and surrounding spaces), the section created at the end of the file
/// when missing.
///
/// A one-line entry becomes a bullet (`- entry`) unless it already is a list item; a longer
/// entry that does not start with a list item is added as its own paragraph. Only whole lines
/// are inserted: every existing byte stays as it was, invalid UTF-8 included.
pub fn append_entry(existing: &[u8], section: &str, entry: &str) -> Result<Appended, MemoryError> {
    let name = section_name(section)?;
    let entry = entry.replace("\r\n", "\n");
    let entry = entry.trim_end().trim_start_matches('\n');
    if entry.trim().is_empty() {
        return Err(MemoryError::EmptyEntry);
    }
    let mut entry_lines: Vec<String> = entry.split('\n').map(str::to_string).collect();
    let paragraph = entry_lines.len() > 1 && !is_list_item(&entry_lines[0]);
    if entry_lines.len() == 1 && !is_list_item(&entry_lines[0]) {
        entry_lines[0] = format!("- {}", entry_lines[0].trim_start());
    }

    // Planned on the text with invalid UTF-8 replaced: that never adds or removes a line
    // break, so line numbers are the same in the bytes.
    let text = String::from_utf8_lossy(existing);
    let parts = split(&text);
    let lines = &parts.lines;
    let wanted = name.to_lowercase();
    let found = sections_of(lines)
        .into_iter()
        .find(|s| s.heading.to_lowercase() == wanted);
    let mut insert: Vec<String> = Vec::new();
    let new_section = found.is_none();
    let at = match found {
        Some(s) => {
            let last = (s.line + 1..s.end)
                .rev()
                .find(|&i| !lines[i].trim().is_empty());
            let at = match last {
                // Continuation lines (indented) belong to the list above them.
                Some(i)
                    if !paragraph
                        && (is_list_item(lines[i]) || lines[i].starts_with([' ', '\t'])) =>
                {
                    i + 1
                }
                Some(i) => {
                    insert.push(String::new());
                    i + 1
                }
                None => {
                    insert.push(String::new());
                    s.line + 1
                }
            };
            insert.extend(entry_lines);
            // An empty section directly followed by a heading: keep a blank line before it.
            if last.is_none() && s.end == s.line + 1 && s.end < lines.len() {
                insert.push(String::new());
            }
            at
        }
        None => {
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                insert.push(String::new());
            }
            insert.push(format!("## {name}"));
            insert.push(String::new());
            insert.extend(entry_lines);
            lines.len()
        }
    };
    let mut added = String::new();
    for line in &insert {
        added.push_str(line);
        added.push_str(parts.eol);
    }
    Ok(Appended {
        bytes: insert_lines(existing, at, parts.eol, &added),
        new_section,
    })
}

/// `bytes` with `added` (whole lines) inserted before line `at` (0-based, a BOM not counted),
/// or at the end when the file has no such line; a last line without a line ending gets one.
fn insert_lines(bytes: &[u8], at: usize, eol: &str, added: &str) -> Vec<u8> {
    let bom = if bytes.starts_with("\u{feff}".as_bytes()) {
        3
    } else {
        0
    };
    let body = &bytes[bom..];
    let offset = if at == 0 {
        Some(bom)
    } else {
        body.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(at - 1)
            .map(|(i, _)| bom + i + 1)
    };
    let mut out = Vec::with_capacity(bytes.len() + added.len() + eol.len());
    match offset {
        Some(o) if o < bytes.len() || at == 0 => {
            out.extend_from_slice(&bytes[..o]);
            out.extend_from_slice(added.as_bytes());
            out.extend_from_slice(&bytes[o..]);
        }
        _ => {
            out.extend_from_slice(bytes);
            if !body.is_empty() && !body.ends_with(b"\n") {
                out.extend_from_slice(eol.as_bytes());
            }
            out.extend_from_slice(added.as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`append_entry`] on text.
    fn append(text: &str, section: &str, entry: &str) -> Result<String, MemoryError> {
        append_entry(text.as_bytes(), section, entry).map(|a| String::from_utf8(a.bytes).unwrap())
    }

    fn headings(text: &str) -> Vec<(String, usize, usize)> {
        sections(text)
            .into_iter()
            .map(|s| (s.heading, s.line, s.end))
            .collect()
    }

    #[test]
    fn sections_are_level_two_headings_outside_fences() {
        let text = "# Title\nintro\n## Build  \n- cargo\n### Sub\nx\n```\n## not a heading\n```\n\
                    ## Style ##\n- tabs\n# Other\n## Last\n";
        assert_eq!(
            headings(text),
            [
                ("Build".to_string(), 2, 9),
                ("Style".to_string(), 9, 11),
                ("Last".to_string(), 12, 13)
            ]
        );
        assert!(sections("").is_empty());
        assert!(sections("##nospace\n#### deep\n    ## indented code\n").is_empty());
    }

    #[test]
    fn appends_to_an_existing_section_after_its_last_line() {
        let text = "## Build\n- cargo build\n\n## Style\n- tabs\n";
        let out = append(text, "build", "run clippy").unwrap();
        assert_eq!(
            out,
            "## Build\n- cargo build\n- run clippy\n\n## Style\n- tabs\n"
        );
        let out = append(&out, "Style", "- no unwrap").unwrap();
        assert_eq!(
            out,
            "## Build\n- cargo build\n- run clippy\n\n## Style\n- tabs\n- no unwrap\n"
        );
    }

    #[test]
    fn heading_with_trailing_spaces_matches() {
        let text = "## Decisions   \n- one\n";
        let out = append(text, "  Decisions ", "two").unwrap();
        assert_eq!(out, "## Decisions   \n- one\n- two\n");
        assert_eq!(sections(&out).len(), 1);
    }

    #[test]
    fn a_missing_section_is_created_at_the_end() {
        assert_eq!(
            append("", "Notes", "first").unwrap(),
            "## Notes\n\n- first\n"
        );
        assert_eq!(
            append("# Memory\nintro", "## Notes", "first").unwrap(),
            "# Memory\nintro\n\n## Notes\n\n- first\n"
        );
        let twice = append(&append("", "A", "x").unwrap(), "B", "y").unwrap();
        assert_eq!(twice, "## A\n\n- x\n\n## B\n\n- y\n");
    }

    #[test]
    fn an_empty_section_gets_the_entry_below_its_heading() {
        let out = append("## A\n## B\n- b\n", "A", "a").unwrap();
        assert_eq!(out, "## A\n\n- a\n\n## B\n- b\n");
        let out = append("## A\n\n\n## B\n", "a", "a").unwrap();
        assert_eq!(out, "## A\n\n- a\n\n\n## B\n");
    }

    #[test]
    fn multi_line_entries_become_paragraphs_unless_they_are_lists() {
        let out = append("## A\n- x\n", "A", "Line one\nline two\n").unwrap();
        assert_eq!(out, "## A\n- x\n\nLine one\nline two\n");
        let out = append("## A\n- x\n", "A", "- y\n  more").unwrap();
        assert_eq!(out, "## A\n- x\n- y\n  more\n");
        let out = append(&out, "A", "3. z").unwrap();
        assert_eq!(out, "## A\n- x\n- y\n  more\n3. z\n");
    }

    #[test]
    fn crlf_and_bom_are_kept() {
        let text = "\u{feff}## A\r\n- x\r\n\r\n## B\r\n";
        let out = append(text, "A", "y\r\n").unwrap();
        assert_eq!(out, "\u{feff}## A\r\n- x\r\n- y\r\n\r\n## B\r\n");
        let out = append(&out, "C", "z").unwrap();
        assert!(out.ends_with("## B\r\n\r\n## C\r\n\r\n- z\r\n"), "{out:?}");
        assert!(!out.replace("\r\n", "").contains('\n'));
    }

    #[test]
    fn existing_bytes_are_never_rewritten() {
        // Invalid UTF-8, mixed line endings and a missing final newline all survive.
        let text = b"## A\r\n- \xff\n\n## B\n- b";
        let out = append_entry(text, "A", "new").unwrap();
        assert_eq!(out.bytes, b"## A\r\n- \xff\n- new\r\n\n## B\n- b");
        assert!(!out.new_section);
        let out = append_entry(text, "B", "new").unwrap();
        assert_eq!(out.bytes, b"## A\r\n- \xff\n\n## B\n- b\r\n- new\r\n");
        let out = append_entry(text, "C", "new").unwrap();
        assert_eq!(
            out.bytes,
            b"## A\r\n- \xff\n\n## B\n- b\r\n\r\n## C\r\n\r\n- new\r\n"
        );
        assert!(out.new_section);
    }

    #[test]
    fn bad_sections_and_empty_entries_are_refused() {
        assert!(matches!(
            append("", " ", "x"),
            Err(MemoryError::InvalidSection(_))
        ));
        assert!(matches!(
            append("", "a\nb", "x"),
            Err(MemoryError::InvalidSection(_))
        ));
        assert!(matches!(
            append("", "A", " \n "),
            Err(MemoryError::EmptyEntry)
        ));
    }
}
