//! The control CLI for scripts and agents: `march status`, `send`, `new-pane`, `capture`,
//! `wait` and `answer`, each one request to a workspace server over its socket. A session
//! is named `WORKSPACE:N` (as `march status` shows it), `N` when one workspace runs, or by
//! (a prefix of) its agent's session id.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use march_core::config::Config;
use march_core::paths::MarchPaths;
use march_wire::{ControlRequest, SessionStatus};

use crate::cli::{AnswerArgs, AnswerChoice, CaptureArgs, NewPaneArgs, SendArgs, StatusArgs};
use crate::client::servers::{self, Server};

/// A session found by its target.
struct Target {
    server: Server,
    key: u64,
}

/// `march status`.
pub fn status(args: &StatusArgs) -> anyhow::Result<ExitCode> {
    let all = sessions(&servers::list()?)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        for (_, s) in &all {
            writeln!(out, "{}", serde_json::to_string(s)?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if all.is_empty() {
        writeln!(out, "no session is open (`march ls` lists the workspaces)")?;
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|(_, s)| {
            let project = s
                .project
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tokens = match (s.tokens, s.context_size) {
                (Some(used), Some(size)) => format!("{used}/{size}"),
                (Some(used), None) => used.to_string(),
                _ => "-".to_string(),
            };
            let cost = match (&s.cost, &s.currency) {
                (Some(c), Some(cur)) => format!("{c:.4} {cur}"),
                _ => "-".to_string(),
            };
            vec![
                s.target.clone(),
                project,
                s.attention.clone(),
                s.model.clone().unwrap_or_else(|| "-".to_string()),
                tokens,
                cost,
                s.title.clone(),
            ]
        })
        .collect();
    let head = [
        "SESSION", "PROJECT", "STATE", "MODEL", "TOKENS", "COST", "TITLE",
    ];
    write!(out, "{}", crate::table::render(&head, &rows))?;
    Ok(ExitCode::SUCCESS)
}

/// `march send`.
pub fn send(args: &SendArgs) -> anyhow::Result<ExitCode> {
    let target = find(&args.target.target)?;
    let text = args.text.join(" ");
    let reply = ask(&target, |session| ControlRequest::Send { session, text })?;
    if reply["queued"] == true {
        eprintln!("march: a turn is running: the prompt runs after it");
    }
    Ok(ExitCode::SUCCESS)
}

/// `march new-pane`: prints the new session's target.
pub fn new_pane(paths: &MarchPaths, args: &NewPaneArgs) -> anyhow::Result<ExitCode> {
    let (dir, branch) = args
        .dir_and_branch()
        .context("which directory? `march new-pane [--worktree [BRANCH]] DIR`")?;
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot open {}", dir.display()))?;
    let all = servers::list()?;
    let server = match &args.target {
        Some(name) => servers::named(&all, name)
            .with_context(|| format!("no workspace named `{name}` is running"))?,
        None => all
            .iter()
            .find(|s| s.info.dirs.iter().any(|d| dir.starts_with(d)))
            .or(all.first())
            .context("no workspace is running: `march` in a project directory starts one")?,
    };
    // The worktree is made here, by the user's own process; the workspace opens a pane on
    // it as on any directory.
    let dir = match branch {
        Some(branch) => {
            let config = Config::load(paths).context("cannot read the config")?;
            let root = config.worktrees.root(paths);
            let made = crate::workspace::worktrees::make_for(&dir, Some(&branch), &root)
                .map_err(anyhow::Error::msg)
                .context("cannot make a worktree")?;
            eprintln!("worktree {}", made.display());
            made
        }
        None => dir,
    };
    let reply = servers::ask(
        &server.socket,
        ControlRequest::NewPane {
            dir,
            agent: args.agent.clone(),
            prompt: args.prompt.clone(),
        },
    )?;
    println!("{}", reply["target"].as_str().unwrap_or_default());
    Ok(ExitCode::SUCCESS)
}

/// `march capture`.
pub fn capture(args: &CaptureArgs) -> anyhow::Result<ExitCode> {
    let target = find(&args.target.target)?;
    let last = args.last;
    let reply = ask(&target, |session| ControlRequest::Capture { session, last })?;
    print!("{}", reply["markdown"].as_str().unwrap_or_default());
    Ok(ExitCode::SUCCESS)
}

/// `march wait`: the exit status says how the turn ended, as `march -p`'s does.
pub fn wait(target: &str) -> anyhow::Result<ExitCode> {
    let target = find(target)?;
    let reply = servers::ask_waiting(
        &target.server.socket,
        ControlRequest::Wait {
            session: target.key,
        },
    )?;
    if let Some(error) = reply["error"].as_str() {
        bail!("the turn failed: {error}");
    }
    match reply.get("stop_reason").filter(|v| !v.is_null()) {
        None => Ok(ExitCode::SUCCESS),
        Some(stop) => {
            let stop = serde_json::from_value(stop.clone())
                .with_context(|| format!("an unknown stop reason {stop}"))?;
            Ok(ExitCode::from(crate::headless::exit_code(&stop)))
        }
    }
}

/// `march answer`.
pub fn answer(args: &AnswerArgs) -> anyhow::Result<ExitCode> {
    let target = find(&args.target.target)?;
    let allow = args.choice == AnswerChoice::Allow;
    let reply = ask(&target, |session| ControlRequest::Answer { session, allow })?;
    // What was answered, whole: the command, the diff or the arguments, never cut.
    let verb = if allow { "allowed" } else { "rejected" };
    let question = reply["answered"].as_str().unwrap_or_default();
    println!("{verb}: {question}");
    Ok(ExitCode::SUCCESS)
}

fn ask(
    target: &Target,
    request: impl FnOnce(u64) -> ControlRequest,
) -> anyhow::Result<serde_json::Value> {
    servers::ask(&target.server.socket, request(target.key))
}

/// Every session of `servers`, with its server.
fn sessions(servers: &[Server]) -> anyhow::Result<Vec<(Server, SessionStatus)>> {
    let mut all = Vec::new();
    for server in servers {
        let reply = servers::ask(&server.socket, ControlRequest::Status)?;
        let listed: Vec<SessionStatus> = serde_json::from_value(reply["sessions"].clone())
            .context("the server's status does not read as sessions")?;
        all.extend(listed.into_iter().map(|s| (server.clone(), s)));
    }
    Ok(all)
}

/// The session `target` names.
fn find(target: &str) -> anyhow::Result<Target> {
    let servers = servers::list()?;
    if servers.is_empty() {
        bail!("no workspace is running");
    }
    let all = sessions(&servers)?;
    let found: Vec<&(Server, SessionStatus)> = match target.rsplit_once(':') {
        Some((workspace, n)) => all
            .iter()
            .filter(|(_, s)| s.workspace == workspace && s.key.to_string() == n)
            .collect(),
        None => {
            let by_key: Vec<_> = all
                .iter()
                .filter(|(_, s)| s.key.to_string() == target)
                .collect();
            if !by_key.is_empty() {
                by_key
            } else {
                all.iter()
                    .filter(|(_, s)| {
                        target.len() >= 4
                            && s.session_id
                                .as_deref()
                                .is_some_and(|id| id.starts_with(target))
                    })
                    .collect()
            }
        }
    };
    match found.as_slice() {
        [(server, s)] => Ok(Target {
            server: server.clone(),
            key: s.key,
        }),
        [] => {
            let known: Vec<&str> = all.iter().map(|(_, s)| s.target.as_str()).collect();
            bail!(
                "no session `{target}` (open: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(_, s)| s.target.as_str()).collect();
            bail!(
                "`{target}` names several sessions ({}): name one as WORKSPACE:N",
                names.join(", ")
            )
        }
    }
}
