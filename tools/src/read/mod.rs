//! The `read` tool: a text file as a page of lines, or an image as an attachment.

mod sniff;
mod text;

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use base64::Engine as _;
use march_core::event::ToolOutcome;
use march_core::message::{ImageContent, UserContent};
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::args::{file_target, optional_count, required_str};
use crate::context::ToolContext;
use crate::stat::{FileError, regular_file};
use crate::task::{aborted, run_on_path};
use crate::truncate::{MAX_BYTES, TruncatedBy, format_size};
use sniff::{Kind, SNIFF_BYTES, classify};
use text::{Page, PageError, Window, read_page};

/// Largest base64 payload of an image sent to the model (pi's limit).
const MAX_IMAGE_BASE64: usize = 4_718_592;
/// Largest width or height of an image sent to the model; providers reject bigger ones.
const MAX_IMAGE_SIDE: usize = 8000;
/// Read buffer for text files.
const READ_BUFFER: usize = 64 * 1024;

/// Reads files for the model: text head-truncated with paging notices, images as attachments.
pub struct ReadTool {
    ctx: ToolContext,
    parameters: Value,
}

impl ReadTool {
    /// A read tool for the session described by `ctx`.
    pub fn new(ctx: ToolContext) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path to the file to read (relative or absolute)"
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Line number to start reading from (1-indexed)"
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Maximum number of lines to read"
                }
            },
            "required": ["path"]
        });
        ReadTool { ctx, parameters }
    }
}

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        "Read a file. Text comes back as plain lines (no line numbers added); images (PNG, JPEG, \
         GIF, WebP) come back as attachments. Text output stops at 2000 lines or 50KB, whichever \
         comes first: use offset/limit for large files, and continue with the offset the notice \
         gives until you have what you need. Binary files are refused."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Read file contents")
    }

    fn prompt_guidelines(&self) -> &[&str] {
        &["Use read to examine files instead of cat or sed."]
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Read
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("path").and_then(Value::as_str))
    }

    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        file_target(&self.ctx, args)
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let raw = required_str(&args, "path")?;
        let offset = optional_count(&args, "offset")?;
        let limit = optional_count(&args, "limit")?;
        let abs = self.ctx.resolve(raw).absolute;
        let start = offset.unwrap_or(1) - 1;
        let window = Window {
            start,
            end: limit.map(|l| start.saturating_add(l)),
        };
        let loaded = run_on_path("Reading", &abs, &cancel, move |abs, cancel| {
            load(abs, window, cancel)
        })
        .await?;
        let display = self.ctx.display(&abs);
        match loaded {
            Ok(Loaded::Text(page)) => Ok(text_outcome(page, window, limit, &display)),
            Ok(Loaded::Image { mime, data }) => Ok(ToolOutcome {
                content: vec![
                    UserContent::text(format!("Read image file [{mime}]")),
                    UserContent::Image(ImageContent {
                        data,
                        mime_type: mime.to_string(),
                    }),
                ],
                details: Value::Null,
                terminate: false,
                change: None,
                usage: None,
            }),
            Ok(Loaded::ImageRefused { mime, reason }) => Ok(ToolOutcome::text(format!(
                "Image {display} ({mime}) was not attached: {reason}"
            ))),
            Err(e) => Err(load_error(e, &abs, raw, offset.unwrap_or(1))),
        }
    }
}

/// What a file turned into.
#[derive(Debug)]
enum Loaded {
    /// A page of text.
    Text(Page),
    /// An image to attach.
    Image {
        /// Its MIME type.
        mime: &'static str,
        /// The file's bytes, base64-encoded (on the blocking thread: up to 4.5 MB of work).
        data: String,
    },
    /// An image the model cannot take as it is.
    ImageRefused {
        /// Its MIME type.
        mime: &'static str,
        /// Why, and what to do instead.
        reason: String,
    },
}

/// Why a file could not be read.
#[derive(Debug)]
enum LoadError {
    File(FileError),
    Binary { size: u64 },
    AnimatedPng { size: u64 },
    Page(PageError),
}

impl From<FileError> for LoadError {
    fn from(e: FileError) -> Self {
        LoadError::File(e)
    }
}

impl From<io::Error> for LoadError {
    fn from(e: io::Error) -> Self {
        LoadError::File(e.into())
    }
}

/// Open `path` and load what the window asks for.
fn load(path: &Path, window: Window, cancel: &CancellationToken) -> Result<Loaded, LoadError> {
    // Only regular files: FIFOs would block forever and devices can be endless.
    let meta = regular_file(path)?;
    let file = File::open(path)?;
    load_from(file, meta.len(), window, cancel)
}

/// Classify the stream from its first bytes, then page through text or take the image whole.
/// Binary files are refused after reading only [`SNIFF_BYTES`].
fn load_from(
    mut file: impl Read,
    size: u64,
    window: Window,
    cancel: &CancellationToken,
) -> Result<Loaded, LoadError> {
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)?;
    match classify(&head) {
        Kind::Text => {
            let reader = BufReader::with_capacity(READ_BUFFER, Cursor::new(head).chain(file));
            read_page(reader, window, cancel)
                .map(Loaded::Text)
                .map_err(LoadError::Page)
        }
        Kind::Binary => Err(LoadError::Binary { size }),
        Kind::AnimatedPng => Err(LoadError::AnimatedPng { size }),
        Kind::Image(mime) => load_image(head, file, size, mime),
    }
}

/// Bytes of `n` bytes once base64-encoded.
fn base64_len(n: u64) -> u64 {
    n.div_ceil(3).saturating_mul(4)
}

