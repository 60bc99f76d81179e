//! Driving a real `march runner` child over its stdio with an ACP client built on the crate,
//! against a scripted model server in the test process.

#![allow(dead_code)] // Each test binary uses a different part of the harness.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CloseSessionRequest, ContentBlock, CreateTerminalRequest,
    CreateTerminalResponse, DeleteSessionRequest, InitializeRequest, InitializeResponse,
    KillTerminalRequest, KillTerminalResponse, ListSessionsRequest, NewSessionRequest,
    NewSessionResponse, PermissionOptionKind, PromptRequest, PromptResponse,
    ReleaseTerminalRequest, ReleaseTerminalResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionConfigId, SessionConfigValueId, SessionId, SessionInfo, SessionNotification,
    SessionUpdate, SetSessionConfigOptionRequest, StopReason, TerminalOutputRequest,
    TerminalOutputResponse, TextContent, ToolCallStatus, WaitForTerminalExitRequest,
    WaitForTerminalExitResponse, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use march_core::session::SessionStore;
use march_e2e::march_bin;
use march_testkit::{Event, Script, ScriptedServer, Turn};
use serde_json::{Value, json};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// How long any single wait may take before the test fails instead of hanging.
pub const LIMIT: Duration = Duration::from_secs(60);

/// Await `fut`, failing the test if it takes longer than [`LIMIT`].
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(LIMIT, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

#[path = "client_host.rs"]
mod client_host;
pub use client_host::Host;

/// A temporary MARCH_HOME, a project directory and the scripted model server.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub server: ScriptedServer,
}

impl Harness {
    /// A home whose config points at a scripted server with models `m` (default) and `n`.
    pub async fn new(turns: Vec<Turn>) -> Harness {
        Harness::with_script(Script::new(turns)).await
    }

    /// [`Harness::new`] serving a whole script (its turns and its `/models` list).
    pub async fn with_script(script: Script) -> Harness {
        let server = ScriptedServer::start(script)
            .await
            .unwrap_or_else(|e| panic!("scripted server: {e}"));
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        for sub in ["home", "march", "project"] {
            std::fs::create_dir_all(dir.path().join(sub))
                .unwrap_or_else(|e| panic!("create {sub}: {e}"));
        }
        // Permission dialogs take keys at once: tests answer them as soon as they show;
        // the type-ahead guard's own test sets its time.
        let config = format!(
            "default_model = \"scripted/m\"\n\
             permission_guard_ms = 0\n\
             [providers.scripted]\n\
             api = \"openai-completions\"\n\
             base_url = \"{}\"\n\
             [[providers.scripted.models]]\n\
             id = \"m\"\n\
             [[providers.scripted.models]]\n\
             id = \"n\"\n",
            server.base_url()
        );
        std::fs::write(dir.path().join("march/config.toml"), config)
            .unwrap_or_else(|e| panic!("write config: {e}"));
        Harness { dir, server }
    }

    /// [`Harness::new`] for a test without a runtime: the scripted server runs on a runtime
    /// of its own, kept alive by a thread for the rest of the test process.
    pub fn on_own_runtime(turns: Vec<Turn>) -> Harness {
        Harness::on_own_runtime_with(Script::new(turns))
    }

    /// [`Harness::on_own_runtime`] serving a whole script.
    pub fn on_own_runtime_with(script: Script) -> Harness {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        let h = runtime.block_on(Harness::with_script(script));
        std::thread::spawn(move || runtime.block_on(std::future::pending::<()>()));
        h
    }

    /// `march ARGS` run to its end in the project with a clean environment (PATH, HOME and
    /// MARCH_HOME only): its exit code, stdout and stderr.
    pub fn run_march(&self, args: &[&str]) -> (i32, String, String) {
        let out = std::process::Command::new(march_bin())
            .args(args)
            .current_dir(self.project())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("MARCH_HOME", self.march_home())
            .output()
            .unwrap_or_else(|e| panic!("cannot run march: {e}"));
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Model `m` takes images from now on (runners started after read it).
    pub fn model_takes_images(&self) {
        let path = self.march_home().join("config.toml");
        let config = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("config: {e}"));
        std::fs::write(
            &path,
            config.replace("id = \"m\"\n", "id = \"m\"\nimages = true\n"),
        )
        .unwrap_or_else(|e| panic!("config: {e}"));
    }

