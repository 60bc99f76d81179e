//! One theme file read into what it says, with the line of every value so later errors
//! (a colour the merged palette does not have) can still point at the right place.

use ratatui::style::{Color, Modifier};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::ThemeError;
use super::color::{indexed, parse_color, parse_modifier};
use super::slot::Slot;

/// The syntect themes bundled with syntect's default theme set.
pub(crate) const SYNTAX_THEMES: &[&str] = &[
    "base16-ocean.dark",
    "base16-eighties.dark",
    "base16-mocha.dark",
    "base16-ocean.light",
    "InspiredGitHub",
    "Solarized (dark)",
    "Solarized (light)",
];

/// A value and the 1-based line it came from.
#[derive(Debug, Clone)]
pub(crate) struct Located<T> {
    pub value: T,
    pub line: usize,
}

/// A colour as a style entry names it: resolved against the palette only once the whole
/// `inherits` chain is merged, so a child's palette recolours its parent's styles.
#[derive(Debug, Clone)]
pub(crate) enum ColorRef {
    /// A palette name or a literal colour name / `#rrggbb`.
    Text(String),
    /// A TOML integer 0–255.
    Indexed(Color),
}

/// One `[styles]` entry.
#[derive(Debug, Clone)]
pub(crate) struct StyleEntry {
    pub slot: Slot,
    pub fg: Option<Located<ColorRef>>,
    pub bg: Option<Located<ColorRef>>,
    pub modifiers: Modifier,
}

/// A parsed theme file.
#[derive(Debug, Clone)]
pub(crate) struct ThemeFile {
    /// How errors name the file.
    pub file: String,
    pub inherits: Option<Located<String>>,
    pub syntax: Option<String>,
    pub palette: Vec<(String, Color)>,
    pub styles: Vec<StyleEntry>,
}

/// Parses `text`; `None` when it is not TOML at all. Entries with problems are left out and
/// reported, the rest is kept.
pub(crate) fn parse_theme(
    text: &str,
    file: &str,
    errors: &mut Vec<ThemeError>,
) -> Option<ThemeFile> {
    let doc = match DeTable::parse(text) {
        Ok(doc) => doc,
        Err(error) => {
            errors.push(ThemeError::Syntax {
                file: file.to_string(),
                line: error.span().map_or(1, |span| line_of(text, span.start)),
                message: error.message().trim().to_string(),
            });
            return None;
        }
    };
    let mut parser = Parser { text, file, errors };
    let mut theme = ThemeFile {
        file: file.to_string(),
        inherits: None,
        syntax: None,
        palette: Vec::new(),
        styles: Vec::new(),
    };
    for (key, value) in doc.get_ref() {
        match key.get_ref().as_ref() {
            "inherits" => {
                theme.inherits = parser
                    .string(key, value, "a theme name")
                    .map(|name| Located {
                        value: name.to_string(),
                        line: parser.line(value),
                    });
            }
            "syntax" => theme.syntax = parser.syntax(key, value),
            "palette" => parser.palette(key, value, &mut theme.palette),
            "styles" => parser.styles(key, value, &mut theme.styles),
            other => parser.unknown_field(other, key),
        }
    }
    Some(theme)
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

struct Parser<'a> {
    text: &'a str,
    file: &'a str,
    errors: &'a mut Vec<ThemeError>,
}

type Key<'i> = Spanned<toml::de::DeString<'i>>;
type Value<'i> = Spanned<DeValue<'i>>;

