use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

use super::search::{fts_query, words};
use super::*;
use crate::message::{
    AssistantContent, AssistantMessage, Message, TextContent, ToolCall, ToolResultMessage,
    UserContent,
};
use crate::model::Model;
use crate::session::{SessionHeader, SessionMessage, SessionStore, format_iso_ms};

/// 2026-01-01T00:00:00Z.
const T0: i64 = 1_767_225_600_000;
const DAY: i64 = 86_400_000;

fn model() -> Model {
    Model::anthropic("anthropic", "claude-test", "http://localhost")
}

fn assistant(text: &str, calls: &[(&str, &str)]) -> AssistantMessage {
    let mut a = AssistantMessage::empty(&model());
    a.content.push(AssistantContent::Text(TextContent {
        text: text.to_string(),
        text_signature: None,
    }));
    for (i, (name, path)) in calls.iter().enumerate() {
        a.content.push(AssistantContent::ToolCall(ToolCall {
            id: format!("call_{i}"),
            name: name.to_string(),
            arguments: json!({ "path": path }),
            thought_signature: None,
        }));
    }
    a.usage.input = 100;
    a.usage.output = 40;
    a.usage.cost.total = 0.5;
    a
}

/// A session file written line by line in the store's format (the header through
/// `SessionStore`), without a sync per line, with chosen timestamps.
struct RawSession {
    path: PathBuf,
    id: String,
    file: File,
    next: u64,
    last: Option<String>,
}

impl RawSession {
    fn create(dir: &Path, cwd: &str) -> Self {
        let store = SessionStore::create(dir, SessionHeader::new(cwd)).unwrap();
        let path = store.path().to_path_buf();
        let id = store.session_id().to_string();
        drop(store);
        let file = OpenOptions::new().append(true).open(&path).unwrap();
        RawSession {
            path,
            id,
            file,
            next: 1,
            last: None,
        }
    }

    fn push(&mut self, time_ms: i64, message: SessionMessage) {
        let id = format!("{:08x}", self.next);
        self.next += 1;
        let line = json!({
            "type": "message",
            "id": id,
            "parentId": self.last,
            "timestamp": format_iso_ms(time_ms),
            "message": message,
        });
        writeln!(self.file, "{line}").unwrap();
        self.last = Some(id);
    }

    fn user(&mut self, time_ms: i64, text: &str) {
        self.push(time_ms, Message::user(text).into());
    }

    fn turn(&mut self, time_ms: i64, user: &str, answer: &str, calls: &[(&str, &str)]) {
        self.user(time_ms, user);
        self.push(
            time_ms + 1000,
            Message::Assistant(assistant(answer, calls)).into(),
        );
    }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    sessions: PathBuf,
    db: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    let db = tmp.path().join("data").join("history.sqlite");
    Fixture {
        _tmp: tmp,
        sessions,
        db,
    }
}

/// Two projects, three sessions, turns on different days.
fn populate(f: &Fixture) -> (RawSession, RawSession, RawSession) {
    let mut a1 = RawSession::create(&f.sessions.join("alpha"), "/work/alpha");
    a1.turn(
        T0,
        "how do I configure the tokio runtime with tokio worker threads",
        "Use the tokio builder: tokio::runtime::Builder::new_multi_thread().",
        &[("read", "src/main.rs")],
    );
    a1.turn(
        T0 + DAY,
        "fix the parser bug in the lexer",
        "The parser fails on nested brackets; tokio is not involved.",
        &[("read", "src/parser.rs"), ("edit", "src/parser.rs")],
    );
    a1.turn(
        T0 + 2 * DAY,
        "write release notes",
        "Done.",
        &[("write", "NOTES.md")],
    );
    let mut a2 = RawSession::create(&f.sessions.join("alpha"), "/work/alpha");
    a2.turn(
        T0 + 3 * DAY,
        "add a benchmark for the parser",
        "Added benches/parse.rs with criterion.",
        &[("write", "benches/parse.rs")],
    );
    let mut b = RawSession::create(&f.sessions.join("beta"), "/work/beta");
    b.turn(
        T0 + 4 * DAY,
        "the parser in beta crashes on empty input",
        "Guarded the empty case.",
        &[("edit", "beta/parser.rs")],
    );
    (a1, a2, b)
}

