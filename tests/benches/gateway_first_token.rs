//! The gateway's cost (issue 25): prompt to first token through `march gateway`'s HTTP API
//! (a streamed answer: the POST sent to its first `text` event read) against `march send`
//! on the same workspace (the process started to the first text on a control-socket watch
//! of the session), interleaved in one run, both answered by the same scripted model server;
//! and, as the floor both stand on, a `send` written straight to the control socket.
//!
//! Run: `cargo bench -p march-e2e --bench gateway_first_token` (about half a minute).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A bench: failing loudly is the point.

#[path = "support/samples.rs"]
mod samples;

#[path = "../tests/support/acp_client.rs"]
mod acp_client;
#[path = "../tests/support/gateway.rs"]
mod gateway;
#[path = "../tests/support/pty.rs"]
mod pty;
#[path = "../tests/support/workspace.rs"]
mod workspace;

use samples::report;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use gateway::{Gateway, Stream};
use march_testkit::Turn;
use serde_json::{Value, json};
use workspace::*;

/// Prompts timed per way in.
const PROMPTS: usize = 30;

/// One control frame: `request` as the control CLI sends it.
fn control_frame(request: Value) -> Vec<u8> {
    let body = json!({"version": 2, "request": request}).to_string();
    let mut frame = ((body.len() + 1) as u32).to_be_bytes().to_vec();
    frame.push(5);
    frame.extend_from_slice(body.as_bytes());
    frame
}

/// Sends `text` to session 1 straight on the control socket (no process, no lookup) and
/// reads the answer.
fn send_direct(socket: &std::path::Path, text: &str) {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream
        .write_all(&control_frame(
            json!({"command": "send", "session": 1, "text": text}),
        ))
        .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
}

/// Watches session 1 of the workspace at `socket` on the control socket: each event, as
/// JSON, on the channel.
fn watch(socket: &std::path::Path) -> mpsc::Receiver<Value> {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream
        .write_all(&control_frame(json!({"command": "watch", "session": 1})))
        .unwrap();
    let (events, rx) = mpsc::channel();
    std::thread::spawn(move || {
        loop {
            let mut head = [0u8; 4];
            if stream.read_exact(&mut head).is_err() {
                return;
            }
            let mut body = vec![0u8; u32::from_be_bytes(head) as usize];
            if stream.read_exact(&mut body).is_err() {
                return;
            }
            let reply: Value = serde_json::from_slice(&body[1..]).unwrap();
            if events.send(reply["ok"].clone()).is_err() {
                return;
            }
        }
    });
    rx
}

/// Waits for an event named `name` on `events`.
fn next(events: &mpsc::Receiver<Value>, name: &str) {
    loop {
        let event = events.recv_timeout(Duration::from_secs(60)).unwrap();
        if event["event"] == name {
            return;
        }
    }
}

fn main() {
    let turns = (0..3 * PROMPTS)
        .map(|i| Turn::text(format!("first token {i}")))
        .collect();
    let h = tokio_harness(turns);
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    text.push_str("\n[gateway]\nlisten = \"127.0.0.1:0\"\n");
    std::fs::write(&config, text).unwrap();
    let m = start(&h);
    let (code, out) = m.cli(&["gateway", "token", "add", "bench"]);
    assert_eq!(code, 0, "{out}");
    let token = out.lines().next().unwrap().trim().to_string();
    let gw = Gateway::start(m.command(&["gateway"]));
    let socket = h.march_home().join("run/march/project.sock");
    let events = watch(&socket);
    next(&events, "attention");

    let (mut through_gateway, mut through_send, mut direct) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..PROMPTS {
        let began = Instant::now();
        let mut stream = Stream::prompt(
            &gw.addr,
            &token,
            json!({ "session": "1", "text": format!("gateway {i}"), "stream": true }),
        );
        stream.until("event: text");
        through_gateway.push(began.elapsed());
        stream.until("event: end");
        next(&events, "turn-end");
        while events.try_recv().is_ok() {}

        let began = Instant::now();
        let out = m
            .command(&["send", "-t", "1", &format!("send {i}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        next(&events, "text");
        through_send.push(began.elapsed());
        next(&events, "turn-end");

        let began = Instant::now();
        send_direct(&socket, &format!("direct {i}"));
        next(&events, "text");
        direct.push(began.elapsed());
        next(&events, "turn-end");
    }
    report("gateway HTTP stream: POST to first text", through_gateway);
    report("march send: start to first text (watch)", through_send);
    report("control socket send: to first text (floor)", direct);
    gw.stop();
}
