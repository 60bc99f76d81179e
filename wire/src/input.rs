//! A terminal's input as events: what the server makes of a client's
//! [`ClientMessage::Input`](crate::ClientMessage::Input). termina's parser (crossterm's,
//! made public) reads the bytes and its events become crossterm's, which the workspace's
//! keymaps and mouse handling speak. Terminal replies (CSI, OSC and DCS reports) are no
//! user's input and are dropped.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers, MediaKeyCode,
    ModifierKeyCode, MouseButton, MouseEvent, MouseEventKind,
};
use termina::event as tm;

/// Turns one terminal's input bytes into events, keeping a sequence split between reads.
#[derive(Debug, Default)]
pub struct InputDecoder {
    parser: termina::Parser,
}

impl InputDecoder {
    /// The events `bytes` complete, in order. `partial`: the read filled its buffer, so a
    /// lone ESC at the end may be the start of a sequence rather than the Escape key.
    pub fn decode(&mut self, bytes: &[u8], partial: bool) -> Vec<Event> {
        self.parser.parse(bytes, partial);
        std::iter::from_fn(|| self.parser.pop())
            .filter_map(event)
            .collect()
    }
}

fn event(event: termina::Event) -> Option<Event> {
    Some(match event {
        termina::Event::Key(key) => Event::Key(key_event(key)),
        termina::Event::Mouse(mouse) => Event::Mouse(MouseEvent {
            kind: mouse_kind(mouse.kind),
            column: mouse.column,
            row: mouse.row,
            modifiers: modifiers(mouse.modifiers),
        }),
        termina::Event::WindowResized(size) => Event::Resize(size.cols, size.rows),
        termina::Event::FocusIn => Event::FocusGained,
        termina::Event::FocusOut => Event::FocusLost,
        termina::Event::Paste(text) => Event::Paste(text),
        termina::Event::Csi(_) | termina::Event::Osc(_) | termina::Event::Dcs(_) => return None,
    })
}

fn key_event(key: tm::KeyEvent) -> KeyEvent {
    let mut state = KeyEventState::NONE;
    if key.state.contains(tm::KeyEventState::KEYPAD) {
        state |= KeyEventState::KEYPAD;
    }
    if key.state.contains(tm::KeyEventState::CAPS_LOCK)
        || key.modifiers.contains(tm::Modifiers::CAPS_LOCK)
    {
        state |= KeyEventState::CAPS_LOCK;
    }
    if key.state.contains(tm::KeyEventState::NUM_LOCK)
        || key.modifiers.contains(tm::Modifiers::NUM_LOCK)
    {
        state |= KeyEventState::NUM_LOCK;
    }
    KeyEvent {
        code: key_code(key.code),
        modifiers: modifiers(key.modifiers),
        kind: match key.kind {
            tm::KeyEventKind::Press => KeyEventKind::Press,
            tm::KeyEventKind::Release => KeyEventKind::Release,
            tm::KeyEventKind::Repeat => KeyEventKind::Repeat,
        },
        state,
    }
}

fn modifiers(m: tm::Modifiers) -> KeyModifiers {
    let pairs = [
        (tm::Modifiers::SHIFT, KeyModifiers::SHIFT),
        (tm::Modifiers::CONTROL, KeyModifiers::CONTROL),
        (tm::Modifiers::ALT, KeyModifiers::ALT),
        (tm::Modifiers::SUPER, KeyModifiers::SUPER),
        (tm::Modifiers::HYPER, KeyModifiers::HYPER),
        (tm::Modifiers::META, KeyModifiers::META),
    ];
    pairs
        .into_iter()
        .filter(|(from, _)| m.contains(*from))
        .fold(KeyModifiers::NONE, |all, (_, to)| all | to)
}

