//! `march sandbox`, the launcher that confines an agent's command with Landlock, run as the
//! runner runs it: writes under the project and not outside, no TCP unless allowed, nothing
//! written in read-only. Directories are made under the target's temporary directory, not
//! `/tmp`, which workspace-write lets commands write.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::PermissionOptionKind;
use march_testkit::Turn;

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
