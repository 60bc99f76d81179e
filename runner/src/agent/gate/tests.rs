//! The gate's decisions, questions and answers against a scripted client.
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
        // What was asked is the one allow; it says why, in the agent's words.
        assert_eq!(option_ids(&asked[1]), [ALLOW_OUTSIDE, REJECT_ONCE]);
        let request = serde_json::to_value(&asked[1]).unwrap();
        assert_eq!(request["_meta"]["march"]["sandbox"]["outside"], true);
        assert!(request["_meta"]["march"]["sandbox"]["reason"].is_null());
    }
    // The call's result says it ran outside, for the session file and export.
    let patch = gate
        .result_patch("id-out", &ToolOutcome::text("done"))
        .expect("marked");
    assert_eq!(patch.details.unwrap()["sandbox"], "outside");
    assert!(
        gate.result_patch("id-out", &ToolOutcome::text("x"))
            .is_none()
    );
    // With no sandbox there is nothing to leave: remembered, no question, no option.
    gate.sandbox.set_mode(SandboxMode::Full);
    assert_eq!(gate.check(&out).await, None);
    assert_eq!(port.asked.lock().len(), 2);
}

#[tokio::test]
async fn a_rejection_with_words_gives_them_to_the_model() {
    let mut meta = serde_json::Map::new();
    meta.insert(
        "march".into(),
        json!({ "message": "use cargo check instead" }),
    );
    let answer = Ok(RequestPermissionOutcome::Selected(
        SelectedPermissionOutcome::new(REJECT_ONCE).meta(meta),
    ));
    let (_dir, port, gate) = setup(vec![answer], PermissionMode::Ask);
    let verdict = gate
        .check(&call("bash", json!({"command": "cargo build"})))
        .await;
    assert_eq!(
        verdict,
        block(format!("{REJECTED_WITH}use cargo check instead"))
    );
    let request = serde_json::to_value(&port.asked.lock()[0]).unwrap();
    assert_eq!(request["_meta"]["march"]["rejectMessage"], true);
    // Every option names its scope, so a key keeps one meaning for every tool.
    let scopes: Vec<_> = request["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            o["_meta"]["march"]["scope"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(
        scopes,
        [
            "once",
            "outside-sandbox",
            "session",
            "project",
            "once",
            "session"
        ]
    );
}

#[tokio::test]
async fn the_same_tool_refused_again_and_again_stops_the_run() {
    let (_dir, port, gate) = setup(vec![selected(REJECT_ALWAYS)], PermissionMode::Ask);
    let bash = |n: u32| call("bash", json!({"command": format!("try {n}")}));
    assert_eq!(gate.check(&bash(0)).await, block(REJECTED));
    assert_eq!(gate.check(&bash(1)).await, block(REJECTED));
    assert_eq!(gate.check(&bash(2)).await, block(REJECTED));
    let stop = gate.check(&bash(3)).await.expect("refused");
    assert_eq!(
        stop.ends_run,
        Some(RunLimit::Rejected {
            tool: "bash".into(),
            times: REJECTION_LOOP_LIMIT
        })
    );
    // Asked once; the rest were the remembered answer.
    assert_eq!(port.asked.lock().len(), 1);
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
