//! The diff pane's model against `git diff --no-index` on the same two files, in the same
//! run: a 1 MB source file (20,000 lines) with 100 scattered one-line edits, and a 50 MB
//! file, which the pane refuses as too large (a deadline also bounds what it does diff).
//!
//! `git` pays a process start and reads the files from disk; the model gets the texts in
//! memory, as the pane does. Run: `cargo bench -p march-panes --bench diff_model`.
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use march_panes::diff::{FileDiff, NoDiff};

fn texts(lines: usize, edits: usize) -> (String, String) {
    let before: String = (0..lines)
        .map(|i| format!("    let value_{i} = compute({i}, \"some text here\");\n"))
        .collect();
    let step = lines / edits;
    let after: String = before
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % step == step / 2 {
                format!("{}\n", l.replace("compute", "compute_fast"))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    (before, after)
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("diff_model");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    for (name, lines) in [("1MB", 20_000usize), ("50MB", 1_000_000)] {
        let (before, after) = texts(lines, 100);
        let (a, b) = (
            dir.path().join(format!("{name}.a")),
            dir.path().join(format!("{name}.b")),
        );
        std::fs::write(&a, &before).unwrap();
        std::fs::write(&b, &after).unwrap();
        eprintln!("{name}: {} bytes", before.len());
        let diff = FileDiff::new("f.rs", Some(&before), Some(&after));
        if lines > 100_000 {
            assert!(matches!(diff.none, Some(NoDiff::TooLarge(..))));
        } else {
            assert_eq!((diff.added, diff.removed), (100, 100));
        }
        group.bench_function(format!("march_{name}"), |bench| {
            bench.iter(|| FileDiff::new("f.rs", Some(&before), Some(&after)))
        });
        group.bench_function(format!("git_diff_no_index_{name}"), |bench| {
            bench.iter(|| {
                let out = Command::new("git")
                    .args(["diff", "--no-index", "--no-color", "--"])
                    .arg(&a)
                    .arg(&b)
                    .output()
                    .unwrap();
                assert_eq!(out.status.code(), Some(1), "git found differences");
                out.stdout.len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
