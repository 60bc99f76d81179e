use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::sync::Arc;

use super::*;
use crate::test_support::{chmod, permissions_enforced, run_tool, temp_files_in};

struct Setup {
    _tmp: tempfile::TempDir,
    memory: Memory,
    tool: Arc<MemoryTool>,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    fs::create_dir_all(&project).unwrap();
    let memory = Memory::new(
        tmp.path().join("data/memory"),
        project.clone(),
        Path::new(".march/memory.md"),
        4000,
    );
    let tool = MemoryTool::new(ToolContext::local(&project).with_memory(memory.clone()));
    Setup {
        _tmp: tmp,
        memory,
        tool: Arc::new(tool),
    }
}

async fn ok(s: &Setup, args: Value) -> String {
    match run_tool(s.tool.as_ref(), args.clone()).await {
        Ok(out) => out.text_content(),
        Err(e) => panic!("{args}: {e}"),
    }
}

async fn err(s: &Setup, args: Value) -> String {
    match run_tool(s.tool.as_ref(), args.clone()).await {
        Ok(out) => panic!("{args} should fail, got {}", out.text_content()),
        Err(e) => e.to_string(),
    }
}

fn project_text(s: &Setup) -> String {
    fs::read_to_string(&s.memory.project_file).unwrap()
}

#[tokio::test]
async fn append_creates_file_and_section_then_adds_under_it() {
    let s = setup();
    let out = ok(
        &s,
        json!({"action": "append", "section": "Build", "text": "cargo test -p x"}),
    )
    .await;
    assert_eq!(
        out,
        "Created section \"Build\" of project memory .march/memory.md."
    );
    let out = ok(
        &s,
        json!({"action": "append", "section": "build ", "text": "cargo fmt"}),
    )
    .await;
    assert_eq!(
        out,
        "Appended to section \"build\" of project memory .march/memory.md."
    );
    ok(
        &s,
        json!({"action": "append", "scope": "project", "section": "Style", "text": "no unwrap"}),
    )
    .await;
    assert_eq!(
        project_text(&s),
        "## Build\n\n- cargo test -p x\n- cargo fmt\n\n## Style\n\n- no unwrap\n"
    );
    // Global scope goes to notes.md in the global directory by default.
    ok(
        &s,
        json!({"action": "append", "scope": "global", "section": "User", "text": "likes tabs"}),
    )
    .await;
    let notes = fs::read_to_string(s.memory.global_dir.join("notes.md")).unwrap();
    assert_eq!(notes, "## User\n\n- likes tabs\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_never_lose_one() {
    let s = Arc::new(setup());
    let mut tasks = Vec::new();
    for i in 0..20 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            // Half of them race to create the file's section, half to a second section.
            let section = if i % 2 == 0 { "Even" } else { "Odd" };
            let args =
                json!({"action": "append", "section": section, "text": format!("entry {i:02}")});
            run_tool(s.tool.as_ref(), args).await.unwrap();
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let text = project_text(&s);
    for i in 0..20 {
        assert!(
            text.contains(&format!("- entry {i:02}\n")),
            "{i} lost:\n{text}"
        );
    }
    let sections = march_core::memory::sections(&text);
    assert_eq!(sections.len(), 2, "{text}");
    assert_eq!(text.matches("- entry").count(), 20);
    assert!(temp_files_in(s.memory.project_file.parent().unwrap()).is_empty());
}

#[test]
fn appends_from_other_processes_are_kept_out_by_the_lock_file() {
    // Threads calling the locked append directly bypass the in-process queue, as another
    // runner process would: only the lock beside the file orders them.
    let s = setup();
    let path = s.memory.project_file.clone();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::thread::scope(|scope| {
        for i in 0..16 {
            let path = &path;
            scope.spawn(move || {
                append_locked(path, "Shared", &format!("writer {i:02}")).unwrap();
            });
        }
    });
    let text = fs::read_to_string(&path).unwrap();
    for i in 0..16 {
        assert!(
            text.contains(&format!("- writer {i:02}\n")),
            "{i} lost:\n{text}"
        );
    }
    assert_eq!(march_core::memory::sections(&text).len(), 1, "{text}");
}

#[tokio::test]
async fn appends_are_atomic_and_keep_permissions() {
    let s = setup();
    let dir = s.memory.project_file.parent().unwrap().to_path_buf();
    fs::create_dir_all(&dir).unwrap();
    fs::write(&s.memory.project_file, "## A\n- old\n").unwrap();
    chmod(&s.memory.project_file, 0o640);
    ok(
        &s,
        json!({"action": "append", "section": "A", "text": "new"}),
    )
    .await;
    assert_eq!(project_text(&s), "## A\n- old\n- new\n");
    let mode = fs::metadata(&s.memory.project_file)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    assert!(temp_files_in(&dir).is_empty());
}

#[tokio::test]
async fn a_read_only_memory_file_is_a_clear_error_and_stays_unchanged() {
    let s = setup();
    fs::create_dir_all(s.memory.project_file.parent().unwrap()).unwrap();
    fs::write(&s.memory.project_file, "## A\n- keep\n").unwrap();
    chmod(&s.memory.project_file, 0o444);
    let result = run_tool(
        s.tool.as_ref(),
        json!({"action": "append", "section": "A", "text": "x"}),
    )
    .await;
    if permissions_enforced() {
        let e = result.unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "cannot write memory file {}: permission denied (the file is read-only; \
                 make it writable to add to it)",
                s.memory.project_file.display()
            )
        );
        assert_eq!(project_text(&s), "## A\n- keep\n");
        assert!(temp_files_in(s.memory.project_file.parent().unwrap()).is_empty());
    }
    // Reading it still works.
    let out = ok(&s, json!({"action": "read"})).await;
    assert!(out.contains("- keep"));
}

