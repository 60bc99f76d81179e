//! Errors say what happened: with nothing listening at the configured model server,
//! `march -p` (text and JSON), the agent pane in a real terminal and the gateway's answers
//! say the connection was refused, at which URL and what to check, never that the model
//! refused; `march usage` counts no call, since no model answered.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/gateway.rs"]
mod gateway;
#[path = "support/pty.rs"]
mod pty;

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use gateway::{Gateway, Stream, http};
use pty::{PtyMarch, march_command};
use serde_json::{Value, json};

/// What March says for a refusal it must not claim.
const REFUSAL_WORDS: [&str; 2] = ["refused to answer", "The agent refused"];

/// HOME, MARCH_HOME and a project; the config's model server is a loopback port nothing
/// listens on.
struct Setup {
    dir: tempfile::TempDir,
    base_url: String,
}

impl Setup {
    fn new() -> Setup {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let base_url = format!("http://127.0.0.1:{port}/v1");
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "march", "project"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let config = format!(
            "default_model = \"local/m\"\n\
             [providers.local]\n\
             api = \"openai-completions\"\n\
             base_url = \"{base_url}\"\n\
             [[providers.local.models]]\n\
             id = \"m\"\n"
        );
        std::fs::write(dir.path().join("march/config.toml"), config).unwrap();
        Setup { dir, base_url }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn march_home(&self) -> PathBuf {
        self.dir.path().join("march")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// The URL the requests went to, as the error names it.
    fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// What every report of the failure must say.
    fn refused_connection(&self) -> String {
        format!(
            "connection refused by {}; is the model server running, and is the base URL right?",
            self.endpoint()
        )
    }

    /// `march ARGS` in the project with a clean environment, run to its end.
    fn run(&self, args: &[&str]) -> Output {
        let child = march_command(args, &self.project(), &self.home(), &self.march_home())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_output(child, args)
    }
}

/// Waits (generously: the provider retries a refused connection with backoff) for `child`,
/// killing it rather than hanging the test run.
fn wait_output(mut child: Child, args: &[&str]) -> Output {
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "march {args:?} did not finish; stderr:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_no_refusal(said: &str) {
    for words in REFUSAL_WORDS {
        assert!(!said.contains(words), "claims a refusal ({words}):\n{said}");
    }
}

/// `march usage` finds no model call in the transcripts.
fn assert_no_calls(setup: &Setup) {
    let usage = setup.run(&["usage", "--json"]);
    assert_eq!(usage.status.code(), Some(0), "{}", text(&usage.stderr));
    let report: Value = serde_json::from_str(&text(&usage.stdout)).unwrap();
    assert_eq!(report["total"]["calls"], 0, "{report}");
}

/// The session files of the setup's project (one per session).
fn transcripts(march_home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![march_home.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn print_mode_says_the_connection_was_refused_where_and_what_to_check() {
    let setup = Setup::new();
    let output = setup.run(&["-p", "hello"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("march: {}", setup.refused_connection())),
        "stderr:\n{stderr}"
    );
    assert_no_refusal(&stderr);
    // The failed request is in the transcript, but it is no model call.
    let written = transcripts(&setup.march_home())
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<String>();
    assert!(
        written.contains("\"stopReason\":\"error\""),
        "the failed request is not in a transcript:\n{written}"
    );
    assert!(!written.contains("\"refused\""), "{written}");
    assert_no_calls(&setup);
}

#[test]
fn json_output_ends_with_the_connection_error() {
    let setup = Setup::new();
    let output = setup.run(&["-p", "hello", "--output", "json"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr:\n{stderr}");
    let stdout = text(&output.stdout);
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "result", "{stdout}");
    assert_eq!(last["stopReason"], Value::Null, "{last}");
    assert_eq!(
        last["error"].as_str().unwrap(),
        setup.refused_connection(),
        "{last}"
    );
    assert!(!stdout.contains("\"refusal\""), "{stdout}");
    assert_no_refusal(&stderr);
    assert_no_calls(&setup);
}

#[test]
fn the_agent_pane_shows_the_connection_error_not_a_refusal() {
    let setup = Setup::new();
    let mut m = PtyMarch::spawn_clean(
        &[],
        &setup.project(),
        &setup.home(),
        &setup.march_home(),
        &[],
    );
    m.wait_text("March · project");
    m.type_line("hello");
    let wanted = format!("✗ {}", setup.refused_connection());
    let screen = m.wait_for("the connection error in the pane", |screen| {
        pane_text(screen).contains(&wanted)
    });
    assert_no_refusal(&screen);
    m.quit();
    assert_no_calls(&setup);
}

#[test]
fn the_gateways_answers_end_with_the_connection_error() {
    let setup = Setup::new();
    let config = setup.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[gateway]\nlisten = \"127.0.0.1:0\"\n");
    std::fs::write(&config, text).unwrap();
    let mut m = PtyMarch::spawn_clean(
        &[],
        &setup.project(),
        &setup.home(),
        &setup.march_home(),
        &[],
    );
    m.wait_text("March · project");
    let (code, out) = m.cli(&["gateway", "token", "add", "ci"]);
    assert_eq!(code, 0, "{out}");
    let token = out.lines().next().unwrap().trim().to_string();
    let gw = Gateway::start(m.command(&["gateway"]));

    // Streamed: the `end` event carries the error.
    let mut stream = Stream::prompt(
        &gw.addr,
        &token,
        json!({ "session": "1", "text": "hello", "stream": true }),
    );
    let read = stream.until("event: end").to_string();
    let end = read
        .split("event: end")
        .nth(1)
        .and_then(|rest| rest.lines().find_map(|l| l.strip_prefix("data: ")))
        .unwrap();
    let end: Value = serde_json::from_str(end).unwrap();
    assert_eq!(end["stop_reason"], Value::Null, "{read}");
    assert_eq!(end["error"], setup.refused_connection().as_str(), "{read}");
    assert!(!read.contains("refusal"), "{read}");

    // Whole: the JSON answer carries it too.
    let (status, body) = http(
        &gw.addr,
        "POST",
        "/v1/prompt",
        &token,
        Some(json!({ "session": "1", "text": "again" })),
    );
    assert_eq!(status, 200, "{body}");
    let whole: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(whole["stop_reason"], Value::Null, "{whole}");
    assert_eq!(
        whole["error"],
        setup.refused_connection().as_str(),
        "{whole}"
    );
    gw.stop();
    m.quit();
}

/// The screen's text with the pane's borders taken off and wrapped lines joined by a space,
/// so a message the pane wrapped reads as one line again.
fn pane_text(screen: &str) -> String {
    screen
        .lines()
        .map(|line| line.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
