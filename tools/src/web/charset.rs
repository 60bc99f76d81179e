//! A body's bytes as text, in the encoding it is written in: a byte-order mark, else the
//! `charset` of its media type, else (for HTML) a `<meta>` charset near its start, else UTF-8.
//! Bytes that are not valid in the encoding become U+FFFD.

use encoding_rs::{Encoding, UTF_8};

/// How far into an HTML page a `<meta>` charset is looked for (as browsers do, roughly).
const META_WINDOW: usize = 1024;

/// The text of `body`, sent with the media type `content_type` (the whole header value).
pub fn decode(body: &[u8], content_type: &str, html: bool) -> String {
    let declared = parameter(content_type, "charset")
        .or_else(|| html.then(|| meta_charset(body)).flatten())
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()))
        .unwrap_or(UTF_8);
    // A byte-order mark wins over any label (`decode` looks for it first).
    let (text, _, _) = declared.decode(body);
    text.into_owned()
}

/// The value of parameter `key` of a media type (`text/html; charset="utf-8"`).
fn parameter(media_type: &str, key: &str) -> Option<String> {
    media_type.split(';').skip(1).find_map(|p| {
        let (name, value) = p.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case(key)
            .then(|| value.trim().trim_matches('"').to_string())
    })
}

/// The charset a `<meta charset>` or `<meta http-equiv content>` near the page's start
/// declares.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(META_WINDOW)]).to_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let rest = head[at..].trim_start_matches(['"', '\'', ' ']);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')))
        .unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_encoding_is_used() {
        // "café" in Latin-1 (whose labels name windows-1252, as browsers read it).
        assert_eq!(
            decode(b"caf\xe9", "text/plain; charset=ISO-8859-1", false),
            "café"
        );
        assert_eq!(
            decode(
                b"<meta charset=\"windows-1252\"><p>caf\xe9",
                "text/html",
                true
            ),
            "<meta charset=\"windows-1252\"><p>café"
        );
        let http_equiv =
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\xe9";
        assert!(decode(http_equiv, "text/html", true).ends_with('é'));
        // The header wins over the page; a byte-order mark over both.
        assert_eq!(
            decode(
                b"<meta charset=latin1>\xc3\xa9",
                "text/html; charset=utf-8",
                true
            ),
            "<meta charset=latin1>é"
        );
        assert_eq!(
            decode(b"\xef\xbb\xbfok", "text/plain; charset=latin1", false),
            "ok"
        );
    }

    #[test]
    fn without_a_declaration_it_is_utf8_and_bad_bytes_are_marked() {
        assert_eq!(decode("héllo".as_bytes(), "text/plain", false), "héllo");
        assert_eq!(decode(b"caf\xe9", "", false), "caf\u{fffd}");
        // A meta charset in plain text means nothing.
        assert_eq!(
            decode(b"charset=latin1 \xe9", "text/plain", false),
            "charset=latin1 \u{fffd}"
        );
        // An unknown label is UTF-8.
        assert_eq!(
            decode("é".as_bytes(), "text/plain; charset=klingon", false),
            "é"
        );
    }
}
