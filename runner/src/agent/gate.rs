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
    ToolCallStatus, ToolCallUpdate,
};
use march_core::agent_loop::{ABORTED_TEXT, ToolBlock};
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

fn options(tool: &str, escape: Escape) -> Vec<PermissionOption> {
    let outside = PermissionOption::new(
        ALLOW_OUTSIDE,
        "Allow once, outside the sandbox",
        PermissionOptionKind::AllowOnce,
    );
    if escape == Escape::Asked {
        // Never remembered: each command that leaves the sandbox is the user's decision, and
        // an answer by kind alone (headless, `march answer`, the supervisor's y) takes the
        // first allow, which keeps it in the sandbox.
        return vec![
            PermissionOption::new(
                ALLOW_ONCE,
                "Allow once, in the sandbox",
                PermissionOptionKind::AllowOnce,
            ),
            outside,
            PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
        ];
    }
    let mut options = vec![PermissionOption::new(
        ALLOW_ONCE,
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if escape == Escape::Offered {
        options.push(outside);
    }
    options.extend([
        PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow {tool} in this session"),
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(
            ALLOW_PROJECT,
            format!("Always allow {tool} in this project (.march/settings.toml)"),
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
        PermissionOption::new(
            REJECT_ALWAYS,
            format!("Always reject {tool} in this session"),
            PermissionOptionKind::RejectAlways,
        ),
    ]);
    options
}

fn block(reason: impl Into<String>) -> Option<ToolBlock> {
    Some(ToolBlock {
        reason: Some(reason.into()),
    })
}

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
        let escape = match tool.sandbox_use(&call.arguments) {
            _ if self.sandbox.mode() == SandboxMode::Full => Escape::None,
            SandboxUse::None => Escape::None,
            SandboxUse::Confined => Escape::Offered,
            SandboxUse::AsksOutside => Escape::Asked,
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
            Need::Allow => None,
            Need::Reject => block(REJECTED),
            Need::Ask => self.ask(tool.clone(), call, &look, escape).await,
        };
        if verdict.is_none() {
            self.port
                .notify(updates::status_update(&call.id, ToolCallStatus::InProgress));
        }
        verdict
    }

    async fn ask(
        &self,
        tool: Arc<dyn Tool>,
        call: &ToolCall,
        look: &updates::CallLook,
        escape: Escape,
    ) -> Option<ToolBlock> {
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
        );
        // Dropping the request on stop withdraws it from the client.
        let answer = tokio::select! {
            biased;
            () = self.stop.cancelled() => return block(ABORTED_TEXT),
            answer = self.port.request_permission(request) => answer,
        };
        let option = match answer {
            Ok(RequestPermissionOutcome::Selected(selected)) => selected.option_id.0,
            Ok(_) => return self.cancel_turn(),
            Err(e) if e.code == ErrorCode::REQUEST_CANCELLED => return self.cancel_turn(),
            Err(e) => {
                tracing::warn!(tool = %call.name, "permission request failed: {e}");
                return block(format!(
                    "Permission could not be asked ({}); the tool call was not run.",
                    e.message
                ));
            }
        };
        let remember = |allow: bool| {
            self.memory.lock().insert(call.name.clone(), allow);
        };
        match &*option {
            ALLOW_ONCE => None,
            ALLOW_OUTSIDE if escape != Escape::None => {
                self.sandbox.release(&call.id);
                None
            }
            ALLOW_ALWAYS => {
                remember(true);
                None
            }
            ALLOW_PROJECT => {
                remember(true);
                self.allow_in_project(&call.name).await;
                None
            }
            REJECT_ALWAYS => {
                remember(false);
                block(REJECTED)
            }
            // Unknown options are refusals: never run something the user did not allow.
            _ => block(REJECTED),
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
mod tests {
    use super::*;
    use agent_client_protocol::Error;
    use agent_client_protocol::v1::schema::{SelectedPermissionOutcome, SessionId, SessionUpdate};
    use async_trait::async_trait;
    use march_core::model::{Model, ThinkingLevel};
    use march_tools::exec::sandbox::SandboxPolicy;
    use march_tools::{ToolContext, ToolRegistry};
    use serde_json::{Value, json};
    use std::collections::VecDeque;

    #[test]
    fn decisions_follow_mode_annotations_paths_and_memory() {
        let base = Facts {
            mode: PermissionMode::Ask,
            harmless: false,
            confined: true,
            outside: false,
            remembered: None,
        };
        let d = |f: Facts| decide(f);
        assert_eq!(d(base), Need::Ask);
        assert_eq!(
            d(Facts {
                harmless: true,
                ..base
            }),
            Need::Allow
        );
        assert_eq!(
            d(Facts {
                mode: PermissionMode::AutoEdit,
                ..base
            }),
            Need::Allow
        );
        assert_eq!(
            d(Facts {
                mode: PermissionMode::AutoEdit,
                confined: false,
                ..base
            }),
            Need::Ask
        );
        assert_eq!(
            d(Facts {
                remembered: Some(true),
                ..base
            }),
            Need::Allow
        );
        assert_eq!(
            d(Facts {
                remembered: Some(false),
                ..base
            }),
            Need::Reject
        );
        // Outside the project: asks in every mode but yolo, whatever was remembered.
        for mode in [PermissionMode::Ask, PermissionMode::AutoEdit] {
            for remembered in [None, Some(true), Some(false)] {
                let f = Facts {
                    mode,
                    outside: true,
                    harmless: true,
                    remembered,
                    ..base
                };
                assert_eq!(d(f), Need::Ask);
            }
        }
        assert_eq!(
            d(Facts {
                mode: PermissionMode::Yolo,
                outside: true,
                ..base
            }),
            Need::Allow
        );
    }

    /// A client that answers permission requests from a script and records everything.
    struct FakePort {
        answers: Mutex<VecDeque<Result<RequestPermissionOutcome, Error>>>,
        asked: Mutex<Vec<RequestPermissionRequest>>,
        updates: Mutex<Vec<SessionUpdate>>,
    }

    #[async_trait]
    impl ClientPort for FakePort {
        fn session_id(&self) -> SessionId {
            SessionId::new("s")
        }
        fn notify(&self, update: SessionUpdate) {
            self.updates.lock().push(update);
        }
        async fn request_permission(
            &self,
            request: RequestPermissionRequest,
        ) -> Result<RequestPermissionOutcome, Error> {
            self.asked.lock().push(request);
            let next = self.answers.lock().pop_front();
            match next {
                Some(answer) => answer,
                None => std::future::pending().await,
            }
        }
    }

    fn selected(id: &str) -> Result<RequestPermissionOutcome, Error> {
        Ok(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(id.to_string()),
        ))
    }

    fn setup(
        answers: Vec<Result<RequestPermissionOutcome, Error>>,
        mode: PermissionMode,
    ) -> (tempfile::TempDir, Arc<FakePort>, PermissionGate) {
        let dir = tempfile::tempdir().unwrap();
        let port = Arc::new(FakePort {
            answers: Mutex::new(answers.into()),
            asked: Mutex::new(Vec::new()),
            updates: Mutex::new(Vec::new()),
        });
        let settings = Settings {
            model: Model::openai_compatible("p", "m", "http://x"),
            thinking: ThinkingLevel::Off,
            mode,
            limits: Default::default(),
        };
        let gate = PermissionGate::new(
            dir.path().to_path_buf(),
            ToolRegistry::all(&ToolContext::local(dir.path()))
                .tools()
                .to_vec(),
            Arc::new(Mutex::new(settings)),
            PermissionMemory::default(),
            port.clone(),
            CancellationToken::new(),
            SandboxPolicy::new(SandboxMode::WorkspaceWrite, dir.path()).into(),
        );
        (dir, port, gate)
    }

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall {
            id: format!("id-{name}"),
            name: name.into(),
            arguments: args,
            thought_signature: None,
        }
    }

    #[tokio::test]
    async fn asks_with_four_options_and_remembers_always() {
        let (_dir, port, gate) = setup(
            vec![selected(ALLOW_ALWAYS), selected(REJECT_ONCE)],
            PermissionMode::Ask,
        );
        let write = call("write", json!({"path": "a.txt", "content": "x"}));
        assert_eq!(gate.check(&write).await, None);
        // Remembered: no second question for write.
        assert_eq!(gate.check(&write).await, None);
        let bash = call("bash", json!({"command": "ls"}));
        assert_eq!(gate.check(&bash).await, block(REJECTED));
        // Harmless tools never ask.
        assert_eq!(
            gate.check(&call("read", json!({"path": "a.txt"}))).await,
            None
        );
        let asked = port.asked.lock();
        assert_eq!(asked.len(), 2);
        let kinds: Vec<_> = asked[0].options.iter().map(|o| o.kind).collect();
        use PermissionOptionKind::*;
        assert_eq!(
            kinds,
            [
                AllowOnce,
                AllowAlways,
                AllowAlways,
                RejectOnce,
                RejectAlways
            ]
        );
        let request = serde_json::to_value(&asked[0]).unwrap();
        assert_eq!(request["toolCall"]["toolCallId"], "id-write");
        assert_eq!(request["toolCall"]["kind"], "edit");
        // What the write would do: a new file, its text.
        let diff = &request["toolCall"]["content"][0];
        assert_eq!(diff["type"], "diff");
        assert_eq!(diff["newText"], "x");
        assert!(diff["oldText"].is_null(), "{diff}");
        // The command, and where it runs.
        let ask_bash = serde_json::to_value(&asked[1]).unwrap();
        let text = ask_bash["toolCall"]["content"][0]["content"]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.starts_with("$ ls\n\nin "), "{text}");
        assert!(!gate.user_cancelled());
        // Every call allowed to run was reported in progress.
        assert_eq!(port.updates.lock().len(), 3);
    }

    fn option_ids(request: &RequestPermissionRequest) -> Vec<String> {
        request
            .options
            .iter()
            .map(|o| o.option_id.0.to_string())
            .collect()
    }

    #[tokio::test]
    async fn a_confined_command_can_be_let_out_of_the_sandbox_once() {
        let (_dir, port, gate) = setup(
            vec![selected(ALLOW_OUTSIDE), selected(ALLOW_ALWAYS)],
            PermissionMode::Ask,
        );
        let first = call("bash", json!({"command": "touch /etc/x"}));
        assert_eq!(gate.check(&first).await, None);
        assert_eq!(
            gate.sandbox.policy_for(Some("id-bash")).mode,
            SandboxMode::Full
        );
        // Only that call, once: its id again, or the next, runs confined.
        for id in ["id-bash", "id-other"] {
            assert_eq!(
                gate.sandbox.policy_for(Some(id)).mode,
                SandboxMode::WorkspaceWrite
            );
        }
        let second = ToolCall {
            id: "id-second".into(),
            ..first.clone()
        };
        assert_eq!(gate.check(&second).await, None);
        assert_eq!(
            gate.sandbox.policy_for(Some("id-second")).mode,
            SandboxMode::WorkspaceWrite
        );
        let asked = port.asked.lock();
        assert_eq!(
            option_ids(&asked[0]),
            [
                ALLOW_ONCE,
                ALLOW_OUTSIDE,
                ALLOW_ALWAYS,
                ALLOW_PROJECT,
                REJECT_ONCE,
                REJECT_ALWAYS
            ]
        );
    }

    #[tokio::test]
    async fn asking_to_leave_the_sandbox_always_asks_the_user() {
        // Bash is allowed always, and the mode would run it unasked: leaving the sandbox still
        // asks, with nothing to remember.
        let (_dir, port, gate) = setup(
            vec![selected(ALLOW_ALWAYS), selected(ALLOW_OUTSIDE)],
            PermissionMode::AutoEdit,
        );
        assert_eq!(
            gate.check(&call("bash", json!({"command": "ls"}))).await,
            None
        );
        let out = ToolCall {
            id: "id-out".into(),
            ..call(
                "bash",
                json!({"command": "curl example.org", "outside_sandbox": true}),
            )
        };
        assert_eq!(gate.check(&out).await, None);
        assert_eq!(
            gate.sandbox.policy_for(Some("id-out")).mode,
            SandboxMode::Full
        );
        {
            let asked = port.asked.lock();
            assert_eq!(asked.len(), 2);
            // Answered by kind alone, the first allow keeps it in the sandbox.
            assert_eq!(
                option_ids(&asked[1]),
                [ALLOW_ONCE, ALLOW_OUTSIDE, REJECT_ONCE]
            );
        }
        // With no sandbox there is nothing to leave: remembered, no question, no option.
        gate.sandbox.set_mode(SandboxMode::Full);
        assert_eq!(gate.check(&out).await, None);
        assert_eq!(port.asked.lock().len(), 2);
    }

    #[tokio::test]
    async fn outside_paths_ask_even_in_auto_edit_and_cancel_aborts() {
        let (_dir, port, gate) = setup(
            vec![Ok(RequestPermissionOutcome::Cancelled)],
            PermissionMode::AutoEdit,
        );
        assert_eq!(
            gate.check(&call("edit", json!({"path": "in.txt", "edits": []})))
                .await,
            None
        );
        let outside = call("read", json!({"path": "/etc/hostname"}));
        assert_eq!(gate.check(&outside).await, block(CANCELLED));
        assert!(gate.user_cancelled());
        assert!(gate.stop.is_cancelled());
        assert_eq!(port.asked.lock().len(), 1);
    }

    #[tokio::test]
    async fn allowing_in_the_project_saves_it_and_every_gate_there_follows() {
        let (dir, port, gate) = setup(vec![selected(ALLOW_PROJECT)], PermissionMode::Ask);
        let bash = call("bash", json!({"command": "ls"}));
        assert_eq!(gate.check(&bash).await, None);
        let saved = ProjectSettings::load(dir.path()).unwrap();
        assert!(saved.allows("bash"));
        // A new session's gate (no memory) in the same project does not ask.
        let (_other, other_port, other) = setup(vec![], PermissionMode::Ask);
        let fresh = PermissionGate::new(
            dir.path().to_path_buf(),
            other.tools.clone(),
            other.settings.clone(),
            PermissionMemory::default(),
            other_port.clone(),
            CancellationToken::new(),
            other.sandbox.clone(),
        );
        assert_eq!(fresh.check(&bash).await, None);
        assert_eq!(other_port.asked.lock().len(), 0);
        assert_eq!(port.asked.lock().len(), 1);
        // Outside the project it still asks (the question is withdrawn when the run stops).
        let outside = call(
            "write",
            json!({"path": "/tmp/elsewhere.txt", "content": "x"}),
        );
        ProjectSettings::allow_tool(dir.path(), "write").unwrap();
        let stop = fresh.stop.clone();
        let (verdict, ()) = tokio::join!(fresh.check(&outside), async move {
            while other_port.asked.lock().is_empty() {
                tokio::task::yield_now().await;
            }
            stop.cancel();
        });
        assert_eq!(verdict, block(ABORTED_TEXT));
    }

    #[tokio::test]
    async fn a_stop_while_asking_withdraws_the_question() {
        let (_dir, _port, gate) = setup(vec![], PermissionMode::Ask);
        let stop = gate.stop.clone();
        let bash = call("bash", json!({"command": "rm -rf x"}));
        let check = gate.check(&bash);
        let (verdict, ()) = tokio::join!(check, async move { stop.cancel() });
        assert_eq!(verdict, block(ABORTED_TEXT));
    }
}
