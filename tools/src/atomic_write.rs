//! Replacing a file's content atomically: a temporary file beside it, flushed to disk, then
//! renamed over it.

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions, Permissions};
use std::io::{self, Write as _};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// How the temporary files end; they start with `.` and the target's name.
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

/// Why a file could not be replaced. What was visible at the path is unchanged, except after
/// a failed rewrite in place.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub(crate) struct ReplaceError {
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

/// Write `data` to a temporary file beside `target` (symbolic links already followed), flush
/// it to disk, then rename it over `target`: readers see the old file or the new one, never
/// half of it, even after a crash.
///
/// `existing` is the metadata of the file being replaced, if there is one: its permissions
/// (and owner, when allowed) carry over, and when the directory refuses new files (a writable
/// file in a read-only directory) the file is rewritten in place instead, which is not atomic
/// but beats making such files unwritable. A new file gets 0666 less the umask. Hard links to
/// a replaced file keep the old content, the price of atomicity.
pub(crate) fn replace_file(
    target: &Path,
    data: &[u8],
    existing: Option<&Metadata>,
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
        // Like a newly created file: 0666 less the umask.
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir);
    let mut temp = match temp {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied && existing.is_some() => {
            return write_in_place(target, data);
        }
        Err(e) => return Err(ReplaceError::at(dir, e)),
    };
    if let Some(m) = existing {
        temp.as_file().set_permissions(m.permissions())?;
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
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Truncate and rewrite an existing file (the fallback when no temporary file can be made).
fn write_in_place(path: &Path, data: &[u8]) -> Result<(), ReplaceError> {
    let mut file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| ReplaceError::at(path, e))?;
    file.write_all(data)?;
    file.sync_all()?;
    Ok(())
}
