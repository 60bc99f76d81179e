//! Where a workspace server's socket lives and who may use it: a directory of the user's
//! own (0700) under `$XDG_RUNTIME_DIR`, a socket only the user can open (0600), a peer
//! checked by its uid, and one server per socket even when two start at once (a lock held
//! for the server's life decides; a socket left by a dead server is replaced).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// The environment variable with a workspace server's socket, set for the runners it
/// starts so their sessions can reach it (the `workspace` tool).
pub const WORKSPACE_VAR: &str = "MARCH_WORKSPACE";

/// Why the socket directory cannot be used, in words that say what to fix.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// It could not be made or looked at.
    #[error("cannot use {path}: {source}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// Something else is there.
    #[error("{0} is not a directory: move it away so March can make its socket directory")]
    NotADirectory(PathBuf),
    /// Another user owns it.
    #[error(
        "{path} belongs to uid {owner}, not to you (uid {uid}): another user's server could \
         be listening there; remove it or set XDG_RUNTIME_DIR to a directory of your own"
    )]
    Owner {
        /// The directory.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// Ours.
        uid: u32,
    },
    /// Others may read or write it.
    #[error(
        "{path} is open to others (mode {mode:o}); run `chmod 700 {path}` so no one else can \
         reach your workspaces"
    )]
    Mode {
        /// The directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// The directory sockets live in: `march` under the runtime directory when there is one,
/// else `march-<uid>` under `/tmp`.
pub fn socket_dir(runtime_dir: Option<&Path>, uid: u32) -> PathBuf {
    match runtime_dir {
        Some(dir) if dir.is_absolute() => dir.join("march"),
        _ => std::env::temp_dir().join(format!("march-{uid}")),
    }
}

/// The uid this process runs as.
pub fn current_uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// Checks that `dir` is the user's own: refused when it is not a directory (a link
/// included), belongs to someone else or is open to others.
pub fn prepare_dir(dir: &Path) -> Result<(), DirError> {
    let meta = fs::symlink_metadata(dir).map_err(|source| DirError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(DirError::NotADirectory(dir.to_path_buf()));
    }
    let uid = current_uid();
    let owner = std::os::unix::fs::MetadataExt::uid(&meta);
    if owner != uid {
        return Err(DirError::Owner {
            path: dir.to_path_buf(),
            owner,
            uid,
        });
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(DirError::Mode {
            path: dir.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// Makes `dir` (0700, whatever the umask) when missing, then checks it as
/// [`prepare_dir`] does.
pub fn make_dir(dir: &Path) -> Result<(), DirError> {
    if !dir.exists() {
        // Made 0700 at once: made wider and then narrowed, another march starting at the
        // same moment could find it open to others and refuse it.
        fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .and_then(|()| fs::set_permissions(dir, fs::Permissions::from_mode(0o700)))
            .or_else(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => Ok(()),
                _ => Err(e),
            })
            .map_err(|source| DirError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
    }
    prepare_dir(dir)
}

/// `name` made safe for a file name: letters, digits, `-`, `_` and `.` kept, anything else
/// `_`, no leading dot.
pub fn safe_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '_',
        })
        .collect();
    safe.trim_start_matches('.').to_string()
}

/// The socket of workspace `name` in `dir` (the name made safe for a file name).
pub fn socket_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{}.sock", safe_name(name)))
}

/// Whether the process at the other end of `stream` runs as this user.
pub fn peer_is_us(stream: &UnixStream) -> io::Result<bool> {
    let cred = rustix::net::sockopt::socket_peercred(stream)?;
    Ok(cred.uid.as_raw() == current_uid())
}

/// What claiming a workspace's socket found.
#[derive(Debug)]
pub enum Claim {
    /// This process is the server: it listens, and holds the lock while it lives.
    Listening {
        /// The socket, 0600.
        listener: UnixListener,
        /// Held for the server's life.
        lock: File,
    },
    /// Another server has it (or is starting it): connect as a client.
    Taken,
}

/// Claims the socket at `path` for a server: under a lock beside it, so of two `march`
/// started at once one serves and the other connects; a socket file left by a server that
/// died is replaced.
pub fn claim(path: &Path) -> io::Result<Claim> {
    let lock_path = path.with_extension("lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock_path)?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => return Ok(Claim::Taken),
        Err(fs::TryLockError::Error(e)) => return Err(e),
    }
    // The lock is ours: whatever socket is there, no server holds it.
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let listener = UnixListener::bind(path)?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))?;
    Ok(Claim::Listening { listener, lock })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_directory_is_made_private_and_a_lax_one_is_refused_with_the_fix() {
        let base = tempfile::tempdir().unwrap();
        let dir = socket_dir(Some(base.path()), 1000);
        assert_eq!(dir, base.path().join("march"));
        make_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        make_dir(&dir).unwrap();

        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let err = prepare_dir(&dir).unwrap_err().to_string();
        assert!(err.contains("chmod 700"), "{err}");

        let file = base.path().join("plain");
        fs::write(&file, "x").unwrap();
        let err = prepare_dir(&file).unwrap_err();
        assert!(matches!(err, DirError::NotADirectory(_)), "{err}");
        // No runtime directory (or a relative one): a per-uid one under the temp dir.
        assert!(socket_dir(None, 42).ends_with("march-42"));
        assert!(socket_dir(Some(Path::new("rel")), 42).ends_with("march-42"));
    }

    #[test]
    fn a_directory_of_another_user_is_refused() {
        // Handing a directory to another user takes root; elsewhere there is none to try.
        if current_uid() != 0 {
            return;
        }
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("march");
        make_dir(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
        let err = prepare_dir(&dir).unwrap_err().to_string();
        assert!(
            err.contains("uid 65534") && err.contains("XDG_RUNTIME_DIR"),
            "{err}"
        );
    }

    #[test]
    fn one_server_claims_a_socket_and_a_dead_ones_socket_is_replaced() {
        let base = tempfile::tempdir().unwrap();
        let path = socket_path(base.path(), "../my work");
        assert_eq!(path, base.path().join("_my_work.sock"));
        let Claim::Listening { listener, lock } = claim(&path).unwrap() else {
            panic!("the first claim serves");
        };
        assert_eq!(mode(&path), 0o600);
        // A second march at the same time connects instead.
        assert!(matches!(claim(&path).unwrap(), Claim::Taken));
        let client = UnixStream::connect(&path).unwrap();
        let (served, _) = listener.accept().unwrap();
        assert!(peer_is_us(&served).unwrap());
        assert!(peer_is_us(&client).unwrap());
        // The server dies: its socket file stays, but the next claim serves again.
        drop((listener, lock, served, client));
        assert!(path.exists());
        assert!(UnixStream::connect(&path).is_err(), "nobody listens");
        assert!(matches!(claim(&path).unwrap(), Claim::Listening { .. }));
    }
}
