//! Tests of the edit tool: matching rules, exact error texts, byte-exact round trips, diffs
//! and per-file serialisation.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolError};
use serde_json::{Value, json};
use tempfile::TempDir;

use super::fuzzy::{LineEnding, detect_line_ending, normalize_to_lf};
use super::*;
use crate::test_support::{cancelled, chmod, run_tool, run_tool_with, temp_files_in};

/// A project directory holding `f.txt` with `content`, and a tool working in it.
fn setup(content: &[u8]) -> (TempDir, EditTool, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    std::fs::write(&path, content).unwrap();
    let tool = EditTool::new(ToolContext::local(dir.path()));
    (dir, tool, path)
}

async fn run(tool: &EditTool, args: Value) -> Result<ToolOutcome, ToolError> {
    run_tool(tool, args).await
}

fn edits_args(pairs: &[(&str, &str)]) -> Value {
    let edits: Vec<Value> = pairs
        .iter()
        .map(|(o, n)| json!({"oldText": o, "newText": n}))
        .collect();
    json!({"path": "f.txt", "edits": edits})
}

/// Run an edit that must fail; the file must keep every byte.
async fn expect_error(tool: &EditTool, path: &Path, args: Value) -> String {
    let before = std::fs::read(path).ok();
    let err = run(tool, args).await.unwrap_err().0;
    assert_eq!(
        std::fs::read(path).ok(),
        before,
        "error changed the file: {err}"
    );
    err
}

