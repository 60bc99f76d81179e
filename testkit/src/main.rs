//! `march-scripted-server`: serves a JSON script over HTTP until killed, for
//! manual runs and end-to-end tests of the real binary.

use anyhow::Context;
use march_testkit::{RecordedRequest, Script, ScriptedServer, ServerOptions};
use parking_lot::Mutex;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

const USAGE: &str =
    "usage: march-scripted-server --script FILE.json [--port N] [--record FILE.jsonl]

Serves the scripted turns in FILE.json on 127.0.0.1 (OpenAI chat completions
and Anthropic messages, streamed over SSE) until killed.

options:
  --script FILE.json    the script to play back (required)
  --port N              port to listen on (default 0: any free port)
  --record FILE.jsonl   append each request as a JSON line as it arrives
  -h, --help            print this help";

/// Parsed command line.
#[derive(Debug)]
struct Args {
    script: PathBuf,
    port: u16,
    record: Option<PathBuf>,
}

/// What the command line asks for.
enum Command {
    Help,
    Serve(Args),
}

fn parse_args(mut argv: impl Iterator<Item = String>) -> Result<Command, String> {
    let mut script = None;
    let mut port = 0;
    let mut record = None;
    while let Some(arg) = argv.next() {
        // Accept both `--flag value` and `--flag=value`.
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_string(), Some(value.to_string()))
            }
            _ => (arg, None),
        };
        if flag == "-h" || flag == "--help" {
            return Ok(Command::Help);
        }
        if !matches!(flag.as_str(), "--script" | "--port" | "--record") {
            return Err(format!("unknown argument `{flag}`"));
        }
        let value = inline
            .or_else(|| argv.next())
            .ok_or_else(|| format!("`{flag}` needs a value"))?;
        match flag.as_str() {
            "--script" => script = Some(PathBuf::from(value)),
            "--port" => {
                port = value.parse().map_err(|_| {
                    format!("`--port` needs a number from 0 to 65535, got `{value}`")
                })?;
            }
            _ => record = Some(PathBuf::from(value)),
        }
    }
    let script = script.ok_or("`--script FILE.json` is required")?;
    Ok(Command::Serve(Args {
        script,
        port,
        record,
    }))
}

fn load_script(path: &PathBuf) -> anyhow::Result<Script> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read script {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("invalid script {}", path.display()))
}

/// A hook appending each request to `file` as one JSON line.
fn recorder(file: File) -> march_testkit::RequestHook {
    let file = Mutex::new(file);
    Arc::new(move |request: &RecordedRequest| {
        let Ok(mut line) = serde_json::to_string(request) else {
            return;
        };
        line.push('\n');
        let mut file = file.lock();
        if let Err(err) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
            eprintln!("march-scripted-server: cannot record request: {err}");
        }
    })
}

async fn serve(args: Args) -> anyhow::Result<()> {
    let script = load_script(&args.script)?;
    let on_request = match &args.record {
        Some(path) => {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open record file {}", path.display()))?;
            Some(recorder(file))
        }
        None => None,
    };
    let options = ServerOptions {
        port: args.port,
        on_request,
    };
    let server = ScriptedServer::start_with(script, options)
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {}", server.base_url())?;
    stdout.flush()?;
    drop(stdout);
    // Serve until the process is killed.
    std::future::pending::<()>().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Serve(args)) => args,
        Err(message) => {
            eprintln!("march-scripted-server: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match serve(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("march-scripted-server: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
