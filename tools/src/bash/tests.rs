use std::path::Path;
use std::time::Duration;

use super::*;
use crate::test_support::{run_tool, run_tool_with};
use march_testkit::process::{read_pids, wait_gone};

fn tool(dir: &Path) -> BashTool {
    BashTool::new(ToolContext::local(dir))
}

async fn run(tool: &BashTool, args: Value) -> Result<ToolOutcome, ToolError> {
    run_tool(tool, args).await
}

/// The shell (our child) must be reaped; its background child must be dead.
async fn assert_group_gone(pids: &[u32]) {
    assert!(
        wait_gone(pids[0], false).await,
        "shell {} still exists",
        pids[0]
    );
    for &pid in &pids[1..] {
        assert!(
            wait_gone(pid, true).await,
            "background process {pid} still running"
        );
    }
}

/// Writes the shell's pid and a background sleeper's pid to `pids`, then says "started".
const SPAWN_GROUP: &str = "echo $$ > pids; sleep 1000 & echo $! >> pids; echo started";

#[tokio::test]
async fn success_returns_the_output_and_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &tool(dir.path()),
        json!({"command": "echo hello; echo world"}),
    )
    .await
    .unwrap();
    assert_eq!(out.text_content(), "hello\nworld\n");
    assert_eq!(out.details["exitCode"], 0);
    assert_eq!(out.details["truncation"], Value::Null);
    assert_eq!(out.details["fullOutputPath"], Value::Null);
}

#[tokio::test]
async fn runs_in_the_working_directory_with_the_inherited_environment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "x").unwrap();
    let out = run(&tool(dir.path()), json!({"command": "ls; echo \"$PATH\""}))
        .await
        .unwrap();
    let path = std::env::var("PATH").unwrap();
    assert_eq!(out.text_content(), format!("marker.txt\n{path}\n"));
}

#[tokio::test]
async fn empty_output_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&tool(dir.path()), json!({"command": "true"}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "(no output)");
}

#[tokio::test]
async fn a_failing_command_is_an_error_with_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let err = run(&tool(dir.path()), json!({"command": "echo oops; exit 3"}))
        .await
        .unwrap_err();
    assert_eq!(err.0, "oops\n\n\nCommand exited with code 3");
    let err = run(&tool(dir.path()), json!({"command": "exit 4"}))
        .await
        .unwrap_err();
    assert_eq!(err.0, "(no output)\n\nCommand exited with code 4");
}

#[tokio::test]
async fn a_command_killed_by_a_signal_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = run(
        &tool(dir.path()),
        json!({"command": "echo bye; kill -9 $$"}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.0, "bye\n\n\nCommand terminated by signal 9");
}

#[tokio::test]
async fn stderr_is_merged_with_stdout_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let command = "echo out1; echo err1 >&2; echo out2; echo err2 >&2; echo out3";
    let out = run(&tool(dir.path()), json!({"command": command}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "out1\nerr1\nout2\nerr2\nout3\n");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let command = format!("{SPAWN_GROUP}; sleep 1000");
    let err = run(&tool(dir.path()), json!({"command": command, "timeout": 2}))
        .await
        .unwrap_err();
    assert_eq!(err.0, "started\n\n\nCommand timed out after 2 seconds");
    assert_group_gone(&read_pids(&dir.path().join("pids"), 2).await).await;
}

#[tokio::test]
async fn a_fractional_timeout_is_reported_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let err = run(
        &tool(dir.path()),
        json!({"command": "sleep 1000", "timeout": 0.2}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.0, "Command timed out after 0.2 seconds");
}

#[tokio::test]
async fn abort_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let tool = Arc::new(tool(dir.path()));
    let cancel = CancellationToken::new();
    let task = {
        let (tool, cancel) = (Arc::clone(&tool), cancel.clone());
        let command = format!("{SPAWN_GROUP}; sleep 1000");
        tokio::spawn(async move {
            run_tool_with(tool.as_ref(), json!({"command": command}), cancel).await
        })
    };
    let pids = read_pids(&dir.path().join("pids"), 2).await;
    cancel.cancel();
    let err = tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert!(err.0.ends_with("Command aborted"), "{}", err.0);
    assert_group_gone(&pids).await;
}

#[tokio::test]
async fn dropping_a_run_mid_way_kills_the_group_and_reaps_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let tool = Arc::new(tool(dir.path()));
    let task = {
        let tool = Arc::clone(&tool);
        let command = format!("{SPAWN_GROUP}; sleep 1000");
        tokio::spawn(async move { run(&tool, json!({"command": command})).await })
    };
    let pids = read_pids(&dir.path().join("pids"), 2).await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_group_gone(&pids).await;
}

#[tokio::test]
async fn background_children_are_killed_when_the_command_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        run(&tool(dir.path()), json!({"command": SPAWN_GROUP})),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(out.text_content(), "started\n");
    assert_group_gone(&read_pids(&dir.path().join("pids"), 2).await).await;
}

