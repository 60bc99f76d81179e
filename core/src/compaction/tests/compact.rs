//! The summary requests end to end: a real HTTP provider against the scripted model server,
//! the result appended to a session file, the file reopened.

use march_testkit::{RecordedRequest, Script, ScriptedServer, Turn};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::model::Api;
use crate::provider::{HttpProvider, RetryPolicy, StreamOptions};
use crate::session::{COMPACTION_SUMMARY_PREFIX, EntryKind};

pub(super) fn server_model(server: &ScriptedServer, api: Api) -> Model {
    match api {
        Api::OpenAiCompletions => Model::openai_compatible("scripted", "m1", &server.base_url()),
        Api::AnthropicMessages => Model::anthropic("scripted", "m1", &server.base_url()),
    }
}

pub(super) fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("test-key".into()),
        retry: RetryPolicy::none(),
        ..StreamOptions::default()
    }
}

/// The system prompt and the single user message of a summary request, either wire.
pub(super) fn request_parts(req: &RecordedRequest) -> (String, String) {
    let body = &req.body;
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    };
    let messages = body["messages"].as_array().unwrap();
    let (system, users): (Vec<&Value>, Vec<&Value>) =
        messages.iter().partition(|m| m["role"] == "system");
    let system = match body.get("system") {
        Some(s) => text(s),
        None => text(&system[0]["content"]),
    };
    assert_eq!(users.len(), 1, "one user message: {body}");
    assert_eq!(users[0]["role"], "user");
    assert!(body.get("tools").is_none(), "no tools offered");
    (system, text(&users[0]["content"]))
}

/// u1 (read a.rs) · u2 (edit b.rs) · u3 · reply: keeping 150 tokens cuts at u3.
fn session(store: &mut SessionStore) -> Vec<String> {
    append(
        store,
        vec![
            user("please fix the parser", 400),
            call("c1", "read", json!({"path": "src/a.rs"})),
            result("c1", "read", 400),
            reply("found it", 400),
            user("now edit it", 400),
            call(
                "c2",
                "edit",
                json!({"path": "src/b.rs", "oldText": "x", "newText": "y"}),
            ),
            result("c2", "edit", 40),
            reply("edited", 400),
            user("run the tests", 400),
            reply("all green", 400),
        ],
    )
}

