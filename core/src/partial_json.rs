//! Tolerant parsing of JSON that is still streaming in (tool-call arguments).
//!
//! A prefix of a JSON document is completed by closing open strings and containers; when that
//! is not enough (a dangling key, a half literal) it falls back to the last complete value.

use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Object,
    Array,
}

/// Parse a possibly incomplete JSON document. Returns `None` when nothing usable has arrived.
pub fn parse_partial(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    if let Ok(v) = serde_json::from_str(trimmed) {
        return Some(v);
    }
    let scan = Scan::run(trimmed);
    let mut attempt = String::with_capacity(trimmed.len() + scan.stack.len() + 1);
    attempt.push_str(&trimmed[..scan.string_cut]);
    if scan.in_string {
        attempt.push('"');
    }
    close(&mut attempt, &scan.stack);
    if let Ok(v) = serde_json::from_str(&attempt) {
        return Some(v);
    }
    let (cut, stack) = scan.safe?;
    let mut attempt = trimmed[..cut].trim_end().to_string();
    close(&mut attempt, &stack);
    serde_json::from_str(&attempt).ok()
}

/// Parse streamed tool arguments into an object, `{}` when nothing parses.
pub fn parse_arguments(text: &str) -> Value {
    match parse_partial(text) {
        Some(v @ Value::Object(_)) => v,
        _ => Value::Object(Default::default()),
    }
}

fn close(out: &mut String, stack: &[Open]) {
    for open in stack.iter().rev() {
        out.push(match open {
            Open::Object => '}',
            Open::Array => ']',
        });
    }
}

struct Scan {
    stack: Vec<Open>,
    in_string: bool,
    /// Where the text can be cut so an open string ends cleanly (drops a dangling escape).
    string_cut: usize,
    /// The last point right after a complete value or an opening bracket, with the stack there.
    safe: Option<(usize, Vec<Open>)>,
}

impl Scan {
    fn run(text: &str) -> Scan {
        let bytes = text.as_bytes();
        let mut stack: Vec<Open> = Vec::new();
        let mut safe: Option<(usize, Vec<Open>)> = None;
        let mut in_string = false;
        let mut string_is_key = false;
        let mut expect_key = false;
        let mut escape_at: Option<usize> = None;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if in_string {
                if escape_at.is_some() {
                    escape_at = None;
                } else if b == b'\\' {
                    escape_at = Some(i);
                } else if b == b'"' {
                    in_string = false;
                    if !string_is_key {
                        safe = Some((i + 1, stack.clone()));
                    }
                }
                i += 1;
                continue;
            }
            match b {
                b'"' => {
                    in_string = true;
                    string_is_key = expect_key;
                }
                b'{' => {
                    stack.push(Open::Object);
                    expect_key = true;
                    safe = Some((i + 1, stack.clone()));
                }
                b'[' => {
                    stack.push(Open::Array);
                    expect_key = false;
                    safe = Some((i + 1, stack.clone()));
                }
                b'}' | b']' => {
                    stack.pop();
                    expect_key = false;
                    safe = Some((i + 1, stack.clone()));
                }
                b':' => expect_key = false,
                b',' => expect_key = stack.last() == Some(&Open::Object),
                _ if b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'+' => {
                    let start = i;
                    while i + 1 < bytes.len()
                        && (bytes[i + 1].is_ascii_alphanumeric() || b"-.+".contains(&bytes[i + 1]))
                    {
                        i += 1;
                    }
                    // Only a scalar followed by more text is known to be complete.
                    if i + 1 < bytes.len()
                        && serde_json::from_str::<Value>(&text[start..=i]).is_ok()
                    {
                        safe = Some((i + 1, stack.clone()));
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let mut string_cut = text.len();
        if in_string {
            if let Some(at) = escape_at {
                string_cut = at;
            } else if let Some(pos) = text.rfind("\\u") {
                // A half-written \uXXXX escape cannot be closed; cut it off.
                let tail = &text[pos + 2..];
                if tail.len() < 4 && tail.bytes().all(|c| c.is_ascii_hexdigit()) {
                    string_cut = pos;
                }
            }
        }
        Scan {
            stack,
            in_string: in_string && !string_is_key,
            // A key without a value is useless; cutting everything leaves it to the fallback.
            string_cut: if in_string && string_is_key {
                0
            } else {
                string_cut
            },
            safe,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn complete_documents_parse_directly() {
        assert_eq!(parse_partial(r#"{"a":1}"#), Some(json!({"a":1})));
        assert_eq!(parse_partial("   "), None);
    }

    #[test]
    fn every_prefix_of_a_document_yields_a_prefix_of_its_content() {
        let full = r#"{"path":"src/a \"q\" \u00e9.rs","edits":[{"old":"x","new":"y"},{"old":"z"}],"n":-12.5,"ok":true,"none":null}"#;
        let expected: Value = serde_json::from_str(full).unwrap();
        for end in 1..full.len() {
            if !full.is_char_boundary(end) {
                continue;
            }
            let v = parse_partial(&full[..end]);
            if let Some(Value::Object(map)) = &v {
                for (k, _) in map {
                    assert!(expected.get(k).is_some(), "invented key {k} at {end}");
                }
            }
        }
        assert_eq!(parse_partial(full), Some(expected));
    }

    #[test]
    fn open_strings_and_containers_are_closed() {
        assert_eq!(
            parse_partial(r#"{"path":"src/ma"#),
            Some(json!({"path":"src/ma"}))
        );
        assert_eq!(parse_partial(r#"{"a":[1,2"#), Some(json!({"a":[1,2]})));
        assert_eq!(parse_partial(r#"{"a":"x\"#), Some(json!({"a":"x"})));
        assert_eq!(parse_partial(r#"{"a":"\u00"#), Some(json!({"a":""})));
    }

    #[test]
    fn dangling_keys_and_literals_fall_back_to_the_last_value() {
        assert_eq!(parse_partial(r#"{"a":1,"b"#), Some(json!({"a":1})));
        assert_eq!(parse_partial(r#"{"a":1,"b":"#), Some(json!({"a":1})));
        assert_eq!(parse_partial(r#"{"a":1,"b":tr"#), Some(json!({"a":1})));
        assert_eq!(parse_partial(r#"{"a":1,"#), Some(json!({"a":1})));
        assert_eq!(parse_partial(r#"{""#), Some(json!({})));
    }

    #[test]
    fn garbage_gives_an_empty_object_for_arguments() {
        assert_eq!(parse_arguments("not json"), json!({}));
        assert_eq!(parse_arguments("[1,2]"), json!({}));
        assert_eq!(parse_arguments(""), json!({}));
    }
}
