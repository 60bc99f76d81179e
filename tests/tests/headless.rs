//! `march -p` as a real process: it runs `march runner` as its child and talks ACP to it; the
//! model is the scripted server over real HTTP; MARCH_HOME is a temp dir.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns abort on setup failure

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use march_e2e::{ScriptedServerProcess, march_bin};
use serde_json::{Value, json};

/// A temporary home (HOME, MARCH_HOME with a config pointing at the scripted server) and a
/// project directory.
struct Setup {
    dir: tempfile::TempDir,
    server: ScriptedServerProcess,
}

impl Setup {
    fn new(turns: Value) -> Setup {
        Setup::on("openai-completions", turns)
    }

    /// A setup whose scripted provider speaks `api`.
    fn on(api: &str, turns: Value) -> Setup {
        let server = ScriptedServerProcess::start(&json!({ "turns": turns }));
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "march", "project"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let config = format!(
            r#"default_model = "scripted/m"

[providers.scripted]
api = "{api}"
base_url = "{}"
api_key_env = "SCRIPTED_API_KEY"

[[providers.scripted.models]]
id = "m"

[[providers.scripted.models]]
id = "m2"
"#,
            server.base_url()
        );
        std::fs::write(dir.path().join("march/config.toml"), config).unwrap();
        Setup { dir, server }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// `march ARGS` with a clean environment, in the project directory.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(march_bin());
        command
            .args(args)
            .current_dir(self.project())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("MARCH_HOME", self.dir.path().join("march"))
            .env("SCRIPTED_API_KEY", "test-key")
            .stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        let child = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_output(child)
    }
}

/// Waits (generously) for `child`, killing it rather than hanging the test run.
fn wait_output(mut child: Child) -> Output {
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "march -p did not finish; stderr:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts the run exited with `code`, showing its stderr when not.
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stderr:\n{}",
        stderr(output)
    );
}

fn json_lines(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line:?}: {e}"))
        })
        .collect()
}

/// A model turn that writes `notes.txt` with the write tool.
fn write_call() -> Value {
    json!({"kind": "stream", "events": [
        {"type": "tool_call", "id": "call_1", "name": "write",
         "args": ["{\"path\": \"notes.txt\", ", "\"content\": \"hello\\n\"}"]}
    ]})
}

fn text_turn(text: &str) -> Value {
    json!({"kind": "stream", "events": [{"type": "text", "text": text}]})
}

#[test]
fn prints_the_answer_and_exits_zero() {
    let setup = Setup::new(json!([text_turn("Hello from the model.")]));
    let output = setup.run(&["-p", "hi"]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "Hello from the model.\n");
    let requests = setup.server.recorded_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["body"]["model"], "m");
    let sent = requests[0]["body"]["messages"].to_string();
    assert!(sent.contains("hi"), "{sent}");
}

