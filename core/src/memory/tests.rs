use std::fs;

use super::*;

fn setup() -> (tempfile::TempDir, Memory) {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    fs::create_dir_all(project.join(".march")).unwrap();
    let paths = MarchPaths::at(&tmp.path().join("home"));
    let memory = Memory::from_config(&paths, &project, &MemoryConfig::default()).unwrap();
    fs::create_dir_all(&memory.global_dir).unwrap();
    (tmp, memory)
}

#[test]
fn config_decides_the_locations() {
    let paths = MarchPaths::at(Path::new("/h"));
    let memory = Memory::from_config(&paths, Path::new("/p"), &MemoryConfig::default()).unwrap();
    assert_eq!(memory.global_dir, Path::new("/h/data/memory"));
    assert_eq!(memory.project_file, Path::new("/p/.march/memory.md"));
    assert_eq!(memory.project().name, ".march/memory.md");
    assert_eq!(memory.budget_tokens, 4000);
    let config = MemoryConfig {
        project_file: "/elsewhere/m.md".into(),
        ..MemoryConfig::default()
    };
    let memory = Memory::from_config(&paths, Path::new("/p"), &config).unwrap();
    assert_eq!(memory.project().name, "/elsewhere/m.md");
    let off = MemoryConfig {
        enabled: false,
        ..MemoryConfig::default()
    };
    assert_eq!(Memory::from_config(&paths, Path::new("/p"), &off), None);
}

#[test]
fn global_names_are_plain_md_file_names() {
    let (_tmp, memory) = setup();
    let f = memory.global("prefs").unwrap();
    assert_eq!(f.name, "prefs.md");
    assert_eq!(f.path, memory.global_dir.join("prefs.md"));
    assert_eq!(memory.global("notes.md").unwrap().name, "notes.md");
    for bad in [
        "",
        " ",
        "../x",
        "..",
        "a/b.md",
        "a\\b",
        ".hidden.md",
        "/etc/passwd",
        "a\nb",
    ] {
        let err = memory.global(bad).unwrap_err();
        assert!(
            matches!(err, MemoryError::InvalidName { .. }),
            "{bad:?}: {err}"
        );
        assert!(err.to_string().starts_with("invalid memory file name"));
    }
    assert!(memory.global(&"x".repeat(300)).is_err());
}

#[test]
fn global_files_are_md_files_sorted_by_name() {
    let (_tmp, memory) = setup();
    for name in ["b.md", "a.md", "notes.txt", ".a.md.123.tmp", ".hidden.md"] {
        fs::write(memory.global_dir.join(name), "x").unwrap();
    }
    fs::create_dir(memory.global_dir.join("dir.md")).unwrap();
    let names: Vec<_> = memory
        .global_files()
        .unwrap()
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["a.md", "b.md"]);
    fs::remove_dir_all(&memory.global_dir).unwrap();
    assert!(memory.global_files().unwrap().is_empty());
}

#[test]
fn search_finds_lines_in_both_scopes_ignoring_case() {
    let (_tmp, memory) = setup();
    fs::write(
        &memory.project_file,
        "## Build\n- Run CARGO test\n- lint\r\n- cargo fmt then test\n",
    )
    .unwrap();
    fs::write(memory.global_dir.join("b.md"), "cargo test is slow\n").unwrap();
    fs::write(
        memory.global_dir.join("a.md"),
        b"nothing \xff here\nTest cargo\n",
    )
    .unwrap();
    let found = memory.search("cargo  test", None);
    assert!(found.errors.is_empty());
    let hits: Vec<_> = found
        .hits
        .iter()
        .map(|h| (h.file.scope, h.file.name.as_str(), h.line, h.text.as_str()))
        .collect();
    assert_eq!(
        hits,
        [
            (
                MemoryScope::Project,
                ".march/memory.md",
                2,
                "- Run CARGO test"
            ),
            (
                MemoryScope::Project,
                ".march/memory.md",
                4,
                "- cargo fmt then test"
            ),
            (MemoryScope::Global, "a.md", 2, "Test cargo"),
            (MemoryScope::Global, "b.md", 1, "cargo test is slow"),
        ]
    );
    assert_eq!(memory.search("LINT", None).hits[0].text, "- lint");
    assert_eq!(
        memory.search("cargo", Some(MemoryScope::Global)).hits.len(),
        2
    );
    assert_eq!(
        memory
            .search("cargo", Some(MemoryScope::Project))
            .hits
            .len(),
        2
    );
    assert!(memory.search("  ", None).hits.is_empty());
    assert!(memory.search("absent", None).hits.is_empty());
}

#[test]
fn reading_missing_invalid_and_oversized_files() {
    let (tmp, _memory) = setup();
    let path = tmp.path().join("m.md");
    assert_eq!(read_file(&path, 100).unwrap(), None);
    fs::write(&path, b"ok \xff\n").unwrap();
    let t = read_file(&path, 100).unwrap().unwrap();
    assert_eq!(
        (t.text.as_str(), t.total_bytes, t.cut),
        ("ok \u{fffd}\n", 5, false)
    );
    // A cut through "é" (2 bytes) drops the half character instead of replacing it.
    fs::write(&path, "abé").unwrap();
    let t = read_file(&path, 3).unwrap().unwrap();
    assert_eq!((t.text.as_str(), t.total_bytes, t.cut), ("ab", 4, true));
    let t = read_file(&path, 4).unwrap().unwrap();
    assert_eq!((t.text.as_str(), t.cut), ("abé", false));
    let err = read_file(tmp.path(), 100).unwrap_err();
    assert!(matches!(err, MemoryError::NotAFile { .. }), "{err}");
}

#[test]
fn complete_prefix_stops_before_a_split_character() {
    let s = "a€".as_bytes(); // € is 3 bytes
    assert_eq!(complete_prefix(&s[..2]), 1);
    assert_eq!(complete_prefix(&s[..3]), 1);
    assert_eq!(complete_prefix(s), 4);
    assert_eq!(complete_prefix(b"abc"), 3);
    assert_eq!(complete_prefix(b""), 0);
}
