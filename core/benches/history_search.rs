//! The history index at scale: 1,000 sessions / 100,000 turns of synthetic text with a
//! realistic vocabulary, indexed from real session files; then 200 searches.
//!
//! Prints the indexing cost per turn, the median and p90 search time (target: under 50 ms at
//! the median) and the size of the database.
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use march_core::history::{HistoryIndex, RecallQuery, SearchQuery};
use march_core::message::{AssistantContent, AssistantMessage, Message, TextContent, ToolCall};
use march_core::model::Model;
use march_core::session::{SessionHeader, SessionMessage, SessionStore, format_iso_ms};

const SESSIONS: usize = 1_000;
const TURNS_PER_SESSION: usize = 100;
const QUERIES: usize = 200;

/// Words of a coding conversation: common ones often, rare ones seldom (Zipf-like).
const VOCAB: &[&str] = &[
    "the",
    "to",
    "and",
    "a",
    "of",
    "in",
    "is",
    "it",
    "that",
    "for",
    "this",
    "with",
    "on",
    "we",
    "file",
    "function",
    "test",
    "error",
    "fix",
    "add",
    "change",
    "code",
    "run",
    "build",
    "type",
    "module",
    "return",
    "value",
    "struct",
    "field",
    "method",
    "call",
    "update",
    "check",
    "use",
    "config",
    "parser",
    "session",
    "index",
    "search",
    "query",
    "runner",
    "agent",
    "tool",
    "model",
    "token",
    "stream",
    "event",
    "message",
    "context",
    "layer",
    "prompt",
    "cache",
    "thread",
    "async",
    "await",
    "future",
    "tokio",
    "serde",
    "json",
    "schema",
    "sqlite",
    "database",
    "table",
    "column",
    "row",
    "transaction",
    "lock",
    "mutex",
    "channel",
    "buffer",
    "bytes",
    "string",
    "vector",
    "slice",
    "iterator",
    "closure",
    "trait",
    "generic",
    "lifetime",
    "borrow",
    "clippy",
    "lint",
    "warning",
    "panic",
    "unwrap",
    "result",
    "option",
    "enum",
    "match",
    "pattern",
    "macro",
    "derive",
    "benchmark",
    "latency",
    "throughput",
    "memory",
    "allocation",
    "profile",
    "flamegraph",
    "terminal",
    "pane",
    "layout",
    "keymap",
    "theme",
    "render",
    "widget",
    "cursor",
    "scroll",
    "resize",
    "signal",
    "process",
    "spawn",
    "pipe",
    "stdin",
    "stdout",
    "stderr",
    "exit",
    "status",
    "permission",
    "sandbox",
    "network",
    "http",
    "request",
    "response",
    "header",
    "retry",
    "backoff",
    "timeout",
    "deadline",
    "compaction",
    "summary",
    "transcript",
    "history",
    "memory",
    "recall",
    "snippet",
    "ranking",
    "bm25",
    "tokenizer",
    "unicode",
    "utf8",
    "lossy",
    "escape",
    "quote",
    "regex",
    "glob",
    "path",
    "directory",
    "workspace",
    "cargo",
    "crate",
    "dependency",
    "feature",
    "version",
    "release",
    "changelog",
    "migration",
    "refactor",
    "rename",
    "inline",
    "extract",
    "split",
    "merge",
    "rebase",
    "commit",
    "branch",
    "diff",
    "patch",
    "review",
    "approve",
    "deploy",
    "docker",
    "kubernetes",
    "postgres",
    "redis",
    "kafka",
    "grpc",
    "protobuf",
    "websocket",
    "oauth",
    "jwt",
    "certificate",
    "rustls",
    "openssl",
    "linker",
    "wasm",
    "embedded",
    "firmware",
];

fn word(rng: &mut fastrand::Rng) -> &'static str {
    // Squaring a uniform number skews towards the front of the list.
    let u = rng.f64();
    VOCAB[((u * u) * VOCAB.len() as f64) as usize % VOCAB.len()]
}

fn sentence(rng: &mut fastrand::Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(word(rng));
    }
    s
}

/// A name of project `project` (`parser7x21`): real turns mention identifiers of their
/// project that only a few other turns share, which is what recall finds them by.
fn identifier(rng: &mut fastrand::Rng, project: usize) -> String {
    format!("{}{project}x{}", word(rng), rng.u32(..50))
}

/// A sentence with `names` identifiers of `project` mixed in.
fn with_identifiers(rng: &mut fastrand::Rng, words: usize, names: usize, project: usize) -> String {
    let mut s = sentence(rng, words);
    for _ in 0..names {
        s.push(' ');
        s.push_str(&identifier(rng, project));
    }
    s
}

