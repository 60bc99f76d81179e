//! Pasted text as every text input takes it: one kind of line end.
//!
//! A bracketed paste carries whatever line ends the terminal chose: xterm, VTE terminals and
//! tmux's `paste-buffer` send CR (what Enter sends), others LF or the clipboard's CRLF. Read
//! as they come, CR-only lines run together into one, so every paste path calls
//! [`paste_lines`] first and then keeps or joins the lines as its field does.

use std::borrow::Cow;

/// `text` with every line end (`\r\n`, a lone `\r`, `\n`) turned into one `\n`; borrowed
/// when it holds no `\r`.
pub fn paste_lines(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            // CRLF is one line end, not two.
            chars.next_if_eq(&'\n');
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_line_end_becomes_one_newline() {
        let four = "line one\nline two\nline three\nline four";
        for pasted in [
            "line one\rline two\rline three\rline four",
            "line one\nline two\nline three\nline four",
            "line one\r\nline two\r\nline three\r\nline four",
            "line one\rline two\r\nline three\nline four",
        ] {
            assert_eq!(paste_lines(pasted), four, "{pasted:?}");
        }
    }

    #[test]
    fn blank_lines_and_trailing_ends_are_kept() {
        // Two CRs are two line ends (a blank line), unlike one CRLF.
        assert_eq!(paste_lines("a\r\rb\r"), "a\n\nb\n");
        assert_eq!(paste_lines("a\r\n\r\nb"), "a\n\nb");
        assert_eq!(paste_lines("\n\r"), "\n\n");
        assert_eq!(paste_lines("é\r✓"), "é\n✓");
    }

    #[test]
    fn text_without_cr_is_borrowed_as_it_is() {
        assert!(matches!(paste_lines("one\ntwo"), Cow::Borrowed("one\ntwo")));
        assert!(matches!(paste_lines(""), Cow::Borrowed("")));
    }
}
