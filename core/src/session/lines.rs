//! Where an entry's JSON line lives: in the session file (a byte range, re-read on demand)
//! or, for migrated pi v1/v2 entries whose v3 line is in no file, in memory.
//!
//! Keeping a range instead of the text halves what a loaded session costs: the parsed
//! entries are all the context needs, and the exact bytes are only wanted to re-emit the
//! file (`json_line`, `to_jsonl`, `continue_in_new_file`). Each range carries a checksum of
//! its bytes, so a file replaced or truncated since it was loaded is reported as a
//! [`SessionError::Changed`] instead of yielding someone else's bytes. Files are opened by
//! path when a line is wanted; no descriptor is held meanwhile.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use super::SessionError;

/// An entry's line, without its newline.
#[derive(Clone)]
pub(crate) enum LineRef {
    /// The serialised line itself: migrated entries, and new entries until written.
    Owned(Box<str>),
    /// `len` bytes at `offset` in the file at `path`, whose checksum is `hash`.
    File(FileLine),
}

/// A line's place in a session file.
#[derive(Clone)]
pub(crate) struct FileLine {
    pub path: Arc<Path>,
    pub offset: u64,
    pub len: u64,
    pub hash: u64,
}

impl LineRef {
    /// A line read from (or written to) `path` at `offset`.
    pub(crate) fn in_file(path: &Arc<Path>, offset: u64, bytes: &[u8]) -> Self {
        LineRef::File(FileLine {
            path: Arc::clone(path),
            offset,
            len: bytes.len() as u64,
            hash: line_hash(bytes),
        })
    }

    /// The line, read from its file when it is not in memory; `id` names the entry in errors.
    pub(crate) fn read(&self, id: &str) -> Result<Cow<'_, str>, SessionError> {
        match self {
            LineRef::Owned(line) => Ok(Cow::Borrowed(line)),
            LineRef::File(at) => {
                // One line: no read-ahead.
                let mut reader = LineReader::with_buffer(0);
                let line = reader.read(at, id)?;
                Ok(Cow::Owned(line.to_string()))
            }
        }
    }

    /// Length and checksum of the line's bytes.
    fn identity(&self) -> (u64, u64) {
        match self {
            LineRef::Owned(line) => (line.len() as u64, line_hash(line.as_bytes())),
            LineRef::File(at) => (at.len, at.hash),
        }
    }
}

/// Two lines are equal when their bytes are (compared by length and checksum, so a line in
/// a file need not be read).
impl PartialEq for LineRef {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (LineRef::Owned(a), LineRef::Owned(b)) => a == b,
            _ => self.identity() == other.identity(),
        }
    }
}

impl fmt::Debug for LineRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineRef::Owned(line) => f.debug_tuple("Owned").field(line).finish(),
            LineRef::File(at) => f
                .debug_struct("File")
                .field("path", &at.path)
                .field("offset", &at.offset)
                .field("len", &at.len)
                .finish_non_exhaustive(),
        }
    }
}

/// Reads lines from session files in order, through one buffered handle per file, so
/// re-emitting a whole session reads each file once, sequentially.
pub(crate) struct LineReader {
    open: Option<OpenFile>,
    line: Vec<u8>,
    buffer: usize,
}

struct OpenFile {
    path: Arc<Path>,
    reader: BufReader<File>,
    /// The reader's position in the file.
    pos: u64,
}

/// Buffer for sequential reads: big enough that a session is read in few system calls,
/// small next to the session itself.
const READ_BUFFER: usize = 256 * 1024;

impl LineReader {
    /// A reader for many lines in file order.
    pub(crate) fn sequential() -> Self {
        Self::with_buffer(READ_BUFFER)
    }

    fn with_buffer(buffer: usize) -> Self {
        LineReader {
            open: None,
            line: Vec::new(),
            buffer,
        }
    }

    /// The bytes of `at`, checked against its checksum; `id` names the entry in errors.
    pub(crate) fn read(&mut self, at: &FileLine, id: &str) -> Result<&str, SessionError> {
        let read_error = |source| SessionError::Read {
            path: at.path.to_path_buf(),
            source,
        };
        let changed = |reason: String| SessionError::Changed {
            path: at.path.to_path_buf(),
            id: id.to_string(),
            reason,
        };
        let open = match self.open.take() {
            Some(open) if Arc::ptr_eq(&open.path, &at.path) || open.path == at.path => open,
            _ => OpenFile {
                path: Arc::clone(&at.path),
                reader: BufReader::with_capacity(
                    self.buffer,
                    File::open(&at.path).map_err(read_error)?,
                ),
                pos: 0,
            },
        };
        let open = self.open.insert(open);
        if at.offset != open.pos {
            let moved = match at.offset.checked_sub(open.pos).map(i64::try_from) {
                // Forward within reach: keeps what is already buffered.
                Some(Ok(ahead)) => open.reader.seek_relative(ahead),
                _ => open.reader.seek(SeekFrom::Start(at.offset)).map(drop),
            };
            if let Err(source) = moved {
                self.open = None;
                return Err(read_error(source));
            }
            open.pos = at.offset;
        }
        let len = usize::try_from(at.len).map_err(|_| changed("line too long".to_string()))?;
        self.line.clear();
        self.line.resize(len, 0);
        if let Err(source) = open.reader.read_exact(&mut self.line) {
            self.open = None;
            return Err(if source.kind() == std::io::ErrorKind::UnexpectedEof {
                changed(format!(
                    "the file ends before the {len} bytes at offset {}",
                    at.offset
                ))
            } else {
                read_error(source)
            });
        }
        open.pos = at.offset + at.len;
        let not_the_line = || {
            changed(format!(
                "the {len} bytes at offset {} are not the line that was loaded",
                at.offset
            ))
        };
        if line_hash(&self.line) != at.hash {
            return Err(not_the_line());
        }
        std::str::from_utf8(&self.line).map_err(|_| not_the_line())
    }
}

/// A 64-bit checksum of a line, to notice that a file changed under a loaded session. Fast
/// (word at a time, a few ms for 100 MB); not meant to resist deliberate collisions.
pub(crate) fn line_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    // Finish so every input bit reaches every output bit (murmur3's fmix64).
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}
