//! Loop overhead per streamed token: the scripted model server streams N text deltas over
//! real HTTP; we time (a) reading the raw SSE body with reqwest, (b) the provider's event
//! stream, (c) the whole agent loop into a Vec sink, (d) an `Agent` with one listener.
//! (c) − (a) is what March adds per token on top of the transport. (e) replays the same
//! provider events from memory, so it is the loop's own cost per token with no I/O at all.
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use march_core::agent::Agent;
use march_core::agent_loop::{LoopConfig, LoopContext, run_agent_loop};
use march_core::event::AgentEvent;
use march_core::event::AssistantStreamEvent;
use march_core::message::Message;
use march_core::message::{AssistantContent, AssistantMessage, StopReason, TextContent};
use march_core::model::Model;
use march_core::provider::{
    AssistantEventStream, HttpProvider, LlmContext, StreamFn, StreamOptions,
};
use march_testkit::{Event, Script, ScriptedServer, Turn};
use tokio_util::sync::CancellationToken;

const TOKENS: usize = 1000;

fn turn() -> Turn {
    Turn::stream(
        (0..TOKENS)
            .map(|i| Event::text(format!("tok{i} ")))
            .collect(),
    )
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let server = rt
        .block_on(ScriptedServer::start(Script::new(vec![])))
        .expect("server");
    let model = Model::openai_compatible("scripted", "m", &server.base_url());
    let provider = Arc::new(HttpProvider::new().expect("client"));
    let client = reqwest_client();
    let mut group = c.benchmark_group("loop_overhead");
    group.throughput(Throughput::Elements(TOKENS as u64));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));

    group.bench_function("a_raw_http_sse_body", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                server.push_turn(turn());
                let url = format!("{}/chat/completions", server.base_url());
                let start = Instant::now();
                rt.block_on(async {
                    let resp = client
                        .post(&url)
                        .body(r#"{"model":"m","stream":true,"messages":[]}"#)
                        .send()
                        .await
                        .expect("send");
                    let body = resp.bytes().await.expect("body");
                    assert!(body.len() > TOKENS * 10);
                });
                total += start.elapsed();
            }
            total
        })
    });

    group.bench_function("b_provider_events", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                server.push_turn(turn());
                let start = Instant::now();
                rt.block_on(async {
                    let mut s = provider.stream(
                        &model,
                        LlmContext {
                            messages: vec![Message::user("hi")],
                            ..LlmContext::default()
                        },
                        StreamOptions::default(),
                        CancellationToken::new(),
                    );
                    let mut n = 0;
                    while let Some(ev) = s.next().await {
                        n += 1;
                        if ev.is_terminal() {
                            break;
                        }
                    }
                    assert!(n > TOKENS);
                });
                total += start.elapsed();
            }
            total
        })
    });

    group.bench_function("c_agent_loop_events", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                server.push_turn(turn());
                let config = LoopConfig::new(model.clone(), provider.clone());
                let start = Instant::now();
                rt.block_on(loop_once(config));
                total += start.elapsed();
            }
            total
        })
    });

    group.bench_function("d_agent_with_listener", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                server.push_turn(turn());
                let agent =
                    Agent::new(LoopConfig::new(model.clone(), provider.clone()), "", vec![]);
                let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
                let c2 = count.clone();
                agent.subscribe(move |_, _| {
                    c2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    async {}
                });
                let start = Instant::now();
                rt.block_on(async {
                    agent
                        .prompt(vec![Message::user("hi")])
                        .await
                        .expect("prompt");
                });
                total += start.elapsed();
                assert!(count.load(std::sync::atomic::Ordering::Relaxed) > TOKENS);
            }
            total
        })
    });
    group.bench_function("e_agent_loop_in_memory_stream", |b| {
        let replay = Arc::new(Replay);
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                let config = LoopConfig::new(model.clone(), replay.clone());
                rt.block_on(loop_once(config));
            }
            start.elapsed()
        })
    });
    group.finish();
}

/// One prompt through the loop into a Vec sink.
async fn loop_once(config: LoopConfig) {
    let mut sink: Vec<AgentEvent> = Vec::with_capacity(TOKENS + 16);
    run_agent_loop(
        vec![Message::user("hi")],
        LoopContext::default(),
        config,
        CancellationToken::new(),
        &mut sink,
        false,
    )
    .await;
    assert!(sink.len() > TOKENS);
}

/// A provider that replays a text response of `TOKENS` deltas from memory.
struct Replay;

impl StreamFn for Replay {
    fn stream(
        &self,
        model: &Model,
        _context: LlmContext,
        _options: StreamOptions,
        _cancel: CancellationToken,
    ) -> AssistantEventStream {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let mut message = AssistantMessage::empty(model);
        tokio::spawn(async move {
            let _ = tx.send(AssistantStreamEvent::Start).await;
            let _ = tx
                .send(AssistantStreamEvent::TextStart { content_index: 0 })
                .await;
            let mut text = String::new();
            for i in 0..TOKENS {
                let delta = format!("tok{i} ");
                text.push_str(&delta);
                let _ = tx
                    .send(AssistantStreamEvent::TextDelta {
                        content_index: 0,
                        delta,
                    })
                    .await;
            }
            let _ = tx
                .send(AssistantStreamEvent::TextEnd {
                    content_index: 0,
                    content: text.clone(),
                })
                .await;
            message.content.push(AssistantContent::Text(TextContent {
                text,
                text_signature: None,
            }));
            let _ = tx
                .send(AssistantStreamEvent::Done {
                    reason: StopReason::Stop,
                    message,
                })
                .await;
        });
        AssistantEventStream::from_channel(rx)
    }
}

fn reqwest_client() -> reqwest::Client {
    march_core::http::client(Duration::from_secs(5)).expect("client")
}

criterion_group!(benches, bench);
criterion_main!(benches);
