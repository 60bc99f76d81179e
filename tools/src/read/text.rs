//! Paging through a text file without loading it: lines are streamed up to the end of the page,
//! then the rest of the file is only scanned for newlines so the total line count stays cheap.

use std::io::{self, BufRead};

use tokio_util::sync::CancellationToken;

use crate::truncate::{MAX_BYTES, MAX_LINES, TruncatedBy, Truncation};

/// Which lines to show: `start` is 0-based, `end` (exclusive) is set by the caller's `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    /// First line wanted (0-based).
    pub start: usize,
    /// One past the last line wanted, when the caller gave a limit.
    pub end: Option<usize>,
}

/// One page of a text file.
#[derive(Debug)]
pub(super) struct Page {
    /// The kept lines joined by `\n`, invalid UTF-8 replaced by U+FFFD.
    pub content: String,
    /// Lines in the whole file; a trailing newline does not start another line.
    pub total_lines: usize,
    /// The 2000-line / 50 KB head truncation of the selected lines.
    pub truncation: Truncation,
    /// Raw byte length of the first selected line when it alone is over the byte limit.
    pub first_line_bytes: usize,
}

/// Why a page could not be produced.
#[derive(Debug)]
pub(super) enum PageError {
    /// The offset points past the last line.
    OffsetBeyondEnd {
        /// Lines in the file.
        total_lines: usize,
    },
    /// The cancel token fired.
    Cancelled,
    /// Reading failed.
    Io(io::Error),
}

impl From<io::Error> for PageError {
    fn from(e: io::Error) -> Self {
        PageError::Io(e)
    }
}

/// Walks a byte stream line by line, tracking newlines and position as it consumes.
struct Scanner<'a, R> {
    reader: R,
    cancel: &'a CancellationToken,
    /// Newlines consumed so far, i.e. the 0-based index of the line the next byte belongs to.
    newlines: usize,
    /// Bytes consumed so far.
    pos: u64,
    /// The last byte consumed.
    last: Option<u8>,
}

impl<R: BufRead> Scanner<'_, R> {
    /// The next buffered chunk; empty at end of input. Checks the cancel token once per chunk.
    fn chunk(&mut self) -> Result<&[u8], PageError> {
        if self.cancel.is_cancelled() {
            return Err(PageError::Cancelled);
        }
        // Retry interrupted reads first; the borrow checker does not let the loop return the
        // buffer directly, and a second `fill_buf` only hands back what is already buffered.
        loop {
            match self.reader.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(self.reader.fill_buf()?)
    }

    fn consume(&mut self, n: usize, newlines: usize, last: Option<u8>) {
        self.reader.consume(n);
        self.pos += n as u64;
        self.newlines += newlines;
        if n > 0 {
            self.last = last;
        }
    }

    /// Consume until line `target` begins (or the input ends). Returns whether it was reached.
    fn skip_to_line(&mut self, target: usize) -> Result<bool, PageError> {
        while self.newlines < target {
            let needed = target - self.newlines;
            let buf = self.chunk()?;
            if buf.is_empty() {
                return Ok(false);
            }
            let mut seen = 0;
            let mut cut = buf.len();
            for (i, _) in buf.iter().enumerate().filter(|(_, b)| **b == b'\n') {
                seen += 1;
                if seen == needed {
                    cut = i + 1;
                    break;
                }
            }
            let last = buf.get(cut - 1).copied();
            self.consume(cut, seen, last);
        }
        Ok(true)
    }

    /// Consume the rest of the input, only counting newlines.
    fn count_rest(&mut self) -> Result<(), PageError> {
        loop {
            let buf = self.chunk()?;
            if buf.is_empty() {
                return Ok(());
            }
            let (n, newlines, last) = (
                buf.len(),
                buf.iter().filter(|b| **b == b'\n').count(),
                buf.last().copied(),
            );
            self.consume(n, newlines, last);
        }
    }

    /// The next line without its `\n`, keeping at most `cap` bytes of it; also returns the
    /// line's full length. `None` at end of input.
    fn next_line(&mut self, cap: usize) -> Result<Option<(Vec<u8>, usize)>, PageError> {
        let mut kept = Vec::new();
        let mut len = 0;
        let mut any = false;
        loop {
            let buf = self.chunk()?;
            if buf.is_empty() {
                return Ok(any.then_some((kept, len)));
            }
            any = true;
            let (body, ended) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            let room = cap.saturating_sub(kept.len());
            kept.extend_from_slice(&body[..body.len().min(room)]);
            len += body.len();
            let n = body.len() + usize::from(ended);
            let last = buf.get(n - 1).copied();
            self.consume(n, usize::from(ended), last);
            if ended {
                return Ok(Some((kept, len)));
            }
        }
    }

    /// Lines in everything consumed so far (a trailing newline does not start a line).
    fn lines(&self) -> usize {
        self.newlines + usize::from(self.pos > 0 && self.last != Some(b'\n'))
    }

    /// Whether any input is left.
    fn at_end(&mut self) -> Result<bool, PageError> {
        Ok(self.chunk()?.is_empty())
    }
}