fn no_temp_files_left(dir: &Path) {
    let leftovers = temp_files_in(dir);
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

const NUMBERS: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\ntwelve\n";

#[tokio::test]
async fn single_edit_reports_text_diff_patch_and_first_changed_line() {
    let (dir, tool, path) = setup(NUMBERS.as_bytes());
    let out = run(&tool, edits_args(&[("six\n", "SIX\nsix and a half\n")]))
        .await
        .unwrap();
    assert_eq!(
        out.text_content(),
        "Successfully replaced 1 block(s) in f.txt."
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        NUMBERS.replace("six\n", "SIX\nsix and a half\n")
    );
    let diff = [
        "    ...",
        "  2 two",
        "  3 three",
        "  4 four",
        "  5 five",
        "- 6 six",
        "+ 6 SIX",
        "+ 7 six and a half",
        "  7 seven",
        "  8 eight",
        "  9 nine",
        " 10 ten",
        "    ...",
    ]
    .join("\n");
    let patch = "--- f.txt\n+++ f.txt\n@@ -2,9 +2,10 @@\n two\n three\n four\n five\n-six\n+SIX\n+six and a half\n seven\n eight\n nine\n ten\n";
    assert_eq!(
        out.details,
        json!({"diff": diff, "patch": patch, "firstChangedLine": 6})
    );
    no_temp_files_left(dir.path());
}

#[test]
fn display_diff_joins_short_gaps_and_elides_long_ones() {
    let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";
    // Changes at lines 1, 4 (gap of 2 equal lines, shown whole) and 14 (gap of 9, elided).
    let new = "A\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl\nm\nN\n";
    let d = edit_diff("x", old, new);
    let expected = [
        "- 1 a", "+ 1 A", "  2 b", "  3 c", "- 4 d", "+ 4 D", "  5 e", "  6 f", "  7 g", "  8 h",
        "    ...", " 10 j", " 11 k", " 12 l", " 13 m", "-14 n", "+14 N",
    ]
    .join("\n");
    assert_eq!(d.diff, expected);
    assert_eq!(d.first_changed_line, Some(1));
    assert!(
        d.patch
            .starts_with("--- x\n+++ x\n@@ -1,8 +1,8 @@\n-a\n+A\n")
    );
    assert!(
        d.patch
            .contains("\n@@ -10,5 +10,5 @@\n j\n k\n l\n m\n-n\n+N\n")
    );
}

#[test]
fn display_diff_of_a_file_without_trailing_newline() {
    let d = edit_diff("x", "a\nb", "a\nc");
    assert_eq!(d.diff, " 1 a\n-2 b\n+2 c");
    assert_eq!(d.first_changed_line, Some(2));
    assert_eq!(
        d.patch,
        "--- x\n+++ x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    );
}

#[tokio::test]
async fn text_must_be_unique_including_near_duplicates() {
    let (_dir, tool, path) = setup(b"x = 1;\ny = 2;\nx = 1;\n");
    let err = expect_error(&tool, &path, edits_args(&[("x = 1;", "x = 3;")])).await;
    assert_eq!(
        err,
        "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."
    );
    let err = expect_error(
        &tool,
        &path,
        edits_args(&[("y = 2;", "y = 4;"), ("x = 1;", "x = 3;")]),
    )
    .await;
    assert_eq!(
        err,
        "Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique."
    );

    // Counting happens in fuzzy space: a copy differing only in trailing spaces counts too.
    let (_dir, tool, path) = setup(b"call();   \ncall();\n");
    let err = expect_error(&tool, &path, edits_args(&[("call();\n", "go();\n")])).await;
    assert!(
        err.starts_with("Found 2 occurrences of the text in f.txt."),
        "{err}"
    );
}

#[tokio::test]
async fn missing_text_errors_point_at_the_closest_match() {
    let (_dir, tool, path) = setup(b"fn main() {\n    println!(\"hello world\");\n}\n");
    let err = expect_error(
        &tool,
        &path,
        edits_args(&[("    println!(\"hello  world\");", "x")]),
    )
    .await;
    assert_eq!(
        err,
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines.\n\
         Closest match is around line 2:\n  1: fn main() {\n  2:     println!(\"hello world\");\n  3: }\n  4: "
    );
    let err = expect_error(
        &tool,
        &path,
        edits_args(&[("fn main", "fn start"), ("nope", "x")]),
    )
    .await;
    assert!(
        err.starts_with(
            "Could not find edits[1] in f.txt. The old text must match exactly including all whitespace and newlines.\nFile starts with:\n  1: fn main() {"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn overlapping_edits_are_refused() {
    let (_dir, tool, path) = setup(b"abcdef\n");
    let err = expect_error(&tool, &path, edits_args(&[("abcd", "X"), ("cdef", "Y")])).await;
    assert_eq!(
        err,
        "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."
    );
    // Indices follow file order of the matches, not argument order.
    let err = expect_error(&tool, &path, edits_args(&[("cdef", "Y"), ("abcd", "X")])).await;
    assert_eq!(
        err,
        "edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions."
    );
}

#[tokio::test]
async fn multiple_edits_are_matched_against_the_original() {
    let (_dir, tool, path) = setup(b"alpha\nbeta\ngamma\n");
    // Applied one after another the second edit would find two "gamma"s.
    let out = run(&tool, edits_args(&[("alpha", "gamma"), ("gamma", "delta")]))
        .await
        .unwrap();
    assert_eq!(
        out.text_content(),
        "Successfully replaced 2 block(s) in f.txt."
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "gamma\nbeta\ndelta\n"
    );
    assert_eq!(out.details["firstChangedLine"], 1);
}

#[tokio::test]
async fn fuzzy_matching_covers_quotes_dashes_trailing_spaces_and_nbsp() {
    let original = "let greeting = \u{201C}hello\u{201D};   \n// a \u{2013} b\nkeep \u{2018}this\u{2019}  \nprice:\u{A0}10\nlast\u{2014}line \n";
    let (_dir, tool, path) = setup(original.as_bytes());
    let out = run(
        &tool,
        edits_args(&[
            (
                "let greeting = \"hello\";\n// a - b",
                "let greeting = \"hi\";\n// a - b",
            ),
            ("price: 10", "price: 20"),
        ]),
    )
    .await
    .unwrap();
    assert_eq!(
        out.text_content(),
        "Successfully replaced 2 block(s) in f.txt."
    );
    // Touched lines come from the normalised text; untouched lines keep their exact bytes.
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "let greeting = \"hi\";\n// a - b\nkeep \u{2018}this\u{2019}  \nprice: 20\nlast\u{2014}line \n"
    );
}

#[test]
fn fuzzy_normalisation_mappings() {
    assert_eq!(
        normalize_for_fuzzy(
            "\u{2018}a\u{2019} \u{201C}b\u{201D}  \n\u{2010}\u{2011}\u{2012}\u{2013}\u{2014}\u{2015}\u{2212}\t\n"
        ),
        "'a' \"b\"\n-------\n"
    );
    assert_eq!(
        normalize_for_fuzzy("a\u{A0}b\u{2003}c\u{202F}d\u{205F}e\u{3000}f\u{2009}"),
        "a b c d e f"
    );
    assert_eq!(
        normalize_for_fuzzy("\u{FF21}\u{FF42}\u{FF10}\u{FF08}\u{2026}\u{FB01}x"),
        "Ab0(...fix"
    );
    // Line count never changes, so untouched lines can be copied back by index.
    let text = "a  \n\u{A0}\n\n \u{2026}\n";
    assert_eq!(normalize_for_fuzzy(text).matches('\n').count(), 4);
}

#[test]
fn line_endings_and_bom_helpers() {
    assert_eq!(detect_line_ending("a\r\nb\nc"), LineEnding::CrLf);
    assert_eq!(detect_line_ending("a\nb\r\nc"), LineEnding::Lf);
    assert_eq!(detect_line_ending("\r\n"), LineEnding::CrLf);
    assert_eq!(detect_line_ending("no newline\r"), LineEnding::Lf);
    assert_eq!(normalize_to_lf("a\r\nb\rc\n"), "a\nb\nc\n");
    assert_eq!(super::fuzzy::strip_bom("\u{FEFF}x"), ("\u{FEFF}", "x"));
    assert_eq!(super::fuzzy::strip_bom("x"), ("", "x"));
}

#[tokio::test]
async fn crlf_and_bom_round_trip_byte_exact() {
    let (_dir, tool, path) = setup(b"\xEF\xBB\xBFone\r\ntwo\r\nthree  \r\nfour\r\n");
    // oldText may use either line ending; newText's LF becomes the file's CRLF.
    let out = run(&tool, edits_args(&[("one\r\ntwo", "1\n2\n2b")]))
        .await
        .unwrap();
    assert_eq!(out.details["firstChangedLine"], 1);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"\xEF\xBB\xBF1\r\n2\r\n2b\r\nthree  \r\nfour\r\n"
    );
    // A fuzzy edit keeps CRLF on touched and untouched lines alike.
    run(&tool, edits_args(&[("three\nfour", "3\nfour")]))
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"\xEF\xBB\xBF1\r\n2\r\n2b\r\n3\r\nfour\r\n"
    );
    // The diff and patch speak LF and never show the BOM.
    let out = run(&tool, edits_args(&[("2b", "2c")])).await.unwrap();
    assert!(!out.details["patch"].as_str().unwrap().contains('\r'));
    assert!(!out.details["diff"].as_str().unwrap().contains('\u{FEFF}'));
}

#[tokio::test]
async fn lf_file_stays_lf() {
    let (_dir, tool, path) = setup(b"a\nb\n");
    run(&tool, edits_args(&[("a\r\n", "x\r\ny\r\n")]))
        .await
        .unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"x\ny\nb\n");
}

#[tokio::test]
async fn identical_result_is_a_no_change_error() {
    let (_dir, tool, path) = setup(b"same\nother\n");
    let err = expect_error(&tool, &path, edits_args(&[("same", "same")])).await;
    assert_eq!(
        err,
        "No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
    );
    let err = expect_error(
        &tool,
        &path,
        edits_args(&[("same", "same"), ("other", "other")]),
    )
    .await;
    assert_eq!(
        err,
        "No changes made to f.txt. The replacements produced identical content."
    );
}

#[tokio::test]
async fn empty_old_text_is_refused() {
    let (_dir, tool, path) = setup(b"x\n");
    let err = expect_error(&tool, &path, edits_args(&[("", "y")])).await;
    assert_eq!(err, "oldText must not be empty in f.txt.");
    let err = expect_error(&tool, &path, edits_args(&[("x", "y"), ("", "y")])).await;
    assert_eq!(err, "edits[1].oldText must not be empty in f.txt.");
}

#[test]
fn legacy_argument_forms_are_prepared() {
    let tool = EditTool::new(ToolContext::local("/p"));
    assert_eq!(
        tool.prepare_arguments(json!({"path": "a", "oldText": "o", "newText": "n"})),
        json!({"path": "a", "edits": [{"oldText": "o", "newText": "n"}]})
    );
    assert_eq!(
        tool.prepare_arguments(
            json!({"path": "a", "edits": "[{\"oldText\":\"o\",\"newText\":\"n\"}]"})
        ),
        json!({"path": "a", "edits": [{"oldText": "o", "newText": "n"}]})
    );
    // A stringified array plus a legacy pair: the pair is appended.
    assert_eq!(
        tool.prepare_arguments(json!({
            "path": "a",
            "edits": "[{\"oldText\":\"o1\",\"newText\":\"n1\"}]",
            "oldText": "o2",
            "newText": "n2"
        })),
        json!({"path": "a", "edits": [
            {"oldText": "o1", "newText": "n1"},
            {"oldText": "o2", "newText": "n2"}
        ]})
    );
    // Anything else passes through for validation to reject.
    for untouched in [
        json!({"path": "a", "edits": "not json"}),
        json!({"path": "a", "edits": "{\"oldText\":\"o\"}"}),
        json!({"path": "a", "oldText": "o"}),
        json!("string"),
    ] {
        assert_eq!(tool.prepare_arguments(untouched.clone()), untouched);
    }
}

#[tokio::test]
async fn legacy_arguments_execute() {
    let (_dir, tool, path) = setup(b"old value\n");
    run(
        &tool,
        json!({"path": "f.txt", "oldText": "old", "newText": "new"}),
    )
    .await
    .unwrap();
    run(
        &tool,
        json!({"path": "f.txt", "edits": "[{\"oldText\":\"value\",\"newText\":\"thing\"}]"}),
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new thing\n");
}

#[tokio::test]
async fn file_level_errors_are_clear_and_change_nothing() {
    let (dir, tool, path) = setup(b"text\n");
    let missing = dir.path().join("missing.txt");
    let err = run(
        &tool,
        json!({"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
    )
    .await
    .unwrap_err()
    .0;
    assert_eq!(err, format!("File not found: {}", missing.display()));
    assert!(!missing.exists());

    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let err = run(
        &tool,
        json!({"path": "sub", "edits": [{"oldText": "a", "newText": "b"}]}),
    )
    .await
    .unwrap_err()
    .0;
    assert!(
        err.contains(&dir.path().join("sub").display().to_string()),
        "{err}"
    );
    assert!(err.contains("is a directory"), "{err}");

    std::fs::write(&path, b"abc\0def\n").unwrap();
    let err = expect_error(&tool, &path, edits_args(&[("abc", "x")])).await;
    assert!(err.contains("binary"), "{err}");
    std::fs::write(&path, b"caf\xE9\n").unwrap();
    let err = expect_error(&tool, &path, edits_args(&[("caf", "x")])).await;
    assert!(err.contains("not valid UTF-8"), "{err}");

    std::fs::write(&path, b"text\n").unwrap();
    for (args, why) in [
        (
            json!({"path": "f.txt", "edits": []}),
            "edits must contain at least one replacement.",
        ),
        (
            json!({"path": "f.txt"}),
            "edits must contain at least one replacement.",
        ),
        (
            json!({"edits": [{"oldText": "t", "newText": "x"}]}),
            "path must be a non-empty string.",
        ),
        (
            json!({"path": "f.txt", "edits": [{"oldText": "t"}]}),
            "edits[0] must be an object with string fields oldText and newText.",
        ),
    ] {
        let err = expect_error(&tool, &path, args).await;
        assert_eq!(err, format!("Edit tool input is invalid. {why}"));
    }
    no_temp_files_left(dir.path());
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_and_permissions_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, tool, path) = setup(b"#!/bin/sh\necho hi\n");
    chmod(&path, 0o750);
    std::os::unix::fs::symlink(&path, dir.path().join("link.sh")).unwrap();
    run(
        &tool,
        json!({"path": "link.sh", "edits": [{"oldText": "hi", "newText": "bye"}]}),
    )
    .await
    .unwrap();
    let link = dir.path().join("link.sh");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "#!/bin/sh\necho bye\n"
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
}

#[tokio::test]
async fn cancelled_edit_changes_nothing() {
    let (_dir, tool, path) = setup(b"a\n");
    let err = run_tool_with(&tool, edits_args(&[("a", "b")]), cancelled())
        .await
        .unwrap_err();
    assert_eq!(err.0, "Operation aborted");
    assert_eq!(std::fs::read(&path).unwrap(), b"a\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_of_one_file_all_land() {
    let content: String = (0..20).map(|i| format!("line {i} end\n")).collect();
    let (_dir, tool, path) = setup(content.as_bytes());
    let tool = Arc::new(tool);
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let tool = tool.clone();
            tokio::spawn(async move {
                let old = format!("line {i} end");
                let new = format!("LINE {i} done");
                run(&tool, edits_args(&[(&old, &new)])).await
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let expected: String = (0..20).map(|i| format!("LINE {i} done\n")).collect();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
}

#[test]
fn metadata_schema_and_target_paths() {
    let tool = EditTool::new(ToolContext::local("/proj"));
    assert_eq!(tool.name(), "edit");
    let a = tool.annotations();
    assert!(!a.read_only && a.destructive && !a.open_world);
    let schema = tool.parameters();
    assert_eq!(schema["required"], json!(["path", "edits"]));
    assert_eq!(schema["properties"]["edits"]["minItems"], 1);
    assert_eq!(
        schema["properties"]["edits"]["items"]["additionalProperties"],
        false
    );
    assert_eq!(
        tool.target_paths(&json!({"path": "src/../a.rs"})),
        vec![PathBuf::from("/proj/a.rs")]
    );
    assert!(tool.target_paths(&json!({})).is_empty());
    assert_eq!(tool.prompt_guidelines().len(), 4);
}

#[cfg(unix)]
#[tokio::test]
async fn unwritable_file_is_refused_with_its_error_code() {
    let (dir, tool, path) = setup(b"locked\n");
    chmod(&path, 0o444);
    // Root ignores file modes; the refusal can only be observed as an ordinary user.
    if std::fs::OpenOptions::new().write(true).open(&path).is_ok() {
        return;
    }
    let err = expect_error(&tool, &path, edits_args(&[("locked", "open")])).await;
    assert!(
        err.starts_with(&format!(
            "Could not edit file: {}. Error code: EACCES",
            dir.path().join("f.txt").display()
        )),
        "{err}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn writable_file_in_read_only_directory_is_still_edited() {
    let (dir, tool, _) = setup(b"");
    let sub = dir.path().join("ro");
    std::fs::create_dir(&sub).unwrap();
    let path = sub.join("f.txt");
    std::fs::write(&path, b"before\n").unwrap();
    chmod(&sub, 0o555);
    let result = run(
        &tool,
        json!({"path": "ro/f.txt", "edits": [{"oldText": "before", "newText": "after"}]}),
    )
    .await;
    chmod(&sub, 0o755);
    result.unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "after\n");
    no_temp_files_left(&sub);
}

#[tokio::test]
async fn a_writer_gets_exactly_the_bytes_a_local_edit_would_land() {
    let original = b"\xEF\xBB\xBFone\r\ntwo\r\nthree\r\n";
    let (_local_dir, local, local_path) = setup(original);
    let routed_dir = tempfile::tempdir().unwrap();
    std::fs::write(routed_dir.path().join("real.txt"), original).unwrap();
    std::os::unix::fs::symlink("real.txt", routed_dir.path().join("f.txt")).unwrap();
    let writer = Arc::new(crate::context::recording::RecordingWriter::default());
    let routed = EditTool::new(ToolContext::local(routed_dir.path()).with_writer(writer.clone()));
    let args = edits_args(&[("two\n", "TWO\nand a half\n")]);

    let here = run(&local, args.clone()).await.unwrap();
    let there = run(&routed, args).await.unwrap();
    assert_eq!(here.text_content(), there.text_content());
    assert_eq!(here.details, there.details, "the same diff either way");
    let landed = std::fs::read(&local_path).unwrap();
    assert_eq!(landed, b"\xEF\xBB\xBFone\r\nTWO\r\nand a half\r\nthree\r\n");
    // Handed over: the link's target, and every byte the local edit wrote (BOM and CRLF).
    let writes = writer.writes();
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].0, routed_dir.path().join("real.txt"));
    assert_eq!(writes[0].1.as_bytes(), landed.as_slice());
    // The writer owns the write: the file here is untouched and no temp file was made.
    assert_eq!(
        std::fs::read(routed_dir.path().join("real.txt")).unwrap(),
        original
    );
    no_temp_files_left(routed_dir.path());
}

#[tokio::test]
async fn a_failing_writer_is_an_error_and_failed_matches_never_reach_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    std::fs::write(&path, NUMBERS).unwrap();
    let writer = Arc::new(crate::context::recording::RecordingWriter {
        fail: Some("the client refused: read-only buffer".into()),
        ..Default::default()
    });
    let tool = EditTool::new(ToolContext::local(dir.path()).with_writer(writer.clone()));
    let err = expect_error(&tool, &path, edits_args(&[("absent", "x")])).await;
    assert!(err.starts_with("Could not find"), "{err}");
    assert!(writer.writes().is_empty());
    let err = expect_error(&tool, &path, edits_args(&[("one\n", "ONE\n")])).await;
    assert_eq!(
        err,
        format!(
            "Could not write {}: the client refused: read-only buffer.",
            path.display()
        )
    );
    assert_eq!(writer.writes().len(), 1);
}

#[test]
fn the_preview_is_the_change_the_edit_would_make_and_writes_nothing() {
    let (_dir, tool, path) = setup(b"\xEF\xBB\xBFone\r\ntwo\r\n");
    let args = edits_args(&[("two", "TWO")]);
    let Some(CallPreview::Change(change)) = tool.preview(&args) else {
        panic!("no change previewed");
    };
    assert_eq!(change.path, path);
    assert_eq!(change.old_text.as_deref(), Some("\u{feff}one\r\ntwo\r\n"));
    // BOM and CRLF kept, as the edit itself would keep them.
    assert_eq!(change.new_text, "\u{feff}one\r\nTWO\r\n");
    assert_eq!(std::fs::read(&path).unwrap(), b"\xEF\xBB\xBFone\r\ntwo\r\n");
    // An edit that would fail shows no preview: the dialog shows the arguments.
    assert_eq!(tool.preview(&edits_args(&[("absent", "x")])), None);
}
