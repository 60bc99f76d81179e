//! The permission gate: decides per tool call whether it runs, is refused, or needs the user,
//! and asks through `session/request_permission` before anything is written or executed.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SelectedPermissionOutcome, ToolCallStatus, ToolCallUpdate,
};
use march_core::agent_loop::{ABORTED_TEXT, RunLimit, ToolBlock, ToolResultPatch};
use march_core::event::ToolOutcome;
use march_core::message::ToolCall;
use march_core::project_settings::ProjectSettings;
use march_core::tool::{SandboxUse, Tool};
use march_tools::exec::sandbox::{Sandbox, SandboxMode};
use tokio_util::sync::CancellationToken;

use super::options::{PermissionMode, Settings};
use super::port::ClientPort;
use super::updates;

/// What the model reads when the user refuses a call.
pub(crate) const REJECTED: &str = "The user rejected this tool call.";
/// What the model reads before the user's words when they reject a call with a message.
pub(crate) const REJECTED_WITH: &str = "The user rejected this tool call and said: ";
/// What the model reads when the user cancels the turn at a permission prompt.
pub(crate) const CANCELLED: &str = "The user cancelled this turn.";

const ALLOW_ONCE: &str = "allow-once";
const ALLOW_OUTSIDE: &str = "allow-outside-sandbox";
const ALLOW_ALWAYS: &str = "allow-always";
const ALLOW_PROJECT: &str = "allow-project";
const REJECT_ONCE: &str = "reject-once";
const REJECT_ALWAYS: &str = "reject-always";

/// "Always" answers, per tool name, for the lifetime of a session: `true` allows.
pub(crate) type PermissionMemory = Arc<Mutex<HashMap<String, bool>>>;

/// The gate's verdict before asking anyone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    Allow,
    Reject,
    Ask,
}

/// The facts a decision rests on.
#[derive(Debug, Clone, Copy)]
struct Facts {
    mode: PermissionMode,
    /// Harmless by its annotations (read-only, or neither destructive nor open-world).
    harmless: bool,
    /// Not open-world and touching only the paths it names (edit, write).
    confined: bool,
    /// Some named path is outside the project.
    outside: bool,
    remembered: Option<bool>,
}

fn decide(f: Facts) -> Need {
    if f.mode == PermissionMode::Yolo {
        return Need::Allow;
    }
    // Outside the project nothing is automatic, not even a remembered answer.
    if f.outside {
        return Need::Ask;
    }
    match f.remembered {
        Some(true) => return Need::Allow,
        Some(false) => return Need::Reject,
        None => {}
    }
    if f.harmless || (f.mode == PermissionMode::AutoEdit && f.confined) {
        Need::Allow
    } else {
        Need::Ask
    }
}

/// How a call that asks meets the sandbox, for the options it is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    /// No sandbox confines it.
    None,
    /// It runs confined; the user may let it out once.
    Offered,
    /// It asked to run outside; the user decides that, once.
    Asked,
}

/// An option with its scope for clients (`_meta.march.scope`: `once`, `outside-sandbox`,
/// `session` or `project`), so each meaning keeps one key whatever the tool.
fn option(id: &str, name: String, kind: PermissionOptionKind, scope: &str) -> PermissionOption {
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), serde_json::json!({ "scope": scope }));
    PermissionOption::new(id.to_string(), name, kind).meta(meta)
}

fn options(tool: &str, escape: Escape) -> Vec<PermissionOption> {
    use PermissionOptionKind::*;
    let reject = option(REJECT_ONCE, "Reject".into(), RejectOnce, "once");
    if escape == Escape::Asked {
        // What was asked is to run outside: that is the one allow. Never remembered: each
        // command that leaves the sandbox is the user's decision.
        return vec![
            option(
                ALLOW_OUTSIDE,
                "Allow once, outside the sandbox".into(),
                AllowOnce,
                "once",
            ),
            reject,
        ];
    }
    let mut options = vec![option(ALLOW_ONCE, "Allow once".into(), AllowOnce, "once")];
    if escape == Escape::Offered {
        options.push(option(
            ALLOW_OUTSIDE,
            "Allow once, outside the sandbox".into(),
            AllowOnce,
            "outside-sandbox",
        ));
    }
    options.extend([
        option(
            ALLOW_ALWAYS,
            format!("Allow {tool} in this session"),
            AllowAlways,
            "session",
        ),
        option(
            ALLOW_PROJECT,
            format!("Always allow {tool} in this project"),
            AllowAlways,
            "project",
        ),
        reject,
        option(
            REJECT_ALWAYS,
            format!("Always reject {tool} in this session"),
            RejectAlways,
            "session",
        ),
    ]);
    options
}

/// `_meta.march` of a request: the client may send the user's words with a rejection, and
/// whether (and why) the call asks to run outside the sandbox.
fn request_meta(
    escape: &Escape,
    reason: Option<&str>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut march = serde_json::json!({ "rejectMessage": true });
    if *escape == Escape::Asked {
        march["sandbox"] = serde_json::json!({ "outside": true, "reason": reason });
    }
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), march);
    meta
}

