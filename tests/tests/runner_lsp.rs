//! Diagnostics from a real language server (ruff) through real runners: errors an edit
//! introduces reach the model in the tool result, the `diagnostics` tool lists them, clients
//! that asked get `_march/diagnostics`, and runners of one project share one host process,
//! which exits after the last runner.

#[path = "support/acp_client.rs"]
mod acp_client;

use std::path::{Path, PathBuf};

use acp_client::*;
use agent_client_protocol::v1::schema::{ClientCapabilities, SessionId, StopReason};
use march_testkit::{Event, Turn};
use serde_json::{Value, json};

/// A harness whose config runs only ruff for Python files.
async fn harness(turns: Vec<Turn>) -> Harness {
    let ruff = march_testkit::test_tools::ruff();
    let h = Harness::new(turns).await;
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_else(|e| panic!("read config: {e}"));
    text = format!(
        "{text}\n\
         [lsp]\nwait_ms = 30000\n\
         [lsp.servers.pyright]\nenabled = false\n\
         [lsp.servers.pylsp]\nenabled = false\n\
         [lsp.servers.ruff]\ncommand = \"{}\"\n",
        ruff.display()
    );
    std::fs::write(&config, text).unwrap_or_else(|e| panic!("write config: {e}"));
    h
}

/// Writes without asking.
async fn yolo(client: &AcpClient, session: &SessionId) {
    if let Err(e) = set_option(client, session, "permissions", "yolo").await {
        panic!("yolo: {e}");
    }
}

fn wanting_diagnostics() -> ClientCapabilities {
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), json!({ "diagnostics": true }));
    ClientCapabilities::new().meta(meta)
}

/// A write call whose content may hold newlines and quotes.
fn write(id: &str, path: &str, content: &str) -> Event {
    let args = json!({ "path": path, "content": content }).to_string();
    Event::tool_call(id, "write", &[&args])
}

fn tool_result(body: &Value, id: &str) -> String {
    request_messages(body)
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_else(|| panic!("no result for {id} in {body}"))
}

/// Processes whose working directory is `dir` and whose command line contains `word`.
fn processes_in(dir: &Path, word: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let proc = std::fs::read_dir("/proc").unwrap_or_else(|e| panic!("/proc: {e}"));
    for entry in proc.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cwd = std::fs::read_link(entry.path().join("cwd")).ok();
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cwd.as_deref() == Some(dir) && cmdline.contains(word) {
            found.push(pid);
        }
    }
    found
}

/// The `march lsp-host` processes serving `project`.
fn lsp_hosts(project: &Path) -> usize {
    std::fs::read_dir("/proc")
        .unwrap_or_else(|e| panic!("/proc: {e}"))
        .flatten()
        .filter(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            cmd.contains("lsp-host") && cmd.contains(&*project.to_string_lossy())
        })
        .count()
}

