//! Server behaviour over real sockets: statuses, routing, broken streams, recording.

use crate::client::{get, post_json, send};
use crate::{Event, RecordedRequest, Script, ScriptedServer, ServerOptions, Turn};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const OPENAI: &str = "/v1/chat/completions";
const ANTHROPIC: &str = "/v1/messages";

async fn server(turns: Vec<Turn>) -> anyhow::Result<ScriptedServer> {
    Ok(ScriptedServer::start(Script::new(turns)).await?)
}

fn request() -> Value {
    json!({"model": "m", "stream": true})
}

#[tokio::test]
async fn status_429_carries_retry_after_and_a_wire_specific_error() -> anyhow::Result<()> {
    let s = server(vec![
        Turn::status(429).with_retry_after("7"),
        Turn::status(529),
    ])
    .await?;
    let openai = post_json(s.addr(), OPENAI, &request()).await?;
    assert_eq!(openai.status, 429);
    assert_eq!(openai.header("retry-after"), Some("7"));
    assert_eq!(openai.header("content-type"), Some("application/json"));
    assert!(openai.complete);
    assert_eq!(
        openai.json()?,
        json!({"error": {"message": "scripted status 429", "type": "scripted_error"}})
    );
    let anthropic = post_json(s.addr(), ANTHROPIC, &request()).await?;
    assert_eq!(anthropic.status, 529);
    assert_eq!(anthropic.header("retry-after"), None);
    assert_eq!(
        anthropic.json()?,
        json!({"type": "error", "error": {"type": "scripted_error", "message": "scripted status 529"}})
    );
    Ok(())
}

#[tokio::test]
async fn html_error_page_is_sent_verbatim() -> anyhow::Result<()> {
    let page = "<html><body><h1>502 Bad Gateway</h1></body></html>";
    let s = server(vec![Turn::html(502, page)]).await?;
    let response = post_json(s.addr(), OPENAI, &request()).await?;
    assert_eq!(response.status, 502);
    assert_eq!(response.header("content-type"), Some("text/html"));
    assert_eq!(
        response.header("content-length"),
        Some(page.len().to_string().as_str())
    );
    assert_eq!(response.text(), page);
    Ok(())
}

#[tokio::test]
async fn exhausted_script_answers_500_and_both_formats_share_the_queue() -> anyhow::Result<()> {
    let s = server(vec![Turn::text("one")]).await?;
    s.push_turn(Turn::text("two"));
    assert_eq!(s.remaining_turns(), 2);
    let first = post_json(s.addr(), ANTHROPIC, &request()).await?;
    assert!(first.text().contains("\"text\":\"one\""));
    assert!(first.text().contains("msg_scripted_1"));
    let second = post_json(s.addr(), OPENAI, &request()).await?;
    assert!(second.text().contains("\"content\":\"two\""));
    assert!(second.text().contains("chatcmpl-scripted-2"));
    assert_eq!(s.remaining_turns(), 0);
    for path in [OPENAI, ANTHROPIC] {
        let response = post_json(s.addr(), path, &request()).await?;
        assert_eq!(response.status, 500);
        assert!(
            response
                .text()
                .contains("scripted server: script exhausted")
        );
    }
    Ok(())
}

#[tokio::test]
async fn models_listing_does_not_consume_a_turn() -> anyhow::Result<()> {
    let script = Script::new(vec![Turn::text("kept")]).with_models(["a", "b"]);
    let s = ScriptedServer::start(script).await?;
    let response = get(s.addr(), "/v1/models").await?;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.json()?,
        json!({"object": "list", "data": [
            {"id": "a", "object": "model", "created": 0, "owned_by": "scripted"},
            {"id": "b", "object": "model", "created": 0, "owned_by": "scripted"},
        ]})
    );
    assert_eq!(s.remaining_turns(), 1);
    let missing = get(s.addr(), "/v1/nothing").await?;
    assert_eq!(missing.status, 404);
    assert!(missing.json()?["error"]["message"].is_string());
    let paths: Vec<String> = s.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/models", "/v1/nothing"]);
    Ok(())
}

#[tokio::test]
async fn drop_closes_without_terminator_or_done() -> anyhow::Result<()> {
    let s = server(vec![Turn::stream(vec![
        Event::text("partial"),
        Event::Drop,
    ])])
    .await?;
    let response = post_json(s.addr(), OPENAI, &request()).await?;
    assert_eq!(response.status, 200);
    assert!(!response.complete);
    let text = response.text();
    assert!(text.contains("partial"));
    assert!(!text.contains("[DONE]") && !text.contains("finish_reason\":\"stop"));
    Ok(())
}

