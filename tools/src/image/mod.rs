//! The image capability: `image_generate` asks the configured images API (`[images]`) for a
//! picture, saves it under the project, and hands it to the model and the transcript; its
//! price is counted into the session's cost. `avatar` proposes an image as March's avatar.

pub mod api;
pub mod avatar;
pub mod tool;

pub use api::{Generated, ImageApi, ImageError};

/// The image model a session uses, and where its images go.
#[derive(Debug, Clone)]
pub struct Images {
    /// The images API.
    pub api: ImageApi,
    /// Where images are saved, relative to the project.
    pub dir: std::path::PathBuf,
}
