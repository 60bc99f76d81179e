//! The LSP client against a real language server (ruff) and a scripted one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use march_core::lsp_config::{LspConfig, LspServerConfig};
use tempfile::TempDir;
use tokio::sync::broadcast;

use super::*;

const FAKE: &str = include_str!("fake_server.py");
const LONG: Duration = Duration::from_secs(30);

/// A project directory with the scripted server in it.
fn project() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("fake_server.py"), FAKE).unwrap();
    (dir, root)
}

fn fake(root: &Path, name: &str, mode: &str) -> LspServerConfig {
    LspServerConfig {
        name: name.to_string(),
        command: "python3".to_string(),
        args: vec![
            root.join("fake_server.py").display().to_string(),
            mode.to_string(),
        ],
        file_patterns: vec!["*.fk".to_string()],
        root_markers: vec![],
        language_id: Some("fake".to_string()),
        enabled: true,
        initialization_options: None,
        env: std::collections::BTreeMap::new(),
        built_in: false,
    }
}

fn write(root: &Path, name: &str, text: &str) -> PathBuf {
    let path = root.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn lines(checked: &Checked) -> Vec<(u32, u32, Severity, String)> {
    checked
        .diagnostics
        .iter()
        .map(|d| (d.line, d.column, d.severity, d.message.clone()))
        .collect()
}

/// The next notice the host gives.
async fn next_notice(rx: &mut broadcast::Receiver<HostEvent>) -> String {
    tokio::time::timeout(LONG, async {
        loop {
            if let HostEvent::Notice { message } = rx.recv().await.unwrap() {
                return message;
            }
        }
    })
    .await
    .expect("a notice")
}

#[tokio::test]
async fn ruff_reports_an_error_and_clears_it_when_fixed() {
    let ruff = march_testkit::test_tools::ruff();
    let (_dir, root) = project();
    let mut config = LspConfig::default();
    // The server must not touch the user's home: it gets one of its own.
    let home = root.join("home");
    let env = [
        ("HOME", &home),
        ("XDG_CONFIG_HOME", &home),
        ("XDG_CACHE_HOME", &home),
    ]
    .map(|(k, v)| (k.to_string(), v.display().to_string()));
    config.servers.insert(
        "ruff".into(),
        march_core::lsp_config::LspServerOverride {
            command: Some(ruff.display().to_string()),
            env: Some(env.into_iter().collect()),
            ..Default::default()
        },
    );
    // Only ruff: other Python servers on this machine would add their own findings.
    let servers: Vec<_> = config
        .servers()
        .into_iter()
        .filter(|s| s.name == "ruff")
        .collect();
    let host = LspHost::new(&root, servers, Duration::from_secs(600));
    let (_, mut events) = host.subscribe();
    let path = write(&root, "bad.py", "import os\n\nprint(undefined_name)\n");
    let text = std::fs::read_to_string(&path).unwrap();
    let checked = host.check(&path, &text, LONG).await.unwrap();
    assert_eq!(checked.answered, ["ruff"]);
    let found = lines(&checked);
    assert!(
        found.iter().any(|(l, c, s, m)| *l == 3
            && *c == 7
            && *s == Severity::Error
            && m.contains("undefined_name")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|(l, ..)| *l == 1),
        "unused import: {found:?}"
    );
    let report = errors_after_write("bad.py", &checked, 3000).unwrap();
    assert!(
        report.contains("3:7 error: Undefined name `undefined_name` [F821] (Ruff)"),
        "{report}"
    );
    // The watcher saw them too.
    let seen = tokio::time::timeout(LONG, async {
        loop {
            if let HostEvent::Diagnostics(f) = events.recv().await.unwrap() {
                return f;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(seen.path, path);
    assert!(!seen.diagnostics.is_empty());

    std::fs::write(&path, "print('fixed')\n").unwrap();
    let checked = host.check(&path, "print('fixed')\n", LONG).await.unwrap();
    assert_eq!(lines(&checked), []);
    assert_eq!(host.query(None, LONG).await.unwrap(), []);
    assert_eq!(host.running().len(), 1);
    host.shutdown().await;
    assert!(host.running().is_empty());
}

#[tokio::test]
async fn a_pull_only_server_is_asked() {
    let (_dir, root) = project();
    // A server that floods stderr first is asked just the same.
    let noisy = LspHost::new(&root, vec![fake(&root, "noisy", "noisy")], LONG);
    let path = write(&root, "z.fk", "BAD\n");
    assert_eq!(
        noisy.check(&path, "BAD\n", LONG).await.unwrap().answered,
        ["noisy"]
    );
    noisy.shutdown().await;

    let host = LspHost::new(&root, vec![fake(&root, "puller", "pull")], LONG);
    let path = write(&root, "a.fk", "fine\n  BAD here\n");
    let checked = host.check(&path, "fine\n  BAD here\n", LONG).await.unwrap();
    assert_eq!(checked.answered, ["puller"]);
    assert_eq!(
        lines(&checked),
        [(2, 3, Severity::Error, "BAD is not allowed here".into())]
    );
    assert_eq!(checked.diagnostics[0].code.as_deref(), Some("B001"));
    let checked = host.check(&path, "fine\n", LONG).await.unwrap();
    assert_eq!(lines(&checked), []);

    // A file that is gone loses its diagnostics.
    host.check(&path, "BAD\n", LONG).await.unwrap();
    assert_eq!(host.query(None, LONG).await.unwrap().len(), 1);
    std::fs::remove_file(&path).unwrap();
    let gone = host.query(Some(&path), LONG).await.unwrap();
    assert_eq!(
        gone,
        [FileDiagnostics {
            path: path.clone(),
            diagnostics: vec![]
        }]
    );
    assert_eq!(host.query(None, LONG).await.unwrap(), []);
}

#[tokio::test]
async fn server_requests_are_answered_and_garbage_is_survived() {
    let (_dir, root) = project();
    // `push` publishes only after March answered its configuration and progress requests;
    // `garbage` also writes stray lines and a 33 MiB message before every real one.
    for mode in ["push", "garbage"] {
        let host = LspHost::new(&root, vec![fake(&root, mode, mode)], LONG);
        let path = write(&root, "b.fk", "BAD\nok\nBAD BAD\n");
        let checked = host.check(&path, "BAD\nok\nBAD BAD\n", LONG).await.unwrap();
        assert_eq!(checked.answered, [mode], "{mode}: {checked:?}");
        assert_eq!(
            lines(&checked).iter().map(|l| l.0).collect::<Vec<_>>(),
            [1, 3],
            "{mode}"
        );
        host.shutdown().await;
    }
}

#[tokio::test]
async fn a_server_that_never_answers_costs_only_the_wait() {
    let (_dir, root) = project();
    let host = LspHost::new(&root, vec![fake(&root, "mute", "silent")], LONG);
    let path = write(&root, "c.fk", "BAD\n");
    let started = std::time::Instant::now();
    let checked = host
        .check(&path, "BAD\n", Duration::from_millis(300))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(checked.pending, ["mute"]);
    assert!(checked.answered.is_empty());
    assert_eq!(
        errors_after_write("c.fk", &checked, 300).unwrap(),
        "Diagnostics: mute did not answer within 0.3 s (the diagnostics tool can ask again)."
    );

    // The write tool still writes and says so.
    let ctx = crate::ToolContext::local(&root).with_lsp(crate::context::LspAccess {
        source: Arc::new(host.clone()),
        servers: Arc::new(vec![fake(&root, "mute", "silent")]),
        wait: Duration::from_millis(300),
    });
    let tool = crate::write::WriteTool::new(ctx);
    let outcome = march_core::tool::Tool::execute(
        &tool,
        "t1",
        serde_json::json!({"path": "d.fk", "content": "BAD\n"}),
        tokio_util::sync::CancellationToken::new(),
        march_core::tool::ToolUpdates::discard(),
    )
    .await
    .unwrap();
    assert_eq!(
        outcome.text_content(),
        "Successfully wrote 4 bytes to d.fk\n\n\
         Diagnostics: mute did not answer within 0.3 s (the diagnostics tool can ask again)."
    );
    assert_eq!(std::fs::read_to_string(root.join("d.fk")).unwrap(), "BAD\n");
}

#[tokio::test]
async fn a_crashed_server_is_restarted_then_disabled() {
    let (_dir, root) = project();
    let host = LspHost::new(&root, vec![fake(&root, "fragile", "crash")], LONG);
    let (_, mut events) = host.subscribe();
    let path = write(&root, "e.fk", "BAD\n");
    let checked = host.check(&path, "BAD\n", LONG).await.unwrap();
    assert_eq!(lines(&checked).len(), 1);

    let crash = host
        .check(&path, "CRASH\n", Duration::from_millis(500))
        .await
        .unwrap();
    assert!(crash.answered.is_empty());
    assert_eq!(
        next_notice(&mut events).await,
        "fragile stopped (fatal: boom); restarting it in 1 s"
    );
    // Its diagnostics went with it.
    assert_eq!(host.query(None, LONG).await.unwrap(), []);
    // It comes back by itself and opens the file again (now BAD again on disk).
    write(&root, "e.fk", "BAD\nBAD\n");
    let back = tokio::time::timeout(LONG, async {
        loop {
            if let Ok(HostEvent::Diagnostics(f)) = events.recv().await
                && f.diagnostics.len() == 2
            {
                return f;
            }
        }
    })
    .await
    .expect("the restarted server reports the file");
    assert_eq!(back.path, path);

    // Two more crashes, each within five minutes of starting: disabled, with one clear notice.
    for expected in [
        "fragile stopped (fatal: boom); restarting it in 2 s",
        "fragile stopped 3 times in a row (fatal: boom); it stays off until March restarts",
    ] {
        let deadline = tokio::time::Instant::now() + LONG;
        while host
            .check(&path, "BAD\n", Duration::from_millis(500))
            .await
            .unwrap()
            .answered
            .is_empty()
        {
            assert!(tokio::time::Instant::now() < deadline, "not restarted");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        host.check(&path, "CRASH\n", Duration::from_millis(500))
            .await
            .unwrap();
        assert_eq!(next_notice(&mut events).await, expected);
    }
    let after = host.check(&path, "BAD\n", LONG).await.unwrap();
    assert!(
        after.answered.is_empty() && after.pending.is_empty(),
        "{after:?}"
    );
    // Said once to the model, not on every edit.
    assert_eq!(after.notices.len(), 1, "{after:?}");
    let later = host.check(&path, "BAD\n", LONG).await.unwrap();
    assert_eq!(later, Checked::default());
}

#[tokio::test]
async fn missing_and_failing_programs_give_one_notice() {
    let (_dir, root) = project();
    let mut missing = fake(&root, "ghost", "push");
    missing.command = "/nonexistent/ghost-ls".to_string();
    let mut built_in = fake(&root, "quiet", "push");
    built_in.command = "march-no-such-language-server".to_string();
    built_in.built_in = true;
    built_in.file_patterns = vec!["*.qq".to_string()];
    let host = LspHost::new(
        &root,
        vec![missing, fake(&root, "broken", "fail-start"), built_in],
        LONG,
    );
    let path = write(&root, "f.fk", "BAD\n");
    let first = host.check(&path, "BAD\n", LONG).await.unwrap();
    assert_eq!(
        first.notices,
        [
            "ghost: command `/nonexistent/ghost-ls` not found (see [lsp.servers.ghost] in config.toml)",
            "broken could not start: error: this server cannot start here",
        ]
    );
    let again = host.check(&path, "BAD\n", LONG).await.unwrap();
    assert_eq!(again, Checked::default());

    let q = write(&root, "g.qq", "x\n");
    let quiet = host.check(&q, "x\n", LONG).await.unwrap();
    assert_eq!(
        quiet.notices,
        ["no language server installed for .qq files (looked for march-no-such-language-server)"]
    );
    assert!(!quiet.has_servers());
}

#[tokio::test]
async fn idle_servers_are_shut_down() {
    let (_dir, root) = project();
    let host = LspHost::new(
        &root,
        vec![fake(&root, "sleepy", "pull")],
        Duration::from_millis(300),
    );
    let path = write(&root, "h.fk", "BAD\n");
    host.check(&path, "BAD\n", LONG).await.unwrap();
    let deadline = std::time::Instant::now() + LONG;
    while !host.running().is_empty() {
        assert!(std::time::Instant::now() < deadline, "still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Diagnostics stay; the next check starts it again.
    assert_eq!(host.query(None, LONG).await.unwrap().len(), 1);
    let again = host.check(&path, "ok\n", LONG).await.unwrap();
    assert_eq!(again.answered, ["sleepy"]);
}

/// Where the project's host listens (its directory made).
fn host_socket(root: &Path) -> PathBuf {
    let socket = socket_path(&root.join("data"), root);
    std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
    socket
}

/// A host with one pulling fake server, serving on `socket` as another runner's would.
fn serve_shared_host(root: &Path, socket: &Path) -> LspHost {
    let listener = tokio::net::UnixListener::bind(socket).unwrap();
    let host = LspHost::new(root, vec![fake(root, "shared", "pull")], LONG);
    tokio::spawn(serve_host(host.clone(), listener, None));
    host
}

#[tokio::test]
async fn runners_share_one_host_over_its_socket() {
    let (_dir, root) = project();
    let socket = host_socket(&root);
    let host = serve_shared_host(&root, &socket);

    let first = Arc::new(HostClient::new(socket.clone(), None));
    let second = Arc::new(HostClient::new(socket.clone(), None));
    let mut watch = second.subscribe();
    let path = write(&root, "i.fk", "BAD\n");
    let checked = first.check(&path, "BAD\n", LONG).await.unwrap();
    assert_eq!(lines(&checked).len(), 1);
    let event = tokio::time::timeout(LONG, watch.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(event, HostEvent::Diagnostics(f) if f.path == path));
    // The second runner sees the same server and diagnostics; nothing new is started.
    let all = second.query(None, LONG).await.unwrap();
    assert_eq!(all.len(), 1);
    let from_disk = second.query(Some(&path), LONG).await.unwrap();
    assert_eq!(from_disk[0].diagnostics.len(), 1);
    assert_eq!(host.running().len(), 1);

    let nobody = HostClient::new(root.join("data/nothing.sock"), None);
    let err = nobody.check(&path, "x", LONG).await.unwrap_err();
    assert!(err.to_string().contains("nothing listens on"), "{err}");
}

#[tokio::test]
async fn a_watcher_starts_no_host_until_something_is_asked() {
    let (_dir, root) = project();
    let socket = host_socket(&root);
    let marker = root.join("started");
    let start = (
        PathBuf::from("/bin/sh"),
        vec![
            "-c".into(),
            format!("echo started >> '{}'", marker.display()).into(),
        ],
    );
    let client = Arc::new(HostClient::new(socket.clone(), Some(start)));
    // Watching a project nobody asked about starts nothing.
    let mut watch = client.subscribe();
    // Another runner's host comes up; this runner asks its first question.
    serve_shared_host(&root, &socket);
    let path = write(&root, "i.fk", "BAD\n");
    let checked = client.check(&path, "BAD\n", LONG).await.unwrap();
    assert_eq!(lines(&checked).len(), 1);
    // Now the watcher joins it and hears the project's diagnostics.
    let event = tokio::time::timeout(LONG, watch.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(event, HostEvent::Diagnostics(f) if f.path == path));
    assert!(!marker.exists(), "no host of its own was started");
}

#[tokio::test]
async fn the_diagnostics_tool_reports_a_file_and_the_project() {
    let (_dir, root) = project();
    let servers = vec![fake(&root, "puller", "pull")];
    let host = LspHost::new(&root, servers.clone(), LONG);
    let ctx = crate::ToolContext::local(&root).with_lsp(crate::context::LspAccess {
        source: Arc::new(host),
        servers: Arc::new(servers),
        wait: LONG,
    });
    write(&root, "j.fk", "ok\nBAD\n");
    let tool = DiagnosticsTool::new(ctx.clone());
    let run = |args: serde_json::Value| {
        let tool = &tool;
        async move {
            march_core::tool::Tool::execute(
                tool,
                "t",
                args,
                tokio_util::sync::CancellationToken::new(),
                march_core::tool::ToolUpdates::discard(),
            )
            .await
        }
    };
    let one = run(serde_json::json!({"path": "j.fk"})).await.unwrap();
    assert_eq!(
        one.text_content(),
        "j.fk (1 error, 0 warnings)\n  2:1 error: BAD is not allowed here [B001] (fake)\nTotal: 1 error, 0 warnings"
    );
    let all = run(serde_json::json!({})).await.unwrap();
    assert_eq!(all.text_content(), one.text_content());
    let err = run(serde_json::json!({"path": "README.md"}))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "README.md is not a file.");
    write(&root, "k.txt", "x");
    let err = run(serde_json::json!({"path": "k.txt"})).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("No language server is configured for k.txt")
    );
    let off = DiagnosticsTool::new(crate::ToolContext::local(&root));
    let err = march_core::tool::Tool::execute(
        &off,
        "t",
        serde_json::json!({}),
        tokio_util::sync::CancellationToken::new(),
        march_core::tool::ToolUpdates::discard(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("Diagnostics are off"));
}

#[tokio::test]
async fn crlf_text_is_checked_and_binary_files_are_not() {
    let (_dir, root) = project();
    let servers = vec![fake(&root, "puller", "pull")];
    let host = LspHost::new(&root, servers.clone(), LONG);
    let access = crate::context::LspAccess {
        source: Arc::new(host.clone()),
        servers: Arc::new(servers),
        wait: LONG,
    };
    let path = write(&root, "w.fk", "ok\r\nBAD\r\n");
    let note = access.note_after_write(&path, "w.fk").await.unwrap();
    assert_eq!(
        note,
        "Diagnostics: 1 error in w.fk after this change:\n2:1 error: BAD is not allowed here [B001] (fake)"
    );
    // A binary file is not handed to a server at all.
    let binary = root.join("b.fk");
    std::fs::write(&binary, b"BAD\0\x01\x02").unwrap();
    assert_eq!(access.note_after_write(&binary, "b.fk").await, None);
    assert_eq!(host.query(None, LONG).await.unwrap().len(), 1);
    // Nor is a huge one, a file no server checks, or one that cannot be read.
    let huge = root.join("h.fk");
    std::fs::write(&huge, "BAD\n".repeat(3 << 20)).unwrap();
    assert_eq!(access.note_after_write(&huge, "h.fk").await, None);
    let other = write(&root, "x.txt", "BAD\n");
    assert_eq!(access.note_after_write(&other, "x.txt").await, None);
    assert_eq!(
        access
            .note_after_write(&root.join("gone.fk"), "gone.fk")
            .await,
        None
    );
}

#[tokio::test]
async fn an_edit_is_told_the_errors_it_brought() {
    let (_dir, root) = project();
    let servers = vec![fake(&root, "puller", "pull")];
    let host = LspHost::new(&root, servers.clone(), LONG);
    let access = crate::context::LspAccess {
        source: Arc::new(host),
        servers: Arc::new(servers),
        wait: LONG,
    };
    let path = write(&root, "n.fk", "BAD one\n");
    // First seen: every error is news.
    assert_eq!(
        access.note_after_write(&path, "n.fk").await.unwrap(),
        "Diagnostics: 1 error in n.fk after this change:\n1:1 error: BAD is not allowed here [B001] (fake)"
    );
    // Same messages are told apart by count, not place: the later one is the new one.
    std::fs::write(&path, "ok\nBAD one\nBAD two\n").unwrap();
    assert_eq!(
        access.note_after_write(&path, "n.fk").await.unwrap(),
        "Diagnostics: 1 new error in n.fk after this change (1 more from before not listed):\n\
         3:1 error: BAD is not allowed here [B001] (fake)"
    );
    std::fs::write(&path, "fine\nBAD one\nBAD two\n").unwrap();
    assert_eq!(
        access.note_after_write(&path, "n.fk").await.unwrap(),
        "Diagnostics: no new errors; n.fk still has 2 errors from before (the diagnostics tool lists them)."
    );
    std::fs::write(&path, "fine\n").unwrap();
    assert_eq!(access.note_after_write(&path, "n.fk").await, None);
}

#[tokio::test]
async fn the_host_process_keeps_its_socket_to_the_user_and_exits_when_alone() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, root) = project();
    let socket = socket_path(&root.join("data"), &root);
    let config = march_core::lsp_config::LspConfig::default();
    let serving = tokio::spawn({
        let (socket, root) = (socket.clone(), root.clone());
        async move { run_host_process(&socket, &root, &config, Duration::from_millis(300)).await }
    });
    let client = HostClient::new(socket.clone(), None);
    let deadline = std::time::Instant::now() + LONG;
    // Connecting waits for the socket; a file no server checks needs no server.
    let checked = loop {
        match client.check(&root.join("x.txt"), "x", LONG).await {
            Ok(c) => break c,
            Err(_) if std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(checked, Checked::default());
    let mode = std::fs::metadata(socket.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    // A second host for the same project gives way at once.
    let other = march_core::lsp_config::LspConfig::default();
    let again = run_host_process(&socket, &root, &other, Duration::from_millis(300));
    tokio::time::timeout(LONG, again).await.unwrap().unwrap();
    drop(client);
    // Alone for the linger time: it stops, and takes its socket with it.
    tokio::time::timeout(LONG, serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(!socket.exists());
}
