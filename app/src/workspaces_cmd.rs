//! The commands that start, find, attach to and close workspace servers: `march [DIR…]`,
//! `march new`, `march attach`, `march ls`, `march kill` and `march kill-server`.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use march_wire::ControlRequest;

use crate::cli::{AttachArgs, KillArgs, LsArgs};
use crate::client::servers::{self, Server, show_dirs};
use crate::client::{self, Ended};

/// Exit code when the requested mode cannot run here (the workspace without a terminal).
pub const EXIT_UNAVAILABLE: u8 = 2;

/// How long a closed workspace's server may take to end.
const END_TIMEOUT: Duration = Duration::from_secs(15);

/// `march [DIR…]` and `march new`: attaches to the workspace of `dirs`, started when none
/// runs.
pub fn open(dirs: &[PathBuf], name: Option<&str>, fresh: bool) -> anyhow::Result<ExitCode> {
    if let Some(code) = needs_terminal() {
        return Ok(code);
    }
    let dirs = canonical(dirs)?;
    let socket = servers::open(&dirs, name, fresh)?;
    Ok(ended(client::attach(&socket, false)?))
}

/// `march attach`.
pub fn attach(args: &AttachArgs) -> anyhow::Result<ExitCode> {
    let all = servers::list()?;
    let server = match &args.target {
        Some(name) => servers::named(&all, name)
            .with_context(|| format!("no workspace named `{name}` is running ({})", names(&all)))?,
        None => all
            .first()
            .context("no workspace is running: `march` in a project directory starts one")?,
    };
    if let Some(code) = needs_terminal() {
        return Ok(code);
    }
    Ok(ended(client::attach(&server.socket, args.read_only)?))
}

/// `march ls`.
pub fn ls(args: &LsArgs) -> anyhow::Result<ExitCode> {
    let all = servers::list()?;
    let mut out = std::io::stdout().lock();
    if args.json {
        for server in &all {
            writeln!(out, "{}", serde_json::to_string(&server.info)?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if all.is_empty() {
        writeln!(out, "no workspace is running")?;
        return Ok(ExitCode::SUCCESS);
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|s| {
            let i = &s.info;
            vec![
                i.name.clone(),
                show_dirs(&i.dirs),
                i.clients.to_string(),
                i.sessions.to_string(),
                i.working.to_string(),
                i.needs_you.to_string(),
                age(now.saturating_sub(i.started)),
            ]
        })
        .collect();
    let head = [
        "NAME",
        "DIRECTORIES",
        "CLIENTS",
        "SESSIONS",
        "WORKING",
        "NEEDS YOU",
        "AGE",
    ];
    write!(out, "{}", crate::table::render(&head, &rows))?;
    Ok(ExitCode::SUCCESS)
}

/// `march kill -t NAME`.
pub fn kill(args: &KillArgs) -> anyhow::Result<ExitCode> {
    let all = servers::list()?;
    let server = servers::named(&all, &args.target).with_context(|| {
        format!(
            "no workspace named `{}` is running ({})",
            args.target,
            names(&all)
        )
    })?;
    close(server, args.force.force)?;
    Ok(ExitCode::SUCCESS)
}

/// `march kill-server`: every workspace.
pub fn kill_server(force: bool) -> anyhow::Result<ExitCode> {
    let all = servers::list()?;
    if all.is_empty() {
        println!("no workspace is running");
    }
    let mut failed = false;
    for server in &all {
        if let Err(e) = close(server, force) {
            eprintln!("march: {e:#}");
            failed = true;
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Closes `server`'s workspace, asking once when turns or programs would stop; returns when
/// its server has ended.
fn close(server: &Server, force: bool) -> anyhow::Result<()> {
    let name = &server.info.name;
    let reply = servers::ask(&server.socket, ControlRequest::Kill { force })?;
    if reply["closed"] != serde_json::Value::Bool(true) {
        let running: Vec<String> = reply["running"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let what = running.join(", ");
        if !std::io::stdin().is_terminal() {
            bail!("closing workspace `{name}` stops {what}: --force closes it anyway");
        }
        eprint!("closing workspace `{name}` stops {what}. Close it? [y/N] ");
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            bail!("workspace `{name}` left running");
        }
        servers::ask(&server.socket, ControlRequest::Kill { force: true })?;
    }
    servers::wait_ended(&server.socket, END_TIMEOUT)
        .with_context(|| format!("workspace `{name}` was closed but its server still runs"))?;
    println!("closed workspace `{name}`");
    Ok(())
}

/// What to print when an attached terminal's session ends.
fn ended(ended: Ended) -> ExitCode {
    if let Ended::Detached(what) = ended {
        println!("[{what}]");
    }
    ExitCode::SUCCESS
}

/// `None` when stdin and stdout are a terminal; else says why not and the exit code.
fn needs_terminal() -> Option<ExitCode> {
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return None;
    }
    eprintln!(
        "march: the workspace needs a terminal (stdin and stdout are not one).\n\
         march: without one: `march -p PROMPT` runs one turn headless, `march ls` lists \
         workspaces, `march models` lists providers and models."
    );
    Some(ExitCode::from(EXIT_UNAVAILABLE))
}

/// The directories as the workspace knows them: canonical, each once; the current one
/// when none is given.
fn canonical(dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for dir in dirs {
        // A project on another machine is named, not looked for here.
        if let Some(url) = dir
            .to_str()
            .filter(|d| d.starts_with(crate::remote::SCHEME))
        {
            let remote = crate::remote::Remote::parse(url).map_err(anyhow::Error::msg)?;
            if !out.contains(&remote.project()) {
                out.push(remote.project());
            }
            continue;
        }
        let dir = dir
            .canonicalize()
            .with_context(|| format!("cannot open {}", dir.display()))?;
        anyhow::ensure!(dir.is_dir(), "{} is not a directory", dir.display());
        if !out.contains(&dir) {
            out.push(dir);
        }
    }
    if out.is_empty() {
        out.push(std::env::current_dir().context("cannot read the current directory")?);
    }
    Ok(out)
}

/// The running workspaces' names, for a message.
fn names(all: &[Server]) -> String {
    if all.is_empty() {
        return "none is".to_string();
    }
    let names: Vec<&str> = all.iter().map(|s| s.info.name.as_str()).collect();
    format!("running: {}", names.join(", "))
}

/// A duration in seconds as `ls` shows an age: `45s`, `12m`, `3h 5m`, `2d 4h`.
fn age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d {}h", secs / 86400, secs % 86400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_a_person_would_say_them() {
        assert_eq!(age(45), "45s");
        assert_eq!(age(12 * 60 + 5), "12m");
        assert_eq!(age(3 * 3600 + 5 * 60), "3h 5m");
        assert_eq!(age(2 * 86400 + 4 * 3600), "2d 4h");
    }
}
