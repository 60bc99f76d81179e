//! Prompt templates and skills through a real runner. Templates: found in the project's
//! `.march/prompts/`, the config directory's `prompts/` and Claude Code's
//! `~/.claude/commands/`, announced as slash commands with their descriptions and argument
//! hints, and a prompt naming one reaches the model expanded with pi's argument rules (and is
//! recorded so in the session file). Skills: listed in the system prompt, put into the prompt
//! by `/skill:NAME`, listed by `/skills` with the invalid one reported. Structured output: a
//! prompt with `_meta.march.responseSchema` gets a checked answer, asked again with the error.

#[path = "support/acp_client.rs"]
mod acp_client;

use acp_client::*;
use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, PromptRequest, SessionUpdate,
    StopReason, TextContent,
};
use march_runner::structured_output::{SchemaRequest, StructuredResult};
use march_testkit::Turn;
use serde_json::json;

fn write(path: std::path::PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap_or_else(|| panic!("no parent")))
        .unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// The commands the session announces first.
async fn announced(client: &mut AcpClient) -> Vec<AvailableCommand> {
    let update = client
        .wait_update(|u| matches!(u, SessionUpdate::AvailableCommandsUpdate(_)))
        .await;
    match update {
        SessionUpdate::AvailableCommandsUpdate(update) => update.available_commands,
        _ => unreachable!(),
    }
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
    let commands = &announced(&mut client).await;
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["compact", "skills", "review", "explain", "component"]
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_listed_to_the_model_and_put_into_a_prompt_by_name() {
    let h = Harness::new(vec![Turn::text("Hello."), Turn::text("Extracted.")]).await;
    write(
        h.project().join(".march/skills/pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Work with PDF files\n---\nUse pdftotext -layout.\n",
    );
    write(
        h.project().join(".claude/skills/broken/SKILL.md"),
        "---\nname: broken\n---\nno description\n",
    );
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let commands = announced(&mut client).await;
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["compact", "skills", "skill:pdf"]);

    // The system prompt lists it (the read tool is on).
    prompt_ok(&client, &id, "hello").await;
    let first = h.server.requests()[0].body.to_string();
    assert!(
        first.contains("<available_skills>") && first.contains("<name>pdf</name>"),
        "{first}"
    );

    // `/skills` answers without the model, naming the one skipped.
    prompt_ok(&client, &id, "/skills").await;
    let said: String = client.drain().iter().filter_map(chunk_text).collect();
    assert!(
        said.contains("- pdf: Work with PDF files (project"),
        "{said}"
    );
    assert!(
        said.contains("broken") && said.contains("no description"),
        "{said}"
    );
    assert_eq!(h.server.requests().len(), 1);

    prompt_ok(&client, &id, "/skill:pdf page 2 only").await;
    let second = h.server.requests()[1].body.to_string();
    assert!(
        second.contains("<skill name=\\\"pdf\\\"") && second.contains("Use pdftotext -layout."),
        "{second}"
    );
    assert!(second.contains("page 2 only"), "{second}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_with_a_response_schema_gets_a_checked_answer() {
    let h = Harness::new(vec![
        Turn::text(r#"{"n": "one"}"#),
        Turn::text(r#"{"n": 1}"#),
    ])
    .await;
    let (_runner, mut client) = h.connect().await;
    let id = client.new_session(&h.project()).await.session_id;
    let cx = client.cx.clone();
    let ask = |schema: serde_json::Value| {
        let request = PromptRequest::new(
            id.clone(),
            vec![ContentBlock::Text(TextContent::new("count"))],
        )
        .meta(
            SchemaRequest {
                schema,
                retries: None,
            }
            .prompt_meta(),
        );
        tokio::spawn(cx.send_request(request).block_task())
    };
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}},
        "required": ["n"]});
    let response = within("the prompt", ask(schema.clone()))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("prompt failed: {e}"));
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(
        StructuredResult::of(&response),
        Some(StructuredResult {
            value: Some(json!({"n": 1})),
            error: None,
            answers: 2,
        })
    );
    // The request for a corrected answer reached the client as a marked user message.
    let updates = client.drain();
    let retry = updates
        .iter()
        .find_map(|u| match u {
            SessionUpdate::UserMessageChunk(chunk) => Some(chunk),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no retry message in {updates:?}"));
    let meta = serde_json::Value::Object(retry.meta.clone().unwrap_or_default());
    assert_eq!(meta["march"]["schemaRetry"], true);
    let ContentBlock::Text(text) = &retry.content else {
        panic!("{retry:?}")
    };
    assert!(text.text.contains("/n"), "{}", text.text);
    let requests = h.server.requests();
    assert_eq!(
        requests[0].body["response_format"]["json_schema"]["schema"],
        schema
    );

    // A schema that is not one is refused before anything runs.
    let err = within("the refused prompt", ask(json!({"type": 12})))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(
        err.message.contains("not a valid JSON Schema"),
        "{}",
        err.message
    );
    assert_eq!(h.server.requests().len(), 2);
}
