//! Laying styled text out in columns: word wrap by display width (words longer than the
//! width are broken), cutting a line to a width with a marker, padding.
//!
//! Text reaching here has been sanitised, so every character's display width is known.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Display width of `s` in terminal columns.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Display width of a line's spans.
pub(crate) fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| width(&s.content)).sum()
}

/// `s` cut to at most `max` columns, ending in `…` when something was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// Builds lines span by span, merging neighbours of the same style.
pub(crate) struct LineBuilder {
    spans: Vec<Span<'static>>,
    text: String,
    style: Style,
    width: usize,
}

impl LineBuilder {
    /// An empty line starting with `prefix`.
    pub(crate) fn new(prefix: &[Span<'static>]) -> Self {
        let mut b = LineBuilder {
            spans: Vec::new(),
            text: String::new(),
            style: Style::default(),
            width: 0,
        };
        for span in prefix {
            b.push(&span.content, span.style);
        }
        b
    }

    /// Columns used so far (prefix included).
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Appends `s` in `style`.
    pub(crate) fn push(&mut self, s: &str, style: Style) {
        if s.is_empty() {
            return;
        }
        if style != self.style && !self.text.is_empty() {
            self.flush_span();
        }
        self.style = style;
        self.text.push_str(s);
        self.width += width(s);
    }

    /// Appends one character in `style`.
    pub(crate) fn push_char(&mut self, c: char, style: Style) {
        if style != self.style && !self.text.is_empty() {
            self.flush_span();
        }
        self.style = style;
        self.text.push(c);
        self.width += c.width().unwrap_or(0);
    }

    /// Pads with spaces in `style` up to `target` columns.
    pub(crate) fn pad_to(&mut self, target: usize, style: Style) {
        if self.width < target {
            let n = target - self.width;
            self.push(&" ".repeat(n), style);
        }
    }

    fn flush_span(&mut self) {
        let text = std::mem::take(&mut self.text);
        self.spans.push(Span::styled(text, self.style));
    }

    /// The finished line.
    pub(crate) fn finish(mut self) -> Line<'static> {
        if !self.text.is_empty() {
            self.flush_span();
        }
        Line::from(self.spans)
    }
}

/// A piece of a word: text in one style.
type Piece<'a> = (&'a str, Style);

/// Word-wraps styled text to `width` columns. `first` prefixes the first line, `rest` every
/// other line; `\n` in the text breaks the line. Whitespace at the start of a wrapped line is
/// dropped, but indentation at the start of a source line is kept.
pub(crate) fn wrap(
    spans: &[(String, Style)],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut w = Wrapper {
        out: Vec::new(),
        line: LineBuilder::new(first),
        rest,
        limit: width.max(1),
        content: 0,
        space: Vec::new(),
        source_line_start: true,
    };
    let rest_width: usize = rest.iter().map(|s| self::width(&s.content)).sum();
    let first_width: usize = first.iter().map(|s| self::width(&s.content)).sum();
    // Keep at least a little room for text even when the prefixes eat the width.
    w.limit = w.limit.max(first_width.max(rest_width) + 1);

    let mut word: Vec<Piece<'_>> = Vec::new();
    for (text, style) in spans {
        let mut rest_of = text.as_str();
        while !rest_of.is_empty() {
            let ch = rest_of.chars().next().unwrap_or(' ');
            let kind = Kind::of(ch);
            let end = rest_of
                .char_indices()
                .find(|&(_, c)| Kind::of(c) != kind)
                .map_or(rest_of.len(), |(i, _)| i);
            let (run, tail) = rest_of.split_at(end);
            rest_of = tail;
            match kind {
                Kind::Word => word.push((run, *style)),
                Kind::Space => {
                    w.place_word(&mut word);
                    w.space.push((run, *style));
                }
                Kind::Newline => {
                    w.place_word(&mut word);
                    for _ in run.chars() {
                        w.break_line(true);
                    }
                }
            }
        }
    }
    w.place_word(&mut word);
    w.out.push(w.line.finish());
    w.out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Word,
    Space,
    Newline,
}

impl Kind {
    fn of(c: char) -> Kind {
        match c {
            '\n' => Kind::Newline,
            ' ' => Kind::Space,
            _ => Kind::Word,
        }
    }
}

struct Wrapper<'s, 'r> {
    out: Vec<Line<'static>>,
    line: LineBuilder,
    rest: &'r [Span<'static>],
    limit: usize,
    /// Columns of text (not prefix) on the current line.
    content: usize,
    /// Whitespace waiting between the last word and the next.
    space: Vec<Piece<'s>>,
    source_line_start: bool,
}