    /// MARCH_HOME.
    pub fn march_home(&self) -> PathBuf {
        self.dir.path().join("march")
    }

    /// The project the sessions work in (canonical, so paths compare equal).
    pub fn project(&self) -> PathBuf {
        let p = self.dir.path().join("project");
        p.canonicalize().unwrap_or(p)
    }

    /// Where the session files of the project live.
    pub fn sessions_dir(&self) -> PathBuf {
        march_core::session::march_session_dir(
            &march_core::paths::MarchPaths::at(&self.march_home()),
            &self.project(),
        )
    }

    /// Start `march runner` with a clean environment (PATH, HOME, MARCH_HOME only).
    pub fn spawn_runner(&self) -> Runner {
        let mut command = Command::new(march_bin());
        command.arg("runner");
        self.spawn_runner_as(command)
    }

    /// Start `march runner` unable to grow any file past `bytes` (RLIMIT_FSIZE, with
    /// SIGXFSZ ignored so writes fail with EFBIG as they would on a full disk), through a
    /// small Python wrapper that sets the limit and execs the runner.
    pub fn spawn_runner_with_file_limit(&self, bytes: u64) -> Runner {
        let script = "import os, resource, signal, sys\n\
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n\
n = int(sys.argv[1])\n\
resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))\n\
os.execv(sys.argv[2], sys.argv[2:])\n";
        let mut command = Command::new("python3");
        command
            .arg("-c")
            .arg(script)
            .arg(bytes.to_string())
            .arg(march_bin())
            .arg("runner");
        self.spawn_runner_as(command)
    }

    /// Start `command` (a runner, or something that execs one) as [`Self::spawn_runner`] does.
    pub fn spawn_runner_as(&self, mut command: Command) -> Runner {
        let stderr = std::fs::File::create(self.dir.path().join("runner-stderr.txt"))
            .unwrap_or_else(|e| panic!("stderr file: {e}"));
        let mut child = command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("MARCH_HOME", self.march_home())
            .current_dir(self.project())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start march runner: {e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        Runner {
            child,
            stdin: Some(stdin),
            stdout: Some(stdout),
        }
    }

    /// Start a runner and connect an ACP client to it, initialized.
    pub async fn connect(&self) -> (Runner, AcpClient) {
        self.connect_offering(ClientCapabilities::new()).await
    }

    /// Connect an initialized ACP client to a runner started some other way.
    pub async fn connect_to(&self, mut runner: Runner) -> (Runner, AcpClient) {
        let mut client = AcpClient::connect(&mut runner).await;
        client.init = Some(client.initialize().await);
        (runner, client)
    }

    /// Like [`Harness::connect`], the client offering `caps` (its `fs/write_text_file` and
    /// `terminal/*` are served by a [`Host`]).
    pub async fn connect_offering(&self, caps: ClientCapabilities) -> (Runner, AcpClient) {
        let mut runner = self.spawn_runner();
        let mut client = AcpClient::connect(&mut runner).await;
        let init = client.initialize_offering(caps).await;
        assert_eq!(init.protocol_version, ProtocolVersion::V1);
        client.init = Some(init);
        (runner, client)
    }
}

/// A `march runner` child process; killed on drop.
pub struct Runner {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
}

impl Runner {
    /// SIGKILL the runner and reap it.
    pub async fn kill9(&mut self) {
        self.child
            .start_kill()
            .unwrap_or_else(|e| panic!("kill runner: {e}"));
        within("the killed runner to exit", self.child.wait())
            .await
            .unwrap_or_else(|e| panic!("wait runner: {e}"));
    }
}

/// What the runner sent the client besides responses.
pub enum Seen {
    /// A `session/update`.
    Update(SessionNotification),
    /// A `session/request_permission`, to be answered by the test.
    Permission(
        RequestPermissionRequest,
        Responder<RequestPermissionResponse>,
    ),
    /// An `fs/*` or `terminal/*` request (method, params), answered by the client's [`Host`],
    /// or a `_march/diagnostics` notification.
    Call(String, Value),
}

/// March's `_march/diagnostics` notification, kept as plain JSON (seen as a [`Seen::Call`]).
#[derive(
    Debug, Clone, serde::Serialize, serde::Deserialize, agent_client_protocol::JsonRpcNotification,
)]
#[notification(method = "_march/diagnostics")]
pub struct MarchDiagnostics {
    #[serde(flatten)]
    pub params: serde_json::Map<String, Value>,
}

