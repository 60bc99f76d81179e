//! The webhook: each session's attention change (working, needs you, done, error) POSTed
//! as JSON to a URL the user names, so a phone or a CI job hears when a session needs
//! someone without polling.

use std::time::Duration;

use march_wire::WatchEvent;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::workspace::WorkspaceLink;

/// How long before watching a workspace that was not there again.
const RETRY: Duration = Duration::from_secs(2);

/// POSTs the attention changes of every session of `link`'s workspace to `url` until
/// `stop` is cancelled.
pub async fn run(link: WorkspaceLink, url: String, stop: CancellationToken) {
    let http = march_core::http::client_builder(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default();
    loop {
        if let Ok((mut watch, info)) = link.watch(None).await {
            let workspace = info.name;
            // The first events say how things are: only changes after them are sent.
            let mut known = std::collections::BTreeMap::new();
            loop {
                let event = tokio::select! {
                    () = stop.cancelled() => return,
                    event = watch.next() => event,
                };
                let Ok(Some(WatchEvent::Attention {
                    session,
                    attention,
                    title,
                    question,
                })) = event
                else {
                    match event {
                        Ok(Some(_)) => continue,
                        _ => break,
                    }
                };
                let before = known.insert(session, attention.clone());
                if before.is_none() || before.as_ref() == Some(&attention) {
                    continue;
                }
                let body = json!({
                    "workspace": workspace,
                    "session": session,
                    "attention": attention,
                    "was": before,
                    "title": title,
                    "question": question,
                });
                let request = http
                    .post(&url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body.to_string());
                match request.send().await {
                    Ok(r) if r.status().is_success() => {
                        tracing::info!(session, attention, "gateway: webhook told");
                    }
                    Ok(r) => tracing::warn!("gateway: the webhook answered {}", r.status()),
                    Err(e) => tracing::warn!("gateway: the webhook: {}", e.without_url()),
                }
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(RETRY) => {}
        }
    }
}
