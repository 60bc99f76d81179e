//! Pictures attached to a prompt: a picture file's path pasted (what a terminal sends when
//! a file is dropped on it), `/image PATH`, or the system clipboard's image (Ctrl-V, through
//! `wl-paste` or `xclip`). Files and the clipboard are read as jobs; the picture goes onto
//! the pane's prompt, or the user is told why not (a paste that is no picture goes in as
//! text, so nothing typed is lost).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use march_panes::picture::Picture;

use super::Workspace;
use super::jobs::JobDone;
use super::router::SessionKey;

/// The largest picture attached (model APIs take a few MB; a larger one is surely a
/// mistake).
const MAX_FILE: u64 = 10 << 20;
/// What is said when an agent does not take images.
pub const NO_IMAGES: &str = "this agent does not take images (it does not say it does)";
/// How long a clipboard tool may take.
const CLIPBOARD_LIMIT: Duration = Duration::from_secs(5);

/// A picture read for a session's prompt.
#[derive(Debug)]
pub struct PictureRead {
    /// Whose prompt.
    pub session: SessionKey,
    /// What was read.
    pub read: Read,
    /// The text pasted, when a paste asked: it is in the prompt, and the picture replaces it.
    pub pasted: Option<String>,
}

/// What a file or the clipboard gave.
#[derive(Debug)]
pub enum Read {
    /// A picture.
    Picture(Arc<Picture>),
    /// Text (the clipboard held no image): pasted as it is.
    Text(String),
    /// Why there is no picture, to tell the user.
    Failed(String),
    /// A pasted path naming no file: it was just text, and stays so.
    NoFile,
}

/// The picture in file `path`.
fn read_file(path: &Path) -> Result<Arc<Picture>, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a file"));
    }
    if meta.len() > MAX_FILE {
        return Err(format!(
            "{shown} is {} MB; images of up to {} MB are attached",
            meta.len() >> 20,
            MAX_FILE >> 20
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    Picture::from_bytes(bytes).map_err(|e| format!("{shown}: {e}"))
}

/// The clipboard's image, through `wl-paste` (Wayland) or `xclip` (X11); its text when it
/// holds no image.
fn read_clipboard() -> Read {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some();
    let x11 = std::env::var_os("DISPLAY").is_some();
    let tools: Vec<(&str, Vec<&str>, Vec<&str>)> = [
        (
            wayland,
            "wl-paste",
            vec!["--list-types"],
            vec!["--no-newline", "--type"],
        ),
        (
            x11,
            "xclip",
            vec!["-selection", "clipboard", "-t", "TARGETS", "-o"],
            vec!["-selection", "clipboard", "-o", "-t"],
        ),
    ]
    .into_iter()
    .filter(|(on, ..)| *on)
    .map(|(_, tool, list, get)| (tool, list, get))
    .collect();
    if tools.is_empty() {
        return Read::Failed("no graphical session to read a clipboard image from".to_string());
    }
    let mut missing = Vec::new();
    for (tool, list, get) in tools {
        let types = match run(tool, &list) {
            Ok(out) => String::from_utf8_lossy(&out).into_owned(),
            Err(Ran::Missing) => {
                missing.push(tool);
                continue;
            }
            Err(e) => return Read::Failed(e.say(tool)),
        };
        let (kind, is_image) = match image_type(&types) {
            Some(mime) => (mime, true),
            None if types
                .lines()
                .any(|t| t.trim().starts_with("text/plain") || t.trim() == "UTF8_STRING") =>
            {
                (
                    if tool == "xclip" {
                        "UTF8_STRING"
                    } else {
                        "text/plain"
                    },
                    false,
                )
            }
            None => return Read::Failed("the clipboard holds no image".to_string()),
        };
        let mut args = get.clone();
        args.push(kind);
        let bytes = match run(tool, &args) {
            Ok(bytes) => bytes,
            Err(e) => return Read::Failed(e.say(tool)),
        };
        if !is_image {
            return Read::Text(String::from_utf8_lossy(&bytes).into_owned());
        }
        return match Picture::from_bytes(bytes) {
            Ok(picture) => Read::Picture(picture),
            Err(e) => Read::Failed(format!("the clipboard's image: {e}")),
        };
    }
    Read::Failed(format!(
        "Ctrl-V reads images with wl-paste or xclip; {} not installed",
        missing.join(" and ")
    ))
}

/// The clipboard type to ask for among `types` (one per line): PNG first.
fn image_type(types: &str) -> Option<&str> {
    let images: Vec<&str> = types
        .lines()
        .map(str::trim)
        .filter(|t| t.starts_with("image/"))
        .collect();
    ["image/png", "image/jpeg", "image/webp", "image/gif"]
        .into_iter()
        .find(|want| images.contains(want))
}

/// Why a clipboard tool gave nothing.
enum Ran {
    /// It cannot be run.
    Missing,
    /// It did not finish within [`CLIPBOARD_LIMIT`].
    Stalled,
    /// It failed.
    Failed,
    /// It printed more than [`MAX_FILE`].
    TooLarge,
}

impl Ran {
    fn say(&self, tool: &str) -> String {
        match self {
            Ran::Missing => format!("{tool} cannot be run"),
            Ran::Stalled => format!("{tool} did not answer within {CLIPBOARD_LIMIT:?}"),
            Ran::Failed => format!("{tool} could not read the clipboard"),
            Ran::TooLarge => format!(
                "the clipboard's image is over {} MB; images of up to that are attached",
                MAX_FILE >> 20
            ),
        }
    }
}

/// What `tool ARGS` prints, within [`CLIPBOARD_LIMIT`] and [`MAX_FILE`].
fn run(tool: &str, args: &[&str]) -> Result<Vec<u8>, Ran> {
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|_| Ran::Missing)?;
    let mut out = Vec::new();
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        if let Some(stdout) = stdout {
            let _ = stdout.take(MAX_FILE + 1).read_to_end(&mut out);
        }
        out
    });
    let deadline = Instant::now() + CLIPBOARD_LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Ran::Stalled);
            }
        }
    };
    let out = reader.join().map_err(|_| Ran::Failed)?;
    if !status.success() {
        return Err(Ran::Failed);
    }
    if out.len() as u64 > MAX_FILE {
        return Err(Ran::TooLarge);
    }
    Ok(out)
}