impl Parser<'_> {
    fn line<T>(&self, spanned: &Spanned<T>) -> usize {
        line_of(self.text, spanned.span().start)
    }

    fn wrong_type(&mut self, key: &str, value: &Value<'_>, expected: &'static str) {
        let line = self.line(value);
        self.errors.push(ThemeError::WrongType {
            file: self.file.to_string(),
            line,
            key: key.to_string(),
            expected,
        });
    }

    fn unknown_field(&mut self, name: &str, key: &Key<'_>) {
        let line = self.line(key);
        self.errors.push(ThemeError::UnknownField {
            file: self.file.to_string(),
            line,
            key: name.to_string(),
        });
    }

    fn string<'v>(
        &mut self,
        key: &Key<'_>,
        value: &'v Value<'_>,
        what: &'static str,
    ) -> Option<&'v str> {
        match value.get_ref() {
            DeValue::String(text) => Some(text.as_ref()),
            _ => {
                self.wrong_type(key.get_ref(), value, what);
                None
            }
        }
    }

    fn syntax(&mut self, key: &Key<'_>, value: &Value<'_>) -> Option<String> {
        let name = self.string(key, value, "a syntect theme name")?;
        if SYNTAX_THEMES.contains(&name) {
            return Some(name.to_string());
        }
        let line = self.line(value);
        self.errors.push(ThemeError::UnknownSyntaxTheme {
            file: self.file.to_string(),
            line,
            name: name.to_string(),
            available: SYNTAX_THEMES.join(", "),
        });
        None
    }

    fn palette(&mut self, key: &Key<'_>, value: &Value<'_>, out: &mut Vec<(String, Color)>) {
        let DeValue::Table(table) = value.get_ref() else {
            return self.wrong_type(key.get_ref(), value, "a table of colours");
        };
        for (name, color) in table {
            let full_key = format!("palette.{}", name.get_ref());
            if let Some(color) = self.literal_color(&full_key, color) {
                out.push((name.get_ref().to_string(), color));
            }
        }
    }

    /// A palette value: a literal colour (palette entries do not refer to each other).
    fn literal_color(&mut self, key: &str, value: &Value<'_>) -> Option<Color> {
        let parsed = match self.color_ref(key, value)? {
            ColorRef::Indexed(color) => Some(color),
            ColorRef::Text(text) => parse_color(&text),
        };
        if parsed.is_none() {
            let line = self.line(value);
            self.errors.push(ThemeError::UnknownColor {
                file: self.file.to_string(),
                line,
                key: key.to_string(),
                color: value_text(value.get_ref()),
            });
        }
        parsed
    }

    fn color_ref(&mut self, key: &str, value: &Value<'_>) -> Option<ColorRef> {
        match value.get_ref() {
            DeValue::String(text) => Some(ColorRef::Text(text.to_string())),
            DeValue::Integer(int) => {
                let color = i64::from_str_radix(int.as_str(), int.radix())
                    .ok()
                    .and_then(indexed);
                if color.is_none() {
                    let line = self.line(value);
                    self.errors.push(ThemeError::UnknownColor {
                        file: self.file.to_string(),
                        line,
                        key: key.to_string(),
                        color: int.as_str().to_string(),
                    });
                }
                color.map(ColorRef::Indexed)
            }
            _ => {
                self.wrong_type(key, value, "a colour (name, \"#rrggbb\" or 0-255)");
                None
            }
        }
    }

    fn styles(&mut self, key: &Key<'_>, value: &Value<'_>, out: &mut Vec<StyleEntry>) {
        let DeValue::Table(table) = value.get_ref() else {
            return self.wrong_type(key.get_ref(), value, "a table of styles");
        };
        for (name, style) in table {
            let Some(slot) = Slot::from_key(name.get_ref()) else {
                // An unquoted `ui.text = …` is a nested table in TOML; say how to fix it.
                let hint = if matches!(style.get_ref(), DeValue::Table(_))
                    && !name.get_ref().contains('.')
                {
                    "; dotted style keys must be quoted, e.g. \"ui.text\" = \"fg\"".to_string()
                } else {
                    String::new()
                };
                let line = self.line(name);
                self.errors.push(ThemeError::UnknownSlot {
                    file: self.file.to_string(),
                    line,
                    key: name.get_ref().to_string(),
                    hint,
                });
                continue;
            };
            if let Some(entry) = self.style(slot, style) {
                out.push(entry);
            }
        }
    }

    /// One style: `"fg"` shorthand or `{ fg, bg, modifiers }`. `None` (and an error) when any
    /// part is unusable, so the inherited style is kept whole rather than half-applied.
    fn style(&mut self, slot: Slot, value: &Value<'_>) -> Option<StyleEntry> {
        let key = slot.key();
        let mut entry = StyleEntry {
            slot,
            fg: None,
            bg: None,
            modifiers: Modifier::empty(),
        };
        let table = match value.get_ref() {
            DeValue::String(_) | DeValue::Integer(_) => {
                let line = self.line(value);
                entry.fg = Some(Located {
                    value: self.color_ref(key, value)?,
                    line,
                });
                return Some(entry);
            }
            DeValue::Table(table) => table,
            _ => {
                self.wrong_type(key, value, "a colour or a table { fg, bg, modifiers }");
                return None;
            }
        };
        let before = self.errors.len();
        for (field, item) in table {
            let line = self.line(item);
            match field.get_ref().as_ref() {
                "fg" => {
                    entry.fg = self
                        .color_ref(key, item)
                        .map(|value| Located { value, line })
                }
                "bg" => {
                    entry.bg = self
                        .color_ref(key, item)
                        .map(|value| Located { value, line })
                }
                "modifiers" => entry.modifiers = self.modifiers(key, item),
                other => self.unknown_field(&format!("{key}.{other}"), field),
            }
        }
        let failed = self.errors[before..]
            .iter()
            .any(|error| !error.is_warning());
        (!failed).then_some(entry)
    }

    fn modifiers(&mut self, key: &str, value: &Value<'_>) -> Modifier {
        let names: Vec<&Value<'_>> = match value.get_ref() {
            DeValue::Array(items) => items.iter().collect(),
            DeValue::String(_) => vec![value],
            _ => {
                self.wrong_type(key, value, "a list of modifier names");
                return Modifier::empty();
            }
        };
        let mut modifiers = Modifier::empty();
        for name in names {
            let parsed = match name.get_ref() {
                DeValue::String(text) => parse_modifier(text),
                _ => None,
            };
            match parsed {
                Some(modifier) => modifiers |= modifier,
                None => {
                    let line = self.line(name);
                    self.errors.push(ThemeError::UnknownModifier {
                        file: self.file.to_string(),
                        line,
                        key: key.to_string(),
                        modifier: value_text(name.get_ref()),
                    });
                }
            }
        }
        modifiers
    }
}