#[tokio::test]
async fn reading_missing_memory_says_it_is_empty() {
    let s = setup();
    let out = ok(&s, json!({"action": "read"})).await;
    assert_eq!(
        out,
        format!(
            "==> project memory: .march/memory.md <==\n(empty: nothing has been saved in {} yet)",
            s.memory.project_file.display()
        )
    );
    let out = ok(&s, json!({"action": "read", "scope": "global"})).await;
    assert!(out.starts_with("Global memory is empty"), "{out}");
    let out = ok(
        &s,
        json!({"action": "read", "scope": "global", "file": "prefs"}),
    )
    .await;
    assert!(out.contains("(empty: nothing has been saved"), "{out}");
    assert!(!s.memory.global_dir.exists());
}

#[tokio::test]
async fn read_shows_every_global_file_by_name_and_replaces_bad_utf8() {
    let s = setup();
    fs::create_dir_all(&s.memory.global_dir).unwrap();
    fs::write(s.memory.global_dir.join("b.md"), "B body\n").unwrap();
    fs::write(s.memory.global_dir.join("a.md"), b"A \xff body\n").unwrap();
    let out = ok(&s, json!({"action": "read", "scope": "global"})).await;
    assert_eq!(
        out,
        "==> global memory: a.md <==\nA \u{fffd} body\n\n==> global memory: b.md <==\nB body"
    );
    let out = ok(
        &s,
        json!({"action": "read", "scope": "global", "file": "b.md"}),
    )
    .await;
    assert_eq!(out, "==> global memory: b.md <==\nB body");
}

#[tokio::test]
async fn reading_a_huge_memory_file_is_truncated_like_read() {
    let s = setup();
    fs::create_dir_all(s.memory.project_file.parent().unwrap()).unwrap();
    let body: String = (0..3000).map(|i| format!("- note {i}\n")).collect();
    fs::write(&s.memory.project_file, &body).unwrap();
    let out = run_tool(s.tool.as_ref(), json!({"action": "read"}))
        .await
        .unwrap();
    let text = out.text_content();
    // The header is line 1, so 1999 lines of the file fit.
    assert!(
        text.contains("- note 1998\n\n[Showing lines 1-2000 of 3001."),
        "{text}"
    );
    assert!(!text.contains("- note 1999"));
    assert!(text.contains(&format!(
        "The read tool pages through {} with offset=2000",
        s.memory.project_file.display()
    )));
    assert_eq!(out.details["truncation"]["truncatedBy"], "lines");
    // The byte limit too: 60 KB in lines of 100 bytes.
    fs::write(
        &s.memory.project_file,
        format!("{}\n", "y".repeat(99)).repeat(600),
    )
    .unwrap();
    let text = ok(&s, json!({"action": "read"})).await;
    assert!(text.len() < MAX_BYTES + 500, "{}", text.len());
    assert!(text.contains("(50.0KB limit)"), "{text}");
}