fn search(index: &HistoryIndex, text: &str) -> Vec<SearchHit> {
    index.search(&SearchQuery::new(text)).unwrap()
}

#[test]
fn index_and_search_ranked_with_snippets() {
    let f = fixture();
    let (a1, ..) = populate(&f);
    let mut index = HistoryIndex::open(&f.db).unwrap();
    assert!(index.recovered_from().is_none());
    let stats = index.update_all(&f.sessions).unwrap();
    assert_eq!(stats.files_seen, 3);
    assert_eq!(stats.files_indexed, 3);
    assert_eq!(stats.turns_added, 5);
    assert_eq!(index.turn_count().unwrap(), 5);

    let hits = search(&index, "tokio");
    assert_eq!(hits.len(), 2);
    // Four mentions, two in the user's text, beat one passing mention.
    assert_eq!(hits[0].seq, 0);
    assert!(hits[0].score > hits[1].score);
    assert!(hits[0].snippet.contains("**tokio**"), "{}", hits[0].snippet);
    let top = &hits[0];
    assert_eq!(top.session_id, a1.id);
    assert_eq!(top.session_file, a1.path.to_string_lossy());
    assert_eq!(top.entry_id, "00000001");
    assert_eq!(top.project, "/work/alpha");
    assert_eq!(top.time_ms, T0);
    assert_eq!(top.model.as_deref(), Some("claude-test"));
    assert_eq!((top.input_tokens, top.output_tokens), (100, 40));
    assert!((top.cost - 0.5).abs() < 1e-9);
    assert_eq!(top.tools, ["read"]);
    assert_eq!(top.paths, ["src/main.rs"]);

    // Tool names and paths are searchable; a path matches as a phrase.
    let hits = search(&index, "src/parser.rs");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].tools, ["read", "edit"]);
    assert_eq!(hits[0].paths, ["src/parser.rs"]);
    // All words must match.
    assert_eq!(search(&index, "parser crashes").len(), 1);
    assert_eq!(search(&index, "parser").len(), 3);
    assert!(search(&index, "nonexistentword").is_empty());
    // The limit holds.
    let mut q = SearchQuery::new("parser");
    q.limit = 2;
    assert_eq!(index.search(&q).unwrap().len(), 2);
}

#[test]
fn filters_by_project_session_and_date() {
    let f = fixture();
    let (a1, a2, b) = populate(&f);
    let mut index = HistoryIndex::open(&f.db).unwrap();
    index.update_all(&f.sessions).unwrap();

    let query = |edit: &dyn Fn(&mut SearchQuery)| {
        let mut q = SearchQuery::new("parser");
        edit(&mut q);
        index.search(&q).unwrap()
    };
    let by_project = query(&|q| q.project = Some("/work/beta".into()));
    assert_eq!(by_project.len(), 1);
    assert_eq!(by_project[0].session_id, b.id);
    let alpha = query(&|q| q.project = Some("/work/alpha".into()));
    assert_eq!(alpha.len(), 2);
    assert!(alpha.iter().all(|h| h.project == "/work/alpha"));

    let by_session = query(&|q| q.session_id = Some(a2.id.clone()));
    assert_eq!(by_session.len(), 1);
    assert_eq!(by_session[0].paths, ["benches/parse.rs"]);
    assert_eq!(query(&|q| q.session_id = Some(a1.id.clone())).len(), 1);

    // since is inclusive, until exclusive.
    let range = query(&|q| {
        q.since_ms = Some(T0 + DAY);
        q.until_ms = Some(T0 + 4 * DAY);
    });
    let mut times: Vec<i64> = range.iter().map(|h| h.time_ms).collect();
    times.sort();
    assert_eq!(times, [T0 + DAY, T0 + 3 * DAY]);
    assert!(query(&|q| q.since_ms = Some(T0 + 5 * DAY)).is_empty());
    let combined = query(&|q| {
        q.project = Some("/work/alpha".into());
        q.until_ms = Some(T0 + 2 * DAY);
    });
    assert_eq!(combined.len(), 1);
    assert_eq!(combined[0].time_ms, T0 + DAY);
}

