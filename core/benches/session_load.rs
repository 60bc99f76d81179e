//! Loading a large session: time and peak memory for a ~100 MB pi-format JSONL file.
//!
//! The reference is the file itself: target under 1 s and peak RSS growth under 2× its size.
//! Each load runs in a fresh child process (this binary re-invoked with `--load FILE`), so the
//! peak resident size (`VmHWM`) belongs to that load alone; the child reports its baseline
//! before loading so the growth can be computed. Also times a plain `read_to_string` of the
//! same file in the same run as the floor any reader pays.
//!
//! `-- --baseline-exe PATH` also loads the file with another build of this bench (an earlier
//! commit's), alternating with this one, and prints the ratio: the cost of what a change added
//! to loading (issue 18: tokens and cost restored, at most 1.1×).
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use march_core::message::{
    AssistantContent, AssistantMessage, Message, StopReason, TextContent, ToolCall,
    ToolResultMessage, UserContent,
};
use march_core::model::Model;
use march_core::session::{SessionHeader, SessionStore};

const TARGET_BYTES: u64 = 100 * 1024 * 1024;
const RUNS: usize = 5;

fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn vm_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Write a realistic session: turns of user text, assistant text + tool call, tool result.
fn generate(dir: &Path) -> PathBuf {
    let model = Model::anthropic(
        "anthropic",
        "claude-sonnet-4-5",
        "https://api.anthropic.com/v1",
    );
    let mut store =
        SessionStore::create(dir, SessionHeader::new(dir.display().to_string())).unwrap();
    let filler = "The quick brown fox jumps over the lazy dog. ".repeat(40);
    let mut turn = 0u64;
    while std::fs::metadata(store.path()).unwrap().len() < TARGET_BYTES {
        turn += 1;
        store
            .append_message(Message::user(format!(
                "turn {turn}: please look at src/lib.rs"
            )))
            .unwrap();
        let mut a = AssistantMessage::empty(&model);
        a.content.push(AssistantContent::Text(TextContent {
            text: format!("Reading it. {filler}"),
            text_signature: None,
        }));
        a.content.push(AssistantContent::ToolCall(ToolCall {
            id: format!("toolu_{turn:08}"),
            name: "read".into(),
            arguments: serde_json::json!({"path": "src/lib.rs"}),
            thought_signature: None,
        }));
        a.stop_reason = StopReason::ToolUse;
        // Every call is priced, so restoring the session's totals has work to do.
        a.usage.input = 1_000 + turn;
        a.usage.output = 200;
        a.usage.cache_read = 30_000;
        a.usage.total_tokens = 31_200 + turn;
        a.usage.cost.total = 0.0123;
        store.append_message(Message::Assistant(a)).unwrap();
        store
            .append_message(Message::ToolResult(ToolResultMessage {
                tool_call_id: format!("toolu_{turn:08}"),
                tool_name: "read".into(),
                content: vec![UserContent::text(filler.repeat(3))],
                details: serde_json::Value::Null,
                is_error: false,
                timestamp: 0,
                usage: None,
            }))
            .unwrap();
    }
    store.path().to_path_buf()
}

fn child(file: &Path) {
    let base = vm_rss_kb();
    let start = Instant::now();
    let (store, report) = SessionStore::open(file).unwrap();
    let open_ms = start.elapsed().as_secs_f64() * 1000.0;
    let open_peak = vm_hwm_kb();
    let ctx = store.context();
    // What `session/load` restores besides the conversation: the totals (summed while
    // reading) and the context of the branch's last answer.
    let totals = store.usage();
    // As the runner finds it: up from the leaf to the first answer.
    let mut last = None;
    let mut at = store.leaf_entry();
    while let Some(entry) = at {
        if let Some(march_core::session::SessionMessage::Assistant(a)) = entry.message() {
            last = Some(a.usage.total_tokens);
            break;
        }
        at = entry.parent_id.as_deref().and_then(|id| store.entry(id));
    }
    assert!(totals.calls > 0 && last.is_some(), "usage restored");
    let total_ms = start.elapsed().as_secs_f64() * 1000.0;
    println!(
        "{} {} {} {} {} {} {}",
        total_ms,
        base,
        vm_hwm_kb(),
        store.entries().len(),
        ctx.messages.len() + report.skipped.len(),
        open_ms,
        open_peak
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--load") {
        child(Path::new(&args[i + 1]));
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list`
    }
    let dir = tempfile::tempdir().unwrap();
    eprint!("generating a ~100 MB session… ");
    let file = generate(dir.path());
    let size = std::fs::metadata(&file).unwrap().len();
    eprintln!("{:.1} MB", size as f64 / 1_048_576.0);

    let mut read_ms = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let s = std::fs::read_to_string(&file).unwrap();
        read_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(s.len() as u64, size);
    }
    let exe = std::env::current_exe().unwrap();
    let baseline = args
        .iter()
        .position(|a| a == "--baseline-exe")
        .map(|i| PathBuf::from(&args[i + 1]));
    let load_with = |exe: &Path| -> Vec<f64> {
        let out = Command::new(exe).arg("--load").arg(&file).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect()
    };
    if let Some(baseline) = &baseline {
        // Alternating, so both see the same machine load and page cache.
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for _ in 0..RUNS * 2 {
            before.push(load_with(baseline)[0]);
            after.push(load_with(&exe)[0]);
        }
        before.sort_by(|a, b| a.partial_cmp(b).unwrap());
        after.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let (b, a) = (before[before.len() / 2], after[after.len() / 2]);
        println!(
            "open + context: baseline {b:.0} ms, this build (with usage restored) {a:.0} ms: \
             {:.3}x ({} runs each, alternating, medians)",
            a / b,
            RUNS * 2
        );
    }
    let mut load_ms = Vec::new();
    let mut growth_kb = Vec::new();
    let mut open_ms = Vec::new();
    let mut open_growth_kb = Vec::new();
    let mut entries = 0;
    for _ in 0..RUNS {
        let f = load_with(&exe);
        load_ms.push(f[0]);
        growth_kb.push(f[2] - f[1]);
        entries = f[3] as u64;
        open_ms.push(f[5]);
        open_growth_kb.push(f[6] - f[1]);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let (read, load, growth) = (
        median(&mut read_ms),
        median(&mut load_ms),
        median(&mut growth_kb),
    );
    let (open, open_growth) = (median(&mut open_ms), median(&mut open_growth_kb));
    let mb = size as f64 / 1_048_576.0;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "session file: {mb:.1} MB, {entries} entries, {RUNS} runs each (medians)"
    )
    .unwrap();
    writeln!(out, "read_to_string (reference): {read:.0} ms").unwrap();
    writeln!(
        out,
        "SessionStore::open: {open:.0} ms, peak RSS growth {:.2}x the file",
        open_growth * 1024.0 / size as f64
    )
    .unwrap();
    writeln!(
        out,
        "SessionStore::open + context: {load:.0} ms (target < 1000 ms)"
    )
    .unwrap();
    writeln!(
        out,
        "peak RSS growth: {:.1} MB = {:.2}x the file (target < 2x)",
        growth / 1024.0,
        growth * 1024.0 / size as f64
    )
    .unwrap();
}
