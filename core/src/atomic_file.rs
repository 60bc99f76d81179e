//! Replacing a file's content atomically: a temporary file beside it, flushed to disk, then
//! renamed over it, and the directory flushed so the rename survives a crash. Every file
//! March replaces goes through here (tool writes and edits, credentials, session state, the
//! workspace file, config, reverts).

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions, Permissions};
use std::io::{self, Write as _};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// How the temporary files end; they start with `.` and the target's name.
pub const TEMP_SUFFIX: &str = ".tmp";

/// Why a file could not be replaced. What was visible at the path is unchanged, except after
/// a failed rewrite in place.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct ReplaceError {
    /// The file or directory a failed path operation was on (creating the temporary file,
    /// opening or renaming onto the target); `None` for reads and writes of open files.
    pub path: Option<PathBuf>,
    /// What went wrong.
    pub error: io::Error,
}

impl ReplaceError {
    /// `error`, which happened at `path`.
    fn at(path: &Path, error: io::Error) -> Self {
        ReplaceError {
            path: Some(path.to_path_buf()),
            error,
        }
    }
}

impl From<io::Error> for ReplaceError {
    fn from(error: io::Error) -> Self {
        ReplaceError { path: None, error }
    }
}

/// The permissions a replaced file gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FileMode {
    /// The replaced file's (and owner, when allowed); a new file gets 0666 less the umask.
    #[default]
    Kept,
    /// Readable and writable by the owner only (0600), whatever the file had: credentials.
    Private,
}

/// [`replace_file`] for a caller that has not looked at the target: what is there now (symbolic
/// links followed) decides the permissions the new content keeps.
pub fn write_file(target: &Path, data: &[u8], mode: FileMode) -> Result<(), ReplaceError> {
    let existing = std::fs::metadata(target).ok().filter(Metadata::is_file);
    replace_file(target, data, existing.as_ref(), mode)
}

/// Write `data` to a temporary file beside `target` (symbolic links already followed), flush
/// it to disk, then rename it over `target`: readers see the old file or the new one, never
/// half of it, even after a crash.
///
/// `existing` is the metadata of the file being replaced, if there is one: its permissions
/// (and owner, when allowed) carry over, and when the directory refuses new files (a writable
/// file in a read-only directory) the file is rewritten in place instead, which is not atomic
/// but beats making such files unwritable. A new file gets 0666 less the umask. Hard links to
/// a replaced file keep the old content, the price of atomicity.
pub fn replace_file(
    target: &Path,
    data: &[u8],
    existing: Option<&Metadata>,
    mode: FileMode,
) -> Result<(), ReplaceError> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut prefix = OsString::from(".");
    prefix.push(target.file_name().unwrap_or_default());
    prefix.push(".");
    let temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(TEMP_SUFFIX)
        // Like a newly created file: 0666 less the umask; never readable by others when
        // private, not even for a moment.
        .permissions(Permissions::from_mode(match mode {
            FileMode::Kept => 0o666,
            FileMode::Private => 0o600,
        }))
        .tempfile_in(dir);
    let mut temp = match temp {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied && existing.is_some() => {
            return write_in_place(target, data, mode);
        }
        Err(e) => return Err(ReplaceError::at(dir, e)),
    };
    if let Some(m) = existing {
        match mode {
            FileMode::Kept => temp.as_file().set_permissions(m.permissions())?,
            FileMode::Private => temp
                .as_file()
                .set_permissions(Permissions::from_mode(0o600))?,
        }
        let ours = temp.as_file().metadata()?;
        if (ours.uid(), ours.gid()) != (m.uid(), m.gid()) {
            // Only root may give a file away; otherwise the writer owns the new file.
            let _ = std::os::unix::fs::fchown(temp.as_file(), Some(m.uid()), Some(m.gid()));
        }
    }
    temp.write_all(data)?;
    temp.as_file().sync_all()?;
    temp.persist(target)
        .map_err(|e| ReplaceError::at(target, e.error))?;
    // Make the rename itself durable; failing here loses nothing already visible.
    sync_dir(dir);
    Ok(())
}

/// Make a rename or removal in `dir` durable; best effort (failing loses nothing visible).
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Truncate and rewrite an existing file (the fallback when no temporary file can be made).
fn write_in_place(path: &Path, data: &[u8], mode: FileMode) -> Result<(), ReplaceError> {
    let mut file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| ReplaceError::at(path, e))?;
    if mode == FileMode::Private {
        file.set_permissions(Permissions::from_mode(0o600))?;
    }
    file.write_all(data)?;
    file.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path)
            .map(|m| m.mode() & 0o777)
            .unwrap_or(0)
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(TEMP_SUFFIX))
            .collect()
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, Permissions::from_mode(0o751)).unwrap();
        write_file(&path, b"new", FileMode::Kept).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(mode_of(&path), 0o751);
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_private_file_is_0600_whatever_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("auth.json");
        write_file(&fresh, b"{}", FileMode::Private).unwrap();
        assert_eq!(mode_of(&fresh), 0o600);
        std::fs::set_permissions(&fresh, Permissions::from_mode(0o644)).unwrap();
        write_file(&fresh, b"{\"k\":1}", FileMode::Private).unwrap();
        assert_eq!(mode_of(&fresh), 0o600);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_it_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let err = write_file(&missing.join("f"), b"x", FileMode::Kept).unwrap_err();
        assert_eq!(err.path.as_deref(), Some(missing.as_path()));
        assert!(!missing.exists());
    }

    #[test]
    fn a_writable_file_in_a_read_only_directory_is_rewritten_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        let path = locked.join("f");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&locked, Permissions::from_mode(0o555)).unwrap();
        let result = write_file(&path, b"new", FileMode::Kept);
        std::fs::set_permissions(&locked, Permissions::from_mode(0o755)).unwrap();
        result.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }
}
