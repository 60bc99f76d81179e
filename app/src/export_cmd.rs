//! `march export SESSION`: a saved session as a markdown document, the same one `/export`
//! writes. The session is replayed by its agent (`session/load` on a runner started for
//! the purpose) into an agent pane's transcript, which writes the document: what the
//! export shows is what the pane shows, and the app reads no transcript file itself.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow};
use march_panes::agent::AgentPane;
use march_runner::client::schema::SessionId;
use march_runner::client::{
    AgentRequest, ConnectOptions, OpenError, RunnerClient, RunnerEvent, SessionSettings,
    SessionTarget,
};

use crate::cli::ExportArgs;
use crate::headless::{runner_command, working_dir};

/// How long the runner gets to go after the export.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Runs `march export`.
pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let doc = runtime.block_on(export(args))?;
    match &args.output {
        Some(path) => {
            march_core::atomic_file::write_file(
                path,
                doc.as_bytes(),
                march_core::atomic_file::FileMode::Kept,
            )
            .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("march: exported to {}", path.display());
        }
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (`| head`) is the reader's choice, not an error.
            let _ = out.write_all(doc.as_bytes()).and_then(|()| out.flush());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The session's document, from its agent's replay.
async fn export(args: &ExportArgs) -> anyhow::Result<String> {
    let cwd = working_dir(args.cwd.as_deref()).map_err(|e| anyhow!("{e}"))?;
    let command = runner_command(&cwd).map_err(|e| anyhow!("{e}"))?;
    let (client, mut events) = RunnerClient::spawn(&command, &ConnectOptions::default())
        .await
        .context("cannot start the runner")?;
    let session = SessionId::new(args.session.clone());
    let opened = march_runner::client::open_session(
        client.connection(),
        &cwd,
        SessionTarget::Load(session),
        &SessionSettings::default(),
    )
    .await;
    let mut pane = AgentPane::new(format!("session {}", args.session));
    // The replay's updates are all queued before the load's answer.
    while let Ok(event) = events.try_recv() {
        match event {
            RunnerEvent::Update(notification) => {
                pane.apply(&notification.update);
            }
            RunnerEvent::Request(AgentRequest::Permission(pending)) => {
                let _ = pending.cancel();
            }
            _ => {}
        }
    }
    // Replays carry no file contents: the changes March recorded give the diffs back.
    if let Ok(paths) = march_core::paths::MarchPaths::from_env() {
        let log =
            crate::workspace::changes::log_file(&paths.data_dir.join("changes"), &args.session);
        for change in crate::workspace::changes::read(&log) {
            let (Some(after), false) = (change.after, change.deleted) else {
                continue;
            };
            let path = change.path.to_string_lossy();
            pane.add_file_change(&change.tool_call, &path, change.before.as_deref(), &after);
        }
    }
    let result = match opened {
        Ok(_) => Ok(pane.export_markdown()),
        Err(e) => {
            let why = match e {
                OpenError::Open(error) => client.explain(error).await.to_string(),
                other => format!("{other:?}"),
            };
            Err(anyhow!(
                "cannot load session {} in {}: {why} (pass the session's project with -C)",
                args.session,
                cwd.display()
            ))
        }
    };
    client.shutdown(SHUTDOWN_GRACE).await;
    result
}