fn key_code(code: tm::KeyCode) -> KeyCode {
    match code {
        tm::KeyCode::Char(c) => KeyCode::Char(c),
        tm::KeyCode::Enter => KeyCode::Enter,
        tm::KeyCode::Backspace => KeyCode::Backspace,
        tm::KeyCode::Tab => KeyCode::Tab,
        tm::KeyCode::Escape => KeyCode::Esc,
        tm::KeyCode::Left => KeyCode::Left,
        tm::KeyCode::Right => KeyCode::Right,
        tm::KeyCode::Up => KeyCode::Up,
        tm::KeyCode::Down => KeyCode::Down,
        tm::KeyCode::Home => KeyCode::Home,
        tm::KeyCode::End => KeyCode::End,
        tm::KeyCode::BackTab => KeyCode::BackTab,
        tm::KeyCode::PageUp => KeyCode::PageUp,
        tm::KeyCode::PageDown => KeyCode::PageDown,
        tm::KeyCode::Insert => KeyCode::Insert,
        tm::KeyCode::Delete => KeyCode::Delete,
        tm::KeyCode::KeypadBegin => KeyCode::KeypadBegin,
        tm::KeyCode::CapsLock => KeyCode::CapsLock,
        tm::KeyCode::ScrollLock => KeyCode::ScrollLock,
        tm::KeyCode::NumLock => KeyCode::NumLock,
        tm::KeyCode::PrintScreen => KeyCode::PrintScreen,
        tm::KeyCode::Pause => KeyCode::Pause,
        tm::KeyCode::Menu => KeyCode::Menu,
        tm::KeyCode::Null => KeyCode::Null,
        tm::KeyCode::Function(n) => KeyCode::F(n),
        tm::KeyCode::Modifier(m) => KeyCode::Modifier(modifier_key(m)),
        tm::KeyCode::Media(m) => KeyCode::Media(media_key(m)),
    }
}

fn mouse_kind(kind: tm::MouseEventKind) -> MouseEventKind {
    match kind {
        tm::MouseEventKind::Down(b) => MouseEventKind::Down(button(b)),
        tm::MouseEventKind::Up(b) => MouseEventKind::Up(button(b)),
        tm::MouseEventKind::Drag(b) => MouseEventKind::Drag(button(b)),
        tm::MouseEventKind::Moved => MouseEventKind::Moved,
        tm::MouseEventKind::ScrollDown => MouseEventKind::ScrollDown,
        tm::MouseEventKind::ScrollUp => MouseEventKind::ScrollUp,
        tm::MouseEventKind::ScrollLeft => MouseEventKind::ScrollLeft,
        tm::MouseEventKind::ScrollRight => MouseEventKind::ScrollRight,
    }
}

fn button(b: tm::MouseButton) -> MouseButton {
    match b {
        tm::MouseButton::Left => MouseButton::Left,
        tm::MouseButton::Right => MouseButton::Right,
        tm::MouseButton::Middle => MouseButton::Middle,
    }
}

fn modifier_key(m: tm::ModifierKeyCode) -> ModifierKeyCode {
    match m {
        tm::ModifierKeyCode::LeftShift => ModifierKeyCode::LeftShift,
        tm::ModifierKeyCode::LeftControl => ModifierKeyCode::LeftControl,
        tm::ModifierKeyCode::LeftAlt => ModifierKeyCode::LeftAlt,
        tm::ModifierKeyCode::LeftSuper => ModifierKeyCode::LeftSuper,
        tm::ModifierKeyCode::LeftHyper => ModifierKeyCode::LeftHyper,
        tm::ModifierKeyCode::LeftMeta => ModifierKeyCode::LeftMeta,
        tm::ModifierKeyCode::RightShift => ModifierKeyCode::RightShift,
        tm::ModifierKeyCode::RightControl => ModifierKeyCode::RightControl,
        tm::ModifierKeyCode::RightAlt => ModifierKeyCode::RightAlt,
        tm::ModifierKeyCode::RightSuper => ModifierKeyCode::RightSuper,
        tm::ModifierKeyCode::RightHyper => ModifierKeyCode::RightHyper,
        tm::ModifierKeyCode::RightMeta => ModifierKeyCode::RightMeta,
        tm::ModifierKeyCode::IsoLevel3Shift => ModifierKeyCode::IsoLevel3Shift,
        tm::ModifierKeyCode::IsoLevel5Shift => ModifierKeyCode::IsoLevel5Shift,
    }
}

