//! The tokens a daemon's clients show it (the memory server's, the gateway's HTTP API's):
//! made from the kernel's random source, kept in auth.json (0600) as `PREFIXname`.

use std::io::Read as _;

use anyhow::Context;
use march_core::auth::AuthStore;
use march_core::paths::MarchPaths;

/// Makes a token for client `name` and keeps it; the token, to print once.
pub fn add(paths: &MarchPaths, prefix: &str, tag: &str, name: &str) -> anyhow::Result<String> {
    anyhow::ensure!(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || "-_.".contains(c)),
        "a client's name is letters, digits, '-', '_' and '.'"
    );
    let mut auth = AuthStore::load(paths)?;
    let token = new_token(tag)?;
    auth.set(&format!("{prefix}{name}"), &token)?;
    Ok(token)
}

/// Removes client `name`'s token; an error when it has none.
pub fn remove(paths: &MarchPaths, prefix: &str, name: &str) -> anyhow::Result<()> {
    let mut auth = AuthStore::load(paths)?;
    anyhow::ensure!(
        auth.remove(&format!("{prefix}{name}"))?,
        "no client named {name}"
    );
    Ok(())
}

/// The names of the clients that have a token.
pub fn names(paths: &MarchPaths, prefix: &str) -> anyhow::Result<Vec<String>> {
    let auth = AuthStore::load(paths)?;
    Ok(auth
        .named_tokens(prefix)
        .into_iter()
        .map(|client| client.name)
        .collect())
}

/// 32 bytes from the kernel's random source, as hex after `tag_`.
fn new_token(tag: &str) -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read /dev/urandom")?;
    Ok(format!(
        "{tag}_{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ))
}
