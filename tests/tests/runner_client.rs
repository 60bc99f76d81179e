//! The Runner Process Client against the real `march runner`: a supervised runner killed with
//! SIGKILL is restarted and its session loaded again; crashes mid-turn lose nothing that was
//! saved; restarts are bounded; the process group dies with the client.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns abort on setup failure

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use march_e2e::{ScriptedServerProcess, march_bin};
use march_runner::client::schema::{
    ContentBlock, ContentChunk, NewSessionRequest, PromptRequest, SessionId, SessionUpdate,
    StopReason,
};
use march_runner::client::{
    ClientError, ConnectOptions, EventReceiver, RestartPolicy, RunnerCommand, RunnerEvent,
    RunnerExit, SupervisedRunner,
};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);

/// MARCH_HOME pointing at a scripted model server, and a project directory.
struct Setup {
    dir: tempfile::TempDir,
    server: ScriptedServerProcess,
}

impl Setup {
    fn new(turns: Value) -> Setup {
        let server = ScriptedServerProcess::start(&json!({ "turns": turns }));
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "march", "project"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let config = format!(
            "default_model = \"scripted/m\"\n\n[providers.scripted]\napi = \"openai-completions\"\n\
             base_url = \"{}\"\napi_key_env = \"SCRIPTED_API_KEY\"\n\n\
             [[providers.scripted.models]]\nid = \"m\"\n",
            server.base_url()
        );
        std::fs::write(dir.path().join("march/config.toml"), config).unwrap();
        Setup { dir, server }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// `march runner` in the project with a clean environment.
    fn runner(&self) -> RunnerCommand {
        self.with_env(RunnerCommand::new(march_bin()).arg("runner"))
    }

    fn with_env(&self, command: RunnerCommand) -> RunnerCommand {
        let mut command = command
            .cwd(self.project())
            .env("HOME", self.dir.path().join("home"))
            .env("MARCH_HOME", self.dir.path().join("march"))
            .env("SCRIPTED_API_KEY", "test-key");
        // Nothing else from the test's environment leaks into the runner.
        for (name, _) in std::env::vars_os() {
            if !["PATH", "HOME", "MARCH_HOME", "SCRIPTED_API_KEY"]
                .iter()
                .any(|keep| name == *keep)
            {
                command = command.env_remove(name);
            }
        }
        command
    }
}

fn policy() -> RestartPolicy {
    RestartPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        // Never "healthy" within a test: consecutive crashes count up.
        healthy_after: Duration::from_secs(3600),
    }
}

fn text_turn(text: &str) -> Value {
    json!({"kind": "stream", "events": [{"type": "text", "text": text}]})
}

fn kill9(pid: u32) {
    let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
}

/// The process state letter from `/proc/<pid>/stat`, or `None` once the pid is gone.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.trim_start().chars().next()
}