#[test]
fn json_output_is_one_object_per_line_ending_with_the_result() {
    let setup = Setup::new(json!([text_turn("Hello there.")]));
    let output = setup.run(&["-p", "hi", "--output", "json"]);
    assert_exit(&output, 0);
    let lines = json_lines(&output);
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["stopReason"], "end_turn");
    let session = last["sessionId"].as_str().unwrap();
    let text: String = lines
        .iter()
        .filter(|line| line["type"] == "update")
        .inspect(|line| assert_eq!(line["sessionId"], session))
        .filter(|line| line["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|line| {
            line["update"]["content"]["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(text, "Hello there.");
}

#[test]
fn a_provider_error_exits_one_with_the_message_on_stderr() {
    let body =
        r#"{"error":{"message":"context too long for this model","type":"invalid_request_error"}}"#;
    let setup = Setup::new(json!([{"kind": "status", "code": 400, "body": body}]));
    let output = setup.run(&["-p", "hi"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "stdout:\n{}",
        stdout(&output)
    );
    assert!(
        stderr(&output).contains("context too long for this model"),
        "stderr:\n{}",
        stderr(&output)
    );

    // JSON mode still ends with a result line, carrying the error.
    let setup = Setup::new(json!([{"kind": "status", "code": 400, "body": body}]));
    let output = setup.run(&["-p", "hi", "--output", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let last = json_lines(&output).pop().unwrap();
    assert_eq!(last["type"], "result");
    assert!(
        last["error"].as_str().unwrap().contains("context too long"),
        "{last}"
    );
}

#[test]
fn tool_calls_are_rejected_without_yolo() {
    let setup = Setup::new(json!([
        write_call(),
        text_turn("I was not allowed to write.")
    ]));
    let output = setup.run(&["-p", "write notes"]);
    assert_exit(&output, 0);
    assert!(!setup.project().join("notes.txt").exists());
    assert!(
        stderr(&output).contains("rejected tool call"),
        "stderr:\n{}",
        stderr(&output)
    );
    assert_eq!(stdout(&output), "I was not allowed to write.\n");
    // The model was told the call did not run.
    let requests = setup.server.recorded_requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1]["body"]["messages"].as_array().unwrap();
    let result = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(result["tool_call_id"], "call_1");
}

#[test]
fn tool_calls_run_with_yolo() {
    let setup = Setup::new(json!([write_call(), text_turn("Written.")]));
    let output = setup.run(&["-p", "write notes", "--yolo", "--output", "json"]);
    assert_exit(&output, 0);
    assert_eq!(
        std::fs::read_to_string(setup.project().join("notes.txt")).unwrap(),
        "hello\n"
    );
    let lines = json_lines(&output);
    assert!(
        lines.iter().all(|line| line["type"] != "permission"),
        "nothing should ask in yolo mode"
    );
    assert!(lines.iter().any(|line| {
        line["update"]["sessionUpdate"] == "tool_call_update"
            && line["update"]["status"] == "completed"
    }));
}

#[test]
fn max_turns_from_the_config_ends_the_turn_with_exit_three() {
    let setup = Setup::new(json!([write_call(), text_turn("Written.")]));
    let config = setup.dir.path().join("march/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[limits]\nmax_turns = 1\n");
    std::fs::write(&config, text).unwrap();
    let output = setup.run(&["-p", "write notes", "--yolo"]);
    assert_exit(&output, 3);
    // The first model call ran its tool; the second was never made.
    assert_eq!(
        std::fs::read_to_string(setup.project().join("notes.txt")).unwrap(),
        "hello\n"
    );
    assert!(!stdout(&output).contains("Written."), "{}", stdout(&output));
    assert_eq!(setup.server.recorded_requests().len(), 1);
    assert!(
        stderr(&output).contains("stopped at a limit"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_tool_past_its_timeout_ends_the_turn_with_exit_three_and_says_which() {
    let sleep = json!({"kind": "stream", "events": [
        {"type": "tool_call", "id": "call_1", "name": "bash",
         "args": ["{\"command\": \"sleep 60\"}"]}
    ]});
    let setup = Setup::new(json!([sleep, text_turn("Slept.")]));
    let config = setup.dir.path().join("march/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    // The default would never fire; the per-tool override does.
    text.push_str("\n[limits]\ntool_timeout = 3600\n[limits.tool_timeouts]\nbash = 1\n");
    std::fs::write(&config, text).unwrap();
    let output = setup.run(&["-p", "sleep", "--yolo", "--output", "json"]);
    assert_exit(&output, 3);
    assert_eq!(
        setup.server.recorded_requests().len(),
        1,
        "no call after the limit"
    );
    let lines = json_lines(&output);
    let result = lines.iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["stopReason"], "max_turn_requests");
    assert_eq!(result["limit"]["kind"], "tool_timeout");
    assert_eq!(result["limit"]["tool"], "bash");
    assert_eq!(result["limit"]["seconds"], 1.0);
    // The tool's own result says it timed out, as the model will see it next prompt.
    assert!(lines.iter().any(|l| {
        l["update"]["sessionUpdate"] == "tool_call_update" && l["update"]["status"] == "failed"
    }));
}

#[test]
fn march_usage_sums_the_transcripts_per_project_and_model() {
    let paid = |text: &str, input: u64, output: u64| {
        json!({"kind": "stream", "events": [{"type": "text", "text": text}],
               "usage": {"input": input, "output": output}})
    };
    let setup = Setup::new(json!([paid("one", 100, 10), paid("two", 200, 20)]));
    let config = setup.dir.path().join("march/config.toml");
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "id = \"m\"\n",
        "id = \"m\"\ncost = { input = 1000.0, output = 2000.0 }\n",
    );
    std::fs::write(&config, text).unwrap();
    assert_exit(&setup.run(&["-p", "first"]), 0);
    assert_exit(&setup.run(&["-p", "second", "--model", "scripted/m2"]), 0);

    let output = setup.run(&["usage", "--json"]);
    assert_exit(&output, 0);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let project = setup.project().canonicalize().unwrap();
    assert_eq!(report["projects"][0]["project"], *project.to_string_lossy());
    let models = report["projects"][0]["models"].as_array().unwrap();
    assert_eq!(models.len(), 2, "{report}");
    assert_eq!(models[0]["model"], "scripted/m");
    assert!(
        (models[0]["cost"].as_f64().unwrap() - 0.12).abs() < 1e-9,
        "{report}"
    );
    // m2 has no prices: its tokens count, its cost is zero.
    assert_eq!(models[1]["model"], "scripted/m2");
    assert_eq!(models[1]["input"], 200);
    assert_eq!(report["total"]["calls"], 2);

    // Every call was made today; none after tomorrow starts.
    let today = setup.run(&["usage", "--since", "today", "--json"]);
    let report: Value = serde_json::from_str(&stdout(&today)).unwrap();
    assert_eq!(report["total"]["calls"], 2);
    let later = setup.run(&["usage", "--since", "2999-01-01"]);
    assert_exit(&later, 0);
    assert_eq!(stdout(&later), "No model calls recorded.\n");
    let table = stdout(&setup.run(&["usage"]));
    assert!(
        table.contains("scripted/m2") && table.contains("$0.1200"),
        "{table}"
    );
    let bad = setup.run(&["usage", "--since", "last week"]);
    assert_exit(&bad, 1);
    assert!(stderr(&bad).contains("YYYY-MM-DD"), "{}", stderr(&bad));
}

#[test]
fn model_and_cwd_are_honoured() {
    let setup = Setup::new(json!([text_turn("ok")]));
    let elsewhere = tempfile::tempdir().unwrap();
    let cwd = elsewhere.path().to_str().unwrap();
    let output = setup.run(&["-p", "hi", "--model", "scripted/m2", "--cwd", cwd]);
    assert_exit(&output, 0);
    let requests = setup.server.recorded_requests();
    assert_eq!(requests[0]["body"]["model"], "m2");
    // The session identity layer names the working directory.
    let canonical = Path::new(cwd).canonicalize().unwrap();
    let sent = requests[0]["body"]["messages"].to_string();
    assert!(sent.contains(canonical.to_str().unwrap()), "{sent}");
}

#[test]
fn a_run_started_inside_a_workspace_is_not_offered_the_workspace_tool() {
    let setup = Setup::new(json!([text_turn("ok")]));
    // As from a shell or an agent's command in a workspace, whose server sets the variable.
    let child = setup
        .command(&["-p", "hi"])
        .env("MARCH_WORKSPACE", setup.dir.path().join("project.sock"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = wait_output(child);
    assert_exit(&output, 0);
    let requests = setup.server.recorded_requests();
    let tools: Vec<&str> = requests[0]["body"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"read"), "{tools:?}");
    assert!(!tools.contains(&"workspace"), "{tools:?}");
}

#[test]
fn usage_errors_exit_two() {
    let setup = Setup::new(json!([]));
    let cases: [&[&str]; 4] = [
        // A provider nobody configured (an unlisted id on a known one resolves).
        &["-p", "hi", "--model", "nowhere/nope"],
        &["-p", "hi", "--cwd", "/nonexistent/dir"],
        &["-p", "  "],
        &["--output", "json"],
    ];
    for args in cases {
        let output = setup.run(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(!stderr(&output).is_empty(), "{args:?}");
    }
    assert!(setup.server.recorded_requests().is_empty());
}

#[test]
fn ctrl_c_cancels_the_turn_and_exits_130() {
    // The model starts answering, then stalls.
    let setup = Setup::new(json!([{"kind": "stream", "events": [
        {"type": "text", "text": "Thinking about it"},
        {"type": "pause", "ms": 120000},
        {"type": "text", "text": " never sent"}
    ]}]));
    let child = setup
        .command(&["-p", "hi"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the model request is under way.
    let deadline = Instant::now() + Duration::from_secs(60);
    while setup.server.recorded_requests().is_empty() {
        assert!(Instant::now() < deadline, "the model was never called");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let output = wait_output(child);
    assert_exit(&output, 130);
    assert!(!stdout(&output).contains("never sent"));
}

/// A schema for `{"x": int, "y": int}`, written to the project as `point.json`.
fn point_schema(setup: &Setup) -> Value {
    let schema = json!({
        "title": "point",
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
        "additionalProperties": false
    });
    std::fs::write(setup.project().join("point.json"), schema.to_string()).unwrap();
    schema
}

#[test]
fn a_failing_structured_answer_is_retried_with_the_error_and_only_the_json_is_printed() {
    let setup = Setup::new(json!([
        text_turn(r#"{"x": 1}"#),
        text_turn(r#"{"x": 1, "y": 2}"#)
    ]));
    let schema = point_schema(&setup);
    let output = setup.run(&["-p", "where is it?", "--schema", "point.json"]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "{\"x\":1,\"y\":2}\n");
    assert!(stderr(&output).contains("did not match the schema; asking again"));
    let requests = setup.server.recorded_requests();
    assert_eq!(requests.len(), 2);
    // OpenAI's own shape, in the request log.
    let format = &requests[0]["body"]["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "point");
    assert_eq!(format["json_schema"]["schema"], schema);
    assert_eq!(format["json_schema"]["strict"], true);
    let retry = requests[1]["body"]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(retry["role"], "user");
    let retry = retry["content"].to_string();
    assert!(
        retry.contains("\\\"y\\\" is a required property"),
        "{retry}"
    );

    // The JSON result line carries the value too.
    let setup = Setup::new(json!([text_turn(r#"{"x": 3, "y": 4}"#)]));
    point_schema(&setup);
    let output = setup.run(&["-p", "where?", "--schema", "point.json", "--output", "json"]);
    assert_exit(&output, 0);
    let last = json_lines(&output).pop().unwrap();
    assert_eq!(
        last["structuredOutput"],
        json!({"value": {"x": 3, "y": 4}, "answers": 1})
    );
}

#[test]
fn a_schema_no_answer_can_match_exits_one_with_the_last_error() {
    // `x` is required and forbidden: nothing validates.
    let schema = json!({"type": "object", "required": ["x"], "not": {"required": ["x"]}});
    let answer = text_turn(r#"{"x": 1}"#);
    let setup = Setup::new(json!([answer, answer, answer, text_turn("never asked")]));
    std::fs::write(setup.project().join("never.json"), schema.to_string()).unwrap();
    let output = setup.run(&["-p", "try", "--schema", "never.json"]);
    assert_exit(&output, 1);
    assert_eq!(stdout(&output), "");
    let err = stderr(&output);
    assert!(
        err.contains("no valid answer after 3 answers; the last: "),
        "{err}"
    );
    assert!(
        err.contains("the answer does not match the schema"),
        "{err}"
    );
    assert_eq!(setup.server.recorded_requests().len(), 3);

    // Fewer retries when asked.
    let setup = Setup::new(json!([answer, answer]));
    std::fs::write(setup.project().join("never.json"), schema.to_string()).unwrap();
    let output = setup.run(&[
        "-p",
        "try",
        "--schema",
        "never.json",
        "--schema-retries",
        "0",
    ]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("no valid answer after 1 answer; the last: "));
    assert_eq!(setup.server.recorded_requests().len(), 1);
}

#[test]
fn anthropic_models_are_made_to_call_the_answer_tool() {
    let answer = json!({"kind": "stream", "events": [
        {"type": "tool_call", "id": "toolu_1", "name": "final_answer",
         "args": ["{\"x\": 7, ", "\"y\": 8}"]}
    ]});
    let setup = Setup::on("anthropic-messages", json!([answer]));
    let schema = point_schema(&setup);
    let output = setup.run(&["-p", "where?", "--schema", "point.json"]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "{\"x\":7,\"y\":8}\n");
    let requests = setup.server.recorded_requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0]["body"];
    // The session has tools of its own: some tool on every step, the answer tool ends it.
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    let tool = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "final_answer")
        .unwrap();
    assert_eq!(tool["input_schema"], schema);
}

#[test]
fn a_schema_that_cannot_be_read_is_a_usage_error() {
    let setup = Setup::new(json!([]));
    std::fs::write(setup.project().join("bad.json"), "{ not json").unwrap();
    let output = setup.run(&["-p", "hi", "--schema", "bad.json"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("the schema bad.json is not JSON"),
        "{}",
        stderr(&output)
    );
    let output = setup.run(&["-p", "hi", "--schema", "missing.json"]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("cannot read the schema missing.json"));
    std::fs::write(setup.project().join("list.json"), "[1]").unwrap();
    let output = setup.run(&["-p", "hi", "--schema", "list.json"]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("must be a JSON object, not an array"));
    assert!(setup.server.recorded_requests().is_empty());
}
