//! `march gateway [serve] | status | token`: the gateway beside a workspace server, how it
//! is, and the tokens of its HTTP clients and its Telegram bot (kept in auth.json, 0600).

use std::process::ExitCode;

use anyhow::Context;
use march_core::auth::AuthStore;
use march_core::config::Config;
use march_core::paths::MarchPaths;
use march_gateway::{CLIENT_PREFIX, GatewaySettings, GatewayState, TELEGRAM_TOKEN};

use crate::cli::{GatewayCommand, GatewayTokenCommand};
use crate::client_tokens;

/// Run a `march gateway` subcommand (serving without one).
pub fn run(paths: MarchPaths, command: Option<GatewayCommand>) -> anyhow::Result<ExitCode> {
    match command.unwrap_or(GatewayCommand::Serve) {
        GatewayCommand::Serve => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime
                .block_on(serve(&paths))
                .context("the gateway failed")?;
        }
        GatewayCommand::Status => status(&paths)?,
        GatewayCommand::Token(command) => token(&paths, command)?,
    }
    Ok(ExitCode::SUCCESS)
}

async fn serve(paths: &MarchPaths) -> anyhow::Result<()> {
    let config = Config::load(paths)?.gateway;
    let auth = AuthStore::load(paths)?;
    let clients = auth.named_tokens(CLIENT_PREFIX);
    let dir = march_gateway::gateway_dir(&paths.data_dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    if let Some(running) = march_gateway::read_state(&dir) {
        anyhow::bail!(
            "a gateway runs already (pid {}, http://{})",
            running.pid,
            running.listen
        );
    }
    let listener = tokio::net::TcpListener::bind(&config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let listen = listener
        .local_addr()
        .map_or_else(|_| config.listen.clone(), |a| a.to_string());
    let telegram_token = auth.get(TELEGRAM_TOKEN).map(str::to_string);
    let state = GatewayState {
        pid: std::process::id(),
        listen: listen.clone(),
        workspace: config.workspace.clone(),
        chats: telegram_token
            .iter()
            .map(|_| "telegram".to_string())
            .collect(),
        webhook: config.webhook.is_some(),
    };
    let state_path = march_gateway::state_file(&dir);
    march_core::atomic_file::write_file(
        &state_path,
        &serde_json::to_vec_pretty(&state)?,
        march_core::atomic_file::FileMode::Kept,
    )
    .with_context(|| format!("cannot write {}", state_path.display()))?;
    let settings = GatewaySettings {
        config,
        clients,
        telegram_token,
        dir,
        sockets: crate::server::rendezvous::sockets()?,
    };
    let stop = march_core::signals::stop_token();
    let workspace = settings
        .config
        .workspace
        .as_deref()
        .unwrap_or("the most recent");
    tracing::info!(listen, workspace, "gateway serving");
    println!("Gateway for workspace {workspace} at http://{listen}");
    let served = march_gateway::serve(listener, settings, stop).await;
    let _ = std::fs::remove_file(&state_path);
    served.map_err(Into::into)
}

fn status(paths: &MarchPaths) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let dir = march_gateway::gateway_dir(&paths.data_dir);
    match runtime.block_on(march_gateway::status(&dir)) {
        None => println!("Gateway: not running"),
        Some(status) => println!("{}", describe(&status)),
    }
    Ok(())
}

/// The gateway's state in a line, as `march gateway status` and the supervisor say it.
pub fn describe(status: &march_gateway::GatewayStatus) -> String {
    let queued = match status.queued {
        0 => String::new(),
        1 => "; 1 message waits".to_string(),
        n => format!("; {n} messages wait"),
    };
    match &status.running {
        None => format!("Gateway: not running{queued}"),
        Some(state) => {
            let answered = match &status.answered {
                Ok(()) => "answers".to_string(),
                Err(e) => e.clone(),
            };
            let mut adapters = vec![format!("http://{}", state.listen)];
            adapters.extend(state.chats.iter().cloned());
            if state.webhook {
                adapters.push("webhook".into());
            }
            format!(
                "Gateway: pid {}, workspace {}, {} ({answered}{queued})",
                state.pid,
                state.workspace.as_deref().unwrap_or("most recent"),
                adapters.join(", ")
            )
        }
    }
}

fn token(paths: &MarchPaths, command: GatewayTokenCommand) -> anyhow::Result<()> {
    match command {
        GatewayTokenCommand::Add { name } => {
            let token = client_tokens::add(paths, CLIENT_PREFIX, "gt", &name)?;
            println!("{token}");
            eprintln!(
                "{name} sends it as `Authorization: Bearer TOKEN`. A running gateway hears it \
                 from its next start."
            );
        }
        GatewayTokenCommand::Remove { name } => {
            client_tokens::remove(paths, CLIENT_PREFIX, &name)?;
            eprintln!("Removed {name}'s token. A running gateway refuses it from its next start.");
        }
        GatewayTokenCommand::List => {
            let names = client_tokens::names(paths, CLIENT_PREFIX)?;
            if names.is_empty() {
                println!("No clients (add one with march gateway token add NAME).");
            }
            for name in names {
                println!("{name}");
            }
        }
        GatewayTokenCommand::Telegram { token } => {
            let mut auth = AuthStore::load(paths)?;
            auth.set(TELEGRAM_TOKEN, token.trim())?;
            eprintln!(
                "Kept in {}; list who may talk to the bot in [gateway.telegram] allow.",
                auth.path().display()
            );
        }
    }
    Ok(())
}
