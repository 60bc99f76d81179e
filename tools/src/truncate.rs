//! Output limits shared by every tool: 2000 lines or 50 KB, whichever comes first.

use serde::Serialize;

/// Most lines a tool returns.
pub const MAX_LINES: usize = 2000;
/// Most bytes a tool returns.
pub const MAX_BYTES: usize = 50 * 1024;
/// Longest line grep shows.
pub const MAX_LINE_CHARS: usize = 500;

/// Which limit cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    /// The line limit.
    Lines,
    /// The byte limit.
    Bytes,
}

/// The kept part of an output and what was dropped (stored in `details.truncation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    /// The kept text.
    #[serde(skip)]
    pub content: String,
    /// Whether anything was dropped.
    pub truncated: bool,
    /// Which limit cut it.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines in the whole input (a trailing newline does not start a line).
    pub total_lines: usize,
    /// Bytes in the whole input.
    pub total_bytes: usize,
    /// Lines kept.
    pub output_lines: usize,
    /// Bytes kept.
    pub output_bytes: usize,
    /// Tail mode: the first kept line is only the end of a longer line.
    pub last_line_partial: bool,
    /// Head mode: the first line alone is over the byte limit, so nothing was kept.
    pub first_line_exceeds_limit: bool,
    /// The line limit used.
    pub max_lines: usize,
    /// The byte limit used.
    pub max_bytes: usize,
}

/// Split into lines the way pi counts them: a trailing `\n` does not start another line.
pub fn split_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').collect()
}