#[test]
fn fts_syntax_in_queries_is_plain_text() {
    let fts = |q: &str| fts_query(&words(q));
    assert_eq!(fts("NEAR(x y)").as_deref(), Some("\"NEAR\" \"x\" \"y\""));
    assert_eq!(
        fts("tokio runtime").as_deref(),
        Some("\"tokio\" \"runtime\"")
    );
    assert_eq!(fts("src/lib.rs").as_deref(), Some("\"src lib rs\""));
    assert_eq!(fts("tok*").as_deref(), Some("\"tok\" *"));
    assert_eq!(fts("\"a\" (b) -c").as_deref(), Some("\"a\" \"b\" \"c\""));
    assert_eq!(fts("  \"\" () * - ^ "), None);

    let f = fixture();
    let mut s = RawSession::create(&f.sessions.join("p"), "/p");
    s.turn(
        T0,
        "search and replace near the end, not the start",
        "or maybe column:value ^caret",
        &[],
    );
    s.turn(T0 + 1, "tokio runtime", "ok", &[]);
    let mut index = HistoryIndex::open(&f.db).unwrap();
    index.update_all(&f.sessions).unwrap();

    let nasty = [
        "\"unbalanced",
        "(open",
        "close)",
        "AND",
        "OR",
        "NOT",
        "a AND",
        "NEAR(search replace)",
        "NEAR/3",
        "search NOT end",
        "-end",
        "end -",
        "column:value",
        "^caret",
        "\"search\" + \"end\"",
        "{user_text}: search",
        "*",
        "tok*",
        "'; DROP TABLE turns; --",
        "\u{0}",
        "a\"b\"c",
    ];
    for q in nasty {
        match index.search(&SearchQuery::new(q)) {
            Ok(_) | Err(HistoryError::EmptyQuery) => {}
            Err(e) => panic!("query {q:?} gave {e}"),
        }
    }
    // Operators are words.
    assert_eq!(search(&index, "AND").len(), 1);
    assert_eq!(search(&index, "NEAR(search replace)").len(), 1);
    assert_eq!(search(&index, "search NOT end").len(), 1);
    assert_eq!(search(&index, "column:value").len(), 1);
    assert_eq!(search(&index, "(tokio)").len(), 1);
    // A trailing star is a prefix; elsewhere it is ignored.
    assert_eq!(search(&index, "tok*").len(), 1);
    assert!(search(&index, "tok").is_empty());
    // Nothing to look for is a clear error.
    let err = index.search(&SearchQuery::new("() \"\" *")).unwrap_err();
    assert!(matches!(err, HistoryError::EmptyQuery));
    assert!(err.to_string().contains("no words"));
    assert_eq!(index.turn_count().unwrap(), 2);
}

fn snapshot(index: &HistoryIndex) -> Vec<(String, i64, String, Vec<String>)> {
    let mut all = Vec::new();
    for q in [
        "parser",
        "tokio",
        "release",
        "beta",
        "src/parser.rs",
        "bench*",
    ] {
        for h in search(index, q) {
            all.push((h.session_id, h.seq, h.snippet, h.paths));
        }
    }
    all
}

