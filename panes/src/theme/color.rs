//! Colour and modifier names as theme files spell them.
//!
//! This file and the theme loader are the only places that name `Color` values: everything
//! else asks the theme for a slot's style.

use ratatui::style::{Color, Modifier};

/// Parses a literal colour: `#rrggbb`, `#rgb`, an ANSI name (`red`, `lightred`, `darkgray`,
/// `reset`, …) or an indexed colour `0`–`255` given as text. Palette names are resolved by the
/// caller before this.
pub(crate) fn parse_color(text: &str) -> Option<Color> {
    let text = text.trim();
    if let Some(hex) = text.strip_prefix('#') {
        return parse_hex(hex);
    }
    if let Ok(index) = text.parse::<u8>() {
        return Some(Color::Indexed(index));
    }
    ansi_named(text)
}

/// What a picture is drawn in for a colour left to the terminal.
pub(crate) const UNKNOWN_RGB: [u8; 3] = [128, 128, 128];

/// A colour as red, green and blue, for drawing it into a picture: named and indexed
/// colours as xterm shows them by default; `None` for the terminal's own colour (`reset`).
pub(crate) fn rgb(color: Color) -> Option<[u8; 3]> {
    const ANSI: [[u8; 3]; 16] = [
        [0, 0, 0],
        [205, 0, 0],
        [0, 205, 0],
        [205, 205, 0],
        [0, 0, 238],
        [205, 0, 205],
        [0, 205, 205],
        [229, 229, 229],
        [127, 127, 127],
        [255, 0, 0],
        [0, 255, 0],
        [255, 255, 0],
        [92, 92, 255],
        [255, 0, 255],
        [0, 255, 255],
        [255, 255, 255],
    ];
    let indexed = |i: u8| -> [u8; 3] {
        match i {
            0..16 => ANSI[usize::from(i)],
            16..232 => {
                let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
                let i = i - 16;
                [level(i / 36), level(i / 6 % 6), level(i % 6)]
            }
            _ => {
                let grey = 8 + 10 * (i - 232);
                [grey; 3]
            }
        }
    };
    Some(match color {
        Color::Reset => return None,
        Color::Rgb(r, g, b) => [r, g, b],
        Color::Indexed(i) => indexed(i),
        Color::Black => ANSI[0],
        Color::Red => ANSI[1],
        Color::Green => ANSI[2],
        Color::Yellow => ANSI[3],
        Color::Blue => ANSI[4],
        Color::Magenta => ANSI[5],
        Color::Cyan => ANSI[6],
        Color::Gray => ANSI[7],
        Color::DarkGray => ANSI[8],
        Color::LightRed => ANSI[9],
        Color::LightGreen => ANSI[10],
        Color::LightYellow => ANSI[11],
        Color::LightBlue => ANSI[12],
        Color::LightMagenta => ANSI[13],
        Color::LightCyan => ANSI[14],
        Color::White => ANSI[15],
    })
}

/// An indexed colour from a TOML integer, when it is in range.
pub(crate) fn indexed(value: i64) -> Option<Color> {
    u8::try_from(value).ok().map(Color::Indexed)
}

fn parse_hex(hex: &str) -> Option<Color> {
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let channel = |s: &str| u8::from_str_radix(s, 16).ok();
    match hex.len() {
        6 => Some(Color::Rgb(
            channel(hex.get(0..2)?)?,
            channel(hex.get(2..4)?)?,
            channel(hex.get(4..6)?)?,
        )),
        // `#abc` is `#aabbcc`, as in CSS.
        3 => {
            let digit = |i: usize| channel(hex.get(i..=i)?).map(|v| v * 17);
            Some(Color::Rgb(digit(0)?, digit(1)?, digit(2)?))
        }
        _ => None,
    }
}

/// The sixteen ANSI colours and `reset`; `-`, `_` and case are ignored, so `light-red`,
/// `Light_Red` and `lightred` are the same colour.
fn ansi_named(text: &str) -> Option<Color> {
    let name: String = text
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    let color = match name.as_str() {
        "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "darkgray" | "darkgrey" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return None,
    };
    Some(color)
}

/// Parses a modifier name as theme files write it.
pub(crate) fn parse_modifier(text: &str) -> Option<Modifier> {
    let modifier = match text.trim().to_ascii_lowercase().replace('-', "_").as_str() {
        "bold" => Modifier::BOLD,
        "dim" => Modifier::DIM,
        "italic" => Modifier::ITALIC,
        "underlined" | "underline" => Modifier::UNDERLINED,
        "reversed" | "reverse" => Modifier::REVERSED,
        "crossed_out" | "strikethrough" => Modifier::CROSSED_OUT,
        "hidden" => Modifier::HIDDEN,
        "slow_blink" => Modifier::SLOW_BLINK,
        "rapid_blink" => Modifier::RAPID_BLINK,
        _ => return None,
    };
    Some(modifier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_as_red_green_blue() {
        assert_eq!(rgb(Color::Rgb(1, 2, 3)), Some([1, 2, 3]));
        assert_eq!(rgb(Color::Yellow), Some([205, 205, 0]));
        assert_eq!(rgb(Color::Indexed(9)), Some([255, 0, 0]));
        // The cube's corner and the grey ramp's ends.
        assert_eq!(rgb(Color::Indexed(231)), Some([255, 255, 255]));
        assert_eq!(rgb(Color::Indexed(16)), Some([0, 0, 0]));
        assert_eq!(rgb(Color::Indexed(232)), Some([8, 8, 8]));
        assert_eq!(rgb(Color::Indexed(255)), Some([238, 238, 238]));
        assert_eq!(rgb(Color::Reset), None);
    }

    #[test]
    fn hex_colours() {
        assert_eq!(parse_color("#1a2B3c"), Some(Color::Rgb(0x1a, 0x2b, 0x3c)));
        assert_eq!(parse_color("#fa0"), Some(Color::Rgb(0xff, 0xaa, 0x00)));
        assert_eq!(parse_color("#12345"), None);
        assert_eq!(parse_color("#gg0000"), None);
        // Multi-byte text must not panic on slicing.
        assert_eq!(parse_color("#ééé"), None);
    }

    #[test]
    fn ansi_names_and_indexes() {
        assert_eq!(parse_color("red"), Some(Color::Red));
        assert_eq!(parse_color("Light-Red"), Some(Color::LightRed));
        assert_eq!(parse_color("darkgrey"), Some(Color::DarkGray));
        assert_eq!(parse_color("reset"), Some(Color::Reset));
        assert_eq!(parse_color("208"), Some(Color::Indexed(208)));
        assert_eq!(parse_color("256"), None);
        assert_eq!(parse_color("blu"), None);
        assert_eq!(indexed(7), Some(Color::Indexed(7)));
        assert_eq!(indexed(-1), None);
        assert_eq!(indexed(300), None);
    }

    #[test]
    fn modifiers() {
        assert_eq!(parse_modifier("bold"), Some(Modifier::BOLD));
        assert_eq!(parse_modifier("crossed-out"), Some(Modifier::CROSSED_OUT));
        assert_eq!(parse_modifier("underlined"), Some(Modifier::UNDERLINED));
        assert_eq!(parse_modifier("blink"), None);
    }
}