fn host_sockets(h: &Harness) -> Vec<PathBuf> {
    std::fs::read_dir(h.march_home().join("data/lsp"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "sock"))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_an_edit_introduces_reaches_the_model_and_the_client() {
    let h = harness(vec![
        Turn::stream(vec![write(
            "call_1",
            "app.py",
            "import sys\n\nprint(undefined_name)\n",
        )]),
        Turn::stream(vec![Event::tool_call("call_2", "diagnostics", &["{}"])]),
        Turn::stream(vec![write("call_3", "app.py", "print('fixed')\n")]),
        Turn::text("Done."),
    ])
    .await;
    let project = h.project();
    let (mut runner, mut client) = h.connect_offering(wanting_diagnostics()).await;
    let init = client.init.clone().unwrap();
    let meta = serde_json::to_value(&init.agent_capabilities).unwrap();
    assert_eq!(
        meta["_meta"]["march"]["diagnostics"],
        json!({
            "notification": "_march/diagnostics",
            "refresh": "_march/diagnostics/refresh",
        })
    );
    let session = client.new_session(&project).await;
    yolo(&client, &session.session_id).await;
    let prompt = client.prompt(&session.session_id, "write app.py");

    // The client hears of the error as it is found…
    let app = project.join("app.py");
    let seen = loop {
        let params = client.wait_call("_march/diagnostics").await;
        if params["kind"] == "diagnostics" && params["path"] == json!(app) {
            break params;
        }
    };
    assert_eq!(seen["project"], json!(project));
    let found: Vec<(Value, Value, Value, Value)> = seen["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["line"].clone(),
                d["column"].clone(),
                d["severity"].clone(),
                d["code"].clone(),
            )
        })
        .collect();
    // The unused import is a warning, the undefined name an error.
    assert_eq!(
        found,
        [
            (json!(1), json!(8), json!("warning"), json!("F401")),
            (json!(3), json!(7), json!("error"), json!("F821")),
        ]
    );
    // …and again when the fix clears it.
    loop {
        let params = client.wait_call("_march/diagnostics").await;
        if params["path"] == json!(app) && params["diagnostics"] == json!([]) {
            break;
        }
    }
    let response = within("the prompt response", prompt)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);

    let requests = h.server.requests();
    assert_eq!(requests.len(), 4);
    // The model was offered the tool.
    let tools = requests[0].body["tools"].to_string();
    assert!(tools.contains("\"diagnostics\""), "{tools}");
    assert_eq!(
        tool_result(&requests[1].body, "call_1"),
        "Successfully wrote 34 bytes to app.py\n\n\
         Diagnostics: 1 error in app.py after this change:\n\
         3:7 error: Undefined name `undefined_name` [F821] (Ruff)"
    );
    let listed = tool_result(&requests[2].body, "call_2");
    assert!(
        listed.starts_with("app.py (1 error, ")
            && listed.contains("\n  3:7 error: Undefined name `undefined_name` [F821] (Ruff)"),
        "{listed}"
    );
    assert_eq!(
        tool_result(&requests[3].body, "call_3"),
        "Successfully wrote 15 bytes to app.py"
    );

    // One host for the project, and it goes away with the last runner.
    assert_eq!(host_sockets(&h).len(), 1, "{:?}", host_sockets(&h));
    assert_eq!(processes_in(&project, "server").len(), 1, "one ruff");
    client.close().await;
    within("the runner to exit", runner.child.wait())
        .await
        .unwrap();
    within("the host to exit", async {
        while !host_sockets(&h).is_empty() || !processes_in(&project, "server").is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runners_in_one_project_share_one_language_server() {
    let h = harness(vec![
        Turn::stream(vec![write("a", "one.py", "x = y\n")]),
        Turn::text("Done."),
        Turn::stream(vec![write("b", "two.py", "z = w\n")]),
        Turn::text("Done."),
    ])
    .await;
    let project = h.project();
    let (mut first_runner, first) = h.connect().await;
    let (mut second_runner, second) = h.connect().await;
    let s1 = first.new_session(&project).await;
    yolo(&first, &s1.session_id).await;
    within("the first turn", first.prompt(&s1.session_id, "one"))
        .await
        .unwrap()
        .unwrap();
    let s2 = second.new_session(&project).await;
    yolo(&second, &s2.session_id).await;
    within("the second turn", second.prompt(&s2.session_id, "two"))
        .await
        .unwrap()
        .unwrap();
    let requests = h.server.requests();
    assert!(tool_result(&requests[1].body, "a").contains("Undefined name `y`"));
    assert!(tool_result(&requests[3].body, "b").contains("Undefined name `w`"));
    assert_eq!(
        processes_in(&project, "server").len(),
        1,
        "one ruff for both"
    );
    assert_eq!(lsp_hosts(&project), 1, "one host process for the project");
    first.close().await;
    second.close().await;
    within("runners to exit", async {
        first_runner.child.wait().await.unwrap();
        second_runner.child.wait().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_has_files_it_changed_itself_checked_again() {
    use march_runner::diagnostics::RefreshDiagnosticsRequest;
    let h = harness(vec![]).await;
    let project = h.project();
    let (mut runner, client) = h.connect_offering(wanting_diagnostics()).await;
    let session = client.new_session(&project).await;
    let file = project.join("mine.py");
    std::fs::write(&file, "print(nope)\n").unwrap();
    let refresh = |paths: Vec<PathBuf>| {
        client.cx.send_request(RefreshDiagnosticsRequest {
            session_id: session.session_id.0.to_string(),
            paths,
        })
    };
    let found = within(
        "a refresh",
        refresh(vec![file.clone(), project.join("notes.txt")]).block_task(),
    )
    .await
    .unwrap();
    // Only the Python file has a server.
    assert_eq!(found.files.len(), 1);
    assert_eq!(found.files[0].path, file);
    assert!(found.files[0].diagnostics[0].message.contains("nope"));
    std::fs::remove_file(&file).unwrap();
    let found = within("a refresh", refresh(vec![file.clone()]).block_task())
        .await
        .unwrap();
    assert!(found.files[0].diagnostics.is_empty());
    let err = within(
        "a refresh",
        refresh(vec![PathBuf::from("rel.py")]).block_task(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.message, "`rel.py` is not an absolute path");
    client.close().await;
    within("the runner to exit", runner.child.wait())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_touches_no_source_file_starts_no_host() {
    let h = harness(vec![Turn::text("Nothing to edit.")]).await;
    let project = h.project();
    // A client that watches diagnostics, as the workspace does.
    let (_runner, client) = h.connect_offering(wanting_diagnostics()).await;
    let s = client.new_session(&project).await;
    within("the turn", client.prompt(&s.session_id, "hello"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(lsp_hosts(&project), 0, "no language server host");
    assert!(host_sockets(&h).is_empty(), "{:?}", host_sockets(&h));
    client.close().await;
}
