//! Finding theme files, following `inherits`, and merging the chain into a [`Theme`].

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use ratatui::style::{Color, Style};

use super::color::parse_color;
use super::source::{ColorRef, Located, ThemeFile, parse_theme};
use super::{Slot, Theme, ThemeError};

/// The themes shipped in the binary, by name.
const BUILTINS: &[(&str, &str)] = &[
    ("dark", include_str!("../../../themes/dark.toml")),
    ("light", include_str!("../../../themes/light.toml")),
];

/// The theme used when the requested one cannot be had.
pub const FALLBACK_THEME: &str = "dark";

/// Theme files larger than this are refused: a theme is a few kilobytes.
const MAX_THEME_BYTES: u64 = 1024 * 1024;

/// The names of the built-in themes.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|(name, _)| *name)
}

/// Loads theme `name`: a user theme `<config_dir>/themes/<name>.toml` if there is one
/// (it may shadow a built-in), else a built-in. Never fails: problems come back as errors next
/// to the best theme that could be made — the fallback `dark` when nothing usable was found,
/// and for each style the nearest entry along the `inherits` chain that was valid.
pub fn load_theme(config_dir: Option<&Path>, name: &str) -> (Theme, Vec<ThemeError>) {
    let mut errors = Vec::new();
    let user_dir = config_dir.map(|dir| dir.join("themes"));
    let (resolved_name, chain) = build_chain(user_dir.as_deref(), name, &mut errors);
    let theme = resolve(resolved_name, &chain, &mut errors);
    (theme, errors)
}

