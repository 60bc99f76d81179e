//! Text from agents made safe to draw: no byte an agent sends may drive the outer terminal.
//!
//! Two policies, one pass each, borrowed when nothing needs changing:
//! - [`sanitize`] for model text (messages, thoughts, titles): control characters are shown
//!   as visible pictures (`ESC` becomes `␛`), so `\x1b[2J` reads as `␛[2J` and does nothing.
//! - [`sanitize_output`] for tool and terminal output: escape sequences (CSI, OSC, DCS, …)
//!   are removed whole, since coloured compiler output would otherwise be mostly noise, and
//!   a bare `\r` overwrites its line the way a terminal would.
//!
//! Both expand tabs to spaces (so widths are known), turn `\r\n` into `\n`, and drop the
//! invisible formatting characters that can hide or reorder text (bidi overrides and
//! isolates, zero-width spaces, tag characters).

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

/// Columns between tab stops when tabs are expanded.
pub const TAB_WIDTH: usize = 4;

/// Longest escape-sequence string (OSC, DCS, …) payload looked at before giving up on it.
const MAX_STRING_SEQUENCE: usize = 64 * 1024;

/// Model text made safe: control characters become visible pictures, tabs become spaces.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if is_clean(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(Cleaner::new(text.len()).visible(text))
}

/// Tool or terminal output made safe: escape sequences removed, `\r` overwrites its line.
pub fn sanitize_output(text: &str) -> Cow<'_, str> {
    if is_clean(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(Cleaner::new(text.len()).strip(text))
}

/// Like [`sanitize`], for one-line places (titles, labels): line breaks become spaces.
pub fn sanitize_line(text: &str) -> Cow<'_, str> {
    let clean = sanitize(text);
    if !clean.contains('\n') {
        return clean;
    }
    Cow::Owned(clean.replace('\n', " "))
}

/// True when `text` can be drawn as it is.
fn is_clean(text: &str) -> bool {
    if text.is_ascii() {
        return text
            .bytes()
            .all(|b| b == b'\n' || (0x20..0x7f).contains(&b));
    }
    text.chars()
        .all(|c| c == '\n' || !(c.is_control() || is_hidden(c) || is_separator(c)))
}

/// Invisible formatting characters that can hide or reorder what the reader sees.
pub(crate) fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{061C}'                      // Arabic letter mark
        | '\u{180E}'                    // Mongolian vowel separator
        | '\u{200B}'                    // zero-width space
        | '\u{200E}' | '\u{200F}'       // LRM, RLM
        | '\u{202A}'..='\u{202E}'       // bidi embeddings and overrides
        | '\u{2060}'..='\u{2064}'       // word joiner, invisible operators
        | '\u{2066}'..='\u{2069}'       // bidi isolates
        | '\u{FEFF}'                    // byte order mark
        | '\u{FFF9}'..='\u{FFFB}'       // interlinear annotations
        | '\u{E0000}'..='\u{E007F}'     // tag characters (used to smuggle text)
    )
}

/// Unicode line and paragraph separators, drawn as line breaks.
pub(crate) fn is_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// The output being built, with the column the next character lands in (for tab stops).
struct Cleaner {
    out: String,
    col: usize,
    /// Byte offset in `out` where the current line starts (for `\r` in output mode).
    line_start: usize,
}

impl Cleaner {
    fn new(capacity: usize) -> Self {
        Cleaner {
            out: String::with_capacity(capacity),
            col: 0,
            line_start: 0,
        }
    }

    fn push(&mut self, c: char) {
        self.out.push(c);
        self.col += c.width().unwrap_or(0);
    }

    fn newline(&mut self) {
        self.out.push('\n');
        self.col = 0;
        self.line_start = self.out.len();
    }

    fn tab(&mut self) {
        let spaces = TAB_WIDTH - self.col % TAB_WIDTH;
        for _ in 0..spaces {
            self.out.push(' ');
        }
        self.col += spaces;
    }

