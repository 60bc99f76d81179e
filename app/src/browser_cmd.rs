//! `march browser status | stop | serve`: the browser daemon agents' browser tools drive.

use std::process::ExitCode;

use anyhow::Context;
use march_core::paths::MarchPaths;
use march_panes::sanitize::sanitize_line;

use crate::cli::BrowserCommand;

/// Run a `march browser` subcommand.
pub fn run(paths: MarchPaths, command: BrowserCommand) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    match command {
        BrowserCommand::Serve => {
            runtime
                .block_on(march_runner::browser::serve_browser(paths))
                .map_err(anyhow::Error::msg)
                .context("the browser daemon failed")?;
        }
        BrowserCommand::Stop => {
            let stopped = runtime
                .block_on(march_runner::browser::stop_browser(&paths))
                .map_err(anyhow::Error::msg)?;
            println!(
                "{}",
                if stopped {
                    "The browser daemon stopped."
                } else {
                    "The browser daemon is not running."
                }
            );
        }
        BrowserCommand::Status => {
            let status = runtime
                .block_on(march_runner::browser::browser_status(&paths))
                .map_err(anyhow::Error::msg)?;
            print!("{}", describe(status.as_ref()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The status as `march browser status` prints it.
fn describe(status: Option<&march_runner::browser::Status>) -> String {
    let Some(status) = status else {
        return "The browser daemon is not running (agents start it when they use the browser).\n"
            .into();
    };
    let mut text = format!("Browser daemon: pid {}\n", status.pid);
    match (&status.browser, status.browser_pid) {
        (Some(browser), Some(pid)) => text.push_str(&format!("Browser: {browser} (pid {pid})\n")),
        (Some(browser), None) => text.push_str(&format!("Browser: {browser} (yours, connected)\n")),
        (None, _) => text.push_str("Browser: not started yet\n"),
    }
    if status.sessions.is_empty() {
        text.push_str("No tabs are open.\n");
    }
    for session in &status.sessions {
        text.push_str(&format!("Session {}:\n", session.session));
        for tab in &session.tabs {
            let mark = if tab.current { "*" } else { " " };
            text.push_str(&format!(
                "  {mark} tab {}: {} — {}\n",
                tab.tab,
                sanitize_line(&tab.title),
                sanitize_line(&tab.url)
            ));
        }
    }
    text
}
