//! Keys and pastes as a program in a terminal expects them: xterm's encoding, with the
//! program's modes (application cursor keys, bracketed paste) taken into account.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::TermModes;

/// The modifiers as bits, in the order every encoding here counts them: shift 1, alt 2,
/// ctrl 4, super 8.
fn modifier_bits(m: KeyModifiers) -> u8 {
    [
        (KeyModifiers::SHIFT, 1),
        (KeyModifiers::ALT, 2),
        (KeyModifiers::CONTROL, 4),
        (KeyModifiers::SUPER, 8),
    ]
    .into_iter()
    .filter(|(flag, _)| m.contains(*flag))
    .fold(0, |bits, (_, bit)| bits | bit)
}

/// xterm's modifier parameter: 1 plus shift 1, alt 2, ctrl 4; `None` without modifiers.
fn modifier_param(m: KeyModifiers) -> Option<u8> {
    let p = modifier_bits(m) & 7;
    (p > 0).then_some(p + 1)
}

/// A cursor or Home/End key: `ESC [ X`, `ESC O X` in application mode, `ESC [ 1 ; m X` with
/// modifiers.
fn cursor_key(letter: char, m: KeyModifiers, modes: &TermModes) -> Vec<u8> {
    match modifier_param(m) {
        Some(p) => format!("\x1b[1;{p}{letter}").into_bytes(),
        None if modes.application_cursor => format!("\x1bO{letter}").into_bytes(),
        None => format!("\x1b[{letter}").into_bytes(),
    }
}

/// A `ESC [ n ~` key (Insert, Delete, PageUp, PageDown, F5–F12), `ESC [ n ; m ~` with
/// modifiers.
fn tilde_key(n: u8, m: KeyModifiers) -> Vec<u8> {
    match modifier_param(m) {
        Some(p) => format!("\x1b[{n};{p}~").into_bytes(),
        None => format!("\x1b[{n}~").into_bytes(),
    }
}

/// The bytes `key` sends to the program; `None` for keys that send nothing (a release, a
/// bare modifier, keys a terminal has no encoding for).
pub fn encode_key(key: KeyEvent, modes: &TermModes) -> Option<Vec<u8>> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let m = key.modifiers;
    if modes.kitty_keys
        && let Some(bytes) = kitty_key(key.code, m)
    {
        return Some(bytes);
    }
    let alt = m.contains(KeyModifiers::ALT);
    let ctrl = m.contains(KeyModifiers::CONTROL);
    // Alt in front of a plain key is an ESC prefix.
    let prefixed = |bytes: Vec<u8>| {
        if alt {
            let mut out = vec![0x1b];
            out.extend(bytes);
            out
        } else {
            bytes
        }
    };
    let bytes = match key.code {
        KeyCode::Char(c) if ctrl => {
            let byte = match c.to_ascii_lowercase() {
                'a'..='z' => c.to_ascii_lowercase() as u8 - b'a' + 1,
                ' ' | '@' | '2' => 0,
                '[' | '3' => 0x1b,
                '\\' | '4' => 0x1c,
                ']' | '5' => 0x1d,
                '^' | '6' => 0x1e,
                '_' | '-' | '7' => 0x1f,
                '?' | '8' => 0x7f,
                _ => return Some(prefixed(c.to_string().into_bytes())),
            };
            prefixed(vec![byte])
        }
        KeyCode::Char(c) => prefixed(c.to_string().into_bytes()),
        KeyCode::Enter => prefixed(b"\r".to_vec()),
        KeyCode::Tab => prefixed(b"\t".to_vec()),
        KeyCode::BackTab => b"\x1b[Z".to_vec(),
        KeyCode::Backspace if ctrl => prefixed(vec![0x08]),
        KeyCode::Backspace => prefixed(vec![0x7f]),
        KeyCode::Esc => prefixed(vec![0x1b]),
        KeyCode::Up => cursor_key('A', m, modes),
        KeyCode::Down => cursor_key('B', m, modes),
        KeyCode::Right => cursor_key('C', m, modes),
        KeyCode::Left => cursor_key('D', m, modes),
        KeyCode::Home => cursor_key('H', m, modes),
        KeyCode::End => cursor_key('F', m, modes),
        KeyCode::Insert => tilde_key(2, m),
        KeyCode::Delete => tilde_key(3, m),
        KeyCode::PageUp => tilde_key(5, m),
        KeyCode::PageDown => tilde_key(6, m),
        KeyCode::F(n @ 1..=4) => {
            let letter = char::from(b'P' + n - 1);
            match modifier_param(m) {
                Some(p) => format!("\x1b[1;{p}{letter}").into_bytes(),
                None => format!("\x1bO{letter}").into_bytes(),
            }
        }
        KeyCode::F(n @ 5..=12) => {
            // xterm skips 16 and 22.
            let code = [15, 17, 18, 19, 20, 21, 23, 24][usize::from(n - 5)];
            tilde_key(code, m)
        }
        _ => return None,
    };
    Some(bytes)
}