#[tokio::test]
async fn many_lines_keep_the_tail_and_save_the_full_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&tool(dir.path()), json!({"command": "seq 1 300000"}))
        .await
        .unwrap();
    let path = out.details["fullOutputPath"].as_str().unwrap().to_string();
    let name = Path::new(&path).file_name().unwrap().to_str().unwrap();
    let hex = name
        .strip_prefix("march-bash-")
        .and_then(|rest| rest.strip_suffix(".log"))
        .unwrap();
    assert!(
        hex.len() == 16 && hex.chars().all(|c| c.is_ascii_hexdigit()),
        "{name}"
    );
    assert!(Path::new(&path).starts_with(std::env::temp_dir()));

    let expected_tail: Vec<String> = (298_001..=300_000).map(|i| i.to_string()).collect();
    assert_eq!(
        out.text_content(),
        format!(
            "{}\n\n[Showing lines 298001-300000 of 300000. Full output: {path}]",
            expected_tail.join("\n")
        )
    );
    let truncation = &out.details["truncation"];
    assert_eq!(truncation["truncatedBy"], "lines");
    assert_eq!(truncation["totalLines"], 300_000);
    let full: String = (1..=300_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(truncation["totalBytes"], full.len());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), full);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn long_lines_hit_the_byte_limit() {
    let dir = tempfile::tempdir().unwrap();
    let command = "awk 'BEGIN { for (i = 1; i <= 3000; i++) printf \"%0100d\\n\", i }'";
    let out = run(&tool(dir.path()), json!({"command": command}))
        .await
        .unwrap();
    let path = out.details["fullOutputPath"].as_str().unwrap().to_string();
    // 101 bytes a line: 506 whole lines fit in 50 KB (the last one without its newline).
    let text = out.text_content();
    assert!(
        text.ends_with(&format!(
            "{:0100}\n\n[Showing lines 2495-3000 of 3000 (50.0KB limit). Full output: {path}]",
            3000
        )),
        "{}",
        &text[text.len() - 300..]
    );
    assert!(text.starts_with(&format!("{:0100}\n", 2495)));
    assert_eq!(out.details["truncation"]["truncatedBy"], "bytes");
    let full: String = (1..=3000).map(|i| format!("{i:0100}\n")).collect();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), full);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn a_single_huge_line_shows_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let command = "echo first; head -c 200000 /dev/zero | tr '\\0' x";
    let out = run(&tool(dir.path()), json!({"command": command}))
        .await
        .unwrap();
    let path = out.details["fullOutputPath"].as_str().unwrap().to_string();
    assert_eq!(
        out.text_content(),
        format!(
            "{}\n\n[Showing last 50.0KB of line 2 (line is 195.3KB). Full output: {path}]",
            "x".repeat(MAX_BYTES)
        )
    );
    assert_eq!(out.details["truncation"]["lastLinePartial"], true);
    let full = format!("first\n{}", "x".repeat(200_000));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), full);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn invalid_utf8_is_shown_lossily() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &tool(dir.path()),
        json!({"command": "printf 'a\\377\\376b\\n'"}),
    )
    .await
    .unwrap();
    assert_eq!(out.text_content(), "a\u{FFFD}\u{FFFD}b\n");
}

