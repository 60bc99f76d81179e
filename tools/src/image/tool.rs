//! `image_generate`: a picture from a prompt, saved under the project.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use base64::Engine;
use march_core::event::ToolOutcome;
use march_core::message::{Cost, ImageContent, Usage, UserContent};
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::api::ImageApi;
use crate::args::required_str;
use crate::task::run_blocking;

/// Makes images through the images API of `[images]`.
pub struct ImageGenerateTool {
    api: Option<ImageApi>,
    /// The project.
    cwd: PathBuf,
    /// Where images go, relative to the project.
    dir: PathBuf,
    parameters: Value,
}

impl ImageGenerateTool {
    /// A tool saving under `cwd`/`dir`; `api` is `None` when no image model is configured.
    pub fn new(api: Option<ImageApi>, cwd: PathBuf, dir: PathBuf) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "prompt": {
                    "type": "string",
                    "description": "What the image shows, in detail"
                },
                "size": {
                    "type": "string",
                    "description": "WIDTHxHEIGHT the model supports, e.g. 1024x1024 (default: the user's setting)"
                },
                "name": {
                    "type": "string",
                    "description": "A short file name for it, without extension"
                }
            },
            "required": ["prompt"]
        });
        ImageGenerateTool {
            api,
            cwd,
            dir,
            parameters,
        }
    }
}

/// A file name's stem from `text`: lowercase words joined by `-`, at most 40 characters.
fn slug(text: &str) -> String {
    let mut slug = String::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        if slug.len() + word.len() + 1 > 40 {
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word);
    }
    if slug.is_empty() {
        "image".into()
    } else {
        slug
    }
}