/// Read a whole image if the model can take it; we do not resize (no image codec), so an
/// image over the limits is described instead of attached.
fn load_image(
    mut data: Vec<u8>,
    rest: impl Read,
    size: u64,
    mime: &'static str,
) -> Result<Loaded, LoadError> {
    let too_big = |bytes: u64| Loaded::ImageRefused {
        mime,
        reason: format!(
            "the file is {} ({} as base64), over the {} limit for images. Make a smaller \
             copy (scale it down or recompress it, e.g. with ImageMagick through bash) and \
             read that instead.",
            format_size(bytes as usize),
            format_size(base64_len(bytes) as usize),
            format_size(MAX_IMAGE_BASE64),
        ),
    };
    if base64_len(size) > MAX_IMAGE_BASE64 as u64 {
        return Ok(too_big(size));
    }
    // The file may have grown since it was measured: never read past the limit.
    let room = (MAX_IMAGE_BASE64 / 4 * 3 + 1).saturating_sub(data.len());
    rest.take(room as u64).read_to_end(&mut data)?;
    if base64_len(data.len() as u64) > MAX_IMAGE_BASE64 as u64 {
        return Ok(too_big(data.len() as u64));
    }
    match imagesize::blob_size(&data) {
        Ok(dim) if dim.width > MAX_IMAGE_SIDE || dim.height > MAX_IMAGE_SIDE => {
            Ok(Loaded::ImageRefused {
                mime,
                reason: format!(
                    "it is {}x{} pixels, and images wider or taller than {MAX_IMAGE_SIDE} \
                     pixels are rejected by model providers. Make a scaled-down copy (e.g. \
                     with ImageMagick through bash) and read that instead.",
                    dim.width, dim.height
                ),
            })
        }
        Ok(_) => Ok(Loaded::Image {
            mime,
            data: base64::engine::general_purpose::STANDARD.encode(data),
        }),
        Err(_) => Ok(Loaded::ImageRefused {
            mime,
            reason: "its dimensions could not be read, so the file is probably truncated or \
                     corrupt."
                .to_string(),
        }),
    }
}

/// The model-facing text of a page, with pi's continuation notices.
fn text_outcome(page: Page, window: Window, limit: Option<usize>, display: &str) -> ToolOutcome {
    let first = window.start + 1;
    let total = page.total_lines;
    let t = &page.truncation;
    let text = if t.first_line_exceeds_limit {
        format!(
            "[Line {first} is {}, exceeds {} limit. Use bash: sed -n '{first}p' {} | head -c {MAX_BYTES}]",
            format_size(page.first_line_bytes),
            format_size(MAX_BYTES),
            shell_quote(display),
        )
    } else if t.truncated {
        let last = first + t.output_lines - 1;
        let why = match t.truncated_by {
            Some(TruncatedBy::Bytes) => format!(" ({} limit)", format_size(MAX_BYTES)),
            _ => String::new(),
        };
        format!(
            "{}\n\n[Showing lines {first}-{last} of {total}{why}. Use offset={} to continue.]",
            page.content,
            last + 1
        )
    } else if let Some(limit) = limit
        && window.start.saturating_add(limit) < total
    {
        let next = window.start + limit;
        format!(
            "{}\n\n[{} more lines in file. Use offset={} to continue.]",
            page.content,
            total - next,
            next + 1
        )
    } else {
        page.content
    };
    let details = if t.truncated {
        json!({ "truncation": t })
    } else {
        Value::Null
    };
    ToolOutcome {
        content: vec![UserContent::text(text)],
        details,
        terminate: false,
        change: None,
        usage: None,
    }
}

/// The error the model sees, naming the resolved path.
fn load_error(e: LoadError, abs: &Path, raw: &str, offset: usize) -> ToolError {
    let p = abs.display();
    ToolError::new(match e {
        LoadError::File(FileError::NotFound) if raw.contains('\u{FFFD}') => format!(
            "File not found: {p} (the name contains U+FFFD, probably copied from a listing that \
             could not show a file name that is not valid UTF-8; such a file can only be \
             reached through bash, e.g. with a glob)"
        ),
        LoadError::File(FileError::NotFound) => format!("File not found: {p}"),
        LoadError::File(FileError::IsDirectory) => format!("{p} is a directory; use ls to list it"),
        LoadError::File(FileError::PermissionDenied(_)) => {
            format!("Permission denied: cannot read {p}")
        }
        LoadError::File(FileError::NotRegular) => format!(
            "{p} is not a regular file (a FIFO, socket or device); read only reads regular files"
        ),
        LoadError::Binary { size } => format!(
            "{p} is a binary file ({}), not text or a supported image (PNG, JPEG, GIF, WebP). \
             Use bash tools such as file, xxd or strings to inspect it.",
            format_size(size as usize)
        ),
        LoadError::AnimatedPng { size } => format!(
            "{p} is an animated PNG ({}), which is not sent to the model as an image. Convert \
             a frame to a still PNG (e.g. with ImageMagick through bash) and read that instead.",
            format_size(size as usize)
        ),
        LoadError::Page(PageError::OffsetBeyondEnd { total_lines }) => {
            format!("Offset {offset} is beyond end of file ({total_lines} lines total)")
        }
        LoadError::Page(PageError::Cancelled) => return aborted(),
        LoadError::Page(PageError::Io(e)) | LoadError::File(FileError::Io(e)) => {
            format!("Cannot read {p}: {e}")
        }
    })
}

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./-+@%:,=".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests;