#[tokio::test]
async fn compact_summarises_over_http_and_the_session_reopens_with_the_summary() {
    let server = ScriptedServer::start(Script::new(vec![
        Turn::text("## Goal\nFix the parser"),
        Turn::text("## Goal\nFix the parser, then test"),
    ]))
    .await
    .unwrap();
    let model = server_model(&server, Api::OpenAiCompletions);
    let provider = HttpProvider::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let ids = session(&mut store);

    let settings = keep(150);
    let prep = prepare_compaction(&store.branch_path(None), &settings).unwrap();
    assert_eq!(prep.first_kept_entry_id, ids[8]);
    let result = compact(
        &provider,
        &model,
        &options(),
        &prep,
        Some("the parser bug"),
        CancellationToken::new(),
    )
    .await
    .unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["max_tokens"], 13_107, "0.8 × 16384");
    let (system, prompt) = request_parts(&requests[0]);
    assert_eq!(system, SUMMARIZATION_SYSTEM_PROMPT);
    assert!(
        prompt.starts_with("<conversation>\n[User]: please fix the parser"),
        "{prompt}"
    );
    assert!(prompt.contains("[Assistant tool calls]: read(path=\"src/a.rs\")"));
    assert!(prompt.contains("[Tool result]: result c1"));
    assert!(prompt.contains("[User]: now edit it"));
    assert!(
        !prompt.contains("run the tests"),
        "the kept part is not summarised"
    );
    assert!(prompt.contains(&format!("\n</conversation>\n\n{SUMMARY_PROMPT}")));
    assert!(!prompt.contains("<previous-summary>"));
    assert!(prompt.ends_with("\n\nAdditional focus: the parser bug"));

    let files = "\n\n<read-files>\nsrc/a.rs\n</read-files>\n\n<modified-files>\nsrc/b.rs\n</modified-files>";
    assert_eq!(result.summary, format!("## Goal\nFix the parser{files}"));
    assert_eq!(result.first_kept_entry_id, ids[8]);
    assert_eq!(result.tokens_before, prep.tokens_before);
    assert_eq!(
        result.details,
        json!({"readFiles": ["src/a.rs"], "modifiedFiles": ["src/b.rs"]})
    );

    let compaction_id = apply(&mut store, result.clone()).unwrap().id.clone();
    let (reopened, report) = SessionStore::open(store.path()).unwrap();
    assert!(
        report.skipped.is_empty() && report.warnings.is_empty() && report.truncated_tail.is_none(),
        "{report:?}"
    );
    let entry = reopened.entry(&compaction_id).unwrap();
    let EntryKind::Compaction(c) = &entry.kind else {
        panic!("expected a compaction entry")
    };
    assert_eq!(c.summary, result.summary);
    assert_eq!(c.first_kept_entry_id, ids[8]);
    assert_eq!(c.tokens_before, result.tokens_before);
    assert_eq!(c.details.as_ref(), Some(&result.details));
    let context = reopened.context();
    let llm = context.llm_messages();
    let crate::message::Message::User(first) = &llm[0] else {
        panic!("the context starts with the summary")
    };
    let first = match &first.content {
        crate::message::UserBody::Blocks(b) => match &b[0] {
            UserContent::Text(t) => t.text.clone(),
            UserContent::Image(_) => String::new(),
        },
        crate::message::UserBody::Text(t) => t.clone(),
    };
    assert!(first.starts_with(COMPACTION_SUMMARY_PREFIX));
    assert!(first.contains("## Goal\nFix the parser"));
    assert_eq!(
        labels(&context.messages[1..]),
        ["run the tests", "all green"],
        "then the kept messages"
    );

    // A second compaction updates the first summary and carries its file lists.
    let mut store = reopened;
    append(
        &mut store,
        vec![
            call("c3", "write", json!({"path": "src/c.rs", "content": ""})),
            super::result("c3", "write", 40),
            reply("wrote c", 400),
            user("ship it", 400),
            reply("shipped", 400),
        ],
    );
    let prep = prepare_compaction(&store.branch_path(None), &settings).unwrap();
    assert_eq!(
        prep.previous_summary.as_deref(),
        Some(result.summary.as_str())
    );
    let second = compact(
        &provider,
        &model,
        &options(),
        &prep,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let (_, prompt) = request_parts(&server.requests()[1]);
    assert!(prompt.contains(&format!(
        "\n</conversation>\n\n<previous-summary>\n{}\n</previous-summary>\n\n",
        result.summary
    )));
    assert!(
        prompt.contains("[User]: run the tests"),
        "the previously kept part"
    );
    assert!(prompt.ends_with(UPDATE_SUMMARY_PROMPT));
    assert_eq!(
        second.details,
        json!({"readFiles": ["src/a.rs"], "modifiedFiles": ["src/b.rs", "src/c.rs"]})
    );
    apply(&mut store, second).unwrap();
    let (reopened, _) = SessionStore::open(store.path()).unwrap();
    assert_eq!(
        labels(&reopened.context().messages[1..]),
        ["ship it", "shipped"]
    );
}

