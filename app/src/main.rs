//! `march`: the terminal workspace for coding agents.

mod browser_cmd;
mod cli;
mod client;
mod client_tokens;
mod config_cmd;
mod config_file;
mod control_cmd;
mod export_cmd;
mod gateway_cmd;
mod git;
mod headless;
mod history_cmd;
mod keymap;
mod logging;
mod mcp_cmd;
mod memory_cmd;
mod models_cmd;
mod nonblocking;
mod reactor;
mod remote;
mod server;
mod table;
mod tty_reader;
mod ui;
mod usage_cmd;
mod workspace;
mod workspaces_cmd;
mod worktrees_cmd;

use std::process::ExitCode;

use clap::Parser;
use march_core::paths::MarchPaths;

use cli::{BrowserCommand, Cli, Command, ConfigCommand, GatewayCommand, MemoryCommand};

fn main() -> ExitCode {
    install_panic_hook();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            tracing::error!("{error:#}");
            eprintln!("march: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if cli.headless.print.is_some() {
        let paths = MarchPaths::from_env()?;
        let _log_guard = logging::init(&paths.log_dir(), logging::MAIN_LOG)?;
        tracing::info!(version = env!("CARGO_PKG_VERSION"), "march -p started");
        return headless::run(&cli.headless);
    }
    // The sandbox launcher reads no config and writes no log: it becomes the command.
    let command = match cli.command {
        Some(Command::Sandbox {
            mode,
            write,
            network,
            command,
        }) => {
            let why = march_runner::sandbox_exec(&mode, write, network, &command);
            eprintln!("march sandbox: {why}");
            return Ok(ExitCode::from(126));
        }
        other => other,
    };
    let Some(command) = command else {
        let paths = MarchPaths::from_env()?;
        let _log_guard = logging::init(&paths.log_dir(), logging::MAIN_LOG)?;
        return workspaces_cmd::open(&cli.dirs, None, cli.fresh);
    };
    // PathsError already says what is missing and what to set.
    let paths = MarchPaths::from_env()?;
    let log_file = match command {
        Command::Runner => logging::runner_log(std::process::id()),
        Command::LspHost { .. } => logging::lsp_host_log(std::process::id()),
        Command::Browser(BrowserCommand::Serve) => logging::browser_log(std::process::id()),
        Command::Memory(MemoryCommand::Serve) => logging::MEMORY_SERVER_LOG.to_string(),
        Command::Gateway {
            command: None | Some(GatewayCommand::Serve),
        } => logging::GATEWAY_LOG.to_string(),
        _ => logging::MAIN_LOG.to_string(),
    };
    // Held until exit so buffered log lines are flushed.
    let _log_guard = logging::init(&paths.log_dir(), &log_file)?;
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        ?command,
        "march started"
    );
    match command {
        Command::Models(args) => models_cmd::run(&paths, &args)?,
        Command::Runner => run_runner(paths)?,
        Command::History(command) => history_cmd::run(&paths, &command)?,
        Command::Usage(args) => usage_cmd::run(&paths, &args)?,
        Command::Mcp(command) => return mcp_cmd::run(&paths, &command),
        Command::Config(ConfigCommand::Check) => return Ok(config_cmd::check(&paths)),
        Command::LspHost { project } => run_lsp_host(paths, project)?,
        Command::Browser(command) => return browser_cmd::run(paths, command),
        Command::Memory(command) => return memory_cmd::run(paths, command),
        Command::Gateway { command } => return gateway_cmd::run(paths, command),
        // Run above, before any config or log.
        Command::Sandbox { .. } => {}
        Command::New(args) => {
            return workspaces_cmd::open(&args.dirs, args.name.as_deref(), args.fresh);
        }
        Command::Attach(args) => return workspaces_cmd::attach(&args),
        Command::Ls(args) => return workspaces_cmd::ls(&args),
        Command::Kill(args) => return workspaces_cmd::kill(&args),
        Command::KillServer(args) => return workspaces_cmd::kill_server(args.force),
        Command::Status(args) => return control_cmd::status(&args),
        Command::Send(args) => return control_cmd::send(&args),
        Command::NewPane(args) => return control_cmd::new_pane(&paths, &args),
        Command::Worktrees(args) => return worktrees_cmd::run(&paths, &args),
        Command::Capture(args) => return control_cmd::capture(&args),
        Command::Export(args) => return export_cmd::run(&args),
        Command::Wait(args) => return control_cmd::wait(&args.target),
        Command::Answer(args) => return control_cmd::answer(&args),
        Command::Server(args) => {
            tracing::info!(
                version = env!("CARGO_PKG_VERSION"),
                "workspace server started"
            );
            logging::prune_runner_logs(&paths.log_dir());
            server::run(paths, &args.name, args.dirs, args.fresh)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `march runner` / `march acp`: stdout carries only ACP; logs go to the log file.
///
/// One thread runs it: a streamed delta passes from the HTTP body to the ACP line without a
/// hand-off between threads (each a futex wake-up). Slow work (files, tools, the session
/// file's fsync, the history index) runs on the blocking pool.
fn run_runner(paths: MarchPaths) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(march_runner::serve(paths))?;
    tracing::info!("runner: the client closed the connection");
    Ok(())
}

/// `march lsp-host PROJECT`: started by runners; serves the project's language servers.
fn run_lsp_host(paths: MarchPaths, project: std::path::PathBuf) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime
        .block_on(march_runner::serve_lsp_host(paths, project))
        .map_err(anyhow::Error::msg)
}

/// Report panics as one line on stderr (details go to the log) instead of Rust's raw message.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!("panic{location}: {message}");
        eprintln!("march: internal error (this is a bug): {message}{location}");
    }));
}