/// March's `_march/session/branch` notification, kept as plain JSON (seen as a
/// [`Seen::Call`]).
#[derive(
    Debug, Clone, serde::Serialize, serde::Deserialize, agent_client_protocol::JsonRpcNotification,
)]
#[notification(method = "_march/session/branch")]
pub struct MarchBranch {
    #[serde(flatten)]
    pub params: serde_json::Map<String, Value>,
}

/// March's `_march/session/queue_changed` notification, kept as plain JSON (seen as a
/// [`Seen::Call`]).
#[derive(
    Debug, Clone, serde::Serialize, serde::Deserialize, agent_client_protocol::JsonRpcNotification,
)]
#[notification(method = "_march/session/queue_changed")]
pub struct MarchQueueChanged {
    #[serde(flatten)]
    pub params: serde_json::Map<String, Value>,
}

/// The client side of one runner connection.
pub struct AcpClient {
    pub cx: ConnectionTo<Agent>,
    /// The runner's `initialize` answer.
    pub init: Option<InitializeResponse>,
    events: mpsc::UnboundedReceiver<Seen>,
    /// Every update received so far, in order.
    pub updates: Vec<SessionNotification>,
    /// Every `fs/*` and `terminal/*` request received so far, in order.
    pub calls: Vec<(String, Value)>,
    /// Serves those requests.
    pub host: Host,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), Error>>>,
}