/// The words the user sent with a rejection (`_meta.march.message`).
fn reject_message(selected: &SelectedPermissionOutcome) -> Option<String> {
    let words = selected
        .meta
        .as_ref()?
        .get("march")?
        .get("message")?
        .as_str()?;
    let words = words.trim();
    (!words.is_empty()).then(|| words.to_string())
}

fn block(reason: impl Into<String>) -> Option<ToolBlock> {
    Some(ToolBlock {
        reason: Some(reason.into()),
        ends_run: None,
    })
}

/// Automatic refusals of one tool in one run after which the run stops: a model retrying
/// what the user turned down for good would otherwise spin through them unseen.
pub(crate) const REJECTION_LOOP_LIMIT: u32 = 3;

/// The gate of one Agent Run.
pub(crate) struct PermissionGate {
    project: PathBuf,
    tools: Vec<Arc<dyn Tool>>,
    settings: Arc<Mutex<Settings>>,
    memory: PermissionMemory,
    port: Arc<dyn ClientPort>,
    /// The run's stop signal: watched while asking, fired when the user cancels.
    stop: CancellationToken,
    cancelled: AtomicBool,
    /// The session's sandbox: the user may let one call's command out of it.
    sandbox: Sandbox,
    /// Automatic refusals in this run, by tool.
    refused: Mutex<HashMap<String, u32>>,
    /// Calls the user let out of the sandbox, until their result is marked.
    outside: Mutex<std::collections::HashSet<String>>,
}

impl PermissionGate {
    /// A gate for a run in `project`; `stop` ends the run.
    pub(crate) fn new(
        project: PathBuf,
        tools: Vec<Arc<dyn Tool>>,
        settings: Arc<Mutex<Settings>>,
        memory: PermissionMemory,
        port: Arc<dyn ClientPort>,
        stop: CancellationToken,
        sandbox: Sandbox,
    ) -> Self {
        PermissionGate {
            project,
            tools,
            settings,
            memory,
            port,
            stop,
            cancelled: AtomicBool::new(false),
            sandbox,
            refused: Mutex::new(HashMap::new()),
            outside: Mutex::new(Default::default()),
        }
    }

    /// Whether the user answered a permission request with `cancelled`.
    pub(crate) fn user_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    fn inside(&self, path: &Path) -> bool {
        path.starts_with(&self.project)
    }

    /// `None` lets the call run (and reports it in progress); `Some` refuses it with a
    /// reason the model reads.
    pub(crate) async fn check(&self, call: &ToolCall) -> Option<ToolBlock> {
        let tool = self.tools.iter().find(|t| t.name() == call.name)?;
        let look = updates::describe(&self.tools, call);
        let paths = &look.paths;
        let annotations = tool.call_annotations(&call.arguments);
        let facts = Facts {
            mode: self.settings.lock().mode,
            harmless: annotations.is_harmless(),
            confined: !annotations.open_world && !paths.is_empty(),
            outside: paths.iter().any(|p| !self.inside(p)),
            remembered: self.memory.lock().get(&call.name).copied(),
        };
        let (escape, reason) = match tool.sandbox_use(&call.arguments) {
            _ if self.sandbox.mode() == SandboxMode::Full => (Escape::None, None),
            SandboxUse::None => (Escape::None, None),
            SandboxUse::Confined => (Escape::Offered, None),
            SandboxUse::AsksOutside { reason } => (Escape::Asked, reason),
        };
        // Leaving the sandbox is asked in every mode: only the user lets a command out.
        let mut need = if escape == Escape::Asked {
            Need::Ask
        } else {
            decide(facts)
        };
        // The project's own allow list, read when the answer would otherwise be to ask (so
        // every session of the project follows a choice made in any of them).
        if need == Need::Ask
            && escape != Escape::Asked
            && !facts.outside
            && self.project_allows(&call.name).await
        {
            need = Need::Allow;
        }
        let verdict = match need {
            Need::Allow => Ok(false),
            Need::Reject => return self.refuse_again(&call.name),
            Need::Ask => {
                self.ask(tool.clone(), call, &look, escape, reason.as_deref())
                    .await
            }
        };
        match verdict {
            Ok(outside) => {
                let mut update = updates::status_update(&call.id, ToolCallStatus::InProgress);
                if outside {
                    updates::mark_unsandboxed(&mut update);
                }
                self.port.notify(update);
                None
            }
            Err(refused) => refused,
        }
    }

    /// The result of a call the user let out of the sandbox, marked so in its details
    /// (`"sandbox": "outside"`): the session file, its replay and `march export` say so.
    pub(crate) fn result_patch(
        &self,
        call_id: &str,
        result: &ToolOutcome,
    ) -> Option<ToolResultPatch> {
        if !self.outside.lock().remove(call_id) {
            return None;
        }
        let mut details = match &result.details {
            serde_json::Value::Object(map) => map.clone(),
            _ => serde_json::Map::new(),
        };
        details.insert("sandbox".into(), "outside".into());
        Some(ToolResultPatch {
            details: Some(details.into()),
            ..Default::default()
        })
    }

