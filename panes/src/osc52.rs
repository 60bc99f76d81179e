//! Copying to the system clipboard through the terminal (OSC 52). This is the only place
//! March builds an escape sequence on purpose; the app writes it to the terminal.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// The OSC 52 sequence that asks the terminal to put `text` on the clipboard.
///
/// The payload is base64, so nothing in `text` can end the sequence early. BEL terminates
/// it because more terminals (and tmux passthrough) accept BEL than ST. Some terminals cap
/// the sequence length (often around 100 KB); larger copies may be ignored by them.
pub fn osc52_copy(text: &str) -> String {
    let payload = STANDARD.encode(text.as_bytes());
    let mut seq = String::with_capacity(payload.len() + 8);
    seq.push_str("\x1b]52;c;");
    seq.push_str(&payload);
    seq.push('\x07');
    seq
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_text_as_base64() {
        assert_eq!(osc52_copy("hello"), "\x1b]52;c;aGVsbG8=\x07");
    }

    #[test]
    fn hostile_text_cannot_escape_the_sequence() {
        let seq = osc52_copy("\x07\x1b]52;c;evil\x1b\\");
        // Exactly one ESC and one BEL: the ones March put there.
        assert_eq!(seq.matches('\x1b').count(), 1);
        assert_eq!(seq.matches('\x07').count(), 1);
        assert!(seq.ends_with('\x07'));
    }
}
