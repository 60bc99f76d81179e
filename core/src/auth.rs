//! API keys stored in `auth.json` in the config directory, readable only by the user.
//!
//! Format: `{"<provider>": {"type": "api_key", "key": "…"}}`. Entries of other types are kept
//! untouched when the file is rewritten, so newer credential kinds survive older builds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::atomic_file::FileMode;
use crate::paths::MarchPaths;

/// Why `auth.json` could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The file is readable or writable by group or others.
    #[error(
        "{} has mode {mode:04o}, which lets other users read your API keys; run `chmod 600 {}`",
        path.display(),
        path.display()
    )]
    Permissions {
        /// The auth file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file is not a JSON object of entries.
    #[error("invalid auth file {}: {message}", path.display())]
    Invalid {
        /// The auth file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing failed.
    #[error("cannot {action} {}: {error}", path.display())]
    Io {
        /// What was being done, e.g. "read".
        action: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The I/O error (part of the message, so not also a `source`).
        error: std::io::Error,
    },
}

/// Whether `shown` is `secret`, comparing every byte (no early exit that would tell a
/// guesser how much of it was right).
pub fn same_secret(secret: &str, shown: &str) -> bool {
    let (a, b) = (secret.as_bytes(), shown.as_bytes());
    let mut differ = u8::from(a.len() != b.len());
    for (i, byte) in a.iter().enumerate() {
        differ |= byte ^ b.get(i).copied().unwrap_or(!byte);
    }
    differ == 0
}

/// A client a daemon hears (the memory server, the gateway), by the token it shows.
#[derive(Clone)]
pub struct TokenClient {
    /// Its name, the sender its requests are logged with.
    pub name: String,
    /// Its token.
    pub token: String,
}

impl std::fmt::Debug for TokenClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenClient")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl TokenClient {
    /// The client among `clients` whose token `shown` is, every token compared in full.
    pub fn find<'a>(clients: &'a [TokenClient], shown: &str) -> Option<&'a TokenClient> {
        let mut found = None;
        for client in clients {
            if same_secret(&client.token, shown) && found.is_none() {
                found = Some(client);
            }
        }
        found
    }
}

/// The entries of `auth.json`, with the path they are written back to.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthStore {
    path: PathBuf,
    entries: BTreeMap<String, Value>,
}

impl AuthStore {
    /// An empty store that will be written to `path`.
    pub fn empty(path: impl Into<PathBuf>) -> Self {
        AuthStore {
            path: path.into(),
            entries: BTreeMap::new(),
        }
    }

    /// Read `auth.json` from the config directory; a missing file gives an empty store.
    pub fn load(paths: &MarchPaths) -> Result<Self, AuthError> {
        Self::load_file(&paths.auth_file())
    }