#[test]
fn deleting_the_database_and_reindexing_gives_the_same_results() {
    let f = fixture();
    populate(&f);
    let mut index = HistoryIndex::open(&f.db).unwrap();
    index.update_all(&f.sessions).unwrap();
    let before = snapshot(&index);
    assert!(!before.is_empty());

    // Reindexing in place.
    let stats = index.reindex_all(&f.sessions).unwrap();
    assert_eq!(stats.turns_added, 5);
    assert_eq!(snapshot(&index), before);
    drop(index);

    for suffix in ["", "-wal", "-shm"] {
        let mut p = f.db.as_os_str().to_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    assert!(!f.db.exists());
    let mut index = HistoryIndex::open(&f.db).unwrap();
    assert_eq!(index.turn_count().unwrap(), 0);
    index.reindex_all(&f.sessions).unwrap();
    assert_eq!(snapshot(&index), before);
}

#[test]
fn a_corrupt_database_is_moved_aside_and_rebuilt() {
    let f = fixture();
    populate(&f);
    let mut index = HistoryIndex::open(&f.db).unwrap();
    index.update_all(&f.sessions).unwrap();
    let before = snapshot(&index);
    drop(index);

    let garbage: Vec<u8> = (0..64 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&f.db, &garbage).unwrap();
    let mut index = HistoryIndex::open(&f.db).unwrap();
    let aside = index.recovered_from().unwrap().to_path_buf();
    assert_eq!(aside, f.db.with_file_name("history.sqlite.corrupt"));
    assert_eq!(std::fs::read(&aside).unwrap(), garbage);
    assert_eq!(index.turn_count().unwrap(), 0);
    index.update_all(&f.sessions).unwrap();
    assert_eq!(snapshot(&index), before);
    drop(index);

    // Reopening a healthy index leaves it alone.
    let index = HistoryIndex::open(&f.db).unwrap();
    assert!(index.recovered_from().is_none());
    assert_eq!(index.turn_count().unwrap(), 5);
    drop(index);

    // Found damaged while in use: recreate moves it aside whatever its state.
    let mut index = HistoryIndex::recreate(&f.db).unwrap();
    assert!(index.recovered_from().is_some());
    assert_eq!(index.turn_count().unwrap(), 0);
    index.update_all(&f.sessions).unwrap();
    assert_eq!(snapshot(&index), before);
    drop(index);

    // Text where the SQLite header should be.
    std::fs::write(&f.db, "this is not a database\n".repeat(500)).unwrap();
    let index = HistoryIndex::open(&f.db).unwrap();
    assert!(index.recovered_from().is_some());
}

#[test]
fn concurrent_writers_index_different_sessions_into_one_database() {
    let f = fixture();
    let turns = TURNS_PER_TRANSACTION * 3 + 17;
    let sessions: Vec<RawSession> = (0..2)
        .map(|n| {
            let mut s = RawSession::create(&f.sessions.join(format!("p{n}")), &format!("/p{n}"));
            for i in 0..turns {
                let t = T0 + i64::try_from(i).unwrap() * 1000;
                s.turn(t, &format!("writer{n} question {i}"), "answer shared", &[]);
            }
            s
        })
        .collect();
    // Both open the database at the same moment (creating its schema), then write.
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .iter()
            .map(|s| {
                let (db, path, barrier) = (&f.db, &s.path, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    let mut index = HistoryIndex::open(db).unwrap();
                    let stats = index.index_session(path).unwrap();
                    // And a search while the other writes.
                    index.search(&SearchQuery::new("shared")).unwrap();
                    stats
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap().turns_added, turns);
        }
    });
    let index = HistoryIndex::open(&f.db).unwrap();
    assert_eq!(index.turn_count().unwrap(), 2 * turns as u64);
    drop(index);

    // Two writers indexing the same files at once into a fresh database.
    let db2 = f.db.with_file_name("second.sqlite");
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (db, dir, barrier) = (&db2, &f.sessions, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    HistoryIndex::open(db).unwrap().update_all(dir).unwrap()
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
    assert_eq!(
        HistoryIndex::open(&db2).unwrap().turn_count().unwrap(),
        2 * turns as u64
    );
    let index = HistoryIndex::open(&f.db).unwrap();
    for (n, s) in sessions.iter().enumerate() {
        let mut q = SearchQuery::new(format!("writer{n}"));
        q.limit = 10_000;
        let hits = index.search(&q).unwrap();
        assert_eq!(hits.len(), turns);
        assert!(hits.iter().all(|h| h.session_id == s.id));
    }
}

#[test]
fn a_session_of_ten_thousand_turns() {
    let f = fixture();
    let mut s = RawSession::create(&f.sessions.join("big"), "/big");
    for i in 0..10_000i64 {
        s.turn(
            T0 + i * 1000,
            &format!("question number q{i} about module m{}", i % 97),
            &format!("answer a{i}: changed the module and ran the tests"),
            &[("edit", &format!("src/m{}.rs", i % 97))],
        );
    }
    drop(s);
    let mut index = HistoryIndex::open(&f.db).unwrap();
    let start = Instant::now();
    let stats = index.update_all(&f.sessions).unwrap();
    let took = start.elapsed();
    eprintln!("indexed 10,000 turns in {took:?}");
    assert_eq!(stats.turns_added, 10_000);
    assert_eq!(index.turn_count().unwrap(), 10_000);
    let hits = search(&index, "q9876");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].seq, 9876);
    assert_eq!(hits[0].paths, [format!("src/m{}.rs", 9876 % 97)]);
    let mut q = SearchQuery::new("module");
    q.limit = 5;
    assert_eq!(index.search(&q).unwrap().len(), 5);
    // Nothing changed: nothing is read again.
    let again = index.update_all(&f.sessions).unwrap();
    assert_eq!((again.files_indexed, again.turns_written), (0, 0));
}

