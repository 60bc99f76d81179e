//! The images API OpenAI defined and xAI speaks too: `POST {base}/images/generations` with a
//! model and a prompt, images back as base64 (or, from some servers, as a URL to fetch).

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

/// One image made.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The image file's bytes.
    pub bytes: Vec<u8>,
    /// The prompt the model actually drew, when it rewrote the one it was given.
    pub revised_prompt: Option<String>,
}

/// Why no image came.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImageError {
    /// The request did not get an answer.
    #[error("{0}")]
    Request(String),
    /// The API answered with an error status.
    #[error("the images API answered {status}: {excerpt}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// What it said.
        excerpt: String,
    },
    /// The answer holds no image.
    #[error("the images API's answer holds no image: {0}")]
    Answer(String),
}

/// The images API of one provider, for one model.
#[derive(Clone)]
pub struct ImageApi {
    /// `provider/model`, as configured.
    pub spec: String,
    /// The model id the API gets.
    pub model: String,
    endpoint: String,
    key: Option<String>,
    /// The size asked for unless a call asks for another.
    pub size: Option<String>,
    /// USD per image, when known.
    pub price: Option<f64>,
    timeout: Duration,
}

impl std::fmt::Debug for ImageApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("ImageApi")
            .field("spec", &self.spec)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// What known image models charge per image (USD, a 1024×1024 image at the default
/// quality), for models the config gives no price.
fn known_price(model: &str) -> Option<f64> {
    Some(match model {
        "gpt-image-1" => 0.042,
        "gpt-image-1-mini" => 0.011,
        "dall-e-3" => 0.04,
        "dall-e-2" => 0.02,
        m if m.starts_with("grok-2-image") => 0.07,
        _ => return None,
    })
}

impl ImageApi {
    /// The API of `provider` at `base_url` (its version path included) for `model`.
    pub fn new(
        provider: &str,
        model: &str,
        base_url: &str,
        key: Option<String>,
        size: Option<String>,
        price: Option<f64>,
    ) -> Self {
        ImageApi {
            spec: format!("{provider}/{model}"),
            model: model.to_string(),
            endpoint: format!("{}/images/generations", base_url.trim_end_matches('/')),
            key,
            size,
            price: price.or_else(|| known_price(model)),
            timeout: Duration::from_secs(300),
        }
    }

    /// Makes one image of `prompt`.
    pub async fn generate(
        &self,
        client: &reqwest::Client,
        prompt: &str,
        size: Option<&str>,
    ) -> Result<Generated, ImageError> {
        let mut body = json!({ "model": self.model, "prompt": prompt, "n": 1 });
        if let Some(size) = size.or(self.size.as_deref()) {
            body["size"] = json!(size);
        }
        // GPT Image models always answer in base64 and refuse the parameter; the others
        // answer with a URL unless asked.
        if !self.model.starts_with("gpt-image") {
            body["response_format"] = json!("b64_json");
        }
        let mut request = client
            .post(&self.endpoint)
            .json(&body)
            .timeout(self.timeout);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| ImageError::Request(e.to_string()))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| ImageError::Request(e.to_string()))?;
        if !status.is_success() {
            return Err(ImageError::Status {
                status: status.as_u16(),
                excerpt: march_core::http::error_excerpt(&bytes),
            });
        }
        let answer: Value =
            serde_json::from_slice(&bytes).map_err(|e| ImageError::Answer(e.to_string()))?;
        let first = &answer["data"][0];
        let revised_prompt = first["revised_prompt"].as_str().map(str::to_string);
        let bytes = if let Some(data) = first["b64_json"].as_str() {
            base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| ImageError::Answer(format!("bad base64: {e}")))?
        } else if let Some(url) = first["url"].as_str() {
            let fetched = client
                .get(url)
                .timeout(self.timeout)
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map_err(|e| ImageError::Request(format!("fetching the image: {e}")))?;
            fetched
                .bytes()
                .await
                .map_err(|e| ImageError::Request(format!("fetching the image: {e}")))?
                .to_vec()
        } else {
            let text = answer.to_string();
            let excerpt: String = text.chars().take(200).collect();
            return Err(ImageError::Answer(excerpt));
        };
        Ok(Generated {
            bytes,
            revised_prompt,
        })
    }
}