    /// Read an auth file; a missing file gives an empty store.
    pub fn load_file(path: &Path) -> Result<Self, AuthError> {
        let io_err = |error| AuthError::Io {
            action: "read",
            path: path.to_path_buf(),
            error,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::empty(path)),
            Err(e) => return Err(io_err(e)),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path)
                .map_err(io_err)?
                .permissions()
                .mode()
                & 0o777;
            if mode & 0o077 != 0 {
                return Err(AuthError::Permissions {
                    path: path.to_path_buf(),
                    mode,
                });
            }
        }
        let invalid = |message: String| AuthError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let entries = if text.trim().is_empty() {
            BTreeMap::new()
        } else {
            match serde_json::from_str::<Value>(&text).map_err(|e| invalid(e.to_string()))? {
                Value::Object(map) => map.into_iter().collect(),
                _ => return Err(invalid("expected a JSON object keyed by provider".into())),
            }
        };
        Ok(AuthStore {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// The file this store reads from and writes to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The API key stored for `provider`, if its entry is of type `api_key`.
    pub fn get(&self, provider: &str) -> Option<&str> {
        let entry = self.entries.get(provider)?;
        if entry.get("type")?.as_str()? != "api_key" {
            return None;
        }
        entry.get("key")?.as_str().filter(|k| !k.is_empty())
    }

    /// The clients of the entries named `PREFIXname`: those a daemon hears
    /// (`memory-client:laptop`, `gateway-client:ci`).
    pub fn named_tokens(&self, prefix: &str) -> Vec<TokenClient> {
        self.providers()
            .filter_map(|entry| {
                let name = entry.strip_prefix(prefix)?;
                Some(TokenClient {
                    name: name.to_string(),
                    token: self.get(entry)?.to_string(),
                })
            })
            .collect()
    }

    /// Providers that have an entry of any type.
    pub fn providers(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Store an API key for `provider` and write the file.
    pub fn set(&mut self, provider: &str, key: &str) -> Result<(), AuthError> {
        let entry = serde_json::json!({ "type": "api_key", "key": key });
        self.entries.insert(provider.to_string(), entry);
        self.save()
    }

    /// Remove `provider`'s entry and write the file; returns whether there was one.
    pub fn remove(&mut self, provider: &str) -> Result<bool, AuthError> {
        let existed = self.entries.remove(provider).is_some();
        if existed {
            self.save()?;
        }
        Ok(existed)
    }

    /// Write the file atomically and private (0600 from the first byte), so a crash never
    /// leaves a truncated file or a moment where the keys are world-readable.
    fn save(&self) -> Result<(), AuthError> {
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(|error| AuthError::Io {
            action: "create directory",
            path: dir.clone(),
            error,
        })?;
        let mut text =
            serde_json::to_string_pretty(&self.entries).map_err(|e| AuthError::Invalid {
                path: self.path.clone(),
                message: e.to_string(),
            })?;
        text.push('\n');

        crate::atomic_file::write_file(&self.path, text.as_bytes(), FileMode::Private).map_err(
            |e| AuthError::Io {
                action: "write",
                path: e.path.unwrap_or_else(|| self.path.clone()),
                error: e.error,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let store = AuthStore::load(&MarchPaths::at(dir.path())).unwrap();
        assert_eq!(store.get("openai"), None);
        assert_eq!(store.providers().count(), 0);
    }

    #[test]
    fn round_trip_keeps_unknown_entries() {
        let dir = tempfile::tempdir().unwrap();
        let paths = MarchPaths::at(&dir.path().join("nested"));
        let mut store = AuthStore::load(&paths).unwrap();
        store.set("openai", "sk-1").unwrap();
        store.set("xai", "xk-2").unwrap();

        // An entry kind this build does not know survives a rewrite.
        let path = paths.auth_file();
        let mut raw: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        raw["copilot"] = serde_json::json!({"type": "oauth", "refresh": "r"});
        std::fs::write(&path, raw.to_string()).unwrap();

        let mut store = AuthStore::load(&paths).unwrap();
        assert_eq!(store.get("openai"), Some("sk-1"));
        assert_eq!(store.get("copilot"), None);
        assert!(store.remove("xai").unwrap());
        assert!(!store.remove("xai").unwrap());

        let store = AuthStore::load(&paths).unwrap();
        assert_eq!(store.get("openai"), Some("sk-1"));
        assert_eq!(store.get("xai"), None);
        assert_eq!(store.providers().collect::<Vec<_>>(), ["copilot", "openai"]);
        // No temp files are left behind.
        assert_eq!(std::fs::read_dir(&paths.config_dir).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn set_creates_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        let mut store = AuthStore::empty(&path);
        store.set("anthropic", "k").unwrap();
        assert_eq!(mode(&path), 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn group_readable_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        std::fs::write(&path, r#"{"openai":{"type":"api_key","key":"k"}}"#).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = AuthStore::load_file(&path).unwrap_err();
        assert!(matches!(err, AuthError::Permissions { mode: 0o644, .. }));
        let msg = err.to_string();
        assert!(msg.contains("0644"), "{msg}");
        assert!(
            msg.contains(&format!("chmod 600 {}", path.display())),
            "{msg}"
        );

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            AuthStore::load_file(&path).unwrap().get("openai"),
            Some("k")
        );
    }

    #[cfg(unix)]
    #[test]
    fn invalid_json_is_a_clear_error() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        for text in ["{not json", "[1, 2]"] {
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            let err = AuthStore::load_file(&path).unwrap_err();
            assert!(matches!(err, AuthError::Invalid { .. }));
            assert!(err.to_string().starts_with("invalid auth file"), "{err}");
        }
    }

    #[test]
    fn a_client_is_found_by_its_whole_token_only() {
        let clients = [
            TokenClient {
                name: "ci".into(),
                token: "gt_abc".into(),
            },
            TokenClient {
                name: "phone".into(),
                token: "gt_abd".into(),
            },
        ];
        assert_eq!(TokenClient::find(&clients, "gt_abd").unwrap().name, "phone");
        for shown in ["gt_ab", "gt_abcd", "", "GT_ABC"] {
            assert!(TokenClient::find(&clients, shown).is_none(), "{shown}");
        }
        assert!(
            !format!("{:?}", clients[0]).contains("gt_abc"),
            "no token in logs"
        );
    }
}
