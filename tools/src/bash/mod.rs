//! The bash tool: run a command through the session's executor, stream the output's tail, and
//! keep the full output in a temp file once it is too long to return.

use parking_lot::Mutex;
use std::collections::hash_map::RandomState;
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::message::UserContent;
use march_core::tool::{
    CallPreview, SandboxUse, Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title,
};
use serde_json::{Value, json};
use tokio::time::{Instant, MissedTickBehavior, interval_at};
use tokio_util::sync::CancellationToken;

use crate::context::ToolContext;
use crate::exec::{CommandExit, CommandRequest, OutputSink};
use crate::truncate::{MAX_BYTES, MAX_LINES, TruncatedBy, Truncation, format_size, truncate_tail};

#[cfg(test)]
mod tests;

/// Shortest interval between two streamed updates.
const UPDATE_INTERVAL: Duration = Duration::from_millis(100);

/// Bytes of output kept in memory: twice the returned limit, so the tail is always complete.
const TAIL_KEEP: usize = 2 * MAX_BYTES;

const DESCRIPTION: &str = "Execute a bash command in the current working directory. Returns stdout \
and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, \
full output is saved to a temp file. Optionally provide a timeout in seconds.";

/// Runs shell commands (`bash -c`) in the session's working directory.
pub struct BashTool {
    ctx: ToolContext,
    parameters: Value,
}

impl BashTool {
    /// A bash tool running commands through `ctx.executor` in `ctx.cwd`.
    pub fn new(ctx: ToolContext) -> Self {
        BashTool {
            ctx,
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "description": "Bash command to execute"
                    },
                    "timeout": {
                        "type": "number",
                        "description": "Timeout in seconds (optional, no default timeout)"
                    },
                    "outside_sandbox": {
                        "type": "boolean",
                        "description": "Only after this command failed because of the sandbox: \
                            ask the user to run it once outside the sandbox (optional)"
                    },
                    "reason": {
                        "type": "string",
                        "description": "With outside_sandbox: why the command must run outside \
                            the sandbox, in one sentence the user reads before deciding"
                    }
                },
                "required": ["command"]
            }),
        }
    }
}

#[async_trait]
impl Tool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: false,
            destructive: true,
            open_world: true,
        }
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Execute bash commands (ls, grep, find, etc.)")
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Execute
    }

    fn sandbox_use(&self, args: &Value) -> SandboxUse {
        if args.get("outside_sandbox").and_then(Value::as_bool) == Some(true) {
            SandboxUse::AsksOutside {
                reason: args
                    .get("reason")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|r| !r.is_empty())
                    .map(str::to_string),
            }
        } else {
            SandboxUse::Confined
        }
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("command").and_then(Value::as_str))
    }

    fn preview(&self, args: &Value) -> Option<CallPreview> {
        Some(CallPreview::Command {
            command: args.get("command").and_then(Value::as_str)?.to_string(),
            cwd: self.ctx.cwd.clone(),
        })
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let args = BashArgs::parse(&args)?;
        updates.send(ToolOutcome {
            content: Vec::new(),
            details: Value::Null,
            terminate: false,
            change: None,
            usage: None,
        });

        let output = Arc::new(Mutex::new(OutputAccumulator::default()));
        let sink: OutputSink = {
            let output = Arc::clone(&output);
            Box::new(move |bytes: &[u8]| output.lock().push(bytes))
        };
        let request = CommandRequest {
            command: args.command,
            cwd: self.ctx.cwd.clone(),
            timeout: args.timeout.map(|(_, limit)| limit),
            tool_call_id: Some(tool_call_id.to_string()),
        };
        let run = self.ctx.executor.run(request, cancel, sink);
        tokio::pin!(run);

        let mut ticker = interval_at(Instant::now() + UPDATE_INTERVAL, UPDATE_INTERVAL);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let result = loop {
            tokio::select! {
                result = &mut run => break result,
                _ = ticker.tick() => {
                    let partial = output.lock().partial();
                    if let Some(partial) = partial {
                        updates.send(partial);
                    }
                }
            }
        };

        let exit = result.map_err(|err| ToolError::new(err.to_string()))?;
        let finished = output.lock().finish(exit);
        match exit {
            CommandExit::Code(0) => Ok(ToolOutcome {
                content: vec![UserContent::text(finished.text)],
                details: finished.details,
                terminate: false,
                change: None,
                usage: None,
            }),
            CommandExit::Code(code) => {
                // A refusal the sandbox may have made is said as such.
                let note = self
                    .ctx
                    .executor
                    .failure_note(Some(tool_call_id), &finished.text)
                    .map(|n| {
                        format!(
                            "\n\n{n} If it must run, call bash again with the same command \
                             and \"outside_sandbox\": true, with a \"reason\" saying why; \
                             the user is asked to allow it."
                        )
                    })
                    .unwrap_or_default();
                Err(ToolError::new(format!(
                    "{}\n\nCommand exited with code {code}{note}",
                    finished.text
                )))
            }
            CommandExit::Signal(signal) => Err(ToolError::new(format!(
                "{}\n\nCommand terminated by signal {signal}",
                finished.text
            ))),
            CommandExit::TimedOut => {
                let message = match args.timeout {
                    Some((seconds, _)) => format!("Command timed out after {seconds} seconds"),
                    None => "Command timed out".to_string(),
                };
                Err(ToolError::new(finished.with_message(&message)))
            }
            CommandExit::Aborted => Err(ToolError::new(finished.with_message("Command aborted"))),
        }
    }
}

