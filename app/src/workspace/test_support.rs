//! What the workspace's tests share: a workspace whose panes have no agent behind them, the
//! channels its panes and jobs report on, and git repositories to work in.

use std::path::{Path, PathBuf};

use super::*;

/// Where a test workspace's background work reports.
pub(crate) struct TestBus {
    /// Agent events, kept open (none come: the panes have no agent behind them).
    _events: tokio::sync::mpsc::UnboundedReceiver<(SessionKey, agent::AgentEvent)>,
    /// What shell panes' and commands' programs did.
    pub shells: tokio::sync::mpsc::UnboundedReceiver<(ShellSource, ShellNotice)>,
    /// Finished jobs.
    pub jobs: tokio::sync::mpsc::UnboundedReceiver<jobs::JobDone>,
}

impl TestBus {
    /// Hands `ws` every job's result until none is running, as the UI loop would; whether
    /// any changed the active tab.
    pub async fn settle(&mut self, ws: &mut Workspace) -> bool {
        let mut changed = false;
        while ws.jobs_running() > 0 {
            match self.jobs.recv().await {
                Some(done) => changed |= ws.job_done(done),
                None => break,
            }
        }
        changed
    }
}

/// A workspace on `project` whose panes have no agent behind them, and where its background
/// work reports.
pub(crate) fn test_workspace(project: &Path) -> (Workspace, TestBus) {
    test_workspace_on(&[project])
}

/// A workspace with a tab for each of `projects`, no agent behind its panes (tests only).
pub(crate) fn test_workspace_on<P: AsRef<Path>>(projects: &[P]) -> (Workspace, TestBus) {
    let (launcher, bus) = test_launcher();
    let projects = projects.iter().map(|p| p.as_ref().to_path_buf()).collect();
    (Workspace::new(launcher, projects), bus)
}

/// A launcher of sessions with no agent behind them, and where what they start reports
/// (tests only).
pub(crate) fn test_launcher() -> (AgentLauncher, TestBus) {
    let (events, rx) = tokio::sync::mpsc::unbounded_channel();
    let (shell_events, shells) = tokio::sync::mpsc::unbounded_channel();
    let (jobs, jobs_rx) = jobs::Jobs::channel();
    let launcher = AgentLauncher {
        spec: agent::AgentSpec::march(Path::new("/usr/bin/march")),
        agents: std::collections::BTreeMap::new(),
        mode: None,
        permission_hold: std::time::Duration::ZERO,
        events,
        paths: None,
        shell_events,
        shell: march_core::config::ShellConfig::default(),
        worktrees: std::env::temp_dir().join("march-test-worktrees"),
        ssh: march_core::config::SshConfig::default(),
        remotes: Vec::new(),
        jobs,
        setup_needed: None,
        setup_providers: Vec::new(),
    };
    let bus = TestBus {
        _events: rx,
        shells,
        jobs: jobs_rx,
    };
    (launcher, bus)
}

/// A new git repository in a temporary directory, with an identity to commit as (tests
/// only): the directory, and its canonical path.
pub(crate) fn test_repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let root = dir
        .path()
        .canonicalize()
        .unwrap_or_else(|e| panic!("canonicalize: {e}"));
    git_in(&root, &["init", "-q"]);
    git_in(&root, &["config", "user.email", "t@example.com"]);
    git_in(&root, &["config", "user.name", "T"]);
    (dir, root)
}

/// Runs git with `args` in `root`, which must succeed (tests only).
pub(crate) fn git_in(root: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("git: {e}"));
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

impl Workspace {
    /// Puts session `key` in `state` as the router's events would (tests only).
    pub(crate) fn test_attention(&mut self, key: SessionKey, state: router::Attention) {
        use router::Attention as A;
        let router = self.sessions.router_mut();
        match state {
            A::Idle => {}
            A::Working => router.prompt_sent(key),
            A::NeedsYou => {
                router.prompt_sent(key);
                router.question_asked(key, false);
            }
            A::Done | A::Error => {
                router.prompt_sent(key);
                router.turn_ended(key, state == A::Done, false);
            }
        }
    }

    /// Gives `agent` `avatar` as if its file had been read (tests only).
    pub(crate) fn test_avatar(
        &mut self,
        agent: &str,
        avatar: std::sync::Arc<march_panes::avatar::Avatar>,
    ) {
        self.avatars
            .read(vec![avatars::AvatarRead::made(agent, avatar)]);
    }
}

/// A permission request with one "allow once" option and nothing else (tests only).
pub(crate) fn permission_request() -> agent_client_protocol::v1::schema::RequestPermissionRequest {
    use agent_client_protocol::v1::schema::{
        PermissionOption, PermissionOptionKind, RequestPermissionRequest, ToolCallUpdate,
        ToolCallUpdateFields,
    };
    RequestPermissionRequest::new(
        "s1",
        ToolCallUpdate::new("call-1", ToolCallUpdateFields::new()),
        vec![PermissionOption::new(
            "allow",
            "Allow once",
            PermissionOptionKind::AllowOnce,
        )],
    )
}
