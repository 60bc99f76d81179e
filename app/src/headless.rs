//! `march -p PROMPT`: one turn through a runner child (the same boundary the workspace uses),
//! printed to stdout as it streams: the answer text, or every session update as a JSON line.
//!
//! Nobody is there to answer permission requests, so tool calls that would ask are rejected
//! (with a note on stderr) unless `--yolo` switches the session's permission mode to `yolo`.
//! With `--schema FILE` the final answer must be JSON valid against that schema (March's
//! `_meta.march.responseSchema` of `session/prompt`): only the value is printed, and a run
//! whose answers never match exits 1 with the last validation error.
//!
//! Exit codes: 0 end of turn, 1 error (provider, runner, refusal, no valid structured answer),
//! 2 usage, 3 token or turn limit, 130 cancelled (Ctrl-C sends `session/cancel` and waits for
//! the turn to end).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use march_runner::client::schema::{
    ContentBlock, ContentChunk, PermissionOptionKind, PromptRequest, PromptResponse, SessionId,
    SessionNotification, SessionUpdate, StopReason,
};
use march_runner::client::{
    AgentRequest, ClientError, ConnectOptions, EventReceiver, OpenError, Pending, RpcError,
    RunnerClient, RunnerCommand, RunnerEvent, SchemaRequest, SessionSettings, SessionTarget,
    Setting, StructuredResult, is_retry_chunk,
};
use serde_json::json;
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::cli::{HeadlessArgs, OutputFormat};

/// The turn ended normally.
const EXIT_OK: u8 = 0;
/// A provider error, a runner failure or a refusal.
const EXIT_ERROR: u8 = 1;
/// Bad arguments (an unknown model, a missing directory, an empty prompt).
const EXIT_USAGE: u8 = 2;
/// The turn hit the token or turn-request limit.
const EXIT_LIMIT: u8 = 3;
/// Cancelled with Ctrl-C.
const EXIT_CANCELLED: u8 = 130;

/// The permission mode that lets every tool call run.
const YOLO: &str = "yolo";

/// How long the runner gets to exit after its stdin closes.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Runs `march -p`; returns the process exit code.
pub fn run(args: &HeadlessArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let code = runtime.block_on(run_turn(args));
    Ok(ExitCode::from(code))
}

/// What ends a headless run early.
pub(crate) enum Failure {
    /// The user asked for something impossible (exit 2).
    Usage(String),
    /// Something broke (exit 1).
    Error(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Usage(m) | Failure::Error(m) => f.write_str(m),
        }
    }
}

async fn run_turn(args: &HeadlessArgs) -> u8 {
    let format = args.output.unwrap_or_default();
    let mut printer = Printer::new(format);
    let prompt = args.print.as_deref().unwrap_or_default();
    if prompt.trim().is_empty() {
        return fail(
            &mut printer,
            None,
            Failure::Usage("the prompt is empty".into()),
        );
    }
    let schema = match args
        .schema
        .as_deref()
        .map(|path| read_schema(path, args.schema_retries))
        .transpose()
    {
        Ok(schema) => schema,
        Err(failure) => return fail(&mut printer, None, failure),
    };
    printer.structured = schema.is_some();
    let cwd = match working_dir(args.cwd.as_deref()) {
        Ok(cwd) => cwd,
        Err(failure) => return fail(&mut printer, None, failure),
    };
    let command = match runner_command(&cwd) {
        Ok(command) => command,
        Err(failure) => return fail(&mut printer, None, failure),
    };
    // From here on Ctrl-C is ours: the runner is in its own process group and never sees it.
    let mut interrupts = match signal(SignalKind::interrupt()) {
        Ok(interrupts) => Some(interrupts),
        Err(error) => {
            tracing::warn!("cannot listen for Ctrl-C: {error}");
            None
        }
    };
    let options = ConnectOptions::default();
    let spawn = RunnerClient::spawn(&command, &options);
    let started = tokio::select! {
        started = spawn => started,
        Some(()) = recv_interrupt(&mut interrupts) => return interrupted(&mut printer),
    };
    let (client, mut events) = match started {
        Ok(started) => started,
        Err(error) => {
            let failure = Failure::Error(format!("cannot start the runner: {error}"));
            return fail(&mut printer, None, failure);
        }
    };
    let opened = tokio::select! {
        opened = open_session(&client, &cwd, args) => opened,
        // Dropping the client kills the runner.
        Some(()) = recv_interrupt(&mut interrupts) => return interrupted(&mut printer),
    };
    let session = match opened {
        Ok(session) => session,
        Err(failure) => {
            // Whatever the runner said while setting up is still worth showing.
            drain(&mut events, &mut printer, args.yolo);
            let code = fail(&mut printer, None, failure);
            client.shutdown(SHUTDOWN_GRACE).await;
            return code;
        }
    };
    let turn = Turn {
        client: &client,
        session: &session,
        yolo: args.yolo,
        schema: schema.as_ref(),
    };
    match turn
        .drive(prompt, &mut events, &mut printer, &mut interrupts)
        .await
    {
        Ended::Turn(code) => {
            client.shutdown(SHUTDOWN_GRACE).await;
            code
        }
        // Dropping the client kills the runner's group at once.
        Ended::Abandoned => EXIT_CANCELLED,
    }
}