    /// A call refused by a remembered "always reject"; the one that reaches
    /// [`REJECTION_LOOP_LIMIT`] in this run also ends the run.
    fn refuse_again(&self, tool: &str) -> Option<ToolBlock> {
        let times = {
            let mut refused = self.refused.lock();
            let n = refused.entry(tool.to_string()).or_insert(0);
            *n += 1;
            *n
        };
        let mut refusal = block(REJECTED)?;
        if times >= REJECTION_LOOP_LIMIT {
            tracing::info!(%tool, times, "the turn stops: the same tool refused again and again");
            refusal.ends_run = Some(RunLimit::Rejected {
                tool: tool.to_string(),
                times,
            });
        }
        Some(refusal)
    }

    /// Asks the user: `Ok(outside)` runs the call (outside the sandbox when `outside`),
    /// `Err` refuses it with what the model reads.
    async fn ask(
        &self,
        tool: Arc<dyn Tool>,
        call: &ToolCall,
        look: &updates::CallLook,
        escape: Escape,
        reason: Option<&str>,
    ) -> Result<bool, Option<ToolBlock>> {
        // What the call would do, read off the async threads (an edit reads its file).
        let args = call.arguments.clone();
        let preview = tokio::task::spawn_blocking(move || tool.preview(&args))
            .await
            .ok()
            .flatten();
        let mut fields = updates::call_fields(call, look).status(ToolCallStatus::Pending);
        if let Some(preview) = preview {
            fields = fields.content(updates::preview_content(preview));
        }
        let request = RequestPermissionRequest::new(
            self.port.session_id(),
            ToolCallUpdate::new(call.id.clone(), fields),
            options(&call.name, escape),
        )
        .meta(request_meta(&escape, reason));
        // Dropping the request on stop withdraws it from the client.
        let answer = tokio::select! {
            biased;
            () = self.stop.cancelled() => return Err(block(ABORTED_TEXT)),
            answer = self.port.request_permission(request) => answer,
        };
        let selected = match answer {
            Ok(RequestPermissionOutcome::Selected(selected)) => selected,
            Ok(_) => return Err(self.cancel_turn()),
            Err(e) if e.code == ErrorCode::REQUEST_CANCELLED => return Err(self.cancel_turn()),
            Err(e) => {
                tracing::warn!(tool = %call.name, "permission request failed: {e}");
                return Err(block(format!(
                    "Permission could not be asked ({}); the tool call was not run.",
                    e.message
                )));
            }
        };
        let remember = |allow: bool| {
            self.memory.lock().insert(call.name.clone(), allow);
        };
        match &*selected.option_id.0 {
            ALLOW_ONCE => Ok(false),
            ALLOW_OUTSIDE if escape != Escape::None => {
                self.sandbox.release(&call.id);
                self.outside.lock().insert(call.id.clone());
                Ok(true)
            }
            ALLOW_ALWAYS => {
                remember(true);
                Ok(false)
            }
            ALLOW_PROJECT => {
                remember(true);
                self.allow_in_project(&call.name).await;
                Ok(false)
            }
            REJECT_ALWAYS => {
                remember(false);
                Err(block(REJECTED))
            }
            // The user's words are the call's result: what to do instead.
            REJECT_ONCE => Err(match reject_message(&selected) {
                Some(words) => block(format!("{REJECTED_WITH}{words}")),
                None => block(REJECTED),
            }),
            // Unknown options are refusals: never run something the user did not allow.
            _ => Err(block(REJECTED)),
        }
    }

    /// Whether `.march/settings.toml` of the project allows `tool`; a file that cannot be
    /// read allows nothing (and is logged).
    async fn project_allows(&self, tool: &str) -> bool {
        let project = self.project.clone();
        let loaded = tokio::task::spawn_blocking(move || ProjectSettings::load(&project)).await;
        match loaded {
            Ok(Ok(settings)) => settings.allows(tool),
            Ok(Err(e)) => {
                tracing::warn!("project settings not used: {e}");
                false
            }
            Err(_) => false,
        }
    }

    /// Save "always allow `tool` in this project". The call runs either way (the user allowed
    /// it) and the session remembers it; a file that cannot be saved (a damaged one is never
    /// overwritten) is logged.
    async fn allow_in_project(&self, tool: &str) {
        let (project, name) = (self.project.clone(), tool.to_string());
        let saved =
            tokio::task::spawn_blocking(move || ProjectSettings::allow_tool(&project, &name)).await;
        match saved {
            Ok(Ok(())) => tracing::info!(%tool, "allowed in the project"),
            Ok(Err(e)) => tracing::warn!(%tool, "project permission not saved: {e}"),
            Err(e) => tracing::warn!(%tool, "project permission not saved: {e}"),
        }
    }

    /// `cancelled` means the user stopped the turn, not that this call was denied.
    fn cancel_turn(&self) -> Option<ToolBlock> {
        self.cancelled.store(true, Ordering::SeqCst);
        self.stop.cancel();
        block(CANCELLED)
    }
}

#[cfg(test)]
mod tests;
