//! `march worktrees`: the git worktrees March made for agents (under `[worktrees] dir`), what
//! each holds, and removing the ones left behind by a crash or a pane closed keeping them.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use march_core::config::Config;
use march_core::paths::MarchPaths;
use march_wire::ControlRequest;

use crate::cli::WorktreesArgs;
use crate::client::servers;
use crate::git::worktree::{self, Worktree};

/// The project directories of every session of the running workspaces.
fn open_projects() -> Vec<std::path::PathBuf> {
    let Ok(all) = servers::list() else {
        return Vec::new();
    };
    let mut projects = Vec::new();
    for server in all {
        let Ok(reply) = servers::ask(&server.socket, ControlRequest::Status) else {
            continue;
        };
        let sessions = reply["sessions"].as_array().cloned().unwrap_or_default();
        projects.extend(
            sessions
                .iter()
                .filter_map(|s| s["project"].as_str().map(std::path::PathBuf::from)),
        );
    }
    projects
}

/// Whether a session works in `worktree`.
fn in_use(worktree: &Path, open: &[std::path::PathBuf]) -> bool {
    open.iter().any(|p| p.starts_with(worktree))
}

/// `march worktrees [--clean | --remove PATH [--force]]`.
pub fn run(paths: &MarchPaths, args: &WorktreesArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(paths).context("cannot read the config")?;
    let root = config.worktrees.root(paths);
    if let Some(path) = &args.remove {
        let path = path
            .canonicalize()
            .with_context(|| format!("cannot open {}", path.display()))?;
        let Some(w) = Worktree::of(&path).filter(|w| w.path == path) else {
            bail!("{} is not a worktree March made", path.display());
        };
        if in_use(&w.path, &open_projects()) {
            bail!("an agent pane works in {}: close it first", w.label());
        }
        w.remove(args.force).map_err(anyhow::Error::msg)?;
        println!("removed {} ({})", w.label(), w.path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let found = worktree::list(&root);
    if found.is_empty() {
        println!("no worktrees under {}", root.display());
        return Ok(ExitCode::SUCCESS);
    }
    let open = open_projects();
    let mut rows = Vec::new();
    let mut failed = false;
    for f in &found {
        let path = f.path.display().to_string();
        let (label, state) = match &f.worktree {
            Err(why) => ("?".to_string(), why.clone()),
            Ok(w) => {
                let state = match w.pending() {
                    Err(why) => why,
                    Ok(_) if in_use(&w.path, &open) => "an agent pane works in it".to_string(),
                    Ok(pending) if args.clean && pending.is_empty() => match w.remove(false) {
                        Ok(()) => "removed".to_string(),
                        Err(why) => {
                            failed = true;
                            why
                        }
                    },
                    Ok(pending) if pending.is_empty() => "nothing unmerged".to_string(),
                    Ok(pending) => pending.describe(),
                };
                (format!("{} (from {})", w.label(), w.base), state)
            }
        };
        rows.push(vec![label, state, path]);
    }
    print!(
        "{}",
        crate::table::render(&["WORKTREE", "STATE", "PATH"], &rows)
    );
    if !args.clean {
        println!(
            "`march worktrees --clean` removes those with nothing unmerged; `--remove PATH \
             --force` one that still holds work."
        );
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
