//! What model calls cost, summed from the transcripts: a session's totals (kept by the
//! `SessionStore` while it reads and appends) and totals over many session files, read
//! incrementally, for `march usage` and the supervisor's project and day totals.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::message::{AssistantMessage, StopReason, Usage};

/// Tokens and cost of model calls, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    /// Model calls counted.
    pub calls: u64,
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// Cost in USD, as the model's prices gave it when the call was made.
    pub cost: f64,
}

impl UsageTotals {
    /// Count one call's usage.
    pub fn add(&mut self, usage: &Usage) {
        self.calls += 1;
        self.input += usage.input;
        self.output += usage.output;
        self.cache_read += usage.cache_read;
        self.cache_write += usage.cache_write;
        self.cost += usage.cost.total;
    }

    /// Add another sum.
    pub fn merge(&mut self, other: &UsageTotals) {
        self.calls += other.calls;
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.cost += other.cost;
    }

    /// Every token counted.
    pub fn tokens(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// The start of a local day (ms since the epoch): `date` as `YYYY-MM-DD`, or today, in the
/// system's time zone (`TZ` when set).
pub fn local_day_start_ms(date: Option<&str>) -> Result<i64, String> {
    day_start_ms(date, jiff::tz::TimeZone::system())
}

fn day_start_ms(date: Option<&str>, tz: jiff::tz::TimeZone) -> Result<i64, String> {
    let day = match date {
        Some(text) => text
            .trim()
            .parse::<jiff::civil::Date>()
            .map_err(|e| format!("`{text}` is not a date as YYYY-MM-DD: {e}"))?,
        None => jiff::Timestamp::now().to_zoned(tz.clone()).date(),
    };
    let start = day
        .to_zoned(tz)
        .map_err(|e| format!("the start of {day}: {e}"))?;
    Ok(start.timestamp().as_millisecond())
}

/// One model call as a transcript records it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallUsage {
    /// `provider/model-id`.
    pub model: String,
    /// When the answer was made (ms since the epoch).
    pub timestamp: i64,
    /// Its usage.
    pub usage: Usage,
}

impl CallUsage {
    /// The call an assistant message records.
    pub fn of(message: &AssistantMessage) -> Self {
        CallUsage {
            model: format!("{}/{}", message.provider, message.model),
            timestamp: message.timestamp,
            usage: message.usage,
        }
    }
}

/// The calls of one session file read so far.
#[derive(Debug, Default)]
struct FileUsage {
    /// Bytes read, up to the end of the last whole line.
    read: u64,
    /// The project (`cwd` of the header).
    project: Option<String>,
    calls: Vec<CallUsage>,
}

/// Only what usage needs of a line; everything else is skipped unparsed.
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    message: Option<LineMessage>,
}

#[derive(Deserialize)]
struct LineMessage {
    role: String,
    #[serde(default)]
    provider: String,
    #[serde(default)]
    model: String,
    #[serde(default, rename = "toolName")]
    tool_name: String,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    timestamp: i64,
    /// Kept as text: a stop reason this version does not know must not lose the line.
    #[serde(default, rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(default, rename = "responseId")]
    response_id: Option<IgnoredAny>,
    #[serde(default)]
    content: Filled,
}

impl LineMessage {
    /// [`AssistantMessage::answered`] for the line: a request no model answered is no call.
    fn answered(&self) -> bool {
        let stop = self
            .stop_reason
            .clone()
            .and_then(|s| serde_json::from_value(serde_json::Value::String(s)).ok())
            .unwrap_or(StopReason::Stop);
        crate::message::answered(
            stop,
            self.content.0,
            self.response_id.is_some(),
            &self.usage.unwrap_or_default(),
        )
    }
}

/// Whether a message's `content` holds anything but empty text blocks (the loop gives a
/// failed message one), found without keeping it.
#[derive(Default)]
struct Filled(bool);

