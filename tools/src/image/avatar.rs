//! `avatar`: the model proposes a new avatar for itself (March's own agent), an image file
//! such as one `image_generate` made. The user sees the picture in the permission request
//! and decides; once allowed it becomes `<config>/profiles/avatars/march.<ext>`, which the
//! workspace shows in pane headers, the switcher and the supervisor view.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use base64::Engine;
use march_core::event::ToolOutcome;
use march_core::message::ImageContent;
use march_core::paths::{AVATAR_ENDINGS, OWN_AGENT};
use march_core::tool::{
    CallPreview, Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::args::required_str;
use crate::paths::resolve;
use crate::task::run_blocking;

/// The largest image taken as an avatar.
const MAX_BYTES: u64 = 20 << 20;
/// The largest side, in pixels, of an image taken as an avatar.
const MAX_SIDE: usize = 8000;

/// Sets March's avatar from an image file, once the user allows it.
pub struct AvatarTool {
    /// The project, for relative paths.
    cwd: PathBuf,
    /// Where avatars live (`<config>/profiles/avatars`); `None` without a config directory.
    dir: Option<PathBuf>,
    parameters: Value,
}

/// An image checked to be an avatar: its bytes, file ending and media type.
struct Checked {
    bytes: Vec<u8>,
    ending: &'static str,
    mime: &'static str,
    size: (usize, usize),
}

impl AvatarTool {
    /// A tool that puts avatars in `dir`; relative paths resolve against `cwd`.
    pub fn new(cwd: PathBuf, dir: Option<PathBuf>) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The image file (PNG, JPEG, WebP or GIF), e.g. one image_generate saved"
                }
            },
            "required": ["path"]
        });
        AvatarTool {
            cwd,
            dir,
            parameters,
        }
    }

    fn source(&self, args: &Value) -> Result<PathBuf, ToolError> {
        let raw = required_str(args, "path")?;
        Ok(resolve(&self.cwd, raw).absolute)
    }

    /// Where avatars live.
    fn dir(&self) -> Result<&Path, ToolError> {
        self.dir
            .as_deref()
            .ok_or_else(|| ToolError::new("March has no config directory to keep an avatar in"))
    }

    /// The avatar file a picture with `ending` becomes.
    fn target(&self, ending: &str) -> Result<PathBuf, ToolError> {
        Ok(avatar_file(self.dir()?, ending))
    }
}

/// March's own avatar file in `dir` for a picture with `ending`.
fn avatar_file(dir: &Path, ending: &str) -> PathBuf {
    dir.join(format!("{OWN_AGENT}.{ending}"))
}