/// Read the lines of `window` from `reader`, keeping whole lines within 2000 lines / 50 KB,
/// then count the remaining lines. Memory stays bounded by the page size whatever the file's.
pub(super) fn read_page(
    reader: impl BufRead,
    window: Window,
    cancel: &CancellationToken,
) -> Result<Page, PageError> {
    let mut s = Scanner {
        reader,
        cancel,
        newlines: 0,
        pos: 0,
        last: None,
    };
    s.skip_to_line(window.start)?;
    let begin = s.pos;

    let mut content = String::new();
    let mut kept = 0;
    let mut truncated_by = None;
    let mut first_line_bytes = 0;
    let end = window.end.unwrap_or(usize::MAX);
    while s.newlines < end {
        if kept == MAX_LINES {
            if !s.at_end()? {
                truncated_by = Some(TruncatedBy::Lines);
            }
            break;
        }
        // One byte over the limit is enough to know the line cannot fit.
        let Some((raw, len)) = s.next_line(MAX_BYTES + 1)? else {
            break;
        };
        let text = String::from_utf8_lossy(&raw);
        // Lossy decoding never shrinks text, so a capped line is over the limit either way.
        let cost = text.len().max(len) + usize::from(kept > 0);
        if content.len() + cost > MAX_BYTES {
            truncated_by = Some(TruncatedBy::Bytes);
            if kept == 0 {
                first_line_bytes = len;
            }
            break;
        }
        if kept > 0 {
            content.push('\n');
        }
        content.push_str(&text);
        kept += 1;
    }

    // Bytes of the selected lines (for details), then the total line count.
    let selected_end = if let Some(end) = window.end {
        if s.skip_to_line(end)? {
            Some(s.pos - 1)
        } else {
            None
        }
    } else {
        None
    };
    s.count_rest()?;
    let total_lines = s.lines();
    if window.start > 0 && window.start >= total_lines {
        return Err(PageError::OffsetBeyondEnd { total_lines });
    }
    let reached_end = selected_end.is_none();
    let selected_end =
        selected_end.unwrap_or(s.pos - u64::from(s.pos > begin && s.last == Some(b'\n')));
    // Like pi, a whole page that runs to the end of the file keeps the file's final newline.
    if truncated_by.is_none() && reached_end && kept > 0 && s.last == Some(b'\n') {
        content.push('\n');
    }
    let selected_lines = total_lines.min(end) - window.start.min(total_lines);
    let total_bytes = usize::try_from(selected_end.saturating_sub(begin)).unwrap_or(usize::MAX);

    let truncation = Truncation {
        truncated: truncated_by.is_some(),
        truncated_by,
        total_lines: selected_lines,
        total_bytes,
        output_lines: kept,
        output_bytes: content.len(),
        last_line_partial: false,
        first_line_exceeds_limit: truncated_by.is_some() && kept == 0,
        max_lines: MAX_LINES,
        max_bytes: MAX_BYTES,
        content: String::new(),
    };
    Ok(Page {
        content,
        total_lines,
        truncation,
        first_line_bytes,
    })
}