/// One content block, as far as [`Filled`] needs it.
#[derive(Deserialize)]
struct BlockProbe {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

impl BlockProbe {
    fn is_empty_text(&self) -> bool {
        self.kind == "text" && self.text.as_deref().is_none_or(str::is_empty)
    }
}

impl<'de> Deserialize<'de> for Filled {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Probe;
        impl<'de> Visitor<'de> for Probe {
            type Value = Filled;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("message content")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Filled, A::Error> {
                let mut any = false;
                while let Some(block) = seq.next_element::<BlockProbe>()? {
                    any |= !block.is_empty_text();
                }
                Ok(Filled(any))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Filled, A::Error> {
                let mut any = false;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    any = true;
                }
                Ok(Filled(any))
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Filled, E> {
                Ok(Filled(!text.is_empty()))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Filled, E> {
                Ok(Filled(false))
            }
        }
        d.deserialize_any(Probe)
    }
}

/// Usage over the session files under a directory, re-read only where a file grew (session
/// files are only appended to); a file that shrank or was replaced is read again whole.
#[derive(Debug, Default)]
pub struct UsageIndex {
    files: HashMap<PathBuf, FileUsage>,
}

/// Totals by project and model.
pub type UsageByProject = BTreeMap<(String, String), UsageTotals>;

impl UsageIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Read what is new in every `*.jsonl` under `dirs` (each the sessions directory, with
    /// one level of project directories, or one project's directory); files gone since are
    /// forgotten. Unreadable files and lines are skipped: usage is a report.
    pub fn refresh(&mut self, dirs: &[PathBuf]) {
        let mut seen = Vec::new();
        for dir in dirs {
            collect_files(dir, 2, &mut seen);
        }
        self.files.retain(|path, _| seen.contains(path));
        for path in seen {
            let entry = self.files.entry(path.clone()).or_default();
            if let Err(e) = read_new(&path, entry) {
                tracing::debug!(path = %path.display(), error = %e, "usage: file skipped");
            }
        }
    }

    /// Totals by project and model of the calls made at or after `since_ms`.
    pub fn totals(&self, since_ms: Option<i64>) -> UsageByProject {
        let mut out = UsageByProject::new();
        for file in self.files.values() {
            let project = file.project.clone().unwrap_or_else(|| "(unknown)".into());
            for call in &file.calls {
                if since_ms.is_some_and(|since| call.timestamp < since) {
                    continue;
                }
                out.entry((project.clone(), call.model.clone()))
                    .or_default()
                    .add(&call.usage);
            }
        }
        out
    }

    /// The totals of one project since `since_ms` (all models).
    pub fn project_total(&self, project: &str, since_ms: Option<i64>) -> UsageTotals {
        let mut sum = UsageTotals::default();
        for ((p, _), totals) in self.totals(since_ms) {
            if p == project {
                sum.merge(&totals);
            }
        }
        sum
    }
}

fn collect_files(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth > 1 {
            collect_files(&path, depth - 1, out);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

/// Read the whole lines past `file.read`.
fn read_new(path: &Path, file: &mut FileUsage) -> std::io::Result<()> {
    let mut handle = File::open(path)?;
    let len = handle.metadata()?.len();
    if len < file.read {
        *file = FileUsage::default();
    }
    if len == file.read {
        return Ok(());
    }
    handle.seek(SeekFrom::Start(file.read))?;
    let mut reader = BufReader::new(handle);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 || line.last() != Some(&b'\n') {
            // A line still being written is read next time, whole.
            return Ok(());
        }
        file.read += n as u64;
        count_line(&line, file);
    }
}

fn count_line(line: &[u8], file: &mut FileUsage) {
    // Most lines are not assistant messages, tool results that cost something, or headers:
    // skip them without parsing.
    let wanted = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    let paid_tool = || wanted(b"\"toolResult\"") && wanted(b"\"usage\"");
    if !(wanted(b"\"assistant\"")
        || paid_tool()
        || (file.project.is_none() && wanted(b"\"session\"")))
    {
        return;
    }
    let Ok(parsed) = serde_json::from_slice::<Line>(line) else {
        return;
    };
    match (parsed.kind.as_str(), parsed.message) {
        ("session", _) => file.project = parsed.cwd.or(file.project.take()),
        ("message", Some(m)) if m.role == "assistant" && m.answered() => {
            file.calls.push(CallUsage {
                model: format!("{}/{}", m.provider, m.model),
                timestamp: m.timestamp,
                usage: m.usage.unwrap_or_default(),
            })
        }
        // A tool whose call itself cost something (a generated image), under its name.
        ("message", Some(m)) if m.role == "toolResult" => {
            if let Some(usage) = m.usage {
                file.calls.push(CallUsage {
                    model: format!("tool/{}", m.tool_name),
                    timestamp: m.timestamp,
                    usage,
                });
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Cost;
    use std::io::Write;

    fn usage(input: u64, output: u64, cost: f64) -> Usage {
        Usage {
            input,
            output,
            total_tokens: input + output,
            cost: Cost {
                total: cost,
                ..Cost::default()
            },
            ..Usage::default()
        }
    }

    fn assistant_line(model: &str, ts: i64, u: &Usage) -> String {
        serde_json::json!({
            "type": "message", "id": "x", "parentId": null, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "hi \"assistant\""}],
                "api": "openai-completions", "provider": "p", "model": model,
                "usage": u, "stopReason": "stop", "timestamp": ts}
        })
        .to_string()
    }

    #[test]
    fn days_start_at_local_midnight() {
        let utc = jiff::tz::TimeZone::UTC;
        assert_eq!(
            day_start_ms(Some("2026-12-02"), utc.clone()),
            Ok(1_796_169_600_000)
        );
        let berlin = jiff::tz::TimeZone::fixed(jiff::tz::offset(1));
        assert_eq!(
            day_start_ms(Some("2026-12-02"), berlin),
            Ok(1_796_169_600_000 - 3_600_000)
        );
        let err = day_start_ms(Some("yesterday"), utc.clone()).unwrap_err();
        assert!(err.contains("YYYY-MM-DD"), "{err}");
        let today = day_start_ms(None, utc).unwrap();
        let now = crate::message::now_ms();
        assert!(today <= now && now - today < 86_400_000);
    }

    #[test]
    fn totals_add_calls_and_merge() {
        let mut t = UsageTotals::default();
        t.add(&usage(100, 20, 0.5));
        t.add(&usage(10, 2, 0.25));
        assert_eq!((t.calls, t.input, t.output, t.tokens()), (2, 110, 22, 132));
        assert!((t.cost - 0.75).abs() < 1e-12);
        let mut sum = UsageTotals::default();
        sum.merge(&t);
        sum.merge(&t);
        assert_eq!(sum.calls, 4);
    }

    #[test]
    fn the_index_reads_only_what_was_appended_and_whole_lines_only() {
        let dir = tempfile::tempdir().unwrap();
        let project_dir = dir.path().join("--work-proj--");
        std::fs::create_dir_all(&project_dir).unwrap();
        let path = project_dir.join("s.jsonl");
        let mut f = File::create(&path).unwrap();
        writeln!(
            f,
            r#"{{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/work/proj"}}"#
        )
        .unwrap();
        writeln!(f, "{}", assistant_line("m", 1_000, &usage(100, 10, 1.0))).unwrap();
        writeln!(
            f,
            r#"{{"type":"message","message":{{"role":"user","content":"assistant"}}}}"#
        )
        .unwrap();
        writeln!(f, "not json \"assistant\"").unwrap();
        // Half a line: a writer is in the middle of it.
        let next = assistant_line("n", 5_000, &usage(1, 1, 2.0));
        write!(f, "{}", &next[..20]).unwrap();
        f.flush().unwrap();

        let mut index = UsageIndex::new();
        index.refresh(&[dir.path().to_path_buf()]);
        let totals = index.totals(None);
        let key = ("/work/proj".to_string(), "p/m".to_string());
        assert_eq!(totals.len(), 1);
        assert_eq!(totals[&key].calls, 1);

        writeln!(f, "{}", &next[20..]).unwrap();
        f.flush().unwrap();
        index.refresh(&[dir.path().to_path_buf()]);
        let totals = index.totals(None);
        assert_eq!(totals.len(), 2);
        assert_eq!(totals[&("/work/proj".into(), "p/n".into())].cost, 2.0);
        assert_eq!(
            index.totals(Some(2_000)).len(),
            1,
            "the earlier call is before since"
        );
        let all = index.project_total("/work/proj", None);
        assert_eq!((all.calls, all.cost), (2, 3.0));

        // A replaced, shorter file is read again from its start.
        std::fs::write(
            &path,
            format!("{}\n", assistant_line("m", 9, &usage(1, 0, 0.5))),
        )
        .unwrap();
        index.refresh(&[dir.path().to_path_buf()]);
        let totals = index.totals(None);
        assert_eq!(totals[&("(unknown)".into(), "p/m".into())].cost, 0.5);
        std::fs::remove_file(&path).unwrap();
        index.refresh(&[dir.path().to_path_buf()]);
        assert!(index.totals(None).is_empty());
    }

    #[test]
    fn a_tool_call_that_cost_something_counts_under_the_tools_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let paid = serde_json::json!({
            "type": "message", "id": "y", "parentId": null, "timestamp": "t",
            "message": {"role": "toolResult", "toolCallId": "c", "toolName": "image_generate",
                "content": [], "isError": false, "timestamp": 7, "usage": usage(0, 0, 0.04)}
        });
        let free = serde_json::json!({
            "type": "message", "id": "z", "parentId": null, "timestamp": "t",
            "message": {"role": "toolResult", "toolCallId": "d", "toolName": "read",
                "content": [{"type": "text", "text": "usage"}], "isError": false, "timestamp": 8}
        });
        std::fs::write(&path, format!("{paid}\n{free}\n")).unwrap();
        let mut index = UsageIndex::new();
        index.refresh(&[dir.path().to_path_buf()]);
        let totals = index.totals(None);
        assert_eq!(totals.len(), 1, "{totals:?}");
        let key = ("(unknown)".to_string(), "tool/image_generate".to_string());
        assert_eq!((totals[&key].calls, totals[&key].cost), (1, 0.04));
    }

    #[test]
    fn requests_no_model_answered_are_not_calls() {
        use crate::message::{AssistantContent, Message, TextContent};
        let model = crate::model::Model::openai_compatible("p", "m", "http://127.0.0.1:9/v1");
        let text = |text: &str| {
            AssistantContent::Text(TextContent {
                text: text.into(),
                text_signature: None,
            })
        };
        // As the loop leaves a request that failed: one empty text block.
        let failed = |edit: &dyn Fn(&mut AssistantMessage)| {
            let mut m = AssistantMessage::empty(&model);
            m.content.push(text(""));
            m.stop_reason = StopReason::Error;
            m.error_message = Some("connection refused by http://127.0.0.1:9/v1".into());
            edit(&mut m);
            m
        };
        let unanswered = failed(&|_| {});
        let aborted_early = failed(&|m| m.stop_reason = StopReason::Aborted);
        let cut_mid_answer = failed(&|m| m.content = vec![text("half")]);
        let failed_after_start = failed(&|m| m.response_id = Some("msg_1".into()));
        let billed = failed(&|m| m.usage.input = 12);
        let mut empty_answer = AssistantMessage::empty(&model);
        empty_answer.stop_reason = StopReason::Stop;
        assert!(!unanswered.answered() && !aborted_early.answered());
        for m in [&cut_mid_answer, &failed_after_start, &billed, &empty_answer] {
            assert!(m.answered(), "{m:?}");
        }

        // The index reads the same from the transcript lines.
        let dir = tempfile::tempdir().unwrap();
        let line = |m: &AssistantMessage| {
            serde_json::json!({"type": "message", "id": "x", "parentId": null,
                "timestamp": "t", "message": Message::Assistant(m.clone())})
            .to_string()
        };
        let mut text = String::new();
        for m in [
            &unanswered,
            &aborted_early,
            &cut_mid_answer,
            &failed_after_start,
            &billed,
            &empty_answer,
        ] {
            text.push_str(&line(m));
            text.push('\n');
        }
        // A stop reason this version does not know keeps its line.
        text.push_str(&line(&empty_answer).replace("\"stop\"", "\"paused\""));
        text.push('\n');
        std::fs::write(dir.path().join("s.jsonl"), text).unwrap();
        let mut index = UsageIndex::new();
        index.refresh(&[dir.path().to_path_buf()]);
        let all = index.project_total("(unknown)", None);
        assert_eq!(all.calls, 5);
        assert_eq!(all.input, 12);
    }
}