impl Workspace {
    /// Reads the picture at `path` (relative to the session's project) for session `key`'s
    /// prompt; `pasted` is the paste that named it.
    pub(super) fn attach_file(&mut self, key: SessionKey, path: PathBuf, pasted: Option<String>) {
        let Some(slot) = self.sessions.get(&key) else {
            return;
        };
        let path = if path.is_absolute() {
            path
        } else {
            slot.project.join(path)
        };
        self.launcher.jobs.blocking(move || {
            let read = match read_file(&path) {
                Ok(picture) => Read::Picture(picture),
                // A pasted path to nothing was only text.
                Err(_) if pasted.is_some() && !path.exists() => Read::NoFile,
                Err(why) => Read::Failed(why),
            };
            JobDone::PictureRead(PictureRead {
                session: key,
                read,
                pasted,
            })
        });
    }

    /// Reads the clipboard's image for session `key`'s prompt (Ctrl-V).
    pub fn attach_clipboard(&mut self, key: SessionKey) {
        self.launcher.jobs.blocking(move || {
            JobDone::PictureRead(PictureRead {
                session: key,
                read: read_clipboard(),
                pasted: None,
            })
        });
    }

    /// A picture was read: onto the prompt (in place of the path pasted), or the user is
    /// told why not; a pasted path stays the text it was.
    pub(super) fn picture_read(&mut self, read: PictureRead) -> bool {
        let Some(slot) = self.sessions.get_mut(&read.session) else {
            return false;
        };
        match read.read {
            Read::Picture(_) if slot.driver.takes_images() == Some(false) => {
                slot.view.set_error(NO_IMAGES);
            }
            Read::Picture(picture) => {
                match &read.pasted {
                    Some(pasted) => slot.view.attach_pasted(picture, pasted),
                    None => slot.view.attach(picture),
                };
            }
            Read::Text(text) => {
                slot.view.paste_text(&text);
            }
            Read::Failed(why) => slot.view.set_error(why),
            Read::NoFile => {}
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_is_asked_for_first_among_the_clipboards_types() {
        let types = "text/plain\nimage/jpeg\nimage/png\n";
        assert_eq!(image_type(types), Some("image/png"));
        assert_eq!(image_type("TARGETS\nimage/jpeg"), Some("image/jpeg"));
        assert_eq!(image_type("UTF8_STRING\ntext/plain"), None);
    }

    #[test]
    fn a_file_is_refused_when_missing_too_large_or_no_picture() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read_file(&dir.path().join("nope.png")).unwrap_err();
        assert!(missing.contains("cannot read"), "{missing}");
        let text = dir.path().join("notes.png");
        std::fs::write(&text, "hello").unwrap();
        let not = read_file(&text).unwrap_err();
        assert!(not.contains("not a PNG"), "{not}");
        let big = dir.path().join("big.png");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(MAX_FILE + 1).unwrap();
        let large = read_file(&big).unwrap_err();
        assert!(large.contains("MB"), "{large}");
    }
}
