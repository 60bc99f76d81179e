//! `march sandbox`, the launcher that confines an agent's command with Landlock, run as the
//! runner runs it: writes under the project and not outside, no TCP unless allowed, nothing
//! written in read-only. Directories are made under the target's temporary directory, not
//! `/tmp`, which workspace-write lets commands write.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{
    LoadSessionRequest, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionResponse,
    SelectedPermissionOutcome,
};
use march_testkit::{Event, Turn};

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory under the target's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sandbox-tests");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::Builder::new()
        .prefix(name)
        .tempdir_in(&base)
        .unwrap()
        .keep()
}

/// `march sandbox --mode MODE --write PROJECT [EXTRA] -- bash -c SCRIPT`: exit code and
/// output (stdout and stderr).
fn confined(mode: &str, project: &Path, extra: &[&str], script: &str) -> (i32, String) {
    let out = Command::new(march_e2e::march_bin())
        .args(["sandbox", "--mode", mode, "--write"])
        .arg(project)
        .args(extra)
        .args(["--", "bash", "-c", script])
        .env("TMPDIR", "/tmp")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// Whether this kernel confines commands; when it does not, the launcher must say so plainly
/// (and the tests of what it confines have nothing to check).
fn kernel_confines() -> bool {
    let project = scratch("probe");
    let (code, out) = confined("workspace-write", &project, &[], "true");
    if code == 0 {
        return true;
    }
    assert_eq!(code, 126, "{out}");
    assert!(out.contains("this kernel cannot"), "{out}");
    eprintln!("this kernel has no Landlock with network rules: {out}");
    false
}

#[test]
fn workspace_write_writes_in_the_project_only() {
    if !kernel_confines() {
        return;
    }
    let project = scratch("project");
    let outside = scratch("outside");
    let script = format!("echo in > {}/inside.txt && echo ok", project.display());
    let (code, out) = confined("workspace-write", &project, &[], &script);
    assert_eq!((code, out.trim()), (0, "ok"), "{out}");
    assert!(project.join("inside.txt").exists());

    let script = format!("echo out > {}/outside.txt", outside.display());
    let (code, out) = confined("workspace-write", &project, &[], &script);
    assert_ne!(code, 0);
    assert!(out.contains("Permission denied"), "{out}");
    assert!(!outside.join("outside.txt").exists());
    // Output thrown away and temporary files still work.
    let (code, out) = confined(
        "workspace-write",
        &project,
        &[],
        "echo x > /dev/null && t=$(mktemp) && echo y > $t && rm $t && echo fine",
    );
    assert_eq!((code, out.trim()), (0, "fine"), "{out}");
}

#[test]
fn the_network_is_off_unless_allowed() {
    if !kernel_confines() {
        return;
    }
    let project = scratch("net");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let (code, out) = confined("workspace-write", &project, &[], &script);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    let (code, out) = confined("workspace-write", &project, &["--network"], &script);
    assert_eq!((code, out.trim()), (0, "connected"), "{out}");
    let (code, out) = confined("full", &project, &[], &script);
    assert_eq!((code, out.trim()), (0, "connected"), "{out}");
}

#[test]
fn read_only_writes_nothing() {
    if !kernel_confines() {
        return;
    }
    let project = scratch("readonly");
    let script = format!("echo x > {}/file.txt", project.display());
    let (code, out) = confined("read-only", &project, &[], &script);
    assert_ne!(code, 0);
    assert!(out.contains("Permission denied"), "{out}");
    assert!(!project.join("file.txt").exists());
    let (code, out) = confined(
        "read-only",
        &project,
        &[],
        "cat /etc/hostname > /dev/null && echo read",
    );
    assert_eq!((code, out.trim()), (0, "read"), "{out}");
}

#[test]
fn a_bad_mode_or_no_command_is_said() {
    let project = scratch("bad");
    let (code, out) = confined("open", &project, &[], "true");
    assert_eq!(code, 126);
    assert!(out.contains("unknown sandbox mode"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_is_told_a_refusal_is_the_sandboxs() {
    let outside = scratch("model-outside");
    let command = format!("echo x > {}/file.txt", outside.display());
    let h = Harness::new(vec![
        Turn::stream(vec![bash_call("call_1", &command)]),
        Turn::text("Understood."),
    ])
    .await;
    let (_runner, mut client) = h.connect().await;
    let session = client.new_session(&h.project()).await.session_id;
    let prompt = client.prompt(&session, "write outside");
    let (request, responder) = client.wait_permission().await;
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    within("the prompt", prompt).await.unwrap().unwrap();
    let requests = h.server.requests();
    let result = requests[1].body.to_string();
    if kernel_confines() {
        assert!(result.contains("Permission denied"), "{result}");
        assert!(result.contains("workspace-write sandbox"), "{result}");
    } else {
        assert!(result.contains("cannot be enforced"), "{result}");
    }
    assert!(!outside.join("file.txt").exists());
    client.close().await;
}

/// The config option `id`'s current value in a `configOptions` list.
fn current_option(options: &serde_json::Value, id: &str) -> String {
    let options = options.as_array().cloned().unwrap_or_default();
    let option = options.iter().find(|o| o["id"] == id);
    let option = option.unwrap_or_else(|| panic!("no option {id} in {options:?}"));
    option["currentValue"].as_str().unwrap_or("?").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_command_runs_outside_the_sandbox_once_the_user_allows_it() {
    let outside = scratch("let-out");
    let target = outside.join("file.txt");
    let command = format!("echo x > {}", target.display());
    let again = Event::tool_call(
        "call_2",
        "bash",
        &[&serde_json::json!({ "command": command, "outside_sandbox": true }).to_string()],
    );
    let h = Harness::new(vec![
        Turn::stream(vec![bash_call("call_1", &command)]),
        Turn::stream(vec![again]),
        Turn::text("Written."),
    ])
    .await;
    let (_runner, mut client) = h.connect().await;
    let session = client.new_session(&h.project()).await.session_id;
    let prompt = client.prompt(&session, "write outside");
    // In the sandbox first: refused (or not run, on a kernel that cannot confine).
    let (request, responder) = client.wait_permission().await;
    let ids: Vec<&str> = request.options.iter().map(|o| &*o.option_id.0).collect();
    assert!(ids.contains(&"allow-outside-sandbox"), "{ids:?}");
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    // The model asks to run it outside: the user is asked that, and lets it out.
    let (request, responder) = client.wait_permission().await;
    assert_eq!(request.tool_call.tool_call_id.0.as_ref(), "call_2");
    // What was asked is the one allow, and the request says it leaves the sandbox.
    assert_eq!(request.options.len(), 2);
    let first = &request.options[0];
    assert_eq!(first.option_id.0.as_ref(), "allow-outside-sandbox");
    let meta = serde_json::Value::Object(request.meta.clone().unwrap_or_default());
    assert_eq!(meta["march"]["sandbox"]["outside"], true, "{meta}");
    assert_eq!(first.name, "Allow once, outside the sandbox");
    assert!(
        !request
            .options
            .iter()
            .any(|o| o.kind == PermissionOptionKind::AllowAlways),
        "leaving the sandbox is never remembered: {request:?}"
    );
    responder
        .respond(RequestPermissionResponse::new(
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                first.option_id.clone(),
            )),
        ))
        .unwrap();
    within("the prompt", prompt).await.unwrap().unwrap();
    let requests = h.server.requests();
    let refused = requests[1].body.to_string();
    assert!(refused.contains("outside_sandbox"), "{refused}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x\n");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_is_a_session_option_that_follows_yolo_until_chosen_and_is_kept() {
    let h = Harness::new(vec![
        Turn::stream(vec![bash_call("call_1", "echo x > inside.txt")]),
        Turn::text("Tried."),
    ])
    .await;
    let project = h.project();
    let (mut runner, mut client) = h.connect().await;
    let created = client.new_session(&project).await;
    let session = created.session_id;
    let options = serde_json::to_value(created.config_options).unwrap();
    assert_eq!(current_option(&options, "sandbox"), "workspace-write");
    let options = set_option(&client, &session, "permissions", "yolo")
        .await
        .unwrap();
    assert_eq!(current_option(&options, "sandbox"), "full");
    let options = set_option(&client, &session, "sandbox", "read-only")
        .await
        .unwrap();
    assert_eq!(current_option(&options, "sandbox"), "read-only");
    // Chosen: the mode no longer moves it.
    let options = set_option(&client, &session, "permissions", "ask")
        .await
        .unwrap();
    assert_eq!(current_option(&options, "sandbox"), "read-only");
    let err = set_option(&client, &session, "sandbox", "open")
        .await
        .unwrap_err();
    assert!(err.message.contains("unknown sandbox mode"), "{err:?}");

    let prompt = client.prompt(&session, "write inside");
    let (request, responder) = client.wait_permission().await;
    choose(&request, responder, PermissionOptionKind::AllowOnce);
    within("the prompt", prompt).await.unwrap().unwrap();
    let result = h.server.requests()[1].body.to_string();
    if kernel_confines() {
        assert!(result.contains("read-only sandbox"), "{result}");
    } else {
        assert!(result.contains("cannot be enforced"), "{result}");
    }
    assert!(!project.join("inside.txt").exists());
    client.drain();
    client.close().await;
    within("the runner to exit", runner.child.wait())
        .await
        .unwrap();

    // A new runner opens the session in the sandbox chosen for it.
    let (_runner, client) = h.connect().await;
    let loaded = within(
        "session/load",
        client
            .cx
            .send_request(LoadSessionRequest::new(session.clone(), project.clone()))
            .block_task(),
    )
    .await
    .unwrap();
    let options = serde_json::to_value(loaded.config_options).unwrap();
    assert_eq!(current_option(&options, "sandbox"), "read-only");
    client.close().await;
}