    /// Shared handling of the characters both policies treat alike; false when `c` is left
    /// to the caller.
    fn common(&mut self, c: char, next: Option<char>) -> bool {
        match c {
            '\n' => self.newline(),
            '\t' => self.tab(),
            '\r' if next == Some('\n') => {}
            c if is_separator(c) => self.newline(),
            c if is_hidden(c) => {}
            c if !c.is_control() => self.push(c),
            _ => return false,
        }
        true
    }

    fn visible(mut self, text: &str) -> String {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let next = chars.peek().copied();
            if self.common(c, next) {
                continue;
            }
            match c {
                // A lone carriage return would move the cursor; keep the text, break the line.
                '\r' => self.newline(),
                '\u{7f}' => self.push('\u{2421}'),
                // C0 controls map onto the Control Pictures block: ESC → ␛, BEL → ␇.
                c if (c as u32) < 0x20 => {
                    self.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'))
                }
                '\u{85}' => self.newline(),
                _ => self.push('\u{FFFD}'),
            }
        }
        self.out
    }

    fn strip(mut self, text: &str) -> String {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let next = chars.peek().copied();
            if self.common(c, next) {
                continue;
            }
            match c {
                '\r' => {
                    // What follows overwrites the line; progress bars end up as their last state.
                    self.out.truncate(self.line_start);
                    self.col = 0;
                }
                '\u{1b}' => skip_escape(&mut chars),
                '\u{9b}' => skip_csi(&mut chars),
                '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
                '\u{85}' => self.newline(),
                _ => {}
            }
        }
        self.out
    }
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// Skips what follows an ESC: a CSI, a string sequence, or a short escape.
fn skip_escape(chars: &mut Chars<'_>) {
    match chars.peek().copied() {
        Some('[') => {
            chars.next();
            skip_csi(chars);
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            chars.next();
            skip_string(chars);
        }
        Some(c) if ('\u{20}'..='\u{2f}').contains(&c) => {
            // nF escapes: intermediates, then one final byte (`ESC ( B`).
            while chars
                .next_if(|c| ('\u{20}'..='\u{2f}').contains(c))
                .is_some()
            {}
            chars.next_if(|c| ('\u{30}'..='\u{7e}').contains(c));
        }
        Some(c) if ('\u{30}'..='\u{7e}').contains(&c) => {
            chars.next();
        }
        _ => {}
    }
}

/// Skips a CSI's parameters and intermediates and its final byte; a malformed sequence ends
/// at the first character that cannot belong to it, which is kept.
fn skip_csi(chars: &mut Chars<'_>) {
    while chars
        .next_if(|c| ('\u{20}'..='\u{3f}').contains(c))
        .is_some()
    {}
    chars.next_if(|c| ('\u{40}'..='\u{7e}').contains(c));
}