/// Write one session file: the header through `SessionStore`, the turns as raw lines (one
/// sync per session instead of per line).
fn write_session(dir: &Path, n: usize, rng: &mut fastrand::Rng, model: &Model) {
    let store =
        SessionStore::create(dir, SessionHeader::new(format!("/work/project{}", n % 20))).unwrap();
    let path = store.path().to_path_buf();
    drop(store);
    let mut out = BufWriter::new(OpenOptions::new().append(true).open(&path).unwrap());
    let mut parent: Option<String> = None;
    let base = 1_767_225_600_000i64 + n as i64 * 3_600_000;
    for t in 0..TURNS_PER_SESSION {
        let time = base + t as i64 * 30_000;
        let user_words = 8 + rng.usize(..30);
        let user = Message::user(with_identifiers(rng, user_words, 2, n % 20));
        let answer_words = 40 + rng.usize(..200);
        let mut a = AssistantMessage::empty(model);
        a.content.push(AssistantContent::Text(TextContent {
            text: with_identifiers(rng, answer_words, 3, n % 20),
            text_signature: None,
        }));
        a.content.push(AssistantContent::ToolCall(ToolCall {
            id: format!("call_{t}"),
            name: ["read", "edit", "bash", "grep", "write"][rng.usize(..5)].into(),
            arguments: serde_json::json!({"path": format!("src/{}/{}.rs", word(rng), word(rng))}),
            thought_signature: None,
        }));
        a.usage.input = 2000;
        a.usage.output = 300;
        for (i, message) in [
            SessionMessage::from(user),
            SessionMessage::from(Message::Assistant(a)),
        ]
        .into_iter()
        .enumerate()
        {
            let id = format!("{:08x}", t * 2 + i + 1);
            let line = serde_json::json!({
                "type": "message", "id": id, "parentId": parent,
                "timestamp": format_iso_ms(time + i as i64 * 5_000), "message": message,
            });
            writeln!(out, "{line}").unwrap();
            parent = Some(id);
        }
    }
    out.flush().unwrap();
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list`
    }
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    let db = tmp.path().join("history.sqlite");
    let model = Model::anthropic("anthropic", "claude-sonnet-4-5", "http://localhost");
    let mut rng = fastrand::Rng::with_seed(5);
    eprint!("writing {SESSIONS} sessions of {TURNS_PER_SESSION} turns… ");
    for n in 0..SESSIONS {
        write_session(&sessions.join(format!("p{}", n % 20)), n, &mut rng, &model);
    }
    eprintln!("done");

    let mut index = HistoryIndex::open(&db).unwrap();
    let start = Instant::now();
    let stats = index.update_all(&sessions).unwrap();
    let index_time = start.elapsed();
    let turns = index.turn_count().unwrap();
    assert_eq!(turns as usize, SESSIONS * TURNS_PER_SESSION);
    assert_eq!(stats.turns_added, SESSIONS * TURNS_PER_SESSION);
    let start = Instant::now();
    let again = index.update_all(&sessions).unwrap();
    let noop_time = start.elapsed();
    assert_eq!(again.files_indexed, 0);
    let db_size: u64 = ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", db.display())).ok())
        .map(|m| m.len())
        .sum();

    // Queries of one to three words, some with a filter, some with a prefix.
    let mut times = Vec::with_capacity(QUERIES);
    let mut hits_total = 0usize;
    for q in 0..QUERIES {
        let words = 1 + q % 3;
        let mut text = sentence(&mut rng, words);
        if q % 10 == 0 {
            text.truncate(3.min(text.len()));
            text.push('*');
        }
        let mut query = SearchQuery::new(text);
        if q % 4 == 1 {
            query.project = Some(format!("/work/project{}", q % 20));
        }
        let start = Instant::now();
        let hits = index.search(&query).unwrap();
        times.push(start.elapsed());
        hits_total += hits.len();
    }
    times.sort();

    // Recall for prompts of 8 to 24 words and one or two identifiers, within one project, as
    // a runner does before a run.
    let mut recall_times = Vec::with_capacity(QUERIES);
    let mut recalled = 0usize;
    for q in 0..QUERIES {
        let prompt = with_identifiers(&mut rng, 8 + q % 17, 1 + q % 2, q % 20);
        let project = format!("/work/project{}", q % 20);
        let start = Instant::now();
        let turns = index
            .recall(&RecallQuery {
                prompt: &prompt,
                project: &project,
                exclude_session: None,
                limit: 3,
            })
            .unwrap();
        recall_times.push(start.elapsed());
        recalled += turns.len();
    }
    recall_times.sort();

    println!(
        "history index: {SESSIONS} sessions, {turns} turns, database {:.1} MB",
        db_size as f64 / 1e6
    );
    println!(
        "indexing: {:.2} s total, {:.1} µs per turn (session files read and parsed included)",
        index_time.as_secs_f64(),
        index_time.as_secs_f64() * 1e6 / turns as f64
    );
    println!(
        "no-op update pass over {SESSIONS} unchanged files: {:.1} ms",
        ms(noop_time)
    );
    println!(
        "search over {QUERIES} queries (limit 20, {:.1} hits on average): median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        hits_total as f64 / QUERIES as f64,
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.9)),
        ms(percentile(&times, 1.0)),
    );
    println!(
        "recall over {QUERIES} prompts of 8-24 words + 1-2 identifiers (limit 3, {:.1} turns on average): median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        recalled as f64 / QUERIES as f64,
        ms(percentile(&recall_times, 0.5)),
        ms(percentile(&recall_times, 0.9)),
        ms(percentile(&recall_times, 1.0)),
    );
}