/// Reads `path` and checks it is an image March shows, of a sensible size.
fn check(path: &Path) -> Result<Checked, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a file"));
    }
    if meta.len() > MAX_BYTES {
        return Err(format!(
            "{shown} is {} MiB; an avatar may have {} MiB at most",
            meta.len() >> 20,
            MAX_BYTES >> 20
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let (ending, mime) = match imagesize::image_type(&bytes) {
        Ok(imagesize::ImageType::Png) => ("png", "image/png"),
        Ok(imagesize::ImageType::Jpeg) => ("jpg", "image/jpeg"),
        Ok(imagesize::ImageType::Webp) => ("webp", "image/webp"),
        Ok(imagesize::ImageType::Gif) => ("gif", "image/gif"),
        _ => return Err(format!("{shown} is not a PNG, JPEG, WebP or GIF image")),
    };
    let size = imagesize::blob_size(&bytes)
        .map_err(|e| format!("{shown}: the image cannot be read ({e})"))?;
    if size.width == 0 || size.height == 0 || size.width.max(size.height) > MAX_SIDE {
        return Err(format!(
            "{shown} is {}×{} pixels; an avatar's sides are 1 to {MAX_SIDE}",
            size.width, size.height
        ));
    }
    Ok(Checked {
        bytes,
        ending,
        mime,
        size: (size.width, size.height),
    })
}

/// Puts `checked` at `target` and removes the avatars of other endings beside it, so the
/// new one is the one found.
fn install(dir: &Path, target: &Path, checked: &Checked) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    march_core::atomic_file::write_file(
        target,
        &checked.bytes,
        march_core::atomic_file::FileMode::Kept,
    )
    .map_err(|e| format!("cannot save {}: {e}", target.display()))?;
    for ending in AVATAR_ENDINGS {
        let other = avatar_file(dir, ending);
        if other != target && other.is_file() {
            std::fs::remove_file(&other)
                .map_err(|e| format!("cannot remove the old {}: {e}", other.display()))?;
        }
    }
    Ok(())
}

#[async_trait]
impl Tool for AvatarTool {
    fn name(&self) -> &str {
        "avatar"
    }

    fn description(&self) -> &str {
        "Propose an image file as your avatar, the picture March shows for you in pane \
         headers, the session switcher and the supervisor view. The user sees the picture \
         and decides. Use it when the user asks for a new avatar; to make one, call \
         image_generate first (a square picture, simple shapes that read at a small size) \
         and pass the file it saved."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        // It replaces the user's current avatar: always asked.
        ToolAnnotations {
            read_only: false,
            destructive: true,
            open_world: false,
        }
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Other
    }

    fn title(&self, args: &Value) -> String {
        call_title("set avatar", args.get("path").and_then(Value::as_str))
    }

    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        self.source(args).into_iter().collect()
    }

    fn preview(&self, args: &Value) -> Option<CallPreview> {
        let checked = check(&self.source(args).ok()?).ok()?;
        Some(CallPreview::Image {
            target: self.target(checked.ending).ok()?.display().to_string(),
            image: ImageContent {
                data: base64::engine::general_purpose::STANDARD.encode(&checked.bytes),
                mime_type: checked.mime.into(),
            },
        })
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        _cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let source = self.source(&args)?;
        let dir = self.dir()?.to_path_buf();
        let from = source.clone();
        let (target, size) = run_blocking("Setting the avatar failed".into(), move || {
            let checked = check(&from)?;
            let target = avatar_file(&dir, checked.ending);
            install(&dir, &target, &checked)?;
            Ok::<_, String>((target, checked.size))
        })
        .await?
        .map_err(ToolError::new)?;
        let mut outcome = ToolOutcome::text(format!(
            "Your avatar is now {} ({}×{}, from {}). March shows it once this turn ends.",
            target.display(),
            size.0,
            size.1,
            resolve(&self.cwd, &source.to_string_lossy()).display(&self.cwd),
        ));
        outcome.details = json!({ "avatar": target, "source": source });
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real 32×16 PNG.
    fn red_png() -> Vec<u8> {
        std::fs::read(march_testkit::fixture("red-32x16.png")).unwrap()
    }

    fn setup() -> (tempfile::TempDir, AvatarTool) {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        std::fs::create_dir_all(project.join(".march/images")).unwrap();
        let tool = AvatarTool::new(project, Some(tmp.path().join("config/profiles/avatars")));
        (tmp, tool)
    }

    async fn run(tool: &AvatarTool, path: &str) -> Result<ToolOutcome, ToolError> {
        tool.execute(
            "c1",
            json!({ "path": path }),
            CancellationToken::new(),
            ToolUpdates::discard(),
        )
        .await
    }

    #[tokio::test]
    async fn an_image_in_the_project_becomes_the_avatar_replacing_the_old_one() {
        let (tmp, tool) = setup();
        let avatars = tmp.path().join("config/profiles/avatars");
        std::fs::create_dir_all(&avatars).unwrap();
        std::fs::write(avatars.join("march.jpg"), b"old").unwrap();
        std::fs::write(avatars.join("claude.png"), b"another agent's").unwrap();
        let image = tmp.path().join("project/.march/images/me.png");
        std::fs::write(&image, red_png()).unwrap();
        // Asked: it replaces what the user has.
        assert!(!tool.annotations().is_harmless());
        // The request shows the picture and where it goes.
        let args = json!({ "path": ".march/images/me.png" });
        assert_eq!(tool.target_paths(&args), vec![image.clone()]);
        let Some(CallPreview::Image {
            target,
            image: shown,
        }) = tool.preview(&args)
        else {
            panic!("an image preview");
        };
        assert_eq!(target, avatars.join("march.png").display().to_string());
        assert_eq!(shown.mime_type, "image/png");
        let out = run(&tool, ".march/images/me.png").await.unwrap();
        let text = out.text_content();
        assert!(
            text.contains("32×16") && text.contains(".march/images/me.png"),
            "{text}"
        );
        assert_eq!(std::fs::read(avatars.join("march.png")).unwrap(), red_png());
        assert!(!avatars.join("march.jpg").exists(), "the old one is gone");
        assert!(
            avatars.join("claude.png").exists(),
            "other agents' are kept"
        );
        assert_eq!(
            march_core::paths::find_avatar(&tmp.path().join("config"), OWN_AGENT),
            Some(avatars.join("march.png"))
        );
    }

    #[tokio::test]
    async fn what_is_not_an_image_is_refused_and_nothing_changes() {
        let (tmp, tool) = setup();
        let project = tmp.path().join("project");
        std::fs::write(project.join("notes.txt"), "hello").unwrap();
        let e = run(&tool, "notes.txt").await.unwrap_err();
        assert!(
            e.to_string().contains("not a PNG, JPEG, WebP or GIF"),
            "{e}"
        );
        assert!(tool.preview(&json!({ "path": "notes.txt" })).is_none());
        let e = run(&tool, "missing.png").await.unwrap_err();
        assert!(e.to_string().contains("cannot read"), "{e}");
        let e = run(&tool, ".march").await.unwrap_err();
        assert!(e.to_string().contains("not a file"), "{e}");
        // A PNG header claiming a huge picture.
        let mut huge = red_png();
        huge[16..20].copy_from_slice(&90_000u32.to_be_bytes());
        std::fs::write(project.join("huge.png"), &huge).unwrap();
        let e = run(&tool, "huge.png").await.unwrap_err();
        assert!(e.to_string().contains("90000×16"), "{e}");
        assert!(!tmp.path().join("config/profiles/avatars").exists());
    }
}