#[tokio::test]
async fn cut_chunk_leaves_a_short_final_chunk() -> anyhow::Result<()> {
    let s = server(vec![Turn::stream(vec![Event::text("x"), Event::CutChunk])]).await?;
    let response = post_json(s.addr(), ANTHROPIC, &request()).await?;
    assert!(!response.complete);
    assert_eq!(response.chunks.last().map(Vec::len), Some(10));
    assert!(!response.text().contains("message_stop"));
    Ok(())
}

#[tokio::test]
async fn raw_bytes_and_lines_arrive_verbatim_as_their_own_chunks() -> anyhow::Result<()> {
    let bytes = vec![b'd', b'a', b't', b'a', b':', b' ', 0xff, 0xfe, b'\n', b'\n'];
    let turn = Turn::stream(vec![
        Event::raw_bytes(bytes.clone()),
        Event::raw_line("data: {not json"),
    ]);
    let s = server(vec![turn]).await?;
    let response = post_json(s.addr(), OPENAI, &request()).await?;
    assert!(response.complete);
    assert_eq!(response.chunks[1], bytes);
    assert_eq!(response.chunks[2], b"data: {not json\n\n");
    Ok(())
}

#[tokio::test]
async fn requests_are_recorded_with_lowercased_headers_and_parsed_bodies() -> anyhow::Result<()> {
    let seen = Arc::new(Mutex::new(Vec::<RecordedRequest>::new()));
    let hook_seen = seen.clone();
    let options = ServerOptions {
        port: 0,
        on_request: Some(Arc::new(move |r: &RecordedRequest| {
            if let Ok(mut list) = hook_seen.lock() {
                list.push(r.clone());
            }
        })),
    };
    let s =
        ScriptedServer::start_with(Script::new(vec![Turn::text("a"), Turn::text("b")]), options)
            .await?;
    let body = json!({"model": "claude-x", "messages": [{"role": "user", "content": "hi"}]});
    let headers = [("X-Api-Key", "secret"), ("Anthropic-Version", "2023-06-01")];
    let response = send(
        s.addr(),
        "POST",
        "/v1/messages?beta=true",
        &headers,
        body.to_string().as_bytes(),
    )
    .await?;
    assert!(response.text().contains("\"model\":\"claude-x\""));
    send(s.addr(), "POST", OPENAI, &[], b"not json").await?;

    let requests = s.wait_for_requests(2).await;
    let first = &requests[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/messages?beta=true");
    assert_eq!(first.header("x-api-key"), Some("secret"));
    assert!(
        first
            .headers
            .iter()
            .any(|(n, v)| n == "anthropic-version" && v == "2023-06-01")
    );
    assert!(
        first
            .headers
            .iter()
            .all(|(n, _)| *n == n.to_ascii_lowercase())
    );
    assert_eq!(first.body, body);
    assert_eq!(requests[1].body, Value::Null);
    assert_eq!(requests[1].raw_body, "not json");
    assert_eq!(seen.lock().map(|l| l.clone()).unwrap_or_default(), requests);
    Ok(())
}

#[tokio::test]
async fn client_hanging_up_mid_stream_does_not_disturb_the_server() -> anyhow::Result<()> {
    let slow = Turn::stream(vec![
        Event::text("first"),
        Event::pause(50),
        Event::text("late"),
    ]);
    let s = server(vec![slow, Turn::text("next")]).await?;
    let mut stream = TcpStream::connect(s.addr()).await?;
    let body = request().to_string();
    let head = format!(
        "POST {OPENAI} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    // Wait for the first event, then hang up while the server is paused.
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&seen).contains("first") {
        let n = stream.read(&mut buf).await?;
        anyhow::ensure!(n > 0, "closed before the first event");
        seen.extend_from_slice(&buf[..n]);
    }
    drop(stream);
    let next = post_json(s.addr(), OPENAI, &request()).await?;
    assert!(next.complete);
    assert!(next.text().contains("\"content\":\"next\""));
    Ok(())
}

#[tokio::test]
async fn malformed_request_gets_400_and_is_not_recorded() -> anyhow::Result<()> {
    let s = server(vec![Turn::text("unused")]).await?;
    let mut stream = TcpStream::connect(s.addr()).await?;
    stream.write_all(b"GARBAGE\r\n\r\n").await?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await?;
    assert!(reply.starts_with("HTTP/1.1 400 "));
    assert!(s.requests().is_empty());
    assert_eq!(s.remaining_turns(), 1);
    Ok(())
}
