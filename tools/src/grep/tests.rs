//! grep tests on real fixture trees, compared with ripgrep where it is installed.

use std::fs;
use std::path::Path;

use super::*;
use crate::test_support::{cancelled, run_tool, run_tool_with, write_files};

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // A `.git` folder makes `.gitignore` rules apply, as in a real repository.
    fs::create_dir_all(dir.path().join(".git")).unwrap();
    write_files(dir.path(), files);
    dir
}

async fn grep(root: &Path, args: Value) -> Result<ToolOutcome, ToolError> {
    run_tool(&GrepTool::new(ToolContext::local(root)), args).await
}

async fn text(root: &Path, args: Value) -> String {
    grep(root, args).await.unwrap().text_content()
}

fn fixture() -> tempfile::TempDir {
    tree(&[
        (".gitignore", "target/\n*.log\n!keep.log\n"),
        ("src/main.rs", "fn main() {\n    needle();\n}\n"),
        ("src/.hidden.rs", "// needle in a hidden file\n"),
        ("src/gen/.gitignore", "*.gen.rs\n!important.gen.rs\n"),
        ("src/gen/a.gen.rs", "needle ignored by nested rule\n"),
        (
            "src/gen/important.gen.rs",
            "needle re-included by negation\n",
        ),
        ("target/out.rs", "needle in ignored dir\n"),
        ("debug.log", "needle in ignored log\n"),
        ("keep.log", "needle in negated log\n"),
        (".ignore", "vendor/\n"),
        ("vendor/lib.rs", "needle in .ignore'd dir\n"),
        ("bin.dat", "needle\0binary"),
        (".git/config", "needle in git dir\n"),
    ])
}

#[tokio::test]
async fn ignore_rules_follow_ripgrep() {
    let dir = fixture();
    let out = text(dir.path(), json!({"pattern": "needle"})).await;
    let files: std::collections::BTreeSet<&str> =
        out.lines().filter_map(|l| l.split(':').next()).collect();
    let expected: std::collections::BTreeSet<&str> = [
        "keep.log",
        "src/.hidden.rs",
        "src/gen/important.gen.rs",
        "src/main.rs",
    ]
    .into();
    assert_eq!(files, expected, "{out}");
    // Where ripgrep is installed, it agrees (minus `.git`, which March never searches).
    if let Ok(rg) = std::process::Command::new("rg")
        .args(["--hidden", "-l", "needle", "."])
        .current_dir(dir.path())
        .output()
    {
        let rg_files: std::collections::BTreeSet<String> = String::from_utf8_lossy(&rg.stdout)
            .lines()
            .map(|l| l.trim_start_matches("./").to_string())
            .filter(|l| !l.starts_with(".git/"))
            .collect();
        let ours: std::collections::BTreeSet<String> =
            files.iter().map(|s| s.to_string()).collect();
        assert_eq!(ours, rg_files);
    }
}

#[tokio::test]
async fn output_format_context_and_basename_for_a_file() {
    let dir = tree(&[("a.txt", "one\ntwo needle\nthree\nfour\nfive needle\n")]);
    let out = text(dir.path(), json!({"pattern": "needle", "context": 1})).await;
    assert_eq!(
        out,
        "a.txt-1- one\na.txt:2: two needle\na.txt-3- three\na.txt-4- four\na.txt:5: five needle"
    );
    let out = text(
        dir.path(),
        json!({"pattern": "NEEDLE", "path": "a.txt", "ignoreCase": true}),
    )
    .await;
    assert_eq!(out, "a.txt:2: two needle\na.txt:5: five needle");
    let out = text(dir.path(), json!({"pattern": "NEEDLE"})).await;
    assert_eq!(out, "No matches found");
}

#[tokio::test]
async fn literal_glob_and_regex_errors() {
    let dir = tree(&[("a.rs", "x.y(1)\nxzy(1)\n"), ("b.txt", "x.y(1)\n")]);
    let out = text(
        dir.path(),
        json!({"pattern": "x.y(1)", "literal": true, "glob": "*.rs"}),
    )
    .await;
    assert_eq!(out, "a.rs:1: x.y(1)");
    let err = grep(dir.path(), json!({"pattern": "x(("}))
        .await
        .unwrap_err();
    assert!(err.0.starts_with("Invalid pattern:"), "{}", err.0);
    let err = grep(dir.path(), json!({"pattern": "x", "path": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        format!("Path not found: {}", dir.path().join("nope").display())
    );
}

#[tokio::test]
async fn match_limit_notice_at_the_boundary() {
    let body: String = (0..100).map(|i| format!("hit {i}\n")).collect();
    let dir = tree(&[("a.txt", &body)]);
    let out = text(dir.path(), json!({"pattern": "hit", "limit": 100})).await;
    assert_eq!(out.lines().count(), 102);
    assert!(
        out.ends_with("[100 matches limit reached. Use limit=200 for more, or refine pattern]")
    );
    let out = text(dir.path(), json!({"pattern": "hit", "limit": 101})).await;
    assert_eq!(out.lines().count(), 100, "no notice below the limit");
    let out = text(dir.path(), json!({"pattern": "hit", "limit": 5})).await;
    assert_eq!(out.lines().filter(|l| l.starts_with("a.txt:")).count(), 5);
}

#[tokio::test]
async fn long_lines_and_the_byte_cap() {
    let long = format!("needle {}\n", "x".repeat(600));
    let dir = tree(&[("a.txt", &long)]);
    let out = text(dir.path(), json!({"pattern": "needle"})).await;
    assert!(out.contains("... [truncated]"));
    assert!(out.ends_with("[Some lines truncated to 500 chars. Use read tool to see full lines]"));
    let body: String = (0..2000)
        .map(|i| format!("needle {i} {}\n", "y".repeat(80)))
        .collect();
    let dir = tree(&[("big.txt", &body)]);
    let out = text(dir.path(), json!({"pattern": "needle", "limit": 5000})).await;
    assert!(
        out.ends_with("[50.0KB limit reached]"),
        "{}",
        &out[out.len() - 80..]
    );
    assert!(out.len() <= MAX_BYTES + 100);
}

#[tokio::test]
async fn invalid_utf8_and_cancel() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("l.txt"), b"caf\xe9 needle\n").unwrap();
    let out = text(dir.path(), json!({"pattern": "needle"})).await;
    assert_eq!(out, "l.txt:1: caf\u{fffd} needle");
    let tool = GrepTool::new(ToolContext::local(dir.path()));
    let err = run_tool_with(&tool, json!({"pattern": "needle"}), cancelled())
        .await
        .unwrap_err();
    assert_eq!(err.0, "Operation aborted");
}