#[tokio::test]
async fn a_split_turn_makes_two_requests_and_joins_them() {
    let server = ScriptedServer::start(Script::new(vec![Turn::text("S"), Turn::text("S")]))
        .await
        .unwrap();
    let model = server_model(&server, Api::AnthropicMessages);
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    append(
        &mut store,
        vec![
            user("old request", 400),
            reply("old answer", 400),
            user("big task", 400),
            call("c1", "read", json!({"path": "x.rs"})),
            result("c1", "read", 400),
            call("c2", "read", json!({"path": "y.rs"})),
            result("c2", "read", 400),
        ],
    );
    let prep = prepare_compaction(&store.branch_path(None), &keep(150)).unwrap();
    assert!(prep.is_split_turn);
    let result = compact(
        &HttpProvider::new().unwrap(),
        &model,
        &options(),
        &prep,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(
        result
            .summary
            .starts_with(&format!("S{SPLIT_TURN_SEPARATOR}S\n\n<read-files>"))
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let (history, prefix): (Vec<_>, Vec<_>) = requests
        .iter()
        .partition(|r| request_parts(r).1.contains(SUMMARY_PROMPT));
    let (system, text) = request_parts(history[0]);
    assert_eq!(system, SUMMARIZATION_SYSTEM_PROMPT);
    assert!(text.contains("[User]: old request") && !text.contains("big task"));
    assert_eq!(history[0].body["max_tokens"], 13_107);
    let (system, text) = request_parts(prefix[0]);
    assert_eq!(system, SUMMARIZATION_SYSTEM_PROMPT);
    assert!(text.contains("[User]: big task") && text.ends_with(TURN_PREFIX_PROMPT));
    assert!(!text.contains("old request"));
    assert_eq!(prefix[0].body["max_tokens"], 8_192, "half the reserve");
}

#[tokio::test]
async fn a_split_turn_without_history_asks_only_for_the_prefix() {
    let server = ScriptedServer::start(Script::new(vec![Turn::text("P")]))
        .await
        .unwrap();
    let model = server_model(&server, Api::OpenAiCompletions);
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    append(
        &mut store,
        vec![
            user("task", 400),
            call("c1", "bash", json!({"command": "ls"})),
            result("c1", "bash", 400),
            call("c2", "bash", json!({"command": "pwd"})),
            result("c2", "bash", 400),
        ],
    );
    let prep = prepare_compaction(&store.branch_path(None), &keep(150)).unwrap();
    assert!(prep.is_split_turn && prep.messages_to_summarize.is_empty());
    let result = compact(
        &HttpProvider::new().unwrap(),
        &model,
        &options(),
        &prep,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(
        result.summary,
        format!("{NO_PRIOR_HISTORY}{SPLIT_TURN_SEPARATOR}P")
    );
    assert_eq!(server.requests().len(), 1);
}

/// Prepare a compaction of the standard session, run it against `turns`, and check the
/// store is untouched; returns the error.
async fn failing(turns: Vec<Turn>, cancel: CancellationToken) -> CompactionError {
    let server = ScriptedServer::start(Script::new(turns)).await.unwrap();
    let model = server_model(&server, Api::OpenAiCompletions);
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    session(&mut store);
    let before = std::fs::read(store.path()).unwrap();
    let entries = store.entries().len();
    let prep = prepare_compaction(&store.branch_path(None), &keep(150)).unwrap();
    let error = compact(
        &HttpProvider::new().unwrap(),
        &model,
        &options(),
        &prep,
        None,
        cancel,
    )
    .await
    .unwrap_err();
    assert_eq!(std::fs::read(store.path()).unwrap(), before);
    assert_eq!(store.entries().len(), entries);
    let (reopened, _) = SessionStore::open(store.path()).unwrap();
    assert_eq!(reopened.entries().len(), entries);
    error
}

#[tokio::test]
async fn a_failing_summary_is_an_error_and_writes_nothing() {
    let error = failing(vec![Turn::status(500)], CancellationToken::new()).await;
    assert!(
        matches!(error, CompactionError::Summarization(_)),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(text.starts_with("Summarization failed: HTTP 500"), "{text}");

    let error = failing(vec![Turn::text("   ")], CancellationToken::new()).await;
    assert_eq!(
        error.to_string(),
        "Summarization failed: the model returned an empty summary"
    );

    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = failing(vec![Turn::text("late")], cancel).await;
    assert!(matches!(error, CompactionError::Aborted), "{error:?}");
}

#[tokio::test]
async fn a_failing_turn_prefix_fails_the_compaction() {
    // No history before the turn: the prefix is the only request.
    let server = ScriptedServer::start(Script::new(vec![Turn::status(400)]))
        .await
        .unwrap();
    let model = server_model(&server, Api::OpenAiCompletions);
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    append(
        &mut store,
        vec![
            user("task", 400),
            call("c1", "bash", json!({"command": "ls"})),
            result("c1", "bash", 400),
            call("c2", "bash", json!({"command": "pwd"})),
            result("c2", "bash", 400),
        ],
    );
    let prep = prepare_compaction(&store.branch_path(None), &keep(150)).unwrap();
    let error = compact(
        &HttpProvider::new().unwrap(),
        &model,
        &options(),
        &prep,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("Turn prefix summarization failed: HTTP 400"),
        "{error}"
    );
}

#[test]
fn apply_refuses_a_cut_point_off_the_current_branch() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_store(dir.path());
    let ids = session(&mut store);
    let result = CompactionResult {
        summary: "S".into(),
        first_kept_entry_id: ids[8].clone(),
        tokens_before: 1,
        details: json!({"readFiles": [], "modifiedFiles": []}),
    };
    store.branch(&ids[3]).unwrap();
    let entries = store.entries().len();
    let error = apply(&mut store, result.clone()).unwrap_err();
    assert!(matches!(error, CompactionError::StaleCutPoint(ref id) if *id == ids[8]));
    assert_eq!(store.entries().len(), entries);

    store.branch(&ids[9]).unwrap();
    let entry = apply(&mut store, result).unwrap();
    assert_eq!(entry.parent_id.as_deref(), Some(ids[9].as_str()));
}