fn media_key(m: tm::MediaKeyCode) -> MediaKeyCode {
    match m {
        tm::MediaKeyCode::Play => MediaKeyCode::Play,
        tm::MediaKeyCode::Pause => MediaKeyCode::Pause,
        tm::MediaKeyCode::PlayPause => MediaKeyCode::PlayPause,
        tm::MediaKeyCode::Reverse => MediaKeyCode::Reverse,
        tm::MediaKeyCode::Stop => MediaKeyCode::Stop,
        tm::MediaKeyCode::FastForward => MediaKeyCode::FastForward,
        tm::MediaKeyCode::Rewind => MediaKeyCode::Rewind,
        tm::MediaKeyCode::TrackNext => MediaKeyCode::TrackNext,
        tm::MediaKeyCode::TrackPrevious => MediaKeyCode::TrackPrevious,
        tm::MediaKeyCode::Record => MediaKeyCode::Record,
        tm::MediaKeyCode::LowerVolume => MediaKeyCode::LowerVolume,
        tm::MediaKeyCode::RaiseVolume => MediaKeyCode::RaiseVolume,
        tm::MediaKeyCode::MuteVolume => MediaKeyCode::MuteVolume,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> Event {
        Event::Key(KeyEvent::new(code, modifiers))
    }

    #[test]
    fn keys_mouse_pastes_and_focus_come_out_as_crossterm_events() {
        let mut decoder = InputDecoder::default();
        let input = b"aA\x01\r\x7f\x1b[A\x1bx\x1b[1;5C\x1b[200~two\nlines\x1b[201~\x1b[I\x1b[<0;3;4M\x1b[97;5u";
        assert_eq!(
            decoder.decode(input, false),
            vec![
                key(KeyCode::Char('a'), KeyModifiers::NONE),
                key(KeyCode::Char('A'), KeyModifiers::SHIFT),
                key(KeyCode::Char('a'), KeyModifiers::CONTROL),
                key(KeyCode::Enter, KeyModifiers::NONE),
                key(KeyCode::Backspace, KeyModifiers::NONE),
                key(KeyCode::Up, KeyModifiers::NONE),
                key(KeyCode::Char('x'), KeyModifiers::ALT),
                key(KeyCode::Right, KeyModifiers::CONTROL),
                Event::Paste("two\nlines".into()),
                Event::FocusGained,
                Event::Mouse(MouseEvent {
                    kind: MouseEventKind::Down(MouseButton::Left),
                    column: 2,
                    row: 3,
                    modifiers: KeyModifiers::NONE,
                }),
                key(KeyCode::Char('a'), KeyModifiers::CONTROL),
            ]
        );
    }

    #[test]
    fn a_sequence_split_between_reads_is_kept_and_a_lone_escape_is_the_key() {
        let mut decoder = InputDecoder::default();
        assert_eq!(decoder.decode(b"\x1b", true), vec![]);
        assert_eq!(
            decoder.decode(b"[B", false),
            vec![key(KeyCode::Down, KeyModifiers::NONE)]
        );
        assert_eq!(decoder.decode(b"\x1b[200~half", false), vec![]);
        assert_eq!(
            decoder.decode(b" of it\x1b[201~", false),
            vec![Event::Paste("half of it".into())]
        );
        assert_eq!(
            decoder.decode(b"\x1b", false),
            vec![key(KeyCode::Esc, KeyModifiers::NONE)]
        );
        // A terminal's reply (the keyboard flags) is no input, nor is a byte that is no UTF-8.
        assert_eq!(
            decoder.decode(b"\x1b[?1u\xffq", false),
            vec![key(KeyCode::Char('q'), KeyModifiers::NONE)]
        );
    }
}
