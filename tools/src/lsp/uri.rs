//! `file://` URIs for paths, and back.

use std::path::{Path, PathBuf};

/// The `file://` URI of an absolute path, percent-encoding what URIs do not allow.
pub(crate) fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for &b in path.as_os_str().as_encoded_bytes() {
        let plain = b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b);
        if plain {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path of a `file://` URI; `None` for other schemes or bad encoding.
pub(crate) fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` and `file:///x` are the same file.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(out).ok().map(PathBuf::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for p in ["/a/b.py", "/tmp/with space/ü.rs", "/x/%41#?.c"] {
            let uri = file_uri(Path::new(p));
            assert!(uri.starts_with("file:///"), "{uri}");
            assert!(!uri.contains(' ') && !uri.contains('#') && !uri.contains('?'));
            assert_eq!(uri_path(&uri).unwrap(), PathBuf::from(p));
        }
        assert_eq!(file_uri(Path::new("/a b")), "file:///a%20b");
        assert_eq!(uri_path("file:///C%3A/x").unwrap(), PathBuf::from("/C:/x"));
        assert_eq!(uri_path("file://localhost/x").unwrap(), PathBuf::from("/x"));
        assert_eq!(uri_path("untitled:1"), None);
        assert_eq!(uri_path("file:///bad%zz"), None);
    }
}
