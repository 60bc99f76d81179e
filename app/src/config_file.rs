//! Editing `config.toml` line-wise for the setup form and `march mcp`: tables are added at
//! the end and removed whole, everything else (comments, order, spacing) is kept as the
//! user wrote it, and nothing is written that March would not load.

use std::path::Path;

use march_core::atomic_file::FileMode;
use march_core::config::Config;

/// The file's text; a missing file is empty.
pub fn read(file: &Path) -> Result<String, String> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
    }
}

/// Write `text` to `file` atomically, after checking it still parses as a config.
pub fn write(file: &Path, text: &str) -> Result<(), String> {
    Config::parse(text, file).map_err(|e| format!("not saved: {e}"))?;
    let dir = file.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    march_core::atomic_file::write_file(file, text.as_bytes(), FileMode::Kept)
        .map_err(|e| format!("cannot replace {}: {e}", file.display()))
}

/// `s` as a TOML basic string.
pub fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Add table `[header]` with `body` (its `key = value` lines) at the end of `text`, after a
/// blank line.
pub fn append_table(text: &mut String, header: &str, body: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(&format!("[{header}]\n{body}"));
    if !text.ends_with('\n') {
        text.push('\n');
    }
}

/// `text` without table `[header]` and its sub-tables (`[header.env]`), including the
/// comment lines right above its header; comments right above the next table stay with
/// it. `None` when no such table header is in the file.
pub fn remove_table(text: &str, header: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let name = |line: &str| -> Option<String> {
        let l = line.trim();
        let inner = l.strip_prefix('[')?.split(']').next()?;
        // `[[array]]` headers start with `[[`.
        let inner = inner.trim_start_matches('[');
        Some(
            inner
                .split('.')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("."),
        )
    };
    let ours = |line: &str| {
        name(line).is_some_and(|n| n == header || n.starts_with(&format!("{header}.")))
    };
    let start = lines.iter().position(|l| ours(l))?;
    let mut end = start + 1;
    while end < lines.len() && (name(lines[end]).is_none() || ours(lines[end])) {
        end += 1;
    }
    let is_comment = |l: &str| l.trim_start().starts_with('#');
    // Comments touching the next header belong to it.
    if end < lines.len() {
        while end > start + 1 && is_comment(lines[end - 1]) {
            end -= 1;
        }
    }
    // Comments touching ours go with it.
    let mut from = start;
    while from > 0 && is_comment(lines[from - 1]) {
        from -= 1;
    }
    // One blank line is left where the table was (none at either end of the file).
    let mut before: Vec<&str> = lines[..from].to_vec();
    while before.last().is_some_and(|l| l.trim().is_empty()) {
        before.pop();
    }
    let mut after = &lines[end..];
    while after.first().is_some_and(|l| l.trim().is_empty()) {
        after = &after[1..];
    }
    let mut kept = before;
    if !kept.is_empty() && !after.is_empty() {
        kept.push("");
    }
    kept.extend_from_slice(after);
    let mut out = kept.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_added_after_a_blank_line() {
        let mut text = "# mine\ntheme = \"dark\"".to_string();
        append_table(&mut text, "mcp.servers.db", "command = \"db-mcp\"\n");
        assert_eq!(
            text,
            "# mine\ntheme = \"dark\"\n\n[mcp.servers.db]\ncommand = \"db-mcp\"\n"
        );
        let mut empty = String::new();
        append_table(&mut empty, "a", "x = 1");
        assert_eq!(empty, "[a]\nx = 1\n");
    }

    #[test]
    fn a_table_goes_with_its_sub_tables_and_own_comments_and_nothing_else() {
        let text = "# top\ntheme = \"dark\"\n\n\
                    # the database\n[mcp.servers.db]\ncommand = \"db\"\n\n\
                    [mcp.servers.db.env]\nTOKEN = \"x\"\n\n\
                    # the docs server\n[ mcp.servers.docs ]\nurl = \"http://x\"\n";
        assert_eq!(
            remove_table(text, "mcp.servers.db").unwrap(),
            "# top\ntheme = \"dark\"\n\n# the docs server\n[ mcp.servers.docs ]\nurl = \"http://x\"\n"
        );
        assert_eq!(
            remove_table(text, "mcp.servers.docs").unwrap(),
            "# top\ntheme = \"dark\"\n\n# the database\n[mcp.servers.db]\ncommand = \"db\"\n\n\
             [mcp.servers.db.env]\nTOKEN = \"x\"\n"
        );
        // A name that only starts the same is another table.
        assert_eq!(remove_table(text, "mcp.servers.d"), None);
        assert_eq!(
            remove_table("[a]\nx = 1\n", "a").unwrap(),
            "",
            "the only table leaves an empty file"
        );
    }
}
