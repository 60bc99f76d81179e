//! Themes as data: `themes/*.toml` shipped in the binary and user themes in the config
//! dir, with `inherits` and a `[palette]`; every colour the panes draw comes from here.
//!
//! A theme file:
//!
//! ```toml
//! inherits = "dark"                 # optional; a built-in or another user theme
//! syntax = "base16-ocean.dark"      # a syntect bundled theme for code blocks
//! [palette]
//! accent = "#82a6f5"                # "#rrggbb", "#rgb", an ANSI name, or 0-255
//! [styles]
//! "ui.text" = "fg"                  # shorthand: the foreground only
//! "ui.title.focused" = { fg = "accent", bg = "bg", modifiers = ["bold"] }
//! ```
//!
//! Style colours are resolved against the palette merged along the whole `inherits` chain,
//! so overriding one palette colour recolours every style that names it.

mod color;
mod error;
mod load;
mod slot;
mod source;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use ratatui::style::Style;

pub use error::ThemeError;
pub use load::{FALLBACK_THEME, available_themes, builtin_names, load_theme};
pub use slot::Slot;

/// A resolved theme: a style for every slot, and the syntect theme code blocks use.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// The theme's name (its file name without `.toml`).
    pub name: String,
    /// The syntect theme for code (one of syntect's bundled themes).
    pub syntax: String,
    styles: HashMap<Slot, Style>,
}

impl Theme {
    /// The style of `slot` (the default style when the theme does not set it).
    pub fn style(&self, slot: Slot) -> Style {
        self.styles.get(&slot).copied().unwrap_or_default()
    }

    /// The foreground of `slot` as red, green and blue, for drawing it into a picture; a
    /// middle grey when the slot leaves the terminal's own colour (unknown here).
    pub fn rgb(&self, slot: Slot) -> [u8; 3] {
        self.style(slot)
            .fg
            .and_then(color::rgb)
            .unwrap_or(color::UNKNOWN_RGB)
    }

    /// A built-in theme (`dark` or `light`), ignoring any user file of the same name.
    pub fn builtin(name: &str) -> Option<Theme> {
        builtin_names()
            .any(|builtin| builtin == name)
            .then(|| load_theme(None, name).0)
    }
}

impl Default for Theme {
    /// The built-in `dark` theme.
    fn default() -> Self {
        load_theme(None, FALLBACK_THEME).0
    }
}