#[tokio::test]
async fn search_finds_lines_in_both_scopes_with_file_and_line() {
    let s = setup();
    ok(
        &s,
        json!({"action": "append", "section": "Build", "text": "Run cargo nextest"}),
    )
    .await;
    ok(
        &s,
        json!({"action": "append", "scope": "global", "file": "tools", "section": "T", "text": "cargo is at ~/.cargo"}),
    )
    .await;
    let out = ok(&s, json!({"action": "search", "query": "CARGO"})).await;
    assert_eq!(
        out,
        "[project] .march/memory.md:3: - Run cargo nextest\n[global] tools.md:3: - cargo is at ~/.cargo"
    );
    let out = ok(
        &s,
        json!({"action": "search", "query": "cargo", "scope": "global"}),
    )
    .await;
    assert_eq!(out, "[global] tools.md:3: - cargo is at ~/.cargo");
    let out = ok(&s, json!({"action": "search", "query": "absent words"})).await;
    assert_eq!(out, "No memory lines match \"absent words\".");
    let e = err(&s, json!({"action": "search", "query": "  "})).await;
    assert_eq!(e, "Argument \"query\" must not be empty");
}

#[tokio::test]
async fn bad_arguments_are_refused_before_anything_is_written() {
    let s = setup();
    for file in ["../escape", "a/b.md", "..", ".hidden", "/etc/passwd"] {
        let e = err(
            &s,
            json!({"action": "append", "scope": "global", "file": file, "section": "S", "text": "x"}),
        )
        .await;
        assert!(e.starts_with("invalid memory file name"), "{file}: {e}");
    }
    assert!(!s.memory.global_dir.exists());
    assert!(!s._tmp.path().join("data/escape.md").exists());
    let e = err(&s, json!({"action": "append", "text": "x"})).await;
    assert_eq!(e, "Missing required argument \"section\"");
    let e = err(
        &s,
        json!({"action": "append", "section": "S", "text": "  "}),
    )
    .await;
    assert_eq!(e, "nothing to append: the text is empty");
    let e = err(&s, json!({"action": "forget"})).await;
    assert!(e.starts_with("Argument \"action\" must be"), "{e}");
    assert!(!s.memory.project_file.exists());
}

#[tokio::test]
async fn without_memory_the_tool_says_it_is_unavailable() {
    let tool = MemoryTool::new(ToolContext::local("/nonexistent"));
    let e = run_tool(&tool, json!({"action": "read"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("Memory is not available"), "{e}");
    assert!(
        tool.target_paths(&json!({"action": "append", "section": "S", "text": "x"}))
            .is_empty()
    );
}

#[test]
fn annotations_and_paths_follow_the_action() {
    let s = setup();
    let tool = s.tool.as_ref();
    for action in ["read", "search"] {
        let args = json!({"action": action, "scope": "global", "query": "x"});
        assert_eq!(tool.call_annotations(&args), ToolAnnotations::READ_ONLY);
        // Reads name no path, so global memory (outside the project) never makes them ask.
        assert!(tool.target_paths(&args).is_empty());
    }
    let append = json!({"action": "append", "section": "S", "text": "x"});
    let a = tool.call_annotations(&append);
    assert!(!a.is_harmless() && !a.read_only && !a.open_world);
    assert_eq!(tool.annotations(), a);
    assert_eq!(
        tool.target_paths(&append),
        vec![s.memory.project_file.clone()]
    );
    let global =
        json!({"action": "append", "scope": "global", "file": "x", "section": "S", "text": "x"});
    assert_eq!(
        tool.target_paths(&global),
        [s.memory.global_dir.join("x.md")]
    );
    // A global directory spelled with `..` is named without it, so a prefix check sees
    // that it is outside the project.
    let dotted = Memory::new(
        s.memory.project_dir.join("../data"),
        s.memory.project_dir.clone(),
        Path::new("m.md"),
        1,
    );
    let tool2 = MemoryTool::new(ToolContext::local(&s.memory.project_dir).with_memory(dotted));
    let paths = tool2.target_paths(&global);
    assert_eq!(paths, [s._tmp.path().join("data/x.md")]);
    assert!(!paths[0].starts_with(&s.memory.project_dir));
    let bad =
        json!({"action": "append", "scope": "global", "file": "../x", "section": "S", "text": "x"});
    assert!(tool.target_paths(&bad).is_empty());
}

#[test]
fn an_append_previews_its_text_and_where_it_goes() {
    let s = setup();
    let args = json!({"action": "append", "section": "Build", "text": "cargo test -p x"});
    let Some(CallPreview::Text { target, text }) = s.tool.preview(&args) else {
        panic!("no preview");
    };
    assert_eq!(text, "cargo test -p x");
    assert!(target.ends_with(".march/memory.md · ## Build"), "{target}");
    assert_eq!(s.tool.preview(&json!({"action": "read"})), None);
}