/// A path in `dir` that is not taken: `stem.ext`, else `stem-2.ext`, …
fn free_path(dir: &Path, stem: &str, ext: &str) -> PathBuf {
    let mut path = dir.join(format!("{stem}.{ext}"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.{ext}"));
        n += 1;
    }
    path
}

/// The file extension and media type of an image's bytes.
fn format_of(bytes: &[u8]) -> Option<(&'static str, &'static str)> {
    Some(match imagesize::image_type(bytes).ok()? {
        imagesize::ImageType::Png => ("png", "image/png"),
        imagesize::ImageType::Jpeg => ("jpg", "image/jpeg"),
        imagesize::ImageType::Webp => ("webp", "image/webp"),
        imagesize::ImageType::Gif => ("gif", "image/gif"),
        _ => return None,
    })
}

#[async_trait]
impl Tool for ImageGenerateTool {
    fn name(&self) -> &str {
        "image_generate"
    }

    fn description(&self) -> &str {
        "Generate an image from a prompt with the user's image model. The image is saved \
         under the project (its path is returned) and shown to you and the user. Each image \
         costs money: make one when asked to."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        // It writes a new file and spends the user's money with a service outside.
        ToolAnnotations {
            read_only: false,
            destructive: false,
            open_world: true,
        }
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Other
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("prompt").and_then(Value::as_str))
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let prompt = required_str(&args, "prompt")?.trim().to_string();
        if prompt.is_empty() {
            return Err(ToolError::new("The prompt is empty"));
        }
        let Some(api) = &self.api else {
            return Err(ToolError::new(
                "No image model is configured: the user sets one in [images] model",
            ));
        };
        let client = march_core::http::shared_client().map_err(ToolError::new)?;
        let size = args.get("size").and_then(Value::as_str);
        let made = tokio::select! {
            made = api.generate(client, &prompt, size) => made,
            () = cancel.cancelled() => return Err(ToolError::new("Cancelled")),
        };
        let made = made.map_err(|e| ToolError::new(format!("No image: {e}")))?;
        let (ext, media_type) = format_of(&made.bytes)
            .ok_or_else(|| ToolError::new("The images API sent something that is no image"))?;
        let dims = imagesize::blob_size(&made.bytes).ok();
        let dir = self.cwd.join(&self.dir);
        let name = args.get("name").and_then(Value::as_str).unwrap_or(&prompt);
        let stamp: String = march_core::session::format_iso_ms(march_core::message::now_ms())
            .chars()
            .filter(char::is_ascii_digit)
            .take(14)
            .collect();
        let stem = format!("{}-{}", stamp, slug(name));
        let bytes = made.bytes.clone();
        let path = run_blocking("Saving the image failed".into(), move || {
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let path = free_path(&dir, &stem, ext);
            march_core::atomic_file::write_file(
                &path,
                &bytes,
                march_core::atomic_file::FileMode::Kept,
            )
            .map_err(|e| format!("cannot save {}: {e}", path.display()))?;
            Ok::<_, String>(path)
        })
        .await?
        .map_err(ToolError::new)?;
        let shown = path.strip_prefix(&self.cwd).unwrap_or(&path);
        let mut text = format!("Saved {}", shown.display());
        if let Some(d) = dims {
            text.push_str(&format!(" ({}×{} {ext})", d.width, d.height));
        }
        text.push('.');
        match api.price {
            Some(price) => text.push_str(&format!(" Cost ${price:.3} ({}).", api.spec)),
            None => text.push_str(&format!(
                " Cost unknown for {}: the user can set [images] price_per_image.",
                api.spec
            )),
        }
        if let Some(revised) = &made.revised_prompt {
            text.push_str(&format!("\nThe model drew: {revised}"));
        }
        let mut outcome = ToolOutcome::text(text);
        outcome.content.push(UserContent::Image(ImageContent {
            data: base64::engine::general_purpose::STANDARD.encode(&made.bytes),
            mime_type: media_type.into(),
        }));
        outcome.details = json!({
            "path": path,
            "width": dims.map(|d| d.width),
            "height": dims.map(|d| d.height),
            "model": api.spec,
            "cost": api.price,
            "revisedPrompt": made.revised_prompt,
        });
        outcome.usage = api.price.map(|price| Usage {
            cost: Cost {
                output: price,
                total: price,
                ..Cost::default()
            },
            ..Usage::default()
        });
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_testkit::{PageReply, PageServer};

    /// A real 32×16 PNG.
    fn red_png() -> Vec<u8> {
        std::fs::read(march_testkit::fixture("red-32x16.png")).unwrap()
    }

    async fn api_server(answer: Value, extra: Vec<(&str, PageReply)>) -> PageServer {
        let mut routes = vec![(
            "/v1/images/generations".to_string(),
            PageReply::ok("application/json", answer.to_string()),
        )];
        routes.extend(extra.into_iter().map(|(p, r)| (p.to_string(), r)));
        PageServer::start(routes.into_iter().collect())
            .await
            .unwrap()
    }

    fn tool(server: &PageServer, provider: &str, model: &str, dir: &Path) -> ImageGenerateTool {
        let api = ImageApi::new(
            provider,
            model,
            &server.url("/v1"),
            Some("image-key".into()),
            Some("1024x1024".into()),
            None,
        );
        ImageGenerateTool::new(Some(api), dir.to_path_buf(), ".march/images".into())
    }

    async fn run(tool: &ImageGenerateTool, args: Value) -> Result<ToolOutcome, ToolError> {
        tool.execute("c", args, CancellationToken::new(), ToolUpdates::discard())
            .await
    }

    #[tokio::test]
    async fn an_image_is_asked_for_saved_under_the_project_and_priced() {
        let b64 = base64::engine::general_purpose::STANDARD.encode(red_png());
        let server = api_server(json!({"created": 1, "data": [{"b64_json": b64}]}), vec![]).await;
        let project = tempfile::tempdir().unwrap();
        let tool = tool(&server, "openai", "gpt-image-1", project.path());
        let outcome = run(&tool, json!({"prompt": "A red square, flat!"}))
            .await
            .unwrap();

        let sent = &server.requests()[0];
        assert_eq!(sent.header("authorization"), Some("Bearer image-key"));
        let body: Value = serde_json::from_slice(&sent.body).unwrap();
        // GPT Image models refuse response_format: it is not sent to them.
        assert_eq!(
            body,
            json!({"model": "gpt-image-1", "prompt": "A red square, flat!", "n": 1, "size": "1024x1024"})
        );
        let path = PathBuf::from(outcome.details["path"].as_str().unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), red_png());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.ends_with("-a-red-square-flat.png"), "{name}");
        assert!(path.starts_with(project.path().join(".march/images")));
        let text = outcome.text_content();
        assert!(
            text.starts_with(&format!(
                "Saved .march/images/{name} (32×16 png). Cost $0.042 (openai/gpt-image-1)."
            )),
            "{text}"
        );
        assert!(
            matches!(&outcome.content[1], UserContent::Image(i) if i.mime_type == "image/png"),
            "the model and the transcript get the picture"
        );
        assert_eq!(outcome.usage.map(|u| u.cost.total), Some(0.042));
        // A second image of the same name does not replace the first.
        let again = run(
            &tool,
            json!({"prompt": "x", "name": name.trim_end_matches(".png")}),
        )
        .await
        .unwrap();
        assert_ne!(again.details["path"], outcome.details["path"]);
    }

    #[tokio::test]
    async fn other_models_are_asked_for_base64_and_a_url_answer_is_fetched() {
        // The answer names a file on the server's neighbour.
        let files = PageServer::start(
            [(
                "/files/img.png".to_string(),
                PageReply::ok("image/png", red_png()),
            )]
            .into_iter()
            .collect(),
        )
        .await
        .unwrap();
        let answer = json!({"data": [{"url": files.url("/files/img.png"), "revised_prompt": "a crimson square"}]});
        let server = api_server(answer, vec![]).await;
        let project = tempfile::tempdir().unwrap();
        let tool = tool(&server, "xai", "grok-2-image", project.path());
        let outcome = run(&tool, json!({"prompt": "red"})).await.unwrap();
        let body: Value = serde_json::from_slice(&server.requests()[0].body).unwrap();
        assert_eq!(body["response_format"], "b64_json");
        let text = outcome.text_content();
        assert!(text.contains("Cost $0.070 (xai/grok-2-image)."), "{text}");
        assert!(text.ends_with("The model drew: a crimson square"), "{text}");
    }

    #[tokio::test]
    async fn failures_say_what_they_are_and_save_nothing() {
        let refused = PageServer::start(
            [(
                "/v1/images/generations".to_string(),
                PageReply::Page {
                    status: 400,
                    media_type: "application/json".into(),
                    body: br#"{"error": {"message": "Your request was rejected by the safety system."}}"#.to_vec(),
                },
            )]
            .into_iter()
            .collect(),
        )
        .await
        .unwrap();
        let project = tempfile::tempdir().unwrap();
        let e = run(
            &tool(&refused, "openai", "gpt-image-1", project.path()),
            json!({"prompt": "x"}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "No image: the images API answered 400: Your request was rejected by the safety system."
        );
        let junk = base64::engine::general_purpose::STANDARD.encode(b"not an image");
        let server = api_server(json!({"data": [{"b64_json": junk}]}), vec![]).await;
        let e = run(
            &tool(&server, "openai", "gpt-image-1", project.path()),
            json!({"prompt": "x"}),
        )
        .await
        .unwrap_err();
        assert!(e.to_string().contains("no image"), "{e}");
        assert!(!project.path().join(".march/images").exists());
        let none = ImageGenerateTool::new(None, project.path().into(), ".march/images".into());
        let e = run(&none, json!({"prompt": "x"})).await.unwrap_err();
        assert!(e.to_string().contains("[images] model"), "{e}");
    }

    #[test]
    fn names_are_short_plain_words() {
        assert_eq!(slug("A Red square, flat!"), "a-red-square-flat");
        assert_eq!(slug("!!!"), "image");
        assert!(slug(&"word ".repeat(30)).len() <= 40);
    }
}