/// How [`Turn::drive`] ended.
enum Ended {
    /// The turn ended (or failed) with this exit code.
    Turn(u8),
    /// A second Ctrl-C: quit without waiting for anything.
    Abandoned,
}

/// Ctrl-C before the turn started: nothing to cancel yet.
fn interrupted(printer: &mut Printer) -> u8 {
    printer.finish();
    eprintln!("march: interrupted");
    EXIT_CANCELLED
}

/// The session's working directory: `--cwd` or the current one, made absolute.
pub(crate) fn working_dir(cwd: Option<&Path>) -> Result<PathBuf, Failure> {
    let dir = match cwd {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| Failure::Error(format!("cannot read the current directory: {e}")))?,
    };
    let dir = dir
        .canonicalize()
        .map_err(|e| Failure::Usage(format!("cannot use {} as the cwd: {e}", dir.display())))?;
    if !dir.is_dir() {
        return Err(Failure::Usage(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    Ok(dir)
}

/// This same binary as `march runner`, in `cwd`, with the inherited environment.
pub(crate) fn runner_command(cwd: &Path) -> Result<RunnerCommand, Failure> {
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Error(format!("cannot find the march executable: {e}")))?;
    // Headless runs have no workspace, even when started from inside one.
    Ok(RunnerCommand::new(exe)
        .arg("runner")
        .cwd(cwd)
        .env_remove(march_wire::rendezvous::WORKSPACE_VAR))
}

/// `session/new` in `cwd`, then the model and permission mode asked for; any failure is
/// fatal here (a one-shot run must not quietly use another model).
async fn open_session(
    client: &RunnerClient,
    cwd: &Path,
    args: &HeadlessArgs,
) -> Result<SessionId, Failure> {
    let settings = SessionSettings {
        model: args.model.clone(),
        permissions: args.yolo.then(|| YOLO.to_string()),
    };
    match march_runner::client::open_session(
        client.connection(),
        cwd,
        SessionTarget::New,
        &settings,
    )
    .await
    {
        Ok(opened) => Ok(opened.session_id),
        Err(OpenError::Open(error)) => {
            let error = client.explain(error).await;
            Err(Failure::Error(format!("cannot open a session: {error}")))
        }
        Err(OpenError::NoOption { setting, .. }) => Err(Failure::Error(match setting {
            Setting::Model => "the runner offers no model choice".into(),
            Setting::Permissions => "the runner has no permissions option for --yolo".into(),
        })),
        Err(OpenError::Refused {
            setting,
            value,
            error,
            ..
        }) => {
            let error = client.explain(error).await;
            Err(match (setting, error) {
                // The runner says which models it offers.
                (Setting::Model, ClientError::Rpc(error))
                    if error.code == RpcError::invalid_params().code =>
                {
                    Failure::Usage(format!("--model {value}: {}", ClientError::Rpc(error)))
                }
                (Setting::Model, other) => {
                    Failure::Error(format!("cannot select model {value}: {other}"))
                }
                (Setting::Permissions, other) => {
                    Failure::Error(format!("cannot switch permissions to yolo: {other}"))
                }
            })
        }
    }
}

/// The JSON Schema in `path`, checked before any runner starts.
fn read_schema(path: &Path, retries: Option<u32>) -> Result<SchemaRequest, Failure> {
    let shown = path.display();
    let text = std::fs::read(path)
        .map_err(|e| Failure::Usage(format!("cannot read the schema {shown}: {e}")))?;
    let schema: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| Failure::Usage(format!("the schema {shown} is not JSON: {e}")))?;
    SchemaRequest::new(schema, retries).map_err(|e| Failure::Usage(format!("{shown}: {e}")))
}