/// The turn ids (rowids) of a session, by seq.
fn rowids(index: &HistoryIndex) -> Vec<i64> {
    let mut stmt = index
        .conn
        .prepare("SELECT id FROM turns ORDER BY seq")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
fn incremental_reindex_only_adds_new_turns() {
    let f = fixture();
    let mut s = RawSession::create(&f.sessions.join("p"), "/p");
    for i in 0..3 {
        s.turn(T0 + i * 10_000, &format!("first batch {i}"), "ok", &[]);
    }
    // The last turn is still open: its answer has not arrived.
    s.user(T0 + 40_000, "an open question");
    let mut index = HistoryIndex::open(&f.db).unwrap();
    let stats = index.update_all(&f.sessions).unwrap();
    assert_eq!((stats.turns_added, stats.turns_written), (4, 4));
    let old = rowids(&index);
    assert!(search(&index, "zebra").is_empty());

    // The answer arrives, then two more turns.
    s.push(
        T0 + 41_000,
        Message::Assistant(assistant("a zebra", &[("read", "zoo.txt")])).into(),
    );
    s.turn(T0 + 50_000, "second batch one", "ok", &[]);
    s.turn(T0 + 60_000, "second batch two", "ok", &[]);
    let stats = index.update_all(&f.sessions).unwrap();
    assert_eq!(stats.files_indexed, 1);
    // Only the open turn is written again, with the two new ones.
    assert_eq!((stats.turns_added, stats.turns_written), (2, 3));
    let new = rowids(&index);
    assert_eq!(new.len(), 6);
    assert_eq!(new[..3], old[..3], "finished turns are not rewritten");
    let hits = search(&index, "zebra");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].seq, 3);
    assert_eq!(hits[0].paths, ["zoo.txt"]);

    // Unchanged: nothing read; the same results as a full rebuild.
    let stats = index.update_all(&f.sessions).unwrap();
    assert_eq!((stats.files_indexed, stats.turns_written), (0, 0));
    let incremental = snapshot_all(&index);
    index.reindex_all(&f.sessions).unwrap();
    assert_eq!(snapshot_all(&index), incremental);
}

fn snapshot_all(index: &HistoryIndex) -> Vec<(i64, String)> {
    let mut q = SearchQuery::new("ok");
    q.limit = 100;
    let mut hits: Vec<(i64, String)> = index
        .search(&q)
        .unwrap()
        .into_iter()
        .map(|h| (h.seq, h.snippet))
        .collect();
    hits.extend(
        search(index, "zebra")
            .into_iter()
            .map(|h| (h.seq, h.snippet)),
    );
    hits.sort();
    hits
}

#[test]
fn a_ten_megabyte_turn_and_non_utf8_tool_output() {
    let f = fixture();
    let dir = f.sessions.join("p");
    let mut store = SessionStore::create(&dir, SessionHeader::new("/p")).unwrap();
    store
        .append_message(Message::user("summarise the huge log"))
        .unwrap();
    let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"];
    let mut big = String::with_capacity(10 * 1024 * 1024 + 64);
    let mut i = 0usize;
    while big.len() < 10 * 1024 * 1024 {
        big.push_str(words[i % words.len()]);
        big.push(' ');
        i += 1;
    }
    big.push_str("needleword");
    store
        .append_message(Message::Assistant(assistant(&big, &[("bash", "/tmp/x")])))
        .unwrap();
    // Tool output that was not UTF-8, made lossy by the tool.
    let lossy = String::from_utf8_lossy(b"bin \xff\xfe\x80 output qqq").into_owned();
    store
        .append_message(Message::ToolResult(ToolResultMessage {
            tool_call_id: "call_0".into(),
            tool_name: "bash".into(),
            content: vec![UserContent::text(lossy)],
            details: serde_json::Value::Null,
            is_error: false,
            timestamp: 0,
            usage: None,
        }))
        .unwrap();
    store
        .append_message(Message::user("and the binary \u{fffd} bits"))
        .unwrap();
    let path = store.path().to_path_buf();
    drop(store);
    // A raw line of bytes that are not UTF-8 at all: the store reports it, indexing goes on.
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"{\"type\":\"message\",\"id\":\"\xff\xfe\"}\n")
        .unwrap();
    drop(file);

    let mut index = HistoryIndex::open(&f.db).unwrap();
    let stats = index.update_all(&f.sessions).unwrap();
    assert!(stats.skipped.is_empty());
    assert_eq!(index.turn_count().unwrap(), 2);
    let hits = search(&index, "needleword");
    assert_eq!(hits.len(), 1);
    assert!(hits[0].snippet.contains("**needleword**"));
    assert!(hits[0].snippet.len() < 1000);
    assert_eq!(hits[0].tools, ["bash"]);
    assert_eq!(search(&index, "binary bits").len(), 1);
    assert_eq!(search(&index, "epsilon").len(), 1);
}

