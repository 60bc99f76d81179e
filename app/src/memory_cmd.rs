//! `march memory serve | status | token`: the memory server other machines share, and the
//! tokens of its clients (kept in auth.json, 0600, like API keys).

use std::process::ExitCode;

use anyhow::Context;
use march_core::auth::AuthStore;
use march_core::paths::MarchPaths;
use march_runner::memory_server::{CLIENT_PREFIX, REMOTE_TOKEN, Reached};

use crate::cli::{MemoryCommand, MemoryTokenCommand};
use crate::client_tokens;

/// Run a `march memory` subcommand.
pub fn run(paths: MarchPaths, command: MemoryCommand) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    match command {
        MemoryCommand::Serve => runtime
            .block_on(march_runner::memory_server::serve_memory(paths))
            .map_err(anyhow::Error::msg)
            .context("the memory server failed")?,
        MemoryCommand::Status => {
            let status = runtime
                .block_on(march_runner::memory_server::memory_status(&paths))
                .map_err(anyhow::Error::msg)?;
            match &status.local {
                Some((state, reached)) => println!(
                    "Memory server: pid {}, serving {} at {} ({})",
                    state.pid,
                    state.dir.display(),
                    reached.url,
                    answered(reached)
                ),
                None => println!("Memory server: not running on this machine"),
            }
            match &status.remote {
                Some((reached, 0)) => {
                    println!("Remote memory: {} ({})", reached.url, answered(reached));
                }
                Some((reached, queued)) => println!(
                    "Remote memory: {} ({}; {queued} appends wait to be sent)",
                    reached.url,
                    answered(reached)
                ),
                None => println!("Remote memory: none ([memory] remote is not set)"),
            }
        }
        MemoryCommand::Token(command) => token(&paths, command)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// What a server answered, in words.
fn answered(reached: &Reached) -> String {
    match &reached.answer {
        Ok((files, bytes)) => {
            let s = if *files == 1 { "" } else { "s" };
            format!("{files} file{s}, {bytes} bytes")
        }
        Err(e) => e.clone(),
    }
}

fn token(paths: &MarchPaths, command: MemoryTokenCommand) -> anyhow::Result<()> {
    match command {
        MemoryTokenCommand::Add { name } => {
            let token = client_tokens::add(paths, CLIENT_PREFIX, "mt", &name)?;
            println!("{token}");
            eprintln!(
                "Client {name} can use this token (on its machine: march memory token use TOKEN). \
                 A running server hears it from its next start."
            );
        }
        MemoryTokenCommand::Remove { name } => {
            client_tokens::remove(paths, CLIENT_PREFIX, &name)?;
            eprintln!("Removed {name}'s token. A running server refuses it from its next start.");
        }
        MemoryTokenCommand::List => {
            let names = client_tokens::names(paths, CLIENT_PREFIX)?;
            if names.is_empty() {
                println!("No clients (add one with march memory token add NAME).");
            }
            for name in names {
                println!("{name}");
            }
        }
        MemoryTokenCommand::Use { token } => {
            let mut auth = AuthStore::load(paths)?;
            auth.set(REMOTE_TOKEN, token.trim())?;
            eprintln!(
                "Kept in {}; [memory] remote in config.toml says where.",
                auth.path().display()
            );
        }
    }
    Ok(())
}
