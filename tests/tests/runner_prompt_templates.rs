//! Prompt templates through a real runner: found in the project's `.march/prompts/`, the
//! config directory's `prompts/` and Claude Code's `~/.claude/commands/`, announced as slash
//! commands with their descriptions and argument hints, and a prompt naming one reaches the
//! model expanded with pi's argument rules (and is recorded so in the session file).

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{AvailableCommandInput, SessionUpdate};
use march_testkit::Turn;

fn write(path: std::path::PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap_or_else(|| panic!("no parent")))
        .unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn templates_are_announced_and_expanded_before_the_model_sees_them() {
    let h = Harness::new(vec![Turn::text("Made it.")]).await;
    write(
        h.project().join(".march/prompts/component.md"),
        "---\ndescription: Create a component\nargument-hint: NAME FEATURES…\n---\nCreate $1 with: ${@:2}\n",
    );
    write(
        h.march_home().join("prompts/review.md"),
        "Review the staged changes\n",
    );
    write(
        h.dir.path().join("home/.claude/commands/explain.md"),
        "Explain $ARGUMENTS simply.",
    );
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let announced = client
        .wait_update(|u| matches!(u, SessionUpdate::AvailableCommandsUpdate(_)))
        .await;
    let SessionUpdate::AvailableCommandsUpdate(update) = announced else {
        unreachable!()
    };
    let commands = &update.available_commands;
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["compact", "review", "explain", "component"]);
    let component = commands
        .iter()
        .find(|c| c.name == "component")
        .unwrap_or_else(|| panic!());
    assert_eq!(component.description, "Create a component (project)");
    match &component.input {
        Some(AvailableCommandInput::Unstructured(input)) => {
            assert_eq!(input.hint, "NAME FEATURES…")
        }
        other => panic!("no input hint: {other:?}"),
    }
    let review = commands
        .iter()
        .find(|c| c.name == "review")
        .unwrap_or_else(|| panic!());
    assert_eq!(review.description, "Review the staged changes (user)");
    assert!(
        review.input.is_none(),
        "a template without arguments takes none"
    );

    prompt_ok(
        &client,
        &id,
        r#"/component Button "click handler" disabled"#,
    )
    .await;
    let requests = h.server.requests();
    let body = requests[0].body.to_string();
    assert!(
        body.contains("Create Button with: click handler disabled"),
        "{body}"
    );
    assert!(!body.contains("/component"), "{body}");
    let file = std::fs::read_to_string(file_of(&h.sessions_dir(), &id))
        .unwrap_or_else(|e| panic!("session file: {e}"));
    assert!(
        file.contains("Create Button with: click handler disabled"),
        "{file}"
    );
    client.close().await;
}
