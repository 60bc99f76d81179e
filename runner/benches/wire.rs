//! The ACP line reader (`march_runner::wire`, lines read as bytes, bad ones answered)
//! against what the ACP crate's own byte transport does (`futures`' `BufReader::lines`, which
//! ends the connection on the first line that is not UTF-8), in the same run on the same
//! input: 200,000 `session/update` notifications of typical size (an agent message chunk, a
//! tool call update with a diff, a usage update), about 60 MB, from memory.
//!
//! ```sh
//! cargo bench -p march-runner --bench wire
//! ```
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::time::{Duration, Instant};

use futures_util::StreamExt;

const LINES: usize = 200_000;
const RUNS: usize = 9;

fn input() -> Vec<u8> {
    let chunk = serde_json::json!({"jsonrpc":"2.0","method":"session/update","params":{
        "sessionId":"019ad0e4-6a51-7c3e-9f1b-0c2d4e6f8a10",
        "update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text",
        "text":"Looking at `src/parser.rs`, the nested case fails because the depth counter "}}}})
    .to_string();
    let diff = serde_json::json!({"jsonrpc":"2.0","method":"session/update","params":{
        "sessionId":"019ad0e4-6a51-7c3e-9f1b-0c2d4e6f8a10",
        "update":{"sessionUpdate":"tool_call_update","toolCallId":"call_7","status":"completed",
        "content":[{"type":"diff","path":"/work/app/src/parser.rs",
        "oldText":"fn depth(&self) -> usize {\n    self.stack.len()\n}\n".repeat(8),
        "newText":"fn depth(&self) -> usize {\n    self.stack.len() + 1\n}\n".repeat(8)}]}}})
    .to_string();
    let usage = serde_json::json!({"jsonrpc":"2.0","method":"session/update","params":{
        "sessionId":"019ad0e4-6a51-7c3e-9f1b-0c2d4e6f8a10",
        "update":{"sessionUpdate":"usage_update","used":45600,"size":200000}}})
    .to_string();
    let mut out = Vec::new();
    for i in 0..LINES {
        let line = match i % 10 {
            0 => &diff,
            5 => &usage,
            _ => &chunk,
        };
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

async fn march_reader(input: &'static [u8]) -> usize {
    let (_sink, mut lines) = march_runner::wire::line_halves(
        input,
        tokio::io::sink(),
        march_runner::wire::MAX_LINE_BYTES,
    );
    let mut bytes = 0;
    while let Some(line) = lines.next().await {
        bytes += line.unwrap().len();
    }
    bytes
}

async fn crate_reader(input: &'static [u8]) -> usize {
    use futures_util::AsyncBufReadExt;
    let mut lines = futures_util::io::BufReader::new(futures_util::io::Cursor::new(input)).lines();
    let mut bytes = 0;
    while let Some(line) = lines.next().await {
        bytes += line.unwrap().len();
    }
    bytes
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let input: &'static [u8] = Box::leak(input().into_boxed_slice());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for run in 0..=RUNS {
        let t = Instant::now();
        let a = runtime.block_on(march_reader(input));
        let d_ours = t.elapsed();
        let t = Instant::now();
        let b = runtime.block_on(crate_reader(input));
        let d_theirs = t.elapsed();
        assert_eq!(a, b, "both read the same lines");
        // The first run warms the allocator and caches.
        if run > 0 {
            ours.push(d_ours);
            theirs.push(d_theirs);
        }
    }
    let mb = input.len() as f64 / 1e6;
    let report = |name: &str, d: Duration| {
        println!(
            "{name:<52} {:>8.1} ms  {:>7.0} MB/s",
            d.as_secs_f64() * 1e3,
            mb / d.as_secs_f64()
        );
    };
    println!("{LINES} lines, {mb:.1} MB, median of {RUNS} runs");
    report(
        "futures BufReader::lines (the ACP crate's transport)",
        median(theirs),
    );
    report(
        "march_runner::wire (bytes, -32700 for bad lines)",
        median(ours),
    );
}
