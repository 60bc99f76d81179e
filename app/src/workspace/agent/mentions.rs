//! A prompt's `@` mentions, sent as ACP resources beside its text: each `@path` (or
//! `@"path with blanks"`) naming a file or directory (relative to the project, or absolute)
//! becomes a resource link, or, when the agent takes embedded context, a text file's
//! content embedded (UTF-8 up to 1 MiB; anything else stays a link). Works with any agent:
//! links are in every ACP agent's baseline.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, EmbeddedResource, EmbeddedResourceResource, ResourceLink, TextContent,
    TextResourceContents,
};

/// Files embedded at most this large; larger ones are linked.
const MAX_EMBEDDED: u64 = 1024 * 1024;
/// Mentions sent with one prompt at most.
const MAX_MENTIONS: usize = 32;

/// The paths `text` mentions, in order, each once.
pub(crate) fn mentioned(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let before = &rest[..at];
        let after = &rest[at + 1..];
        rest = after;
        if !(before.is_empty() || before.ends_with(char::is_whitespace)) {
            continue;
        }
        let path = match after.strip_prefix('"') {
            Some(quoted) => match unquote(quoted) {
                Some(path) => path,
                None => continue,
            },
            None => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                // Punctuation after a mention ends the sentence, not the path.
                after[..end]
                    .trim_end_matches([',', '.', ';', ':', '!', '?', ')'])
                    .to_string()
            }
        };
        if !path.is_empty() && !out.contains(&path) {
            out.push(path);
        }
    }
    out.truncate(MAX_MENTIONS);
    out
}

/// The text of a quoted mention up to its closing quote (`\"` and `\\` unescaped);
/// `None` when it is not closed.
fn unquote(quoted: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.push(chars.next()?),
            c => out.push(c),
        }
    }
    None
}

/// `path` as a `file://` URI (bytes outside the unreserved set and `/` percent-encoded).
pub(crate) fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// The content blocks of a prompt: its text, then a resource for each mention of an
/// existing file or directory; files are embedded when `embed` (the agent takes embedded
/// context) and they are text of a reasonable size.
pub(crate) async fn prompt_blocks(
    text: String,
    project: PathBuf,
    embed: bool,
) -> Vec<ContentBlock> {
    let paths = mentioned(&text);
    let mut blocks = vec![ContentBlock::Text(TextContent::new(text))];
    for path in paths {
        let full = project.join(&path);
        let Ok(meta) = tokio::fs::metadata(&full).await else {
            continue;
        };
        let uri = file_uri(&full);
        if embed
            && meta.is_file()
            && meta.len() <= MAX_EMBEDDED
            && let Ok(bytes) = tokio::fs::read(&full).await
            && let Ok(content) = String::from_utf8(bytes)
            && !content.contains('\0')
        {
            blocks.push(ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(
                    TextResourceContents::new(content, uri).mime_type("text/plain".to_string()),
                ),
            )));
            continue;
        }
        let mut link = ResourceLink::new(path.trim_end_matches('/').to_string(), uri);
        if meta.is_file() {
            link.size = i64::try_from(meta.len()).ok();
        }
        blocks.push(ContentBlock::ResourceLink(link));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_words_starting_with_at() {
        assert_eq!(
            mentioned(
                "look at @src/main.rs, and @\"my notes.md\" but not me@host.org @src/main.rs"
            ),
            ["src/main.rs", "my notes.md"]
        );
        assert_eq!(mentioned("@a.rs)."), ["a.rs"]);
        assert_eq!(
            mentioned(r#"@"say \"hi\" \\x.txt""#),
            [r#"say "hi" \x.txt"#]
        );
        assert!(mentioned("@ alone and @\"unclosed").is_empty());
    }

    #[test]
    fn uris_escape_what_a_uri_cannot_hold() {
        assert_eq!(
            file_uri(Path::new("/p/a b/ü.rs")),
            "file:///p/a%20b/%C3%BC.rs"
        );
    }

    #[tokio::test]
    async fn existing_files_are_embedded_or_linked_and_others_left_as_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(dir.path().join("bin.dat"), b"\0\x01\x02").unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let text = "see @a.rs @bin.dat @src/ @missing.rs".to_string();
        let blocks = prompt_blocks(text.clone(), dir.path().to_path_buf(), true).await;
        assert_eq!(blocks.len(), 4, "{blocks:?}");
        assert!(matches!(&blocks[0], ContentBlock::Text(t) if t.text == text));
        match &blocks[1] {
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    assert_eq!(t.text, "fn a() {}\n");
                    assert!(t.uri.ends_with("/a.rs"));
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        assert!(matches!(&blocks[2], ContentBlock::ResourceLink(l) if l.name == "bin.dat"));
        assert!(matches!(&blocks[3], ContentBlock::ResourceLink(l) if l.name == "src"));
        let linked = prompt_blocks("@a.rs".into(), dir.path().to_path_buf(), false).await;
        assert!(matches!(&linked[1], ContentBlock::ResourceLink(l) if l.size == Some(10)));
    }
}