/// Every theme name that [`load_theme`] can find: built-ins and user files, sorted.
pub fn available_themes(config_dir: Option<&Path>) -> Vec<String> {
    let mut names: Vec<String> = builtin_names().map(str::to_string).collect();
    if let Some(entries) = config_dir.and_then(|dir| std::fs::read_dir(dir.join("themes")).ok()) {
        for entry in entries.flatten() {
            let path = entry.path();
            let stem = path.file_stem().and_then(|stem| stem.to_str());
            if path.extension().is_some_and(|ext| ext == "toml")
                && let Some(stem) = stem.filter(|stem| valid_name(stem))
            {
                names.push(stem.to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Where a theme's text comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Builtin(&'static str, &'static str),
    User(String, PathBuf),
}

impl Source {
    fn name(&self) -> &str {
        match self {
            Source::Builtin(name, _) => name,
            Source::User(name, _) => name,
        }
    }

    fn display(&self) -> String {
        match self {
            Source::Builtin(name, _) => format!("built-in themes/{name}.toml"),
            Source::User(_, path) => path.display().to_string(),
        }
    }

    fn read(&self) -> Result<String, ThemeError> {
        let path = match self {
            Source::Builtin(_, text) => return Ok((*text).to_string()),
            Source::User(_, path) => path,
        };
        let read_error = |reason: String| ThemeError::Read {
            file: self.display(),
            reason,
        };
        let file = std::fs::File::open(path).map_err(|error| read_error(error.to_string()))?;
        let mut text = String::new();
        file.take(MAX_THEME_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|error| read_error(error.to_string()))?;
        if text.len() as u64 > MAX_THEME_BYTES {
            return Err(read_error(format!("larger than {MAX_THEME_BYTES} bytes")));
        }
        Ok(text)
    }
}

fn builtin(name: &str) -> Option<Source> {
    BUILTINS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(name, text)| Source::Builtin(name, text))
}

/// Names become file names, so nothing that could leave the themes folder.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Finds theme `name` as seen from `from`. A user file that inherits its own name (a
/// `dark.toml` with `inherits = "dark"`) means the built-in it shadows.
fn locate(user_dir: Option<&Path>, name: &str, from: Option<&Source>) -> Option<Source> {
    let inherits_itself = matches!(from, Some(Source::User(own, _)) if own == name);
    if let Some(dir) = user_dir
        && !inherits_itself
    {
        let path = dir.join(format!("{name}.toml"));
        if path.is_file() {
            return Some(Source::User(name.to_string(), path));
        }
    }
    builtin(name)
}

/// The parsed files from the requested theme up its `inherits` chain, always ending at a
/// built-in so every slot the files leave out still has a style.
fn build_chain(
    user_dir: Option<&Path>,
    name: &str,
    errors: &mut Vec<ThemeError>,
) -> (String, Vec<ThemeFile>) {
    let first = if valid_name(name) {
        locate(user_dir, name, None)
    } else {
        errors.push(ThemeError::InvalidName {
            name: name.to_string(),
        });
        None
    };
    if first.is_none() && valid_name(name) {
        errors.push(ThemeError::NotFound {
            name: name.to_string(),
            builtins: builtin_names().collect::<Vec<_>>().join(", "),
            searched: user_dir.map_or("no config dir".to_string(), |dir| {
                dir.join(format!("{name}.toml")).display().to_string()
            }),
        });
    }
    let mut chain = Vec::new();
    let mut visited: Vec<Source> = Vec::new();
    let mut next = first;
    while let Some(source) = next.take() {
        let file = match source.read() {
            Ok(text) => parse_theme(&text, &source.display(), errors),
            Err(error) => {
                errors.push(error);
                None
            }
        };
        let Some(file) = file else { break };
        if let Some(parent) = &file.inherits {
            next = follow(user_dir, &source, parent, &file.file, &visited, errors);
        }
        visited.push(source);
        chain.push(file);
    }
    let ends_in_builtin = matches!(visited.last(), Some(Source::Builtin(..)));
    let resolved_name = if chain.is_empty() {
        // The requested file was unusable: a broken user `light.toml` falls back to the
        // built-in `light`, anything else to the fallback theme.
        builtin(name).map_or(FALLBACK_THEME, |_| name).to_string()
    } else {
        name.to_string()
    };
    if !ends_in_builtin {
        let root_name = if chain.is_empty() {
            resolved_name.as_str()
        } else {
            FALLBACK_THEME
        };
        if let Some(Source::Builtin(root, text)) = builtin(root_name)
            && !visited.contains(&Source::Builtin(root, text))
            && let Some(file) = parse_theme(text, &Source::Builtin(root, text).display(), errors)
        {
            chain.push(file);
        }
    }
    (resolved_name, chain)
}

/// The parent named by `inherits`, or `None` with an error when it is missing or already in
/// the chain.
fn follow(
    user_dir: Option<&Path>,
    source: &Source,
    parent: &Located<String>,
    file: &str,
    visited: &[Source],
    errors: &mut Vec<ThemeError>,
) -> Option<Source> {
    let found = valid_name(&parent.value)
        .then(|| locate(user_dir, &parent.value, Some(source)))
        .flatten();
    let Some(found) = found else {
        errors.push(ThemeError::UnknownParent {
            file: file.to_string(),
            line: parent.line,
            name: parent.value.clone(),
        });
        return None;
    };
    if found == *source || visited.contains(&found) {
        let mut names: Vec<&str> = visited.iter().map(Source::name).collect();
        names.push(source.name());
        names.push(found.name());
        errors.push(ThemeError::Cycle {
            file: file.to_string(),
            line: parent.line,
            chain: names.join(" -> "),
        });
        return None;
    }
    Some(found)
}

/// Merges the chain (leaf first): palettes with the child winning, then per slot the
/// nearest entry whose colours all resolve against the merged palette.
fn resolve(name: String, chain: &[ThemeFile], errors: &mut Vec<ThemeError>) -> Theme {
    let mut palette: HashMap<&str, Color> = HashMap::new();
    for file in chain.iter().rev() {
        for (key, color) in &file.palette {
            palette.insert(key, *color);
        }
    }
    let mut styles = HashMap::new();
    for file in chain {
        for entry in &file.styles {
            let fg = resolve_color(entry.fg.as_ref(), entry.slot, &palette, &file.file, errors);
            let bg = resolve_color(entry.bg.as_ref(), entry.slot, &palette, &file.file, errors);
            let (Ok(fg), Ok(bg)) = (fg, bg) else { continue };
            let mut style = Style::default().add_modifier(entry.modifiers);
            style.fg = fg;
            style.bg = bg;
            styles.entry(entry.slot).or_insert(style);
        }
    }
    let syntax = chain
        .iter()
        .find_map(|file| file.syntax.clone())
        .unwrap_or_else(|| "base16-ocean.dark".to_string());
    Theme {
        name,
        syntax,
        styles,
    }
}

fn resolve_color(
    color: Option<&Located<ColorRef>>,
    slot: Slot,
    palette: &HashMap<&str, Color>,
    file: &str,
    errors: &mut Vec<ThemeError>,
) -> Result<Option<Color>, ()> {
    let Some(located) = color else {
        return Ok(None);
    };
    let text = match &located.value {
        ColorRef::Indexed(color) => return Ok(Some(*color)),
        ColorRef::Text(text) => text,
    };
    // Palette names first, so a palette may define its own `red`.
    if let Some(color) = palette
        .get(text.as_str())
        .copied()
        .or_else(|| parse_color(text))
    {
        return Ok(Some(color));
    }
    errors.push(ThemeError::UnknownColor {
        file: file.to_string(),
        line: located.line,
        key: slot.key().to_string(),
        color: text.clone(),
    });
    Err(())
}