impl AcpClient {
    /// Connect over the runner's pipes (taken from `runner`).
    pub async fn connect(runner: &mut Runner) -> AcpClient {
        let stdin = runner.stdin.take().unwrap_or_else(|| panic!("stdin taken"));
        let stdout = runner
            .stdout
            .take()
            .unwrap_or_else(|| panic!("stdout taken"));
        let (tx, events) = mpsc::unbounded_channel();
        let (cx_tx, cx_rx) = oneshot::channel();
        let (stop, stop_rx) = oneshot::channel::<()>();
        let updates_tx = tx.clone();
        let host = Host::new(tx.clone());
        let client_host = host.clone();
        let task = tokio::spawn(async move {
            Client
                .v1()
                .on_receive_request(
                    {
                        let host = host.clone();
                        async move |r: WriteTextFileRequest,
                                    responder: Responder<WriteTextFileResponse>,
                                    _cx| {
                            host.log(
                                "fs/write_text_file",
                                serde_json::to_value(&r).unwrap_or_default(),
                            );
                            responder.respond_with_result(host.write(&r))
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    {
                        let host = host.clone();
                        async move |r: CreateTerminalRequest,
                                    responder: Responder<CreateTerminalResponse>,
                                    _cx| {
                            host.log(
                                "terminal/create",
                                serde_json::to_value(&r).unwrap_or_default(),
                            );
                            responder.respond_with_result(host.create(&r))
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    {
                        let host = host.clone();
                        async move |r: TerminalOutputRequest,
                                    responder: Responder<TerminalOutputResponse>,
                                    _cx| {
                            host.log(
                                "terminal/output",
                                serde_json::to_value(&r).unwrap_or_default(),
                            );
                            responder.respond_with_result(host.output(&r.terminal_id.0))
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    {
                        let host = host.clone();
                        async move |r: WaitForTerminalExitRequest,
                                    responder: Responder<WaitForTerminalExitResponse>,
                                    cx: ConnectionTo<Agent>| {
                            host.log(
                                "terminal/wait_for_exit",
                                serde_json::to_value(&r).unwrap_or_default(),
                            );
                            let exit = host.exit_of(&r.terminal_id.0);
                            // Off the dispatch loop: the command may run for a long time.
                            cx.spawn(async move {
                                responder.respond_with_result(match exit {
                                    Ok(mut exit) => {
                                        let status = exit
                                            .wait_for(Option::is_some)
                                            .await
                                            .map(|s| s.clone().unwrap_or_default())
                                            .unwrap_or_default();
                                        Ok(WaitForTerminalExitResponse::new(status))
                                    }
                                    Err(e) => Err(e),
                                })
                            })
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    {
                        let host = host.clone();
                        async move |r: KillTerminalRequest,
                                    responder: Responder<KillTerminalResponse>,
                                    _cx| {
                            host.log(
                                "terminal/kill",
                                serde_json::to_value(&r).unwrap_or_default(),
                            );
                            let killed = host.kill(&r.terminal_id.0);
                            responder
                                .respond_with_result(killed.map(|()| KillTerminalResponse::new()))
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    {
                        let host = host.clone();
                        async move |r: ReleaseTerminalRequest,
                                    responder: Responder<ReleaseTerminalResponse>,
                                    _cx| {
                            host.log(
                                "terminal/release",
                                serde_json::to_value(&r).unwrap_or_default(),
                            );
                            let released = host.release(&r.terminal_id.0);
                            responder.respond_with_result(
                                released.map(|()| ReleaseTerminalResponse::new()),
                            )
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_notification(
                    async move |n: SessionNotification, _cx| {
                        let _ = updates_tx.send(Seen::Update(n));
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_notification(
                    {
                        let tx = tx.clone();
                        async move |n: MarchDiagnostics, _cx| {
                            let params = Value::Object(n.params);
                            let _ = tx.send(Seen::Call("_march/diagnostics".into(), params));
                            Ok(())
                        }
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_notification(
                    {
                        let tx = tx.clone();
                        async move |n: MarchQueueChanged, _cx| {
                            let params = Value::Object(n.params);
                            let method = "_march/session/queue_changed".to_string();
                            let _ = tx.send(Seen::Call(method, params));
                            Ok(())
                        }
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_notification(
                    {
                        let tx = tx.clone();
                        async move |n: MarchBranch, _cx| {
                            let params = Value::Object(n.params);
                            let _ = tx.send(Seen::Call("_march/session/branch".into(), params));
                            Ok(())
                        }
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_request(
                    async move |r: RequestPermissionRequest,
                                responder: Responder<RequestPermissionResponse>,
                                _cx| {
                        let _ = tx.send(Seen::Permission(r, responder));
                        Ok(())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .connect_with(
                    ByteStreams::new(stdin.compat_write(), stdout.compat()),
                    async move |cx: ConnectionTo<Agent>| {
                        let _ = cx_tx.send(cx);
                        let _ = stop_rx.await;
                        Ok(())
                    },
                )
                .await
        });
        // The connection hands its context out as soon as it starts.
        let cx = within("the ACP connection", cx_rx)
            .await
            .unwrap_or_else(|e| panic!("no ACP connection: {e}"));
        AcpClient {
            cx,
            init: None,
            events,
            updates: Vec::new(),
            calls: Vec::new(),
            host: client_host,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Close the connection (the runner sees EOF on stdin).
    pub async fn close(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = within("the client connection to close", task).await;
        }
    }

    pub async fn initialize(&self) -> InitializeResponse {
        self.initialize_offering(ClientCapabilities::new()).await
    }

    pub async fn initialize_offering(&self, caps: ClientCapabilities) -> InitializeResponse {
        within(
            "initialize",
            self.cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task(),
        )
        .await
        .unwrap_or_else(|e| panic!("initialize failed: {e}"))
    }

    pub async fn new_session(&self, cwd: &Path) -> NewSessionResponse {
        within(
            "session/new",
            self.cx
                .send_request(NewSessionRequest::new(cwd))
                .block_task(),
        )
        .await
        .unwrap_or_else(|e| panic!("session/new failed: {e}"))
    }

    /// Send a text prompt; the response arrives on the returned task.
    pub fn prompt(
        &self,
        session: &SessionId,
        text: &str,
    ) -> JoinHandle<Result<PromptResponse, Error>> {
        self.prompt_blocks(session, vec![ContentBlock::Text(TextContent::new(text))])
    }

    /// Send a prompt of `blocks`; the response arrives on the returned task.
    pub fn prompt_blocks(
        &self,
        session: &SessionId,
        blocks: Vec<ContentBlock>,
    ) -> JoinHandle<Result<PromptResponse, Error>> {
        let sent = self
            .cx
            .send_request(PromptRequest::new(session.clone(), blocks));
        tokio::spawn(sent.block_task())
    }

    /// The next event (update or permission request); updates are also kept in `updates`.
    pub async fn next(&mut self) -> Seen {
        let seen = within("an event from the runner", self.events.recv())
            .await
            .unwrap_or_else(|| panic!("the connection closed"));
        match &seen {
            Seen::Update(n) => self.updates.push(n.clone()),
            Seen::Call(method, params) => self.calls.push((method.clone(), params.clone())),
            Seen::Permission(..) => {}
        }
        seen
    }

    /// Wait for the client to receive an `fs/*` or `terminal/*` request with this method; a
    /// permission request on the way fails the test. Returns its params.
    pub async fn wait_call(&mut self, method: &str) -> Value {
        loop {
            match self.next().await {
                Seen::Call(m, params) if m == method => return params,
                Seen::Permission(r, _) => panic!("unexpected permission request {r:?}"),
                _ => {}
            }
        }
    }

    /// The methods of the `fs/*` and `terminal/*` requests received so far.
    pub fn call_methods(&self) -> Vec<&str> {
        self.calls.iter().map(|(m, _)| m.as_str()).collect()
    }

    /// Wait for an update matching `pred`; a permission request on the way fails the test.
    pub async fn wait_update(&mut self, pred: impl Fn(&SessionUpdate) -> bool) -> SessionUpdate {
        loop {
            match self.next().await {
                Seen::Update(n) if pred(&n.update) => return n.update,
                Seen::Update(_) | Seen::Call(..) => {}
                Seen::Permission(r, _) => panic!("unexpected permission request {r:?}"),
            }
        }
    }

    /// Wait for a permission request (updates on the way are kept).
    pub async fn wait_permission(
        &mut self,
    ) -> (
        RequestPermissionRequest,
        Responder<RequestPermissionResponse>,
    ) {
        loop {
            if let Seen::Permission(r, responder) = self.next().await {
                return (r, responder);
            }
        }
    }

    /// Updates already received, without waiting (those sent before a response arrived).
    pub fn drain(&mut self) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        while let Ok(seen) = self.events.try_recv() {
            match seen {
                Seen::Update(n) => {
                    self.updates.push(n.clone());
                    out.push(n.update);
                }
                Seen::Call(method, params) => self.calls.push((method, params)),
                Seen::Permission(r, _) => panic!("unexpected permission request {r:?}"),
            }
        }
        out
    }
}

/// Answer a permission request with the option of this kind.
pub fn choose(
    request: &RequestPermissionRequest,
    responder: Responder<RequestPermissionResponse>,
    kind: PermissionOptionKind,
) {
    let option = request
        .options
        .iter()
        .find(|o| o.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} option in {request:?}"));
    responder
        .respond(RequestPermissionResponse::new(
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                option.option_id.clone(),
            )),
        ))
        .unwrap_or_else(|e| panic!("answer permission: {e}"));
}

/// Answer a permission request `cancelled`.
pub fn cancel_permission(responder: Responder<RequestPermissionResponse>) {
    let _ = responder.respond(RequestPermissionResponse::new(
        RequestPermissionOutcome::Cancelled,
    ));
}

/// The `sessionUpdate` tag of an update, and its status for tool call updates.
pub fn describe(update: &SessionUpdate) -> String {
    let v = serde_json::to_value(update).unwrap_or_default();
    let kind = v["sessionUpdate"].as_str().unwrap_or("?").to_string();
    match v["status"].as_str() {
        Some(status) => format!("{kind} {status}"),
        None => kind,
    }
}

/// The text of a message or thought chunk.
pub fn chunk_text(update: &SessionUpdate) -> Option<String> {
    match update {
        SessionUpdate::AgentMessageChunk(c)
        | SessionUpdate::AgentThoughtChunk(c)
        | SessionUpdate::UserMessageChunk(c) => match &c.content {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        },
        _ => None,
    }
}

// Helpers shared by the ACP test files.

pub fn write_call(id: &str, path: &str, content: &str) -> Event {
    let head = format!(r#"{{"path":"{path}","#);
    let tail = format!(r#""content":"{content}"}}"#);
    Event::tool_call(id, "write", &[&head, &tail])
}

pub fn bash_call(id: &str, command: &str) -> Event {
    Event::tool_call(id, "bash", &[&json!({ "command": command }).to_string()])
}

pub fn is_status(update: &SessionUpdate, status: ToolCallStatus) -> bool {
    matches!(update, SessionUpdate::ToolCallUpdate(u) if u.fields.status == Some(status))
}

pub fn is_text(update: &SessionUpdate, text: &str) -> bool {
    matches!(update, SessionUpdate::AgentMessageChunk(_))
        && chunk_text(update).as_deref() == Some(text)
}

/// The only session file under `dir`.
pub fn session_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

pub fn file_of(dir: &Path, id: &SessionId) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(&format!("_{}.jsonl", id.0)))
        .unwrap_or_else(|| panic!("no file for session {}", id.0))
}

/// The roles of the messages in a session file; the file must parse cleanly.
pub fn roles(path: &Path) -> Vec<String> {
    let (store, report) =
        SessionStore::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    assert!(report.skipped.is_empty(), "{report:?}");
    store
        .entries()
        .iter()
        .filter_map(|e| e.message())
        .map(|m| m.role().to_string())
        .collect()
}

/// The updates that replay conversation (the command list is sent after a load's answer).
pub fn conversation(updates: Vec<SessionUpdate>) -> Vec<SessionUpdate> {
    updates
        .into_iter()
        .filter(|u| !matches!(u, SessionUpdate::AvailableCommandsUpdate(_)))
        .collect()
}

/// The messages a model request carried.
pub fn request_messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().cloned().unwrap_or_default()
}

pub async fn set_option(
    client: &AcpClient,
    session: &SessionId,
    id: &str,
    value: &str,
) -> Result<Value, agent_client_protocol::Error> {
    let response = within(
        "session/set_config_option",
        client
            .cx
            .send_request(SetSessionConfigOptionRequest::new(
                session.clone(),
                SessionConfigId::new(id),
                SessionConfigValueId::new(value),
            ))
            .block_task(),
    )
    .await?;
    Ok(serde_json::to_value(response.config_options).unwrap_or_default())
}

pub async fn list(client: &AcpClient, cwd: Option<PathBuf>) -> Vec<SessionInfo> {
    let request = match cwd {
        Some(cwd) => ListSessionsRequest::new().cwd(cwd),
        None => ListSessionsRequest::new(),
    };
    within("session/list", client.cx.send_request(request).block_task())
        .await
        .unwrap_or_else(|e| panic!("session/list failed: {e}"))
        .sessions
}

pub async fn close(client: &AcpClient, id: &SessionId) -> Result<(), agent_client_protocol::Error> {
    let sent = client.cx.send_request(CloseSessionRequest::new(id.clone()));
    within("session/close", sent.block_task()).await.map(drop)
}

pub async fn delete(
    client: &AcpClient,
    id: &SessionId,
) -> Result<(), agent_client_protocol::Error> {
    let sent = client
        .cx
        .send_request(DeleteSessionRequest::new(id.clone()));
    within("session/delete", sent.block_task()).await.map(drop)
}

/// Send `text` as a prompt and expect the turn to end normally.
pub async fn prompt_ok(client: &AcpClient, id: &SessionId, text: &str) {
    let r = within("prompt", client.prompt(id, text))
        .await
        .unwrap_or_else(|e| panic!("prompt failed: {e:?}"))
        .unwrap_or_else(|e| panic!("prompt failed: {e:?}"));
    assert_eq!(r.stop_reason, StopReason::EndTurn);
}