/// The turn being run.
struct Turn<'a> {
    client: &'a RunnerClient,
    session: &'a SessionId,
    yolo: bool,
    /// The schema the final answer must match.
    schema: Option<&'a SchemaRequest>,
}

impl Turn<'_> {
    /// Sends the prompt and prints what streams back until the turn ends.
    async fn drive(
        &self,
        prompt: &str,
        events: &mut EventReceiver,
        printer: &mut Printer,
        interrupts: &mut Option<Signal>,
    ) -> Ended {
        let (client, session, yolo) = (self.client, self.session, self.yolo);
        let connection = client.connection();
        let mut request = PromptRequest::new(session.clone(), vec![ContentBlock::from(prompt)]);
        if let Some(schema) = self.schema {
            request = request.meta(schema.prompt_meta());
        }
        let turn = connection.prompt(request);
        tokio::pin!(turn);
        let mut cancelling = false;
        let result = loop {
            tokio::select! {
                biased;
                Some(event) = events.recv() => handle_event(event, printer, yolo),
                Some(()) = recv_interrupt(interrupts) => {
                    if cancelling {
                        printer.finish();
                        return Ended::Abandoned;
                    }
                    cancelling = true;
                    eprintln!("march: cancelling (press Ctrl-C again to quit at once)");
                    if let Err(error) = connection.cancel(session.clone()) {
                        tracing::warn!("session/cancel failed: {error}");
                    }
                }
                result = &mut turn => break result,
            }
            if printer.broken && !cancelling {
                // Nobody reads our output any more (a closed pipe): stop the turn.
                cancelling = true;
                let _ = connection.cancel(session.clone());
            }
        };
        // Every update of the turn is queued before its answer; print the rest.
        drain(events, printer, yolo);
        Ended::Turn(match result {
            Ok(response) => {
                printer.result(session, &response);
                if let Some(limit) = limit_message(&response) {
                    printer.note(&format!("the turn stopped at a limit: {limit}"));
                    EXIT_LIMIT
                } else if self.schema.is_some() && response.stop_reason == StopReason::EndTurn {
                    structured_exit(printer, &response)
                } else {
                    exit_code(&response.stop_reason)
                }
            }
            Err(error) => {
                let error = client.explain(error).await;
                fail(printer, Some(session), Failure::Error(error.to_string()))
            }
        })
    }
}

/// Prints a structured answer's value (text mode; the JSON result line has it already), or
/// says why there is none: exit 0 or 1.
fn structured_exit(printer: &mut Printer, response: &PromptResponse) -> u8 {
    match StructuredResult::of(response) {
        Some(StructuredResult {
            value: Some(value), ..
        }) => {
            if printer.format == OutputFormat::Text {
                printer.write(format!("{value}\n").as_bytes());
            }
            EXIT_OK
        }
        Some(StructuredResult { error, answers, .. }) => {
            let error = error.unwrap_or_else(|| "no answer".into());
            let error = march_panes::sanitize::sanitize_output(&error);
            let plural = if answers == 1 { "" } else { "s" };
            eprintln!("march: no valid answer after {answers} answer{plural}; the last: {error}");
            EXIT_ERROR
        }
        None => {
            eprintln!("march: the runner sent no structured output (is it an older March?)");
            EXIT_ERROR
        }
    }
}

async fn recv_interrupt(interrupts: &mut Option<Signal>) -> Option<()> {
    match interrupts {
        Some(interrupts) => interrupts.recv().await,
        None => std::future::pending().await,
    }
}

fn drain(events: &mut EventReceiver, printer: &mut Printer, yolo: bool) {
    while let Ok(event) = events.try_recv() {
        handle_event(event, printer, yolo);
    }
}

