//! Memory search over 10 MB of notes: through the memory server on loopback (HTTP, the
//! token check, the search, the JSON answer) against the same search on the local files, in
//! the same run. Three queries: a rare word (a few hits), a common one (the 500-hit cap) and
//! one that matches nothing.
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use march_core::memory::{Memory, MemoryScope};
use march_tools::memory::server::{MemoryClient, MemoryServerConfig, serve_memory};
use tokio_util::sync::CancellationToken;

/// Bytes of notes: 10 MB over 40 files.
const TOTAL: usize = 10 << 20;
const FILES: usize = 40;

/// Notes that read like notes: sections of bullets, with a rare marker now and then.
fn write_notes(dir: &Path) -> u64 {
    let words = [
        "build", "deploy", "cargo", "staging", "review", "tokio", "parser", "linker", "cache",
        "release", "branch", "flaky", "timeout", "retry", "schema", "index",
    ];
    let mut written = 0u64;
    let mut seed = 7u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    for f in 0..FILES {
        let mut text = String::with_capacity(TOTAL / FILES + 256);
        let mut line = 0;
        while text.len() < TOTAL / FILES {
            if line % 40 == 0 {
                text.push_str(&format!("\n## Section {f}-{line}\n\n"));
            }
            text.push_str("- ");
            for _ in 0..12 {
                text.push_str(words[next() % words.len()]);
                text.push(' ');
            }
            if next() % 5000 == 0 {
                text.push_str("zanzibar");
            }
            text.push('\n');
            line += 1;
        }
        written += text.len() as u64;
        std::fs::write(dir.join(format!("notes-{f:02}.md")), text).unwrap();
    }
    written
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bytes = write_notes(dir.path());
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let at = listener.local_addr().unwrap();
    let config = MemoryServerConfig {
        dir: dir.path().to_path_buf(),
        clients: vec![MemoryClient {
            name: "bench".into(),
            token: "bench-token".into(),
        }],
        tls: None,
    };
    let stop = CancellationToken::new();
    rt.spawn(serve_memory(listener, config, stop.clone()));
    let http = march_core::http::client(Duration::from_secs(5)).unwrap();
    let local = Memory::new(
        dir.path().to_path_buf(),
        dir.path().to_path_buf(),
        Path::new(""),
        0,
    );
    let mut group = c.benchmark_group("memory_search_10MB");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(20);
    for (name, query) in [
        ("rare", "zanzibar"),
        ("common", "cargo deploy"),
        ("none", "quixotic"),
    ] {
        let found = local.search(query, Some(MemoryScope::Global)).hits.len();
        eprintln!("{name}: {found} matching lines in {bytes} bytes");
        group.bench_function(format!("local/{name}"), |b| {
            b.iter(|| local.search(query, Some(MemoryScope::Global)).hits.len());
        });
        let url = format!("http://{at}/v1/search?q={}", query.replace(' ', "%20"));
        group.bench_function(format!("server/{name}"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let answer = http
                        .get(&url)
                        .bearer_auth("bench-token")
                        .send()
                        .await
                        .unwrap();
                    assert!(answer.status().is_success());
                    answer.bytes().await.unwrap().len()
                })
            });
        });
    }
    group.finish();
    stop.cancel();
}

criterion_group!(benches, bench);
criterion_main!(benches);
