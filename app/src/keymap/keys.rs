//! Keys as keymap files write them (`ctrl-a`, `alt-enter`, `shift-tab`, `%`, `H`) and as
//! crossterm reports them, normalised so both sides compare equal.

use std::fmt;
use std::str::FromStr;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key with its modifiers, normalised: shift is folded into characters (`H`, `%`), and
/// back-tab is `shift-tab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// The key itself.
    pub code: KeyCode,
    /// Ctrl, alt, shift and super; other modifiers are dropped.
    pub modifiers: KeyModifiers,
}

/// Named keys and the names keymap files use for them; the first name is the canonical one.
const NAMED: &[(KeyCode, &[&str])] = &[
    (KeyCode::Enter, &["enter", "return"]),
    (KeyCode::Esc, &["esc", "escape"]),
    (KeyCode::Tab, &["tab"]),
    (KeyCode::Backspace, &["backspace"]),
    (KeyCode::Delete, &["delete", "del"]),
    (KeyCode::Insert, &["insert", "ins"]),
    (KeyCode::Home, &["home"]),
    (KeyCode::End, &["end"]),
    (KeyCode::PageUp, &["pageup", "pgup"]),
    (KeyCode::PageDown, &["pagedown", "pgdn"]),
    (KeyCode::Up, &["up"]),
    (KeyCode::Down, &["down"]),
    (KeyCode::Left, &["left"]),
    (KeyCode::Right, &["right"]),
    (KeyCode::Char(' '), &["space"]),
];

/// Modifier names, canonical first, in the order [`Key`]'s `Display` writes them.
const MODIFIERS: &[(KeyModifiers, &[&str])] = &[
    (KeyModifiers::CONTROL, &["ctrl", "control", "c"]),
    (KeyModifiers::ALT, &["alt", "meta", "m", "a"]),
    (KeyModifiers::SHIFT, &["shift", "s"]),
    (KeyModifiers::SUPER, &["super", "cmd", "win"]),
];

impl Key {
    /// A key from its parts, normalised the way [`Key::from_event`] normalises events.
    pub fn new(code: KeyCode, modifiers: KeyModifiers) -> Key {
        let all =
            KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT | KeyModifiers::SUPER;
        let mut modifiers = modifiers & all;
        let code = match code {
            KeyCode::BackTab => {
                modifiers |= KeyModifiers::SHIFT;
                KeyCode::Tab
            }
            KeyCode::Char(c) => {
                // Terminals disagree on whether `H` comes with shift; the character says it.
                let shifted = modifiers.contains(KeyModifiers::SHIFT);
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::Char(if shifted { uppercase(c) } else { c })
            }
            other => other,
        };
        Key { code, modifiers }
    }

    /// The key an event reports.
    pub fn from_event(event: &KeyEvent) -> Key {
        Key::new(event.code, event.modifiers)
    }

    /// A key press event for this key, e.g. to forward the prefix key to a pane.
    pub fn to_event(self) -> KeyEvent {
        match self.code {
            KeyCode::Tab if self.modifiers.contains(KeyModifiers::SHIFT) => {
                KeyEvent::new(KeyCode::BackTab, self.modifiers)
            }
            KeyCode::Char(c) if c.is_uppercase() => {
                KeyEvent::new(self.code, self.modifiers | KeyModifiers::SHIFT)
            }
            code => KeyEvent::new(code, self.modifiers),
        }
    }
}

/// `c` upper-cased when that is a single character, else `c`.
fn uppercase(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// Why a key string could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyParseError {
    /// The text as written.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for KeyParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad key `{}`: {}", self.text, self.reason)
    }
}

impl std::error::Error for KeyParseError {}

impl FromStr for Key {
    type Err = KeyParseError;

