//! `march memory`: a client token made and kept, the server started on a free port, its
//! status and the remote's through that token, a wrong token refused, and the server gone
//! after SIGTERM.

#![allow(clippy::unwrap_used)] // Helpers outside #[test] fns fail the test on setup failure.

use std::process::{Command, Stdio};

use march_e2e::march_bin;

fn march(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(march_bin())
        .args(args)
        .env("MARCH_HOME", home)
        .env_remove("MARCH_MEMORY_TOKEN")
        .output()
        .unwrap()
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_token_a_server_and_its_status() {
    let home = tempfile::tempdir().unwrap();
    let memory = home.path().join("data/memory");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(memory.join("notes.md"), "## Build\n- use the fast linker\n").unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[memory.server]\nlisten = \"127.0.0.1:0\"\n",
    )
    .unwrap();
    // No client yet: the server says how to add one.
    let out = march(home.path(), &["memory", "serve"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("march memory token add"),
        "{}",
        text(&out)
    );

    let out = march(home.path(), &["memory", "token", "add", "laptop"]);
    assert!(out.status.success(), "{}", text(&out));
    let token = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(token.starts_with("mt_") && token.len() == 67, "{token}");
    let auth = std::fs::read_to_string(home.path().join("auth.json")).unwrap();
    assert!(auth.contains("memory-client:laptop"));
    let listed = march(home.path(), &["memory", "token", "list"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "laptop");

    let mut server = Command::new(march_bin())
        .args(["memory", "serve"])
        .env("MARCH_HOME", home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // It says where it serves once it listens (and its state file is written).
    let mut said = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut said,
    )
    .unwrap();
    assert!(said.starts_with("Serving "), "{said}");
    let state = home.path().join("data/memory-server.json");
    let state: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    let listen = state["listen"].as_str().unwrap().to_string();

    // This machine as its own client: the remote memory is the server, through the token.
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[memory]\nremote = \"http://{listen}\"\n\n[memory.server]\nlisten = \"127.0.0.1:0\"\n"
        ),
    )
    .unwrap();
    let out = march(home.path(), &["memory", "status"]);
    let said = text(&out);
    assert!(
        said.contains("Memory server: pid") && said.contains("1 file,"),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "Remote memory: http://{listen} (no token to show it)"
        )),
        "{said}"
    );
    march(home.path(), &["memory", "token", "use", "not-the-token"]);
    let said = text(&march(home.path(), &["memory", "status"]));
    assert!(said.contains("401"), "a wrong token is refused: {said}");
    march(home.path(), &["memory", "token", "use", &token]);
    let said = text(&march(home.path(), &["memory", "status"]));
    assert!(
        said.contains(&format!(
            "Remote memory: http://{listen} (1 file, 31 bytes)"
        )),
        "{said}"
    );
    // The server's log names the client.
    let log = std::fs::read_to_string(home.path().join("data/logs/memory-server.log")).unwrap();
    assert!(
        log.contains("client=\"laptop\"") || log.contains("client=laptop"),
        "{log}"
    );

    rustix::process::kill_process(
        rustix::process::Pid::from_raw(server.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let status = server.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(!home.path().join("data/memory-server.json").exists());
    let said = text(&march(home.path(), &["memory", "status"]));
    assert!(said.contains("not running on this machine"), "{said}");
}