/// The kitty keyboard protocol's form (`CSI code ; mods u`) of the keys legacy encoding
/// makes ambiguous: Esc, and Enter, Tab, Backspace or a character with Ctrl or Alt (or
/// Enter, Tab, Backspace with Shift). Other keys keep their legacy bytes, as the protocol's
/// first level says.
fn kitty_key(code: KeyCode, m: KeyModifiers) -> Option<Vec<u8>> {
    let mods = modifier_bits(m);
    let number = match code {
        KeyCode::Esc => 27,
        KeyCode::Enter | KeyCode::Tab | KeyCode::Backspace if mods == 0 => return None,
        KeyCode::Enter => 13,
        KeyCode::Tab => 9,
        KeyCode::Backspace => 127,
        KeyCode::Char(c) if mods & !1 != 0 => u32::from(c.to_ascii_lowercase()),
        _ => return None,
    };
    Some(if mods == 0 {
        format!("\x1b[{number}u").into_bytes()
    } else {
        format!("\x1b[{number};{}u", mods + 1).into_bytes()
    })
}

/// A mouse event on the program's screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseReport {
    /// A button went down (0 left, 1 middle, 2 right).
    Press(u8),
    /// A button came up.
    Release(u8),
    /// The mouse moved with a button held.
    Drag(u8),
    /// The wheel turned up.
    WheelUp,
    /// The wheel turned down.
    WheelDown,
}

/// The bytes that report `event` at `col`, `row` (from 0, on the program's screen) in the
/// encoding the program asked for; `None` when it wants no such report (no mouse mode, a drag
/// without motion reports, a position the legacy encoding cannot express).
pub fn encode_mouse(
    event: MouseReport,
    col: u16,
    row: u16,
    m: KeyModifiers,
    modes: &TermModes,
) -> Option<Vec<u8>> {
    if !modes.mouse_reporting {
        return None;
    }
    let mut button: u32 = match event {
        MouseReport::Press(b) | MouseReport::Release(b) => u32::from(b.min(2)),
        MouseReport::Drag(b) if modes.mouse_motion => 32 + u32::from(b.min(2)),
        MouseReport::Drag(_) => return None,
        MouseReport::WheelUp => 64,
        MouseReport::WheelDown => 65,
    };
    // Shift 4, alt 8, ctrl 16.
    button += u32::from(modifier_bits(m) & 7) << 2;
    let (x, y) = (u32::from(col) + 1, u32::from(row) + 1);
    if modes.sgr_mouse {
        let end = if matches!(event, MouseReport::Release(_)) {
            'm'
        } else {
            'M'
        };
        return Some(format!("\x1b[<{button};{x};{y}{end}").into_bytes());
    }
    // The legacy encoding has no release button and one byte per coordinate.
    if matches!(event, MouseReport::Release(_)) {
        button = 3 | (button & !3);
    }
    let byte = |v: u32| u8::try_from(v + 32).ok().filter(|b| *b < 255);
    Some(vec![0x1b, b'[', b'M', byte(button)?, byte(x)?, byte(y)?])
}