    fn from_str(text: &str) -> Result<Key, KeyParseError> {
        let error = |reason: String| KeyParseError {
            text: text.to_string(),
            reason,
        };
        if text.is_empty() {
            return Err(error("empty key".to_string()));
        }
        // The key is after the last `-`, except that `-` is itself a key (`-`, `ctrl--`).
        let (mods, name) = if text == "-" {
            ("", "-")
        } else if let Some(mods) = text.strip_suffix("--") {
            (mods, "-")
        } else {
            text.rsplit_once('-').unwrap_or(("", text))
        };
        let mut modifiers = KeyModifiers::NONE;
        for word in mods
            .split('-')
            .filter(|word| !mods.is_empty() || !word.is_empty())
        {
            let lower = word.to_ascii_lowercase();
            let Some((modifier, _)) = MODIFIERS
                .iter()
                .find(|(_, names)| names.contains(&lower.as_str()))
            else {
                return Err(error(format!(
                    "unknown modifier `{word}` (use ctrl, alt, shift or super, joined with `-`)"
                )));
            };
            modifiers |= *modifier;
        }
        let code = parse_name(name).ok_or_else(|| {
            let hint = if name.contains('+') {
                "; join modifiers with `-`, e.g. ctrl-a"
            } else {
                ""
            };
            error(format!(
                "unknown key `{name}` (a single character, or one of: {}, f1-f24){hint}",
                NAMED
                    .iter()
                    .map(|(_, names)| names[0])
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        if let KeyCode::Char(c) = code
            && modifiers.contains(KeyModifiers::SHIFT)
            && !c.is_alphabetic()
            && c != ' '
        {
            return Err(error(format!(
                "shift with `{c}` depends on the keyboard layout; write the shifted character itself"
            )));
        }
        Ok(Key::new(code, modifiers))
    }
}

fn parse_name(name: &str) -> Option<KeyCode> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(KeyCode::Char(c));
    }
    let lower = name.to_ascii_lowercase();
    if lower == "backtab" {
        // What crossterm calls shift-tab; `Key::new` turns it into `shift-tab`.
        return Some(KeyCode::BackTab);
    }
    if let Some((code, _)) = NAMED
        .iter()
        .find(|(_, names)| names.contains(&lower.as_str()))
    {
        return Some(*code);
    }
    let number: u8 = lower.strip_prefix('f')?.parse().ok()?;
    (1..=24).contains(&number).then_some(KeyCode::F(number))
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (modifier, names) in MODIFIERS {
            if self.modifiers.contains(*modifier) {
                write!(f, "{}-", names[0])?;
            }
        }
        if let Some((_, names)) = NAMED.iter().find(|(code, _)| *code == self.code) {
            return f.write_str(names[0]);
        }
        match self.code {
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{}", format!("{other:?}").to_ascii_lowercase()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> Key {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parses_the_documented_forms() {
        let ctrl = KeyModifiers::CONTROL;
        assert_eq!(key("ctrl-a"), Key::new(KeyCode::Char('a'), ctrl));
        assert_eq!(
            key("alt-enter"),
            Key::new(KeyCode::Enter, KeyModifiers::ALT)
        );
        assert_eq!(
            key("shift-tab"),
            Key::new(KeyCode::Tab, KeyModifiers::SHIFT)
        );
        assert_eq!(key("backtab"), key("shift-tab"));
        assert_eq!(key("f1"), Key::new(KeyCode::F(1), KeyModifiers::NONE));
        assert_eq!(key("PageUp"), Key::new(KeyCode::PageUp, KeyModifiers::NONE));
        assert_eq!(key("esc"), key("escape"));
        assert_eq!(
            key("space"),
            Key::new(KeyCode::Char(' '), KeyModifiers::NONE)
        );
        assert_eq!(key("%"), Key::new(KeyCode::Char('%'), KeyModifiers::NONE));
        assert_eq!(key("\""), Key::new(KeyCode::Char('"'), KeyModifiers::NONE));
        assert_eq!(key("-"), Key::new(KeyCode::Char('-'), KeyModifiers::NONE));
        assert_eq!(key("ctrl--"), Key::new(KeyCode::Char('-'), ctrl));
        assert_eq!(key("ctrl-left"), Key::new(KeyCode::Left, ctrl));
        assert_eq!(
            key("Ctrl-Alt-x"),
            Key::new(KeyCode::Char('x'), ctrl | KeyModifiers::ALT)
        );
    }

    #[test]
    fn uppercase_implies_shift() {
        let shifted_h = Key::new(KeyCode::Char('H'), KeyModifiers::NONE);
        assert_eq!(key("H"), shifted_h);
        assert_eq!(key("shift-h"), shifted_h);
        assert_ne!(key("h"), shifted_h);
        // Whatever the terminal reports for shift-h, it is `H`.
        for event in [
            KeyEvent::new(KeyCode::Char('H'), KeyModifiers::SHIFT),
            KeyEvent::new(KeyCode::Char('H'), KeyModifiers::NONE),
            KeyEvent::new(KeyCode::Char('h'), KeyModifiers::SHIFT),
        ] {
            assert_eq!(Key::from_event(&event), shifted_h, "{event:?}");
        }
        assert_eq!(
            Key::from_event(&KeyEvent::new(KeyCode::Char('%'), KeyModifiers::SHIFT)),
            key("%")
        );
        assert_eq!(
            Key::from_event(&KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)),
            key("shift-tab")
        );
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "ctrl-a",
            "alt-enter",
            "shift-tab",
            "f12",
            "pageup",
            "esc",
            "space",
            "%",
            "\"",
            "H",
            "ctrl-left",
            "-",
            "ctrl--",
            "ctrl-alt-shift-super-delete",
            "ctrl-A",
            "é",
            "alt-1",
        ] {
            let parsed = key(text);
            assert_eq!(parsed.to_string(), text);
            assert_eq!(key(&parsed.to_string()), parsed);
        }
        assert_eq!(key("control-return").to_string(), "ctrl-enter");
        assert_eq!(key("ctrl-shift-a").to_string(), "ctrl-A");
    }

    #[test]
    fn to_event_round_trips() {
        for text in ["ctrl-a", "H", "shift-tab", "alt-enter", "%"] {
            assert_eq!(Key::from_event(&key(text).to_event()), key(text));
        }
        assert_eq!(key("shift-tab").to_event().code, KeyCode::BackTab);
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let reason = |text: &str| text.parse::<Key>().unwrap_err().to_string();
        assert_eq!(reason(""), "bad key ``: empty key");
        assert!(reason("hyper-a").contains("unknown modifier `hyper`"));
        assert!(reason("ctrl-enterr").contains("unknown key `enterr`"));
        assert!(reason("ctrl+a").contains("join modifiers with `-`"));
        assert!(reason("f25").contains("unknown key `f25`"));
        assert!(reason("shift-1").contains("write the shifted character"));
        assert!(
            reason("ctrl-").contains("unknown key"),
            "{}",
            reason("ctrl-")
        );
    }
}