/// Waits (generously) until our child `pid` is gone and reaped.
async fn wait_reaped(pid: u32) -> bool {
    for _ in 0..1200 {
        if proc_state(pid).is_none() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Skips events until `pick` returns something.
async fn wait_for<T>(
    events: &mut EventReceiver,
    mut pick: impl FnMut(&RunnerEvent) -> Option<T>,
) -> T {
    let wait = async {
        loop {
            let event = events.recv().await.expect("the event stream ended");
            if let Some(found) = pick(&event) {
                return found;
            }
        }
    };
    tokio::time::timeout(LIMIT, wait)
        .await
        .expect("timed out waiting for an event")
}

/// `(kind, text)` of a text chunk update.
fn chunk(event: &RunnerEvent) -> Option<(&'static str, String)> {
    let RunnerEvent::Update(notification) = event else {
        return None;
    };
    let (kind, chunk) = match &notification.update {
        SessionUpdate::UserMessageChunk(chunk) => ("user", chunk),
        SessionUpdate::AgentMessageChunk(chunk) => ("agent", chunk),
        _ => return None,
    };
    match chunk {
        ContentChunk {
            content: ContentBlock::Text(text),
            ..
        } => Some((kind, text.text.clone())),
        _ => None,
    }
}

/// Collects the text chunks of a reopen replay until the session is reported reopened.
async fn replay_until_reopened(
    events: &mut EventReceiver,
    session: &SessionId,
) -> Vec<(&'static str, String)> {
    let mut replay = Vec::new();
    wait_for(events, |event| {
        if let Some(chunk) = chunk(event) {
            replay.push(chunk);
        }
        match event {
            RunnerEvent::SessionReopened { session_id, error } if session_id == session => {
                assert_eq!(error, &None, "reopening failed");
                Some(())
            }
            _ => None,
        }
    })
    .await;
    // Consecutive chunks of one message are joined.
    let mut joined: Vec<(&'static str, String)> = Vec::new();
    for (kind, text) in replay {
        match joined.last_mut() {
            Some((last, so_far)) if *last == kind => so_far.push_str(&text),
            _ => joined.push((kind, text)),
        }
    }
    joined
}

fn prompt(session: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(session.clone(), vec![text.into()])
}

async fn start(command: RunnerCommand) -> (SupervisedRunner, EventReceiver) {
    tokio::time::timeout(
        LIMIT,
        SupervisedRunner::start(command, ConnectOptions::default(), policy()),
    )
    .await
    .expect("start timed out")
    .expect("start failed")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_runner_is_restarted_and_its_session_loaded_again() {
    let setup = Setup::new(json!([
        text_turn("First answer."),
        text_turn("Second answer.")
    ]));
    let (runner, mut events) = start(setup.runner()).await;
    let connection = runner.connection().await.unwrap();
    let session = connection
        .new_session(NewSessionRequest::new(setup.project()))
        .await
        .unwrap()
        .session_id;
    let response = connection.prompt(prompt(&session, "hello")).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);

    let first_pid = runner.pid().unwrap();
    kill9(first_pid);
    let (exit, _) = wait_for(&mut events, |event| match event {
        RunnerEvent::Exited { exit, stderr_tail } => Some((*exit, stderr_tail.clone())),
        _ => None,
    })
    .await;
    assert_eq!(exit, RunnerExit::Signal(9));
    let attempt = wait_for(&mut events, |event| match event {
        RunnerEvent::Restarted { attempt, .. } => Some(*attempt),
        _ => None,
    })
    .await;
    assert_eq!(attempt, 1);
    let replay = replay_until_reopened(&mut events, &session).await;
    assert_eq!(
        replay,
        [
            ("user", "hello".to_string()),
            ("agent", "First answer.".to_string())
        ]
    );
    assert!(
        wait_reaped(first_pid).await,
        "the killed runner was not reaped"
    );

    // The new runner carries on the same conversation.
    let connection = runner.connection().await.unwrap();
    let second_pid = runner.pid().unwrap();
    assert_ne!(second_pid, first_pid);
    let response = connection.prompt(prompt(&session, "again")).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let requests = setup.server.recorded_requests();
    assert_eq!(requests.len(), 2);
    let history = requests[1]["body"]["messages"].to_string();
    assert!(
        history.contains("hello") && history.contains("First answer.") && history.contains("again"),
        "{history}"
    );

    // A second crash in a row counts as the second attempt.
    kill9(second_pid);
    let attempt = wait_for(&mut events, |event| match event {
        RunnerEvent::Restarted { attempt, .. } => Some(*attempt),
        _ => None,
    })
    .await;
    assert_eq!(attempt, 2);

    let third_pid = runner
        .connection()
        .await
        .map(|_| runner.pid())
        .unwrap()
        .unwrap();
    runner.shutdown().await;
    assert!(
        wait_reaped(third_pid).await,
        "shutdown left the runner running"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_mid_turn_keeps_every_saved_message() {
    // The model starts answering, then stalls until the runner is killed.
    let setup = Setup::new(json!([{"kind": "stream", "events": [
        {"type": "text", "text": "Partial"},
        {"type": "pause", "ms": 120000}
    ]}]));
    let (runner, mut events) = start(setup.runner()).await;
    let connection = runner.connection().await.unwrap();
    let session = connection
        .new_session(NewSessionRequest::new(setup.project()))
        .await
        .unwrap()
        .session_id;
    let turn = tokio::spawn({
        let connection = Arc::clone(&connection);
        let request = prompt(&session, "remember this question");
        async move { connection.prompt(request).await }
    });
    // The streamed text reached us, so the user message was saved before the model call.
    wait_for(&mut events, |event| {
        chunk(event).filter(|(kind, text)| *kind == "agent" && text == "Partial")
    })
    .await;
    kill9(runner.pid().unwrap());
    let result = tokio::time::timeout(LIMIT, turn).await.unwrap().unwrap();
    assert!(
        matches!(result, Err(ClientError::Disconnected)),
        "{result:?}"
    );
    let replay = replay_until_reopened(&mut events, &session).await;
    assert_eq!(
        replay.first(),
        Some(&("user", "remember this question".to_string()))
    );
    // The session file still parses: a fresh load (on the restarted runner) works.
    let connection = runner.connection().await.unwrap();
    assert!(
        connection
            .open_sessions()
            .iter()
            .any(|s| s.session_id == session)
    );
    drop(connection);
    drop(runner);
}

#[tokio::test(flavor = "multi_thread")]
async fn restarts_are_bounded() {
    let setup = Setup::new(json!([]));
    // The real runner the first time; every restart fails before initialize.
    let marker = setup.dir.path().join("started-once");
    let script = format!(
        "if [ -e '{marker}' ]; then echo 'broken on restart' >&2; exit 7; fi; \
         touch '{marker}'; exec '{march}' runner",
        marker = marker.display(),
        march = march_bin().display(),
    );
    let command = setup.with_env(RunnerCommand::new("sh").arg("-c").arg(script));
    let (runner, mut events) = start(command).await;
    kill9(runner.pid().unwrap());
    let (attempts, reason) = wait_for(&mut events, |event| match event {
        RunnerEvent::GaveUp { attempts, reason } => Some((*attempts, reason.clone())),
        _ => None,
    })
    .await;
    assert_eq!(attempts, policy().max_attempts);
    assert!(reason.contains("broken on restart"), "{reason}");
    match runner.connection().await {
        Err(ClientError::GaveUp { attempts, .. }) => assert_eq!(attempts, 3),
        other => panic!("expected GaveUp, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_supervised_runner_kills_it() {
    let setup = Setup::new(json!([]));
    let (runner, _events) = start(setup.runner()).await;
    let pid = runner.pid().unwrap();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    drop(runner);
    assert!(wait_reaped(pid).await, "the runner outlived its client");
}
