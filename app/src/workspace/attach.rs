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

/// The largest picture file attached (model APIs take a few MB; a larger file is surely a
/// mistake).
const MAX_FILE: u64 = 20 << 20;
/// How long a clipboard tool may take.
const CLIPBOARD_LIMIT: Duration = Duration::from_secs(5);

/// A picture read for a session's prompt.
#[derive(Debug)]
pub struct PictureRead {
    /// Whose prompt.
    pub session: SessionKey,
    /// The picture, or why there is none.
    pub result: Result<Arc<Picture>, String>,
    /// The text pasted, when a paste asked: it goes into the prompt if no picture came.
    pub pasted: Option<String>,
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

/// The clipboard's image, through `wl-paste` (Wayland) or `xclip` (X11).
fn read_clipboard() -> Result<Arc<Picture>, String> {
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
        return Err("no graphical session to read a clipboard image from".to_string());
    }
    let mut missing = Vec::new();
    for (tool, list, get) in tools {
        let types = match run(tool, &list) {
            Ok(out) => String::from_utf8_lossy(&out).into_owned(),
            Err(Missing) => {
                missing.push(tool);
                continue;
            }
        };
        let Some(mime) = image_type(&types) else {
            return Err("the clipboard holds no image".to_string());
        };
        let mut args = get.clone();
        args.push(mime);
        let bytes = run(tool, &args).map_err(|Missing| format!("{tool} stopped answering"))?;
        return Picture::from_bytes(bytes).map_err(|e| format!("the clipboard's image: {e}"));
    }
    Err(format!(
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

/// A clipboard tool that cannot be run or does not finish.
struct Missing;

/// What `tool ARGS` prints, within [`CLIPBOARD_LIMIT`] and [`MAX_FILE`].
fn run(tool: &str, args: &[&str]) -> Result<Vec<u8>, Missing> {
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|_| Missing)?;
    let mut out = Vec::new();
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        if let Some(stdout) = stdout {
            let _ = stdout.take(MAX_FILE + 1).read_to_end(&mut out);
        }
        out
    });
    let deadline = Instant::now() + CLIPBOARD_LIMIT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Missing);
            }
        }
    }
    reader.join().map_err(|_| Missing)
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
            JobDone::PictureRead(PictureRead {
                session: key,
                result: read_file(&path),
                pasted,
            })
        });
    }

    /// Reads the clipboard's image for session `key`'s prompt (Ctrl-V).
    pub fn attach_clipboard(&mut self, key: SessionKey) {
        self.launcher.jobs.blocking(move || {
            JobDone::PictureRead(PictureRead {
                session: key,
                result: read_clipboard(),
                pasted: None,
            })
        });
    }

    /// A picture was read: onto the prompt, or the user is told why not.
    pub(super) fn picture_read(&mut self, read: PictureRead) -> bool {
        let Some(slot) = self.sessions.get_mut(&read.session) else {
            return false;
        };
        match read.result {
            Ok(picture) => {
                slot.view.attach(picture);
            }
            Err(why) => {
                if let Some(text) = read.pasted {
                    slot.view.paste_text(&text);
                }
                slot.view.set_error(why);
            }
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
