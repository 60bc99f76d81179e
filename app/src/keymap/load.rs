//! Reading keymap files: the built-in one, then the user's on top of it, per key.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Command, Key, KeyContext, Keymap, KeymapError};

/// The built-in keymap, `keymaps/default.toml`.
pub const DEFAULT_KEYMAP: &str = include_str!("../../../keymaps/default.toml");

/// The user's keymap file name inside the config dir.
pub const KEYMAP_FILE: &str = "keymap.toml";

/// Keymap files larger than this are refused: a keymap is a few kilobytes.
const MAX_KEYMAP_BYTES: u64 = 1024 * 1024;

/// What [`Keymap::load`] does.
pub(super) fn load_keymap(config_dir: &Path) -> (Keymap, Vec<KeymapError>) {
    let path = config_dir.join(KEYMAP_FILE);
    let file = path.display().to_string();
    let text = match read_limited(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return (Keymap::defaults(), Vec::new()),
        Err(reason) => {
            return (
                Keymap::defaults(),
                vec![KeymapError::whole_file(&file, reason)],
            );
        }
    };
    apply_toml(Keymap::defaults(), &text, &file)
}

/// `Ok(None)` when there is no file.
fn read_limited(path: &Path) -> Result<Option<String>, String> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("cannot read: {error}")),
    };
    let mut text = String::new();
    file.take(MAX_KEYMAP_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|error| format!("cannot read: {error}"))?;
    if text.len() as u64 > MAX_KEYMAP_BYTES {
        return Err(format!("larger than {MAX_KEYMAP_BYTES} bytes; ignored"));
    }
    Ok(Some(text))
}

/// Applies keymap file `text` (named `file` in errors) on top of `base`. A TOML syntax error
/// leaves `base` untouched; a bad entry is skipped and the rest applied.
pub fn apply_toml(base: Keymap, text: &str, file: &str) -> (Keymap, Vec<KeymapError>) {
    let mut errors = Vec::new();
    let doc = match DeTable::parse(text) {
        Ok(doc) => doc,
        Err(error) => {
            let line = error.span().map_or(1, |span| line_of(text, span.start));
            let message = format!(
                "TOML syntax error: {}; using the default keymap",
                error.message().trim()
            );
            return (base, vec![KeymapError::at(file, line, message)]);
        }
    };
    let mut loader = Loader {
        text,
        file,
        errors: &mut errors,
        keymap: base,
        seen: HashMap::new(),
    };
    let table = doc.get_ref();
    // Clearing comes first whatever its place in the file, so it never undoes bindings.
    if let Some(value) = table.get("clear-defaults") {
        match value.get_ref() {
            DeValue::Boolean(true) => loader.keymap.clear(),
            DeValue::Boolean(false) => {}
            _ => loader.error(value, "`clear-defaults` should be true or false"),
        }
    }
    for (key, value) in table {
        match key.get_ref().as_ref() {
            "clear-defaults" => {}
            "prefix-key" => loader.prefix_key(value),
            name => match KeyContext::from_table(name) {
                Some(context) => loader.table(context, value),
                None => loader.error(
                    key,
                    format!(
                        "unknown field `{name}` (expected prefix-key, clear-defaults, [prefix], \
                     [direct] or [agent])"
                    ),
                ),
            },
        }
    }
    loader.report_shadowed();
    let keymap = loader.keymap;
    errors.sort_by_key(|error| error.line);
    (keymap, errors)
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

struct Loader<'a> {
    text: &'a str,
    file: &'a str,
    errors: &'a mut Vec<KeymapError>,
    keymap: Keymap,
    /// Keys this file binds, with their line: to catch two spellings of one key.
    seen: HashMap<(KeyContext, Key), usize>,
}

impl Loader<'_> {
    fn line<T>(&self, spanned: &Spanned<T>) -> usize {
        line_of(self.text, spanned.span().start)
    }

    fn error<T>(&mut self, at: &Spanned<T>, message: impl Into<String>) {
        let line = self.line(at);
        self.errors.push(KeymapError::at(self.file, line, message));
    }

    fn prefix_key(&mut self, value: &Spanned<DeValue<'_>>) {
        let DeValue::String(text) = value.get_ref() else {
            return self.error(value, "`prefix-key` should be a key such as \"ctrl-a\"");
        };
        match text.parse::<Key>() {
            Ok(key) => self.keymap.set_prefix(key),
            Err(error) => self.error(
                value,
                format!(
                    "`prefix-key`: {error}; keeping {}",
                    self.keymap.prefix_key()
                ),
            ),
        }
    }

    fn table(&mut self, context: KeyContext, value: &Spanned<DeValue<'_>>) {
        let DeValue::Table(entries) = value.get_ref() else {
            let message = if context == KeyContext::Prefix {
                "`prefix` is the table of keys after the prefix; set the prefix key itself with \
                 `prefix-key = \"ctrl-a\"`"
                    .to_string()
            } else {
                format!(
                    "`{}` should be a table: [{}]",
                    context.table(),
                    context.table()
                )
            };
            return self.error(value, message);
        };
        for (key_text, command) in entries {
            self.entry(context, key_text, command);
        }
    }

    fn entry(
        &mut self,
        context: KeyContext,
        key_text: &Spanned<toml::de::DeString<'_>>,
        value: &Spanned<DeValue<'_>>,
    ) {
        let table = context.table();
        let key = match key_text.get_ref().parse::<Key>() {
            Ok(key) => key,
            Err(error) => return self.error(key_text, format!("[{table}] {error}")),
        };
        let DeValue::String(name) = value.get_ref() else {
            return self.error(
                value,
                format!("[{table}] `{key}` should name a command, or \"none\""),
            );
        };
        let line = self.line(key_text);
        if let Some(first) = self.seen.insert((context, key), line) {
            return self.error(
                key_text,
                format!("[{table}] `{key}` is bound twice (also on line {first})"),
            );
        }
        if name == "none" {
            return self.keymap.unbind(context, key);
        }
        match name.parse::<Command>() {
            Ok(command) => self.keymap.bind(context, key, command),
            Err(error) => self.error(value, format!("[{table}] `{key}`: {error}")),
        }
    }

    /// Bindings this file made that can never fire: the prefix key, or an `[agent]`,
    /// `[shell]` or `[diff]` key that `[direct]` takes first.
    fn report_shadowed(&mut self) {
        let mut shadowed: Vec<(usize, String)> = Vec::new();
        for (&(context, key), &line) in &self.seen {
            if !self.keymap.bindings.contains_key(&(context, key)) {
                continue;
            }
            let table = context.table();
            if context != KeyContext::Prefix && key == self.keymap.prefix_key() {
                shadowed.push((
                    line,
                    format!("[{table}] `{key}` is the prefix key, so it never reaches [{table}]"),
                ));
            } else if matches!(
                context,
                KeyContext::Agent | KeyContext::Shell | KeyContext::Diff | KeyContext::Diagnostics
            ) && self
                .keymap
                .bindings
                .contains_key(&(KeyContext::Direct, key))
            {
                shadowed.push((
                    line,
                    format!("[{table}] `{key}` is also in [direct], which takes it first"),
                ));
            }
        }
        for (line, message) in shadowed {
            self.errors.push(KeymapError::at(self.file, line, message));
        }
    }
}