/// Validated arguments.
struct BashArgs {
    command: String,
    /// The timeout as given (for messages) and as a duration.
    timeout: Option<(f64, Duration)>,
}

impl BashArgs {
    fn parse(args: &Value) -> Result<Self, ToolError> {
        let command = match args.get("command") {
            Some(Value::String(command)) => command.clone(),
            Some(_) => {
                return Err(ToolError::new(
                    "Invalid argument `command`: expected a string with the bash command to run.",
                ));
            }
            None => {
                return Err(ToolError::new(
                    "Missing required argument `command`: the bash command to run.",
                ));
            }
        };
        let timeout = match args.get("timeout") {
            None | Some(Value::Null) => None,
            Some(value) => {
                let seconds = value.as_f64().ok_or_else(|| {
                    ToolError::new(format!(
                        "Invalid argument `timeout`: expected a number of seconds, got {value}."
                    ))
                })?;
                // As in pi, a timeout that is not positive means no timeout; one too large for a
                // duration is as good as none.
                if seconds > 0.0 {
                    Duration::try_from_secs_f64(seconds)
                        .ok()
                        .map(|limit| (seconds, limit))
                } else {
                    None
                }
            }
        };
        Ok(BashArgs { command, timeout })
    }
}

/// The final text and details of a run.
struct Finished {
    text: String,
    details: Value,
    had_output: bool,
}

impl Finished {
    /// The output (if any) followed by a closing message, as pi reports timeouts and aborts.
    fn with_message(&self, message: &str) -> String {
        if self.had_output {
            format!("{}\n\n{message}", self.text)
        } else {
            message.to_string()
        }
    }
}

/// Where the full output goes once it is too long to return.
#[derive(Default)]
enum FullOutput {
    /// Everything so far is still in the tail buffer.
    #[default]
    NotNeeded,
    /// Being written to the file at `path`.
    Writing {
        path: PathBuf,
        writer: BufWriter<File>,
    },
    /// Completely written.
    Written(PathBuf),
    /// The file could not be created or written.
    Failed(String),
}

/// Collects output with bounded memory: a rolling tail plus counts, and the whole output in a
/// temp file once it exceeds a limit.
#[derive(Default)]
struct OutputAccumulator {
    /// The last bytes of output (at least `TAIL_KEEP` once anything was dropped).
    tail: Vec<u8>,
    total_bytes: usize,
    newlines: usize,
    last_byte: Option<u8>,
    /// Bytes since the last newline.
    open_line_len: usize,
    /// Length of the last newline-terminated line.
    closed_line_len: usize,
    full: FullOutput,
    /// Output arrived since the last update.
    dirty: bool,
}