#[test]
fn unreadable_and_removed_session_files() {
    let f = fixture();
    let (a1, ..) = populate(&f);
    std::fs::write(f.sessions.join("alpha").join("junk.jsonl"), "not json\n").unwrap();
    let mut index = HistoryIndex::open(&f.db).unwrap();
    let stats = index.update_all(&f.sessions).unwrap();
    assert_eq!(stats.skipped.len(), 1);
    assert!(stats.skipped[0].path.ends_with("junk.jsonl"));
    assert_eq!(index.turn_count().unwrap(), 5);

    std::fs::remove_file(&a1.path).unwrap();
    index.update_all(&f.sessions).unwrap();
    assert_eq!(index.turn_count().unwrap(), 2);
    assert!(search(&index, "tokio").is_empty());

    // A missing sessions directory has no sessions.
    let stats = index.update_all(&f.sessions.join("nope")).unwrap();
    assert_eq!(stats.files_seen, 0);
}

#[test]
fn recall_finds_the_projects_relevant_turns_by_any_word() {
    let f = fixture();
    let (a1, a2, b) = populate(&f);
    let mut index = HistoryIndex::open(&f.db).unwrap();
    index.update_all(&f.sessions).unwrap();
    let recall = |prompt: &str, exclude: Option<&str>| {
        index
            .recall(&RecallQuery {
                prompt,
                project: "/work/alpha",
                exclude_session: exclude,
                limit: 3,
            })
            .unwrap()
    };
    // Any word matches; only this project's turns come, the best first.
    let hits = recall("why does the parser crash with the nested brackets?", None);
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits.iter().all(|h| h.session_id != b.id));
    assert_eq!(hits[0].session_id, a1.id);
    assert!(hits[0].user_text.contains("fix the parser bug"));
    assert!(hits[0].assistant_text.contains("nested brackets"));
    assert!(hits[0].score >= hits[1].score);
    // The current session's turns are already in its transcript.
    let hits = recall("parser", Some(&a1.id));
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session_id, a2.id);
    // Nothing significant to look for, or nothing that matches.
    assert!(recall("is it ok?", None).is_empty());
    assert!(recall("kubernetes helm", None).is_empty());
}

#[test]
fn recall_in_a_large_index_ranks_by_the_rare_words_only() {
    let f = fixture();
    let mut s = RawSession::create(&f.sessions.join("alpha"), "/work/alpha");
    // 300 turns all about the parser; one also about a quokka, one about everything.
    for i in 0..300 {
        let t = T0 + i64::from(i) * 1000;
        let user = match i {
            7 => "the parser chokes on the quokka token".to_string(),
            8 => "parser quokka wombat numbat everything at once".to_string(),
            _ => format!("parser question number {i}"),
        };
        s.turn(t, &user, "parser answer", &[]);
    }
    let mut index = HistoryIndex::open(&f.db).unwrap();
    index.update_all(&f.sessions).unwrap();
    let recall = |prompt: &str| {
        index
            .recall(&RecallQuery {
                prompt,
                project: "/work/alpha",
                exclude_session: None,
                limit: 3,
            })
            .unwrap()
    };
    // "parser" is in every turn: only the quokka turns are recalled.
    let hits = recall("why does the parser choke on a quokka?");
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(
        hits.iter().all(|h| h.user_text.contains("quokka")),
        "{hits:?}"
    );
    // Only words found everywhere: nothing is more relevant than anything else.
    assert!(recall("the parser answer").is_empty());
}
