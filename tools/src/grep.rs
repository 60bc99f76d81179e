//! grep: search file contents with ripgrep's own libraries, ignore rules as ripgrep's.

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};
use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::args::search_root;
use crate::context::ToolContext;
use crate::task::{aborted, run_blocking};
use crate::truncate::{MAX_BYTES, MAX_LINE_CHARS, append_notices, format_size, truncate_line};

/// Matches returned when the model sets no limit.
pub const DEFAULT_LIMIT: usize = 100;

/// Arguments of a grep call.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    ignore_case: bool,
    #[serde(default)]
    literal: bool,
    #[serde(default)]
    context: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

/// One output line of a file: a match or a context line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hit {
    line: u64,
    text: String,
    is_match: bool,
}

/// Search file contents for a regex or literal text.
pub struct GrepTool {
    ctx: ToolContext,
}

impl GrepTool {
    /// A grep tool for a session.
    pub fn new(ctx: ToolContext) -> Self {
        GrepTool { ctx }
    }
}

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regex (or literal text with literal=true) to search for"},
                "path": {"type": "string", "description": "Directory or file to search (default: the working directory)"},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.rs' or '!*.min.js'"},
                "ignoreCase": {"type": "boolean", "description": "Case-insensitive search"},
                "literal": {"type": "boolean", "description": "Treat pattern as literal text, not a regex"},
                "context": {"type": "integer", "minimum": 0, "description": "Lines of context around each match"},
                "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of matches (default 100)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    })
}

#[async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        "Search file contents for a regex or literal text. Respects .gitignore and .ignore; searches hidden files. \
         Output lines are `path:line: text` for matches and `path-line- text` for context. \
         At most 100 matches by default (set limit), 50KB of output, lines cut to 500 characters."
    }

    fn parameters(&self) -> &Value {
        schema()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Search file contents for patterns (respects .gitignore)")
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Search
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("pattern").and_then(Value::as_str))
    }

    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        vec![search_root(&self.ctx, args)]
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let args: Args = serde_json::from_value(args)
            .map_err(|e| ToolError::new(format!("Invalid grep arguments: {e}")))?;
        let root = self
            .ctx
            .resolve(args.path.as_deref().unwrap_or("."))
            .absolute;
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (stop, cancel) = (stop.clone(), cancel.clone());
            tokio::spawn(async move {
                cancel.cancelled().await;
                stop.store(true, Ordering::Relaxed);
            })
        };
        let result = run_blocking("grep failed".into(), move || search(&root, &args, &stop)).await;
        watcher.abort();
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        let (text, details) = result??;
        Ok(ToolOutcome {
            details,
            ..ToolOutcome::text(text)
        })
    }
}

/// Run a search; returns the text for the model and the details.
fn search(root: &Path, args: &Args, stop: &AtomicBool) -> Result<(String, Value), ToolError> {
    let meta = std::fs::metadata(root)
        .map_err(|_| ToolError::new(format!("Path not found: {}", root.display())))?;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    // A line terminator lets the searcher run the regex over whole buffers instead of line by
    // line (ripgrep's fast path); it also keeps `\s` and friends from matching across lines.
    let matcher = RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .case_insensitive(args.ignore_case)
        .fixed_strings(args.literal)
        .build(&args.pattern)
        .map_err(|e| ToolError::new(format!("Invalid pattern: {e}")))?;
    let context = args.context.unwrap_or(0);
    let mut walk = WalkBuilder::new(root);
    // As `rg --hidden`: hidden files are searched, ignore files respected; `.git` itself is
    // never searched (ripgrep would, which only ever yields noise for a model).
    walk.hidden(false).filter_entry(|e| e.file_name() != ".git");
    if let Some(glob) = &args.glob {
        let mut ob = OverrideBuilder::new(root);
        ob.add(glob)
            .map_err(|e| ToolError::new(format!("Invalid glob `{glob}`: {e}")))?;
        walk.overrides(
            ob.build()
                .map_err(|e| ToolError::new(format!("Invalid glob `{glob}`: {e}")))?,
        );
    }
    let found = AtomicUsize::new(0);
    let files: Mutex<Vec<(PathBuf, Vec<Hit>)>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    walk.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .before_context(context)
            .after_context(context)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .build();
        let (found, files, errors) = (&found, &files, &errors);
        Box::new(move |entry| {
            if stop.load(Ordering::Relaxed) || found.load(Ordering::Relaxed) >= limit {
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    errors.lock().push(e.to_string());
                    return WalkState::Continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let mut sink = Collect::default();
            if let Err(e) = searcher.search_path(&matcher, entry.path(), &mut sink) {
                errors
                    .lock()
                    .push(format!("{}: {e}", entry.path().display()));
            }
            if sink.matches > 0 {
                found.fetch_add(sink.matches, Ordering::Relaxed);
                files.lock().push((entry.into_path(), sink.hits));
            }
            WalkState::Continue
        })
    });
    let mut files = files.into_inner();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let errors = errors.into_inner();
    Ok(render(root, meta.is_file(), files, limit, &errors))
}