impl OutputAccumulator {
    fn push(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.dirty = true;
        self.total_bytes += bytes.len();
        self.newlines += bytes.iter().filter(|&&b| b == b'\n').count();
        self.last_byte = bytes.last().copied();
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                self.closed_line_len = match bytes[..last].iter().rposition(|&b| b == b'\n') {
                    Some(previous) => last - previous - 1,
                    None => self.open_line_len + last,
                };
                self.open_line_len = bytes.len() - last - 1;
            }
            None => self.open_line_len += bytes.len(),
        }
        self.tail.extend_from_slice(bytes);

        if let FullOutput::Writing { writer, .. } = &mut self.full {
            if let Err(err) = writer.write_all(bytes) {
                self.full = FullOutput::Failed(err.to_string());
            }
        } else if self.total_bytes > MAX_BYTES || self.total_lines() > MAX_LINES {
            self.start_full_output();
        }

        // Trimming only ever happens past the byte limit, so the file (or its failure) exists by
        // then and holds what is dropped here.
        if self.tail.len() > 2 * TAIL_KEEP {
            self.tail.drain(..self.tail.len() - TAIL_KEEP);
        }
    }

    /// Lines as pi counts them: a trailing newline does not start another line.
    fn total_lines(&self) -> usize {
        match self.last_byte {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }

    /// Length in bytes of the output's last line.
    fn last_line_len(&self) -> usize {
        if self.last_byte == Some(b'\n') {
            self.closed_line_len
        } else {
            self.open_line_len
        }
    }

    /// Create the full-output file and write everything so far (all still in `tail`).
    fn start_full_output(&mut self) {
        if !matches!(self.full, FullOutput::NotNeeded) {
            return;
        }
        self.full = match create_full_output_file() {
            Ok((file, path)) => {
                let mut writer = BufWriter::with_capacity(64 * 1024, file);
                match writer.write_all(&self.tail) {
                    Ok(()) => FullOutput::Writing { path, writer },
                    Err(err) => FullOutput::Failed(err.to_string()),
                }
            }
            Err(err) => FullOutput::Failed(err.to_string()),
        };
        if let FullOutput::Failed(err) = &self.full {
            tracing::warn!("could not save full bash output: {err}");
        }
    }

    /// The tail truncated to the limits, with totals for the whole output.
    fn truncation(&mut self) -> Truncation {
        let text = String::from_utf8_lossy(&self.tail);
        let mut truncation = truncate_tail(&text, MAX_LINES, MAX_BYTES);
        truncation.total_lines = self.total_lines();
        truncation.total_bytes = self.total_bytes;
        if truncation.truncated {
            // Lossy decoding can push a short output over the byte limit.
            self.start_full_output();
        }
        truncation
    }

    fn full_output_path(&self) -> Option<&PathBuf> {
        match &self.full {
            FullOutput::Writing { path, .. } | FullOutput::Written(path) => Some(path),
            FullOutput::NotNeeded | FullOutput::Failed(_) => None,
        }
    }

    fn details(&self, truncation: &Truncation) -> Value {
        json!({
            "truncation": truncation.truncated.then_some(truncation),
            "fullOutputPath": self.full_output_path(),
        })
    }

    /// A streamed update with the current tail, if output arrived since the last one.
    fn partial(&mut self) -> Option<ToolOutcome> {
        if !std::mem::take(&mut self.dirty) {
            return None;
        }
        let truncation = self.truncation();
        let details = self.details(&truncation);
        Some(ToolOutcome {
            content: vec![UserContent::text(truncation.content)],
            details,
            terminate: false,
            change: None,
            usage: None,
        })
    }

    /// Close the full-output file and build the final text with pi's notices.
    fn finish(&mut self, exit: CommandExit) -> Finished {
        let truncation = self.truncation();
        if let FullOutput::Writing { path, writer } = std::mem::take(&mut self.full) {
            self.full = match writer.into_inner().map_err(|err| err.into_error()) {
                Ok(_) => FullOutput::Written(path),
                Err(err) => FullOutput::Failed(err.to_string()),
            };
        }
        let mut text = if truncation.content.is_empty() {
            "(no output)".to_string()
        } else {
            truncation.content.clone()
        };
        if truncation.truncated {
            text.push_str("\n\n");
            text.push_str(&self.notice(&truncation));
        }
        let mut details = self.details(&truncation);
        details["exitCode"] = match exit {
            CommandExit::Code(code) => json!(code),
            _ => Value::Null,
        };
        Finished {
            text,
            details,
            had_output: self.total_bytes > 0,
        }
    }

    fn notice(&self, truncation: &Truncation) -> String {
        let end = truncation.total_lines;
        let start = (end + 1).saturating_sub(truncation.output_lines);
        let full = match &self.full {
            FullOutput::Written(path) | FullOutput::Writing { path, .. } => {
                format!("Full output: {}", path.display())
            }
            FullOutput::Failed(err) => format!("Full output could not be saved: {err}"),
            FullOutput::NotNeeded => "Full output was not saved".to_string(),
        };
        if truncation.last_line_partial {
            format!(
                "[Showing last {} of line {end} (line is {}). {full}]",
                format_size(truncation.output_bytes),
                format_size(self.last_line_len()),
            )
        } else if truncation.truncated_by == Some(TruncatedBy::Lines) {
            format!("[Showing lines {start}-{end} of {end}. {full}]")
        } else {
            format!(
                "[Showing lines {start}-{end} of {end} ({} limit). {full}]",
                format_size(MAX_BYTES)
            )
        }
    }
}

/// Create `march-bash-<16 hex>.log` in the temp dir and keep it past this process.
fn create_full_output_file() -> io::Result<(File, PathBuf)> {
    let dir = std::env::temp_dir();
    let mut last_err = None;
    for _ in 0..8 {
        let created = tempfile::Builder::new()
            .prefix(&format!("march-bash-{:016x}", random_u64()))
            .suffix(".log")
            .rand_bytes(0)
            .tempfile_in(&dir);
        match created {
            Ok(file) => return file.keep().map_err(|err| err.error),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last_err = Some(err),
            Err(err) => return Err(err),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::other("no free temp file name")))
}

/// 64 unpredictable-enough bits for a file name (std's per-process random hash keys, mixed with
/// time, pid and a counter).
fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    hasher.finish()
}
