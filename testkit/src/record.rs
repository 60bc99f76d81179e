//! What the server remembers about each request, for tests to assert on.

use serde::{Deserialize, Serialize};

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Request target as sent, including any query string.
    pub path: String,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or `Null` when it is not JSON.
    pub body: serde_json::Value,
    /// The body as text, lossily decoded.
    pub raw_body: String,
}

impl RecordedRequest {
    /// Builds a record from raw parts, parsing the body if it is JSON.
    pub fn new(method: &str, path: &str, headers: Vec<(String, String)>, body: &[u8]) -> Self {
        RecordedRequest {
            method: method.to_string(),
            path: path.to_string(),
            headers,
            body: serde_json::from_slice(body).unwrap_or(serde_json::Value::Null),
            raw_body: String::from_utf8_lossy(body).into_owned(),
        }
    }

    /// The first header with this name, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        crate::http::find_header(&self.headers, name)
    }

    /// The `model` field of a JSON body, if present.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(|m| m.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_bodies_parse_and_others_become_null() {
        let headers = vec![("x-api-key".to_string(), "k".to_string())];
        let json = RecordedRequest::new("POST", "/v1/messages", headers, br#"{"model":"m"}"#);
        assert_eq!(json.model(), Some("m"));
        assert_eq!(json.header("X-API-Key"), Some("k"));
        let text = RecordedRequest::new("POST", "/x", Vec::new(), b"not json \xff");
        assert_eq!(text.body, serde_json::Value::Null);
        assert_eq!(text.raw_body, "not json \u{fffd}");
    }
}
