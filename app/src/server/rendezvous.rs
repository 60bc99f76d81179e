//! Where this user's workspace sockets are, and the server's watch on its own: a socket
//! removed (its directory cleaned away at logout, or by hand) ends the server, since no one
//! could reach it again.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use march_wire::rendezvous::{current_uid, make_dir, socket_dir, socket_path};

/// The directory of this user's sockets, made when missing and checked.
pub fn sockets() -> anyhow::Result<PathBuf> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let dir = socket_dir(runtime.as_deref(), current_uid());
    make_dir(&dir)?;
    Ok(dir)
}

/// The socket of workspace `name`.
pub fn socket_of(name: &str) -> anyhow::Result<PathBuf> {
    Ok(socket_path(&sockets()?, name))
}

/// The socket file this server bound, told apart from one another server may bind there.
pub struct SocketFile {
    path: PathBuf,
    id: (u64, u64),
}

impl SocketFile {
    /// The file at `path`, just bound.
    pub fn of(path: &Path) -> anyhow::Result<SocketFile> {
        let meta = std::fs::symlink_metadata(path)
            .with_context(|| format!("cannot look at {}", path.display()))?;
        Ok(SocketFile {
            path: path.to_path_buf(),
            id: (meta.dev(), meta.ino()),
        })
    }

    /// Whether the file at the path is still the one bound.
    pub fn is_ours(&self) -> bool {
        std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.id)
    }

    /// Resolves once the file is gone or replaced, looking `every` so often.
    pub async fn removed(&self, every: Duration) {
        loop {
            tokio::time::sleep(every).await;
            if !self.is_ours() {
                return;
            }
        }
    }
}
