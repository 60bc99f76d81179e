//! The grep tool against ripgrep on the same tree and pattern, in the same run.
//!
//! Tree: `$MARCH_BENCH_TREE`, else the cargo registry sources (hundreds of MB of real code),
//! else a generated tree. The pattern is rare, so both tools must search everything.
//! Skips ripgrep (and says so) when `rg` is not installed.
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use march_core::tool::{Tool, ToolUpdates};
use march_tools::ToolContext;
use march_tools::grep::GrepTool;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const PATTERN: &str = r"fn\s+march_bench_needle_\w+";

fn tree() -> (PathBuf, Option<tempfile::TempDir>) {
    if let Some(p) = std::env::var_os("MARCH_BENCH_TREE") {
        return (PathBuf::from(p), None);
    }
    if let Some(home) = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
    {
        let src = home.join("registry/src");
        if let Some(first) = std::fs::read_dir(&src).ok().and_then(|mut d| d.next()) {
            return (first.unwrap().path(), None);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for i in 0..5000 {
        let sub = dir.path().join(format!("d{}", i % 50));
        std::fs::create_dir_all(&sub).unwrap();
        let body: String = (0..100)
            .map(|j| format!("let value_{i}_{j} = compute({j});\n"))
            .collect();
        std::fs::write(sub.join(format!("f{i}.rs")), body).unwrap();
    }
    (dir.path().to_path_buf(), Some(dir))
}

fn bench(c: &mut Criterion) {
    let (root, _keep) = tree();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tool = GrepTool::new(ToolContext::local(&root));
    let mut group = c.benchmark_group("grep_vs_rg");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    eprintln!("tree: {}", root.display());
    group.bench_function("march_grep_tool", |b| {
        b.iter(|| {
            rt.block_on(tool.execute(
                "bench",
                json!({"pattern": PATTERN}),
                CancellationToken::new(),
                ToolUpdates::discard(),
            ))
            .unwrap()
        })
    });
    let rg_available = Command::new("rg").arg("--version").output().is_ok();
    if rg_available {
        group.bench_function("ripgrep", |b| {
            b.iter(|| {
                Command::new("rg")
                    .args(["--hidden", "-g", "!.git", "-n", PATTERN])
                    .arg(&root)
                    .output()
                    .unwrap()
            })
        });
    } else {
        eprintln!("rg not installed: install ripgrep to compare");
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