/// A short rendering of a value for error messages.
fn value_text(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(text) => text.to_string(),
        DeValue::Integer(int) => int.as_str().to_string(),
        other => format!("<{}>", other.type_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_counts_newlines_and_clamps() {
        let text = "a\nb\nc";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 2), 2);
        assert_eq!(line_of(text, 4), 3);
        assert_eq!(line_of(text, 999), 3);
    }

    #[test]
    fn syntax_list_matches_syntect_bundle() {
        let bundled = syntect::highlighting::ThemeSet::load_defaults();
        let mut expected: Vec<&str> = bundled.themes.keys().map(String::as_str).collect();
        let mut ours = SYNTAX_THEMES.to_vec();
        expected.sort_unstable();
        ours.sort_unstable();
        assert_eq!(ours, expected);
    }

    #[test]
    fn shorthand_table_and_indexed_styles() {
        let text = "[styles]\n\"ui.text\" = \"fg\"\n\"ui.error\" = { fg = 1, bg = \"#000000\", modifiers = [\"bold\"] }\n";
        let mut errors = Vec::new();
        let theme = parse_theme(text, "t.toml", &mut errors).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(theme.styles.len(), 2);
        let error = theme.styles.iter().find(|s| s.slot == Slot::Error).unwrap();
        assert!(matches!(
            error.fg.as_ref().unwrap().value,
            ColorRef::Indexed(Color::Indexed(1))
        ));
        assert_eq!(error.bg.as_ref().unwrap().line, 3);
        assert_eq!(error.modifiers, Modifier::BOLD);
    }

    #[test]
    fn unquoted_dotted_key_gets_a_hint() {
        let text = "[styles]\nui.text = \"fg\"\n";
        let mut errors = Vec::new();
        parse_theme(text, "t.toml", &mut errors).unwrap();
        let message = errors[0].to_string();
        assert!(
            message.starts_with("t.toml:2: unknown style key `ui`"),
            "{message}"
        );
        assert!(message.contains("must be quoted"), "{message}");
    }

    #[test]
    fn bad_modifier_drops_the_entry() {
        let text = "[styles]\n\"ui.text\" = { fg = \"red\", modifiers = [\"blink\"] }\n";
        let mut errors = Vec::new();
        let theme = parse_theme(text, "t.toml", &mut errors).unwrap();
        assert!(theme.styles.is_empty());
        assert_eq!(
            errors[0].to_string(),
            "t.toml:2: unknown modifier `blink` in `ui.text` (use bold, dim, italic, underlined, \
             reversed, crossed_out, hidden)"
        );
    }

    #[test]
    fn wrong_types_and_unknown_fields_are_reported_with_lines() {
        let text = "inherits = 3\nflavour = \"x\"\nsyntax = \"Nope\"\n[palette]\nbad = 999\n";
        let mut errors = Vec::new();
        let theme = parse_theme(text, "t.toml", &mut errors).unwrap();
        assert!(theme.inherits.is_none() && theme.syntax.is_none() && theme.palette.is_empty());
        let lines: Vec<_> = errors.iter().map(|e| e.line()).collect();
        // DeTable iterates keys in sorted order: flavour, inherits, palette, syntax.
        assert_eq!(
            lines,
            vec![Some(2), Some(1), Some(5), Some(3)],
            "{errors:?}"
        );
    }
}