#[tokio::test]
async fn a_missing_working_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone");
    let err = run(&tool(&missing), json!({"command": "echo hi"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        format!("Working directory does not exist: {}", missing.display())
    );

    let file = dir.path().join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let err = run(&tool(&file), json!({"command": "echo hi"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        format!("Working directory is not a directory: {}", file.display())
    );
}

#[tokio::test]
async fn bad_arguments_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    let err = run(&tool, json!({})).await.unwrap_err();
    assert!(err.0.contains("`command`"), "{}", err.0);
    let err = run(&tool, json!({"command": 5})).await.unwrap_err();
    assert!(err.0.contains("`command`"), "{}", err.0);
    let err = run(&tool, json!({"command": "true", "timeout": "soon"}))
        .await
        .unwrap_err();
    assert!(err.0.contains("`timeout`"), "{}", err.0);
    // As in pi, a timeout that is not positive means none.
    let out = run(&tool, json!({"command": "echo ok", "timeout": 0}))
        .await
        .unwrap();
    assert_eq!(out.text_content(), "ok\n");
}

#[tokio::test]
async fn updates_stream_throttled_snapshots_of_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let seen = Arc::new(Mutex::new(Vec::<ToolOutcome>::new()));
    let updates = {
        let (seen, go) = (Arc::clone(&seen), go.clone());
        ToolUpdates::new(move |partial| {
            // The command waits for this file, so it finishes only after output was streamed.
            if partial.text_content().contains("ready") {
                std::fs::write(&go, "").unwrap();
            }
            seen.lock().push(partial);
        })
    };
    let command = "for i in $(seq 1 20); do echo line $i; done; echo ready; \
        while [ ! -e go ]; do sleep 0.01; done; echo done";
    let started = std::time::Instant::now();
    let out = tool(dir.path())
        .execute(
            "call",
            json!({"command": command, "timeout": 60}),
            CancellationToken::new(),
            updates,
        )
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let seen = seen.lock();

    let bound = (elapsed.as_millis() / UPDATE_INTERVAL.as_millis()) as usize + 2;
    assert!(seen.len() <= bound, "{} updates in {elapsed:?}", seen.len());
    assert!(seen.len() >= 2);
    assert!(seen[0].content.is_empty());
    let full = out.text_content();
    assert!(full.ends_with("ready\ndone\n"));
    for partial in &seen[1..] {
        let text = partial.text_content();
        assert!(!text.is_empty() && full.starts_with(&text), "{text:?}");
        assert_eq!(partial.details["truncation"], Value::Null);
    }
}

#[test]
fn the_accumulator_keeps_bounded_memory_and_counts_everything() {
    let mut acc = OutputAccumulator::default();
    let mut full = Vec::new();
    // Chunks that split lines and multi-byte characters at arbitrary points.
    let pattern = "ab\ncdé\n\nxyz".as_bytes();
    for i in 0..200_000 {
        let chunk = &pattern[..(i % pattern.len()) + 1];
        acc.push(chunk);
        full.extend_from_slice(chunk);
        assert!(acc.tail.len() <= 2 * TAIL_KEEP + pattern.len());
    }
    let text = String::from_utf8_lossy(&full);
    let reference = truncate_tail(&text, MAX_LINES, MAX_BYTES);
    let truncation = acc.truncation();
    assert_eq!(truncation.total_lines, reference.total_lines);
    assert_eq!(truncation.total_bytes, full.len());
    assert_eq!(truncation.content, reference.content);
    let body = full.strip_suffix(b"\n").unwrap_or(&full);
    let last_line = body.rsplit(|&b| b == b'\n').next().unwrap_or(b"");
    assert_eq!(acc.last_line_len(), last_line.len());

    let finished = acc.finish(CommandExit::Code(0));
    let path = finished.details["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(std::fs::read(&path).unwrap(), full);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn the_last_line_length_ignores_a_trailing_newline() {
    let mut acc = OutputAccumulator::default();
    acc.push(b"one\ntwo");
    acc.push(b"three\n");
    assert_eq!((acc.total_lines(), acc.last_line_len()), (2, 8));
    acc.push(b"\n");
    assert_eq!((acc.total_lines(), acc.last_line_len()), (3, 0));
}

#[test]
fn metadata_matches_pi() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path());
    assert_eq!(tool.name(), "bash");
    assert_eq!(
        tool.prompt_snippet(),
        Some("Execute bash commands (ls, grep, find, etc.)")
    );
    let annotations = tool.annotations();
    assert!(annotations.destructive && annotations.open_world && !annotations.read_only);
    assert!(
        tool.target_paths(&json!({"command": "rm -rf x"}))
            .is_empty()
    );
    assert_eq!(tool.parameters()["required"], json!(["command"]));
    assert_eq!(tool.parameters()["properties"]["timeout"]["type"], "number");
}

/// An executor that records its request and answers with fixed output and exit.
struct Recorder {
    seen: parking_lot::Mutex<Vec<CommandRequest>>,
    exit: CommandExit,
}

#[async_trait]
impl crate::exec::CommandExecutor for Recorder {
    async fn run(
        &self,
        request: CommandRequest,
        _cancel: CancellationToken,
        mut output: OutputSink,
    ) -> Result<CommandExit, crate::exec::ExecError> {
        self.seen.lock().push(request);
        output(b"from elsewhere\n");
        Ok(self.exit)
    }
}

#[tokio::test]
async fn another_executor_gets_the_call_id_and_its_exit_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Arc::new(Recorder {
        seen: parking_lot::Mutex::new(Vec::new()),
        exit: CommandExit::Code(3),
    });
    let tool = BashTool::new(ToolContext::local(dir.path()).with_executor(recorder.clone()));
    let err = tool
        .execute(
            "call-7",
            json!({"command": "echo hi", "timeout": 2}),
            CancellationToken::new(),
            ToolUpdates::discard(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.0, "from elsewhere\n\n\nCommand exited with code 3");
    assert_eq!(
        recorder.seen.lock().as_slice(),
        [CommandRequest {
            command: "echo hi".into(),
            cwd: dir.path().to_path_buf(),
            timeout: Some(Duration::from_secs(2)),
            tool_call_id: Some("call-7".into()),
        }]
    );
}

#[test]
fn the_preview_is_the_command_and_its_directory() {
    let tool = BashTool::new(ToolContext::local("/work/proj"));
    assert_eq!(
        tool.preview(&json!({"command": "cargo test"})),
        Some(CallPreview::Command {
            command: "cargo test".into(),
            cwd: "/work/proj".into()
        })
    );
}