fn untouched(text: &str, lines: usize, max_lines: usize, max_bytes: usize) -> Truncation {
    Truncation {
        content: text.to_string(),
        truncated: false,
        truncated_by: None,
        total_lines: lines,
        total_bytes: text.len(),
        output_lines: lines,
        output_bytes: text.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// `text`'s leading lines within the default limits, followed by what was left out when
/// something was (for tools that read pages: the start matters most).
pub fn head_with_notice(text: &str) -> (String, Truncation) {
    let cut = truncate_head(text, MAX_LINES, MAX_BYTES);
    let mut shown = cut.content.clone();
    if cut.truncated {
        shown.push_str(&format!(
            "\n\n[Showing {} of {} lines ({} of {}).]",
            cut.output_lines,
            cut.total_lines,
            format_size(cut.output_bytes),
            format_size(cut.total_bytes)
        ));
    }
    (shown, cut)
}

/// Keep whole leading lines within the limits.
pub fn truncate_head(text: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let lines = split_lines(text);
    if lines.len() <= max_lines && text.len() <= max_bytes {
        return untouched(text, lines.len(), max_lines, max_bytes);
    }
    let mut kept = 0;
    let mut bytes = 0;
    let mut by = TruncatedBy::Lines;
    for (i, line) in lines.iter().enumerate() {
        if kept == max_lines {
            by = TruncatedBy::Lines;
            break;
        }
        let cost = line.len() + usize::from(i > 0);
        if bytes + cost > max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        bytes += cost;
        kept += 1;
    }
    let content = lines[..kept].join("\n");
    Truncation {
        output_bytes: content.len(),
        content,
        truncated: true,
        truncated_by: Some(by),
        total_lines: lines.len(),
        total_bytes: text.len(),
        output_lines: kept,
        last_line_partial: false,
        first_line_exceeds_limit: kept == 0 && !lines.is_empty(),
        max_lines,
        max_bytes,
    }
}

/// Keep whole trailing lines within the limits; a single over-long last line is cut from its
/// start at a character boundary.
pub fn truncate_tail(text: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let lines = split_lines(text);
    if lines.len() <= max_lines && text.len() <= max_bytes {
        return untouched(text, lines.len(), max_lines, max_bytes);
    }
    let mut start = lines.len();
    let mut bytes = 0;
    let mut by = TruncatedBy::Lines;
    while start > 0 {
        if lines.len() - start == max_lines {
            by = TruncatedBy::Lines;
            break;
        }
        let line = lines[start - 1];
        let cost = line.len() + usize::from(start < lines.len());
        if bytes + cost > max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        bytes += cost;
        start -= 1;
    }
    let mut last_line_partial = false;
    let content = if start == lines.len() {
        // Not even the last line fits: keep its end.
        let last = lines.last().copied().unwrap_or("");
        let mut cut = last.len().saturating_sub(max_bytes);
        while !last.is_char_boundary(cut) {
            cut += 1;
        }
        last_line_partial = true;
        last[cut..].to_string()
    } else {
        lines[start..].join("\n")
    };
    Truncation {
        output_lines: if last_line_partial {
            1
        } else {
            lines.len() - start
        },
        output_bytes: content.len(),
        content,
        truncated: true,
        truncated_by: Some(by),
        total_lines: lines.len(),
        total_bytes: text.len(),
        last_line_partial,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// Append pi's notices to `text`, in one bracket after a blank line; nothing when there are none.
pub(crate) fn append_notices(text: &mut String, notices: &[String]) {
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
}

/// Cut a line to `max_chars` characters, marking the cut.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        Some((cut, _)) => (format!("{}... [truncated]", &line[..cut]), true),
        None => (line.to_string(), false),
    }
}

/// `NB`, `N.NKB` or `N.NMB`, as pi prints sizes.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_trailing_newline_does_not_count_as_a_line() {
        assert_eq!(split_lines("a\nb\n"), ["a", "b"]);
        assert_eq!(split_lines("a\nb"), ["a", "b"]);
        assert!(split_lines("").is_empty());
        assert_eq!(split_lines("\n"), [""]);
    }

    #[test]
    fn head_line_limit_boundaries() {
        let t = truncate_head(&numbered(2000), MAX_LINES, MAX_BYTES);
        assert!(!t.truncated);
        let t = truncate_head(&numbered(2001), MAX_LINES, MAX_BYTES);
        assert!(t.truncated);
        assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!((t.output_lines, t.total_lines), (2000, 2001));
        assert!(t.content.ends_with("line 2000"));
    }

    #[test]
    fn head_byte_limit_boundaries() {
        // Exactly MAX_BYTES fits; one more byte does not.
        let line = "x".repeat(99);
        let exact: String = std::iter::repeat_n(format!("{line}\n"), MAX_BYTES / 100).collect();
        let exact = format!("{exact}{}", "y".repeat(MAX_BYTES - exact.len()));
        assert_eq!(exact.len(), MAX_BYTES);
        assert!(!truncate_head(&exact, MAX_LINES, MAX_BYTES).truncated);
        let over = format!("{exact}z");
        let t = truncate_head(&over, MAX_LINES, MAX_BYTES);
        assert!(t.truncated);
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!(t.output_lines, MAX_BYTES / 100);
        assert!(t.output_bytes <= MAX_BYTES);
    }

    #[test]
    fn head_first_line_over_the_limit_keeps_nothing() {
        let t = truncate_head(&"a".repeat(MAX_BYTES + 1), MAX_LINES, MAX_BYTES);
        assert!(t.first_line_exceeds_limit);
        assert_eq!(t.content, "");
    }

    #[test]
    fn tail_keeps_the_end() {
        let t = truncate_tail(&numbered(2001), MAX_LINES, MAX_BYTES);
        assert_eq!(t.output_lines, 2000);
        assert!(t.content.starts_with("line 2\n"));
        assert!(t.content.ends_with("line 2001"));
        assert!(!truncate_tail(&numbered(2000), MAX_LINES, MAX_BYTES).truncated);
    }

    #[test]
    fn tail_cuts_a_huge_last_line_at_a_char_boundary() {
        let text = format!("short\n{}", "é".repeat(MAX_BYTES));
        let t = truncate_tail(&text, MAX_LINES, MAX_BYTES);
        assert!(t.last_line_partial);
        assert!(t.content.len() <= MAX_BYTES);
        assert!(t.content.chars().all(|c| c == 'é'));
    }

    #[test]
    fn sizes_and_lines_format_like_pi() {
        assert_eq!(format_size(512), "512B");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(3 * 1024 * 1024 / 2), "1.5MB");
        assert_eq!(
            truncate_line("abcdef", 3),
            ("abc... [truncated]".into(), true)
        );
        assert_eq!(truncate_line("abc", 3), ("abc".into(), false));
    }
}
