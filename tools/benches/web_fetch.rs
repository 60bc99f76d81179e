//! `web_fetch` against `curl | pandoc -f html -t gfm` on the real pages of
//! tests/fixtures/web, served by a web server on loopback, in the same run; and the
//! conversion alone (March's `readable` against `pandoc` reading the file).
//!
//! Throughput is per byte of HTML, so criterion prints MiB/s. Skips pandoc (and says so)
//! when it is not installed (`apt-get install pandoc`).
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use march_core::tool::{Tool, ToolUpdates};
use march_testkit::{PageReply, PageServer};
use march_tools::web::FetchLimits;
use march_tools::web::page::readable;
use march_tools::web::tool::WebFetchTool;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const PAGES: [&str; 4] = [
    "article.html",
    "docs.html",
    "scripts-nav.html",
    "landing.html",
];

fn fixture(name: &str) -> Vec<u8> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/web");
    std::fs::read(format!("{dir}/{name}")).unwrap()
}

fn pandoc(html: &[u8]) -> Vec<u8> {
    let mut child = Command::new("pandoc")
        .args(["-f", "html", "-t", "gfm"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(html).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    out.stdout
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let routes = PAGES.map(|name| {
        let reply = PageReply::ok("text/html; charset=utf-8", fixture(name));
        (format!("/{name}"), reply)
    });
    let server = rt
        .block_on(PageServer::start(routes.into_iter().collect()))
        .unwrap();
    let tool = WebFetchTool::new(FetchLimits {
        allow_private: true,
        ..FetchLimits::default()
    });
    let has_pandoc = Command::new("pandoc").arg("--version").output().is_ok();
    if !has_pandoc {
        eprintln!("pandoc is not installed: only March is measured");
    }
    for name in PAGES {
        let html = fixture(name);
        let url = server.url(&format!("/{name}"));
        let mut group = c.benchmark_group(format!("web_fetch/{name}"));
        group.sample_size(20);
        group.measurement_time(Duration::from_secs(5));
        group.throughput(Throughput::Bytes(html.len() as u64));
        group.bench_function("march_web_fetch", |b| {
            b.iter(|| {
                rt.block_on(tool.execute(
                    "bench",
                    json!({ "url": url }),
                    CancellationToken::new(),
                    ToolUpdates::discard(),
                ))
                .unwrap()
            })
        });
        let text = String::from_utf8_lossy(&html).into_owned();
        group.bench_function("march_readable", |b| b.iter(|| readable(&text, None)));
        if has_pandoc {
            group.bench_function("curl_pandoc", |b| {
                b.iter(|| {
                    let out = Command::new("sh")
                        .arg("-c")
                        .arg(format!("curl -s {url} | pandoc -f html -t gfm"))
                        .output()
                        .unwrap();
                    assert!(out.status.success() && !out.stdout.is_empty());
                })
            });
            group.bench_function("pandoc", |b| b.iter(|| pandoc(&html)));
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