/// Format hits as pi does, applying the match limit and the byte cap.
fn render(
    root: &Path,
    root_is_file: bool,
    files: Vec<(PathBuf, Vec<Hit>)>,
    limit: usize,
    errors: &[String],
) -> (String, Value) {
    let mut out = String::new();
    let mut matches = 0usize;
    let mut long_lines = false;
    let mut byte_cap = false;
    let mut limit_hit = false;
    'files: for (path, hits) in &files {
        let rel = if root_is_file {
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            path.strip_prefix(root)
                .unwrap_or(path)
                .to_string_lossy()
                .replace('\\', "/")
        };
        for hit in hits {
            if hit.is_match && matches == limit {
                limit_hit = true;
                break 'files;
            }
            let (text, cut) = truncate_line(&hit.text, MAX_LINE_CHARS);
            long_lines |= cut;
            let line = if hit.is_match {
                format!("{rel}:{}: {text}\n", hit.line)
            } else {
                format!("{rel}-{}- {text}\n", hit.line)
            };
            if out.len() + line.len() > MAX_BYTES {
                byte_cap = true;
                break 'files;
            }
            out.push_str(&line);
            matches += usize::from(hit.is_match);
        }
    }
    // The walk stops once `limit` matches are found, so reaching it means there may be more.
    let total_found: usize = files
        .iter()
        .map(|(_, h)| h.iter().filter(|x| x.is_match).count())
        .sum();
    limit_hit |= total_found >= limit && !byte_cap;
    if matches == 0 && !byte_cap {
        let mut text = "No matches found".to_string();
        if !errors.is_empty() {
            text.push_str(&format!(
                "\n\n[{} path(s) could not be searched: {}]",
                errors.len(),
                errors[0]
            ));
        }
        return (text, json!({"matches": 0}));
    }
    let mut notices = Vec::new();
    if limit_hit {
        notices.push(format!(
            "{limit} matches limit reached. Use limit={} for more, or refine pattern",
            limit * 2
        ));
    }
    if byte_cap {
        notices.push(format!("{} limit reached", format_size(MAX_BYTES)));
    }
    if long_lines {
        notices.push(format!(
            "Some lines truncated to {MAX_LINE_CHARS} chars. Use read tool to see full lines"
        ));
    }
    let mut text = out.trim_end_matches('\n').to_string();
    append_notices(&mut text, &notices);
    let details = json!({
        "matches": matches,
        "matchLimitReached": limit_hit,
        "byteLimitReached": byte_cap,
        "linesTruncated": long_lines,
    });
    (text, details)
}

/// Collects one file's matches and context lines.
#[derive(Default)]
struct Collect {
    hits: Vec<Hit>,
    matches: usize,
}

impl Collect {
    fn push(&mut self, first_line: Option<u64>, bytes: &[u8], is_match: bool) {
        let text = String::from_utf8_lossy(bytes);
        let body = text.strip_suffix('\n').unwrap_or(&text);
        for (i, line) in body.split('\n').enumerate() {
            self.hits.push(Hit {
                line: first_line.unwrap_or(0) + i as u64,
                text: line.strip_suffix('\r').unwrap_or(line).to_string(),
                is_match,
            });
            self.matches += usize::from(is_match);
        }
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.push(mat.line_number(), mat.bytes(), true);
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push(ctx.line_number(), ctx.bytes(), false);
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