/// Skips an OSC/DCS/SOS/PM/APC payload up to BEL or ST. A line break also ends it (and is
/// kept), so one stray `ESC ]` cannot swallow the rest of a long output.
fn skip_string(chars: &mut Chars<'_>) {
    let mut seen = 0;
    while let Some(&c) = chars.peek() {
        if c == '\n' || seen > MAX_STRING_SEQUENCE {
            return;
        }
        chars.next();
        seen += 1;
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                chars.next_if_eq(&'\\');
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_inert(s: &str) {
        assert!(
            !s.chars().any(|c| c != '\n' && c.is_control()),
            "control character left in {s:?}"
        );
        assert!(!s.chars().any(is_hidden), "hidden character left in {s:?}");
    }

    #[test]
    fn clean_text_is_borrowed() {
        for text in ["plain", "two\nlines", "ünïcödé 日本語 🦀", ""] {
            assert!(matches!(sanitize(text), Cow::Borrowed(_)), "{text:?}");
            assert!(
                matches!(sanitize_output(text), Cow::Borrowed(_)),
                "{text:?}"
            );
        }
    }

    #[test]
    fn osc52_clipboard_injection_is_inert() {
        let attack = "hi\x1b]52;c;cm0gLXJmIH4=\x07there";
        let shown = sanitize(attack);
        assert_eq!(shown, "hi␛]52;c;cm0gLXJmIH4=␇there");
        assert_inert(&shown);
        assert_eq!(sanitize_output(attack), "hithere");
        // ST-terminated variant, and the 8-bit OSC.
        assert_eq!(sanitize_output("a\x1b]52;c;eA==\x1b\\b"), "ab");
        assert_eq!(sanitize_output("a\u{9d}52;c;eA==\u{9c}b"), "ab");
        assert_inert(&sanitize("a\u{9d}52;c;eA==\u{9c}b"));
    }

    #[test]
    fn hyperlinks_keep_their_text() {
        let link = "see \x1b]8;;https://evil.example\x07docs\x1b]8;;\x07 now";
        assert_eq!(sanitize_output(link), "see docs now");
        let shown = sanitize(link);
        assert_inert(&shown);
        assert!(shown.contains("␛]8;;https://evil.example␇docs"));
    }

    #[test]
    fn clear_screen_and_colours() {
        assert_eq!(sanitize("\x1b[2J"), "␛[2J");
        assert_eq!(sanitize_output("\x1b[2Jgone"), "gone");
        assert_eq!(sanitize_output("\x1b[1;31merror\x1b[0m: bad"), "error: bad");
        assert_eq!(sanitize_output("\x1b(Bx\x1b7y\x1b"), "xy");
    }

    #[test]
    fn carriage_returns() {
        assert_eq!(sanitize("a\r\nb"), "a\nb");
        assert_eq!(sanitize("a\rb"), "a\nb");
        assert_eq!(sanitize_output("a\r\nb"), "a\nb");
        assert_eq!(sanitize_output("10%\r50%\r100%\ndone"), "100%\ndone");
        assert_eq!(sanitize_output("keep\nbar 1\rbar 2"), "keep\nbar 2");
    }

    #[test]
    fn tabs_expand_to_stops() {
        assert_eq!(sanitize("\tx"), "    x");
        assert_eq!(sanitize("ab\tx"), "ab  x");
        assert_eq!(sanitize("a\nabcd\tx"), "a\nabcd    x");
        assert_eq!(sanitize_output("日\tx"), "日  x");
    }

    #[test]
    fn hidden_and_bidi_characters_are_dropped() {
        let trojan = "let ok\u{202E} = 1;\u{2066}// x\u{2069}\u{200B}\u{E0041}";
        let clean = sanitize(trojan);
        assert_eq!(clean, "let ok = 1;// x");
        // Joiners stay: emoji sequences and some scripts need them.
        assert_eq!(sanitize("👩\u{200D}💻"), "👩\u{200D}💻");
        assert_eq!(sanitize("a\u{2028}b"), "a\nb");
    }

    #[test]
    fn every_control_character_is_neutralised() {
        for code in (0u32..0x20).chain(0x7f..0xa0) {
            let Some(c) = char::from_u32(code) else {
                continue;
            };
            let text = format!("x{c}y");
            assert_inert(&sanitize(&text));
            assert_inert(&sanitize_output(&text));
            assert_inert(&sanitize_line(&text));
        }
    }

    #[test]
    fn a_stray_osc_does_not_swallow_later_lines() {
        assert_eq!(sanitize_output("a\x1b]0;title\nb"), "a\nb");
    }

    #[test]
    fn line_variant_has_no_breaks() {
        assert_eq!(sanitize_line("a\nb\r\nc"), "a b c");
        assert!(matches!(sanitize_line("title"), Cow::Borrowed(_)));
    }

    #[test]
    fn five_megabyte_single_line() {
        let clean = "x".repeat(5 * 1024 * 1024);
        assert!(matches!(sanitize(&clean), Cow::Borrowed(_)));
        let start = std::time::Instant::now();
        let dirty = "abc\x1b[31mdef\r\t".repeat(400_000);
        let shown = sanitize(&dirty);
        let stripped = sanitize_output(&dirty);
        assert_inert(&shown);
        assert_inert(&stripped);
        assert!(
            stripped.len() < 16,
            "each \\r overwrote the line: {stripped:?}"
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
    }
}