impl<'s> Wrapper<'s, '_> {
    fn break_line(&mut self, source: bool) {
        let line = std::mem::replace(&mut self.line, LineBuilder::new(self.rest));
        self.out.push(line.finish());
        self.content = 0;
        self.space.clear();
        self.source_line_start = source;
    }

    fn place_word(&mut self, word: &mut Vec<Piece<'s>>) {
        if word.is_empty() {
            // Trailing spaces at the end of a source line only matter as indentation.
            if self.source_line_start && self.content == 0 {
                self.flush_space();
            }
            return;
        }
        let word_width: usize = word.iter().map(|(t, _)| width(t)).sum();
        let space_width: usize = self.space.iter().map(|(t, _)| width(t)).sum();
        let room = self.limit.saturating_sub(self.line.width());
        let keep_space = self.content > 0 || self.source_line_start;
        if (if keep_space { space_width } else { 0 }) + word_width <= room {
            if keep_space {
                self.flush_space();
            }
            self.push_word(word);
        } else if word_width <= self.limit.saturating_sub(self.rest_width()) {
            self.break_line(false);
            self.push_word(word);
        } else {
            // Longer than a whole line: start where we are and break inside the word.
            if self.content > 0 && space_width < room {
                self.flush_space();
            } else if self.content > 0 {
                self.break_line(false);
            }
            for (text, style) in word.iter() {
                for c in text.chars() {
                    let cw = c.width().unwrap_or(0);
                    if self.line.width() + cw > self.limit && self.content > 0 {
                        self.break_line(false);
                    }
                    self.line.push_char(c, *style);
                    self.content += cw;
                }
            }
        }
        self.space.clear();
        self.source_line_start = false;
        word.clear();
    }

    fn rest_width(&self) -> usize {
        self.rest.iter().map(|s| width(&s.content)).sum()
    }

    fn flush_space(&mut self) {
        for (text, style) in std::mem::take(&mut self.space) {
            self.line.push(text, style);
            self.content += width(text);
        }
    }

    fn push_word(&mut self, word: &[Piece<'s>]) {
        for (text, style) in word {
            self.line.push(text, *style);
            self.content += width(text);
        }
    }
}

/// `line` cut to `max` columns; when something was cut the last column shows `marker` in
/// `marker_style`. Returns the line and whether it was cut.
pub(crate) fn cut_line(
    line: &Line<'static>,
    max: usize,
    marker: char,
    marker_style: Style,
) -> (Line<'static>, bool) {
    if line_width(line) <= max {
        return (line.clone(), false);
    }
    let mut b = LineBuilder::new(&[]);
    let budget = max.saturating_sub(1);
    'outer: for span in &line.spans {
        for c in span.content.chars() {
            if b.width() + c.width().unwrap_or(0) > budget {
                break 'outer;
            }
            b.push_char(c, span.style);
        }
    }
    if max > 0 {
        b.push_char(marker, marker_style);
    }
    (b.finish(), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn wrap_plain(text: &str, width: usize) -> Vec<String> {
        plain(&wrap(
            &[(text.to_string(), Style::default())],
            width,
            &[],
            &[],
        ))
    }

    #[test]
    fn wraps_at_word_boundaries() {
        assert_eq!(
            wrap_plain("the quick brown fox jumps", 10),
            ["the quick", "brown fox", "jumps"]
        );
    }

    #[test]
    fn breaks_words_longer_than_the_width() {
        assert_eq!(
            wrap_plain("ab abcdefghij", 4),
            ["ab a", "bcde", "fghi", "j"]
        );
    }

    #[test]
    fn keeps_source_line_breaks_and_indentation() {
        assert_eq!(wrap_plain("a\n  b\n\nc", 10), ["a", "  b", "", "c"]);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        assert_eq!(wrap_plain("日本語日本語", 5), ["日本", "語日", "本語"]);
    }

    #[test]
    fn prefixes_apply_to_first_and_rest() {
        let first = [Span::raw("- ")];
        let rest = [Span::raw("  ")];
        let lines = wrap(
            &[("one two three".to_string(), Style::default())],
            9,
            &first,
            &rest,
        );
        assert_eq!(plain(&lines), ["- one two", "  three"]);
    }

    #[test]
    fn styles_are_kept_across_breaks() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let lines = wrap(
            &[
                ("plain ".to_string(), Style::default()),
                ("bold words".to_string(), bold),
            ],
            8,
            &[],
            &[],
        );
        assert_eq!(plain(&lines), ["plain", "bold", "words"]);
        assert_eq!(lines[2].spans[0].style, bold);
    }

    #[test]
    fn long_single_line_is_linear() {
        let text = "word ".repeat(50_000);
        let start = std::time::Instant::now();
        let lines = wrap_plain(&text, 80);
        assert!(lines.len() > 3000);
        assert!(lines.iter().all(|l| width(l) <= 80));
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn cut_marks_the_cut() {
        let line = Line::from("abcdefgh");
        let (cut, was_cut) = cut_line(&line, 5, '…', Style::default());
        assert!(was_cut);
        assert_eq!(plain(&[cut]), ["abcd…"]);
        assert_eq!(truncate("abcdefgh", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
