//! The transport a session's runs use: HTTP with the key and headers of whichever provider
//! the model of each request belongs to, so a model switch between requests needs nothing else.

use std::sync::Arc;

use march_core::model::{Model, ModelRegistry};
use march_core::provider::{
    AssistantEventStream, HttpProvider, LlmContext, StreamFn, StreamOptions,
};
use tokio_util::sync::CancellationToken;

/// `HttpProvider` with credentials looked up per request.
pub(crate) struct KeyedProvider {
    http: HttpProvider,
    registry: Arc<ModelRegistry>,
}

impl KeyedProvider {
    /// Requests through `http` with keys from `registry`.
    pub(crate) fn new(http: HttpProvider, registry: Arc<ModelRegistry>) -> Self {
        KeyedProvider { http, registry }
    }
}

impl StreamFn for KeyedProvider {
    fn stream(
        &self,
        model: &Model,
        context: LlmContext,
        mut options: StreamOptions,
        cancel: CancellationToken,
    ) -> AssistantEventStream {
        options.api_key = self.registry.api_key(&model.provider);
        if let Some(provider) = self.registry.provider(&model.provider) {
            options.headers = provider
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
        }
        self.http.stream(model, context, options, cancel)
    }
}