fn handle_event(event: RunnerEvent, printer: &mut Printer, yolo: bool) {
    match event {
        RunnerEvent::Update(notification) => printer.update(&notification),
        RunnerEvent::Request(AgentRequest::Permission(pending)) => {
            answer_permission(pending, printer, yolo);
        }
        // Not advertised in initialize, so not expected; answer rather than leave it hanging.
        RunnerEvent::Request(other) => {
            tracing::warn!(
                method = other.method(),
                "unexpected request from the runner"
            );
            reject_request(other);
        }
        RunnerEvent::Exited { exit, .. } => tracing::info!(%exit, "runner exited"),
        // Only a supervised runner restarts; headless runs one process.
        RunnerEvent::Restarted { .. }
        | RunnerEvent::SessionReopened { .. }
        | RunnerEvent::GaveUp { .. } => {}
        // Not asked for in initialize; headless never moves in the session tree.
        RunnerEvent::Diagnostics(_) | RunnerEvent::Branch(_) => {}
    }
}

/// Headless has no one to ask: reject (yolo allows, for what its gate still asks about).
fn answer_permission(
    pending: Pending<march_runner::client::schema::RequestPermissionRequest>,
    printer: &mut Printer,
    yolo: bool,
) {
    let preferred: &[PermissionOptionKind] = if yolo {
        &[
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ]
    } else {
        &[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    let title = pending
        .request
        .tool_call
        .fields
        .title
        .clone()
        .unwrap_or_else(|| pending.request.tool_call.tool_call_id.to_string());
    let session = pending.session_id().clone();
    let tool_call = serde_json::to_value(&pending.request.tool_call).unwrap_or_default();
    let decision = match pending.select_kind(preferred) {
        Ok(Ok(kind)) if yolo => {
            tracing::info!(?kind, %title, "permission allowed (--yolo)");
            "allowed"
        }
        Ok(Ok(_)) => "rejected",
        // No option of the wanted kind: only `cancelled` is left, which ends the turn.
        Ok(Err(pending)) => {
            let _ = pending.cancel();
            "cancelled"
        }
        Err(error) => {
            tracing::warn!("answering a permission request failed: {error}");
            return;
        }
    };
    if decision != "allowed" {
        printer.note(&format!(
            "{decision} tool call `{title}`: headless mode cannot ask; pass --yolo to allow tool calls"
        ));
    }
    printer.json_line(&json!({
        "type": "permission",
        "sessionId": session,
        "toolCall": tool_call,
        "decision": decision,
    }));
}

fn reject_request(request: AgentRequest) {
    let error = RpcError::method_not_found().data(request.method());
    let _ = match request {
        AgentRequest::Permission(p) => p.fail(error),
        AgentRequest::ReadTextFile(p) => p.fail(error),
        AgentRequest::WriteTextFile(p) => p.fail(error),
        AgentRequest::CreateTerminal(p) => p.fail(error),
        AgentRequest::TerminalOutput(p) => p.fail(error),
        AgentRequest::WaitForTerminalExit(p) => p.fail(error),
        AgentRequest::KillTerminal(p) => p.fail(error),
        AgentRequest::ReleaseTerminal(p) => p.fail(error),
        AgentRequest::Elicitation(p) => p.fail(error),
    };
}

/// The words March's runner gave for a limit that ended the turn (`_meta.march.limit`).
fn limit_message(response: &PromptResponse) -> Option<String> {
    let limit = response.meta.as_ref()?.get("march")?.get("limit")?;
    let text = limit.get("message")?.as_str()?;
    Some(march_panes::sanitize::sanitize_line(text).into_owned())
}

/// The exit status of a turn that stopped for `stop` (said on stderr when not a success).
pub(crate) fn exit_code(stop: &StopReason) -> u8 {
    match stop {
        StopReason::EndTurn => EXIT_OK,
        StopReason::MaxTokens | StopReason::MaxTurnRequests => {
            eprintln!("march: the turn stopped at a limit ({})", stop_name(stop));
            EXIT_LIMIT
        }
        StopReason::Cancelled => EXIT_CANCELLED,
        StopReason::Refusal => {
            eprintln!("march: the model refused to answer");
            EXIT_ERROR
        }
        _ => {
            eprintln!("march: the turn stopped: {}", stop_name(stop));
            EXIT_ERROR
        }
    }
}

/// The wire name of a stop reason (`end_turn`, …).
fn stop_name(stop: &StopReason) -> String {
    match serde_json::to_value(stop) {
        Ok(serde_json::Value::String(name)) => name,
        _ => format!("{stop:?}"),
    }
}

/// Reports a failure on stderr (and as the JSON result line) and returns its exit code.
fn fail(printer: &mut Printer, session: Option<&SessionId>, failure: Failure) -> u8 {
    let (message, code) = match failure {
        Failure::Usage(message) => (message, EXIT_USAGE),
        Failure::Error(message) => (message, EXIT_ERROR),
    };
    printer.finish();
    eprintln!("march: {message}");
    printer.json_line(&json!({
        "type": "result",
        "sessionId": session,
        "stopReason": null,
        "error": message,
    }));
    code
}

/// Writes the run to stdout in the chosen format.
struct Printer {
    format: OutputFormat,
    out: io::Stdout,
    /// Text was printed and the last of it did not end a line.
    open_line: bool,
    /// Text was printed, then a tool ran: the next text starts a new paragraph.
    gap: bool,
    /// Any answer text printed yet.
    printed: bool,
    /// stdout failed (closed pipe): stop writing.
    broken: bool,
    /// The answer is structured output: text mode prints only its value, at the end.
    structured: bool,
}

impl Printer {
    fn new(format: OutputFormat) -> Self {
        Printer {
            format,
            out: io::stdout(),
            open_line: false,
            gap: false,
            printed: false,
            broken: false,
            structured: false,
        }
    }

    fn update(&mut self, notification: &SessionNotification) {
        match self.format {
            OutputFormat::Json => {
                // `type` first, then the notification's own fields (sessionId, update, _meta).
                let mut line = serde_json::Map::new();
                line.insert("type".into(), "update".into());
                if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(notification) {
                    line.extend(fields);
                }
                self.json_line(&serde_json::Value::Object(line));
            }
            OutputFormat::Text => match &notification.update {
                SessionUpdate::AgentMessageChunk(ContentChunk {
                    content: ContentBlock::Text(text),
                    ..
                }) if !self.structured => self.text(&text.text),
                SessionUpdate::UserMessageChunk(chunk) if is_retry_chunk(chunk) => {
                    self.note("the answer did not match the schema; asking again");
                }
                SessionUpdate::ToolCall(_) if self.printed => self.gap = true,
                _ => {}
            },
        }
    }

    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut chunk = String::new();
        if self.gap {
            chunk.push_str(if self.open_line { "\n\n" } else { "\n" });
            self.gap = false;
        }
        chunk.push_str(text);
        self.open_line = !text.ends_with('\n');
        self.printed = true;
        self.write(chunk.as_bytes());
    }

    fn result(&mut self, session: &SessionId, response: &PromptResponse) {
        self.finish();
        let limit = response
            .meta
            .as_ref()
            .and_then(|m| m.get("march")?.get("limit"));
        let mut line = json!({
            "type": "result",
            "sessionId": session,
            "stopReason": response.stop_reason,
        });
        if let Some(limit) = limit {
            line["limit"] = limit.clone();
        }
        if let Some(result) = StructuredResult::of(response) {
            line["structuredOutput"] = serde_json::to_value(result).unwrap_or_default();
        }
        self.json_line(&line);
    }

    /// Ends the text with a newline.
    fn finish(&mut self) {
        if self.open_line {
            self.open_line = false;
            self.write(b"\n");
        }
    }

    /// A note for the human, on stderr (text mode only; JSON mode has its own lines).
    fn note(&mut self, message: &str) {
        if self.format == OutputFormat::Text {
            eprintln!("march: {message}");
        }
    }

    fn json_line(&mut self, value: &serde_json::Value) {
        if self.format == OutputFormat::Json {
            let mut line = value.to_string();
            line.push('\n');
            self.write(line.as_bytes());
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.broken {
            return;
        }
        let mut out = self.out.lock();
        if let Err(error) = out.write_all(bytes).and_then(|()| out.flush()) {
            tracing::warn!("writing to stdout failed: {error}");
            self.broken = true;
        }
    }
}