/// Pasted text as the program should get it: inside bracketed-paste markers when it asked
/// for them (an end marker inside the text is removed, so a paste cannot end itself early),
/// every line end as Enter otherwise.
pub fn encode_paste(text: &str, modes: &TermModes) -> Vec<u8> {
    if modes.bracketed_paste {
        // The line ends go through as the outer terminal sent them, as tmux passes a paste
        // on: a program reading a bracketed paste (readline, zsh, vim) takes CR and LF alike.
        let inner = text.replace("\x1b[201~", "");
        let mut out = b"\x1b[200~".to_vec();
        out.extend_from_slice(inner.as_bytes());
        out.extend_from_slice(b"\x1b[201~");
        out
    } else {
        // Unbracketed, a line end is a key press, and Enter sends CR.
        crate::paste::paste_lines(text)
            .replace('\n', "\r")
            .into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    fn enc(code: KeyCode, m: KeyModifiers) -> Vec<u8> {
        encode_key(key(code, m), &TermModes::default()).unwrap()
    }

    const N: KeyModifiers = KeyModifiers::NONE;
    const C: KeyModifiers = KeyModifiers::CONTROL;
    const A: KeyModifiers = KeyModifiers::ALT;
    const S: KeyModifiers = KeyModifiers::SHIFT;

    #[test]
    fn characters_control_and_alt() {
        assert_eq!(enc(KeyCode::Char('x'), N), b"x");
        assert_eq!(enc(KeyCode::Char('é'), N), "é".as_bytes());
        assert_eq!(enc(KeyCode::Char('c'), C), [3]);
        assert_eq!(enc(KeyCode::Char('A'), C), [1]);
        assert_eq!(enc(KeyCode::Char(' '), C), [0]);
        assert_eq!(enc(KeyCode::Char('['), C), [0x1b]);
        assert_eq!(enc(KeyCode::Char('b'), A), b"\x1bb");
        assert_eq!(enc(KeyCode::Char('d'), C | A), b"\x1b\x04");
        assert_eq!(enc(KeyCode::Enter, N), b"\r");
        assert_eq!(enc(KeyCode::Backspace, N), [0x7f]);
        assert_eq!(enc(KeyCode::BackTab, S), b"\x1b[Z");
        assert_eq!(enc(KeyCode::Esc, N), [0x1b]);
    }

    #[test]
    fn cursor_keys_follow_the_application_mode() {
        assert_eq!(enc(KeyCode::Up, N), b"\x1b[A");
        let app = TermModes {
            application_cursor: true,
            ..TermModes::default()
        };
        assert_eq!(encode_key(key(KeyCode::Up, N), &app).unwrap(), b"\x1bOA");
        assert_eq!(encode_key(key(KeyCode::Home, N), &app).unwrap(), b"\x1bOH");
        // With modifiers the CSI form is used in both modes.
        assert_eq!(
            encode_key(key(KeyCode::Left, C), &app).unwrap(),
            b"\x1b[1;5D"
        );
        assert_eq!(enc(KeyCode::Right, S | A), b"\x1b[1;4C");
    }

    #[test]
    fn editing_and_function_keys() {
        assert_eq!(enc(KeyCode::Delete, N), b"\x1b[3~");
        assert_eq!(enc(KeyCode::PageUp, C), b"\x1b[5;5~");
        assert_eq!(enc(KeyCode::F(1), N), b"\x1bOP");
        assert_eq!(enc(KeyCode::F(4), S), b"\x1b[1;2S");
        assert_eq!(enc(KeyCode::F(5), N), b"\x1b[15~");
        assert_eq!(enc(KeyCode::F(12), N), b"\x1b[24~");
        assert!(encode_key(key(KeyCode::F(20), N), &TermModes::default()).is_none());
        let mut release = key(KeyCode::Char('a'), N);
        release.kind = KeyEventKind::Release;
        assert!(encode_key(release, &TermModes::default()).is_none());
    }

    #[test]
    fn kitty_keys_when_the_program_asked() {
        let kitty = TermModes {
            kitty_keys: true,
            ..TermModes::default()
        };
        let k = |code, m| encode_key(key(code, m), &kitty).unwrap();
        assert_eq!(k(KeyCode::Esc, N), b"\x1b[27u");
        assert_eq!(k(KeyCode::Enter, S), b"\x1b[13;2u");
        assert_eq!(k(KeyCode::Char('i'), C), b"\x1b[105;5u");
        assert_eq!(k(KeyCode::Char('I'), C | S), b"\x1b[105;6u");
        assert_eq!(k(KeyCode::Backspace, A), b"\x1b[127;3u");
        // Unambiguous keys keep their legacy bytes.
        assert_eq!(k(KeyCode::Char('x'), N), b"x");
        assert_eq!(k(KeyCode::Char('X'), S), b"X");
        assert_eq!(k(KeyCode::Enter, N), b"\r");
        assert_eq!(k(KeyCode::Up, N), b"\x1b[A");
        // Without the mode, Shift-Enter is plain Enter.
        assert_eq!(enc(KeyCode::Enter, S), b"\r");
    }

    #[test]
    fn mouse_reports_in_the_asked_encoding() {
        let off = TermModes::default();
        assert_eq!(encode_mouse(MouseReport::Press(0), 0, 0, N, &off), None);
        let click = TermModes {
            mouse_reporting: true,
            ..TermModes::default()
        };
        assert_eq!(
            encode_mouse(MouseReport::Press(0), 4, 9, N, &click).unwrap(),
            [0x1b, b'[', b'M', 32, 37, 42]
        );
        assert_eq!(
            encode_mouse(MouseReport::Release(0), 4, 9, N, &click).unwrap(),
            [0x1b, b'[', b'M', 35, 37, 42]
        );
        assert_eq!(encode_mouse(MouseReport::Drag(0), 4, 9, N, &click), None);
        assert_eq!(encode_mouse(MouseReport::Press(0), 300, 0, N, &click), None);
        let sgr = TermModes {
            mouse_reporting: true,
            mouse_motion: true,
            sgr_mouse: true,
            ..TermModes::default()
        };
        assert_eq!(
            encode_mouse(MouseReport::Release(2), 299, 0, N, &sgr).unwrap(),
            b"\x1b[<2;300;1m"
        );
        assert_eq!(
            encode_mouse(MouseReport::WheelDown, 0, 0, C, &sgr).unwrap(),
            b"\x1b[<81;1;1M"
        );
        assert_eq!(
            encode_mouse(MouseReport::Drag(0), 1, 1, N, &sgr).unwrap(),
            b"\x1b[<32;2;2M"
        );
    }

    #[test]
    fn pastes_are_bracketed_when_asked_and_cannot_end_early() {
        let plain = TermModes::default();
        assert_eq!(encode_paste("a\nb\r\nc", &plain), b"a\rb\rc");
        assert_eq!(encode_paste("a\rb\r\nc\nd\r", &plain), b"a\rb\rc\rd\r");
        let bracketed = TermModes {
            bracketed_paste: true,
            ..TermModes::default()
        };
        assert_eq!(
            encode_paste("rm -rf /\x1b[201~\necho", &bracketed),
            b"\x1b[200~rm -rf /\necho\x1b[201~"
        );
        // A CR-ended paste reaches a bracketing program as it came.
        assert_eq!(
            encode_paste("one\rtwo\r\nthree", &bracketed),
            b"\x1b[200~one\rtwo\r\nthree\x1b[201~"
        );
    }
}
