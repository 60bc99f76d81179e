//! Compaction in the runner: when it runs (after a run that filled the window, on a
//! context-overflow error before the one retry, on `/compact`), how clients see it, and
//! that a failure leaves the session as it was.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    CompactionStatus, CompactionUpdate, ContentBlock, ContentChunk, Notice, NoticeSeverity,
    SessionUpdate, TextContent,
};
use march_core::compaction::{self, CompactionError, CompactionSettings, prepare_compaction};
use march_core::message::now_ms;
use march_core::provider::StreamOptions;
use march_core::session::SessionEntry;
use tokio_util::sync::CancellationToken;

use super::client_fs::ClientCaps;
use super::port::ClientPort;
use super::session::Session;

/// Why a compaction runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The context passed the window minus the reserve after a run.
    Threshold,
    /// The model refused the request as too long; the run is retried once afterwards.
    Overflow,
    /// The user asked (`/compact [instructions]`).
    Manual(Option<String>),
}

impl Trigger {
    fn describe(&self) -> &'static str {
        match self {
            Trigger::Threshold => "the conversation is nearing the model's context window",
            Trigger::Overflow => "the model's context window overflowed",
            Trigger::Manual(_) => "asked with /compact",
        }
    }
}

/// How a compaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The `compaction` entry is on disk; later runs start from its summary.
    Compacted {
        /// Estimated context tokens before.
        tokens_before: u64,
    },
    /// Everything fits in what would be kept: there is nothing older to summarise.
    NothingToCompact,
    /// The summary could not be made or stored; the session is unchanged.
    Failed(String),
}

/// Tells the client how a compaction goes: `compaction_update` when it advertised
/// `session.compaction`, else a `notice` when it advertised `session.notices`, else a
/// thought chunk, which every client shows and none stores as the answer.
struct Progress<'a> {
    port: &'a Arc<dyn ClientPort>,
    caps: ClientCaps,
    id: String,
}

impl Progress<'_> {
    fn started(&self, trigger: &Trigger) {
        let text = format!("Compacting the conversation: {}…", trigger.describe());
        if self.caps.compaction {
            self.port
                .notify(SessionUpdate::CompactionUpdate(CompactionUpdate::new(
                    self.id.clone(),
                    CompactionStatus::InProgress,
                )));
        } else {
            self.fallback(NoticeSeverity::Info, "Compacting the conversation", text);
        }
    }

    fn completed(&self, summary: &str, tokens_before: u64) {
        if self.caps.compaction {
            self.port.notify(SessionUpdate::CompactionUpdate(
                CompactionUpdate::new(self.id.clone(), CompactionStatus::Completed)
                    .summary(vec![ContentBlock::Text(TextContent::new(summary))]),
            ));
        } else {
            self.fallback(
                NoticeSeverity::Info,
                "Conversation compacted",
                format!(
                    "Compacted about {tokens_before} tokens of earlier conversation into a summary."
                ),
            );
        }
    }

    fn failed(&self, error: &str) {
        if self.caps.compaction {
            self.port.notify(SessionUpdate::CompactionUpdate(
                CompactionUpdate::new(self.id.clone(), CompactionStatus::Failed)
                    .error(error.to_string()),
            ));
        } else {
            self.fallback(
                NoticeSeverity::Warning,
                "Compaction failed",
                format!("Compaction failed; the conversation is unchanged. {error}"),
            );
        }
    }

    fn fallback(&self, severity: NoticeSeverity, title: &str, text: String) {
        if self.caps.notices {
            self.port.notify(SessionUpdate::Notice(
                Notice::new(severity, title).description(text),
            ));
        } else {
            self.port
                .notify(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                    ContentBlock::Text(TextContent::new(format!("{text}\n"))),
                )));
        }
    }
}

/// Compact `session` now. Never fails the caller: a failure is reported to the client and
/// returned as [`Outcome::Failed`], with nothing written.
pub(crate) async fn compact(
    session: &Session,
    port: &Arc<dyn ClientPort>,
    trigger: Trigger,
    cancel: CancellationToken,
) -> Outcome {
    let settings: CompactionSettings = session.config.compaction;
    let path: Vec<SessionEntry> = session
        .store
        .lock()
        .branch_path(None)
        .into_iter()
        .cloned()
        .collect();
    let Some(prep) = prepare_compaction(&path, &settings) else {
        tracing::info!(session = %session.id, ?trigger, "nothing to compact");
        return Outcome::NothingToCompact;
    };
    let progress = Progress {
        port,
        caps: session.client,
        id: format!("compaction-{:x}-{}", now_ms(), session.next_run()),
    };
    progress.started(&trigger);
    tracing::info!(
        session = %session.id,
        ?trigger,
        tokens_before = prep.tokens_before,
        split_turn = prep.is_split_turn,
        "compacting"
    );
    let (model, thinking) = {
        let s = session.settings.lock();
        (s.model.clone(), s.thinking)
    };
    let options = StreamOptions {
        thinking,
        stall: session.config.requests.stall_policy(),
        ..StreamOptions::default()
    };
    let instructions = match &trigger {
        Trigger::Manual(i) => i.as_deref(),
        _ => None,
    };
    let made = compaction::compact(
        session.provider.as_ref(),
        &model,
        &options,
        &prep,
        instructions,
        cancel,
    )
    .await;
    let stored = match made {
        Ok(result) => {
            let store = session.store.clone();
            let summary = result.summary.clone();
            let tokens_before = result.tokens_before;
            tokio::task::spawn_blocking(move || {
                compaction::apply(&mut store.lock(), result).map(drop)
            })
            .await
            .map_err(|e| format!("storing the compaction failed: {e}"))
            .and_then(|r| r.map_err(|e: CompactionError| e.to_string()))
            .map(|()| (summary, tokens_before))
        }
        Err(e) => Err(e.to_string()),
    };
    match stored {
        Ok((summary, tokens_before)) => {
            tracing::info!(session = %session.id, tokens_before, "compacted");
            progress.completed(&summary, tokens_before);
            Outcome::Compacted { tokens_before }
        }
        Err(error) => {
            tracing::warn!(session = %session.id, "compaction failed: {error}");
            progress.failed(&error);
            Outcome::Failed(error)
        }
    }
}
