//! The language servers of one project: which server checks which file, starting them on
//! first use, restarting crashed ones with backoff, and the project's merged diagnostics.

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use march_core::lsp_config::LspServerConfig;
use march_core::restart::{RestartCounter, RestartDecision, RestartPolicy};
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;

use super::server::{INITIALIZE_TIMEOUT, LanguageServer, ServerEvent};
use super::{Checked, Diagnostic, Diagnostics, FileDiagnostics, LspError};

/// A missing program is looked for again after this long (it may have been installed).
const MISSING_RECHECK: Duration = Duration::from_secs(60);

/// What the host tells those who watch it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum HostEvent {
    /// A file's diagnostics changed (the whole new set, over all its servers).
    Diagnostics(FileDiagnostics),
    /// A server could not be used, crashed or was disabled: one line for people.
    Notice {
        /// What happened.
        message: String,
    },
}

type ServerReady = Option<Result<Arc<LanguageServer>, String>>;

enum SlotState {
    /// Not running (never started, or shut down when idle).
    Idle,
    Starting(watch::Receiver<ServerReady>),
    Running(Arc<LanguageServer>),
    /// Crashed; restarts at this time.
    Backoff(Instant),
    Disabled(String),
    Missing(Instant),
}

struct Slot {
    state: SlotState,
    /// Its crashes in a row, and whether to start it again.
    restarts: RestartCounter,
    /// When it last came up (how long it ran decides whether a crash counts as in a row).
    up_since: Instant,
    last_used: Instant,
    /// Files the server had open, opened again after a restart.
    open: BTreeSet<PathBuf>,
}

/// Why a server that would check a file gave no answer.
enum Unavailable {
    /// Not installed: say so only when the user configured it.
    Missing { say: Option<String> },
    /// Disabled or failed to start, with the reason.
    Broken(String),
    /// Starting or restarting, and the wait ran out.
    Pending,
}

type SlotKey = (String, PathBuf);

struct Inner {
    project: PathBuf,
    configs: Vec<LspServerConfig>,
    idle: Duration,
    slots: Mutex<HashMap<SlotKey, Slot>>,
    /// Per file, per server child's key: its latest diagnostics.
    diagnostics: Mutex<BTreeMap<PathBuf, BTreeMap<SlotKey, Vec<Diagnostic>>>>,
    /// Which slot each server child belongs to.
    serials: Mutex<HashMap<u64, SlotKey>>,
    next_serial: AtomicU64,
    events: broadcast::Sender<HostEvent>,
    server_events: mpsc::UnboundedSender<ServerEvent>,
    /// Notices already given to watchers (each is given once).
    said: Mutex<HashSet<String>>,
    /// Notices already put in a check's result (each is put once).
    told: Mutex<HashSet<String>>,
}

/// The language servers of one project, shared by all its sessions.
#[derive(Clone)]
pub struct LspHost {
    inner: Arc<Inner>,
}

impl LspHost {
    /// A host for `project` with these servers; servers nobody used for `idle` are shut down.
    /// Must be called inside a tokio runtime.
    pub fn new(project: &Path, configs: Vec<LspServerConfig>, idle: Duration) -> Self {
        let (server_events, mut events_rx) = mpsc::unbounded_channel();
        let (events, _) = broadcast::channel(1024);
        let inner = Arc::new(Inner {
            project: project.to_path_buf(),
            configs,
            idle,
            slots: Mutex::new(HashMap::new()),
            diagnostics: Mutex::new(BTreeMap::new()),
            serials: Mutex::new(HashMap::new()),
            next_serial: AtomicU64::new(1),
            events,
            server_events,
            said: Mutex::new(HashSet::new()),
            told: Mutex::new(HashSet::new()),
        });
        let weak = Arc::downgrade(&inner);
        tokio::spawn(async move {
            while let Some(event) = events_rx.recv().await {
                let Some(inner) = weak.upgrade() else { return };
                inner.on_server_event(event);
            }
        });
        let weak = Arc::downgrade(&inner);
        let tick = (idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(30));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(tick).await;
                let Some(inner) = weak.upgrade() else { return };
                inner.stop_idle().await;
            }
        });
        LspHost { inner }
    }

    /// Everything known now, as events (for a new watcher), and the events from now on.
    pub fn subscribe(&self) -> (Vec<HostEvent>, broadcast::Receiver<HostEvent>) {
        let rx = self.inner.events.subscribe();
        let files = self
            .inner
            .diagnostics
            .lock()
            .keys()
            .cloned()
            .collect::<Vec<_>>();
        let snapshot = files
            .into_iter()
            .map(|path| HostEvent::Diagnostics(self.inner.merged(&path)))
            .filter(|e| matches!(e, HostEvent::Diagnostics(f) if !f.diagnostics.is_empty()))
            .collect();
        (snapshot, rx)
    }

    /// The names of the servers running now, with their roots.
    pub fn running(&self) -> Vec<(String, PathBuf)> {
        let mut out: Vec<_> = self
            .inner
            .slots
            .lock()
            .iter()
            .filter(|(_, s)| matches!(s.state, SlotState::Running(_)))
            .map(|(k, _)| k.clone())
            .collect();
        out.sort();
        out
    }

    /// Shut every server down (on exit).
    pub async fn shutdown(&self) {
        let servers: Vec<Arc<LanguageServer>> = self
            .inner
            .slots
            .lock()
            .values_mut()
            .filter_map(
                |slot| match std::mem::replace(&mut slot.state, SlotState::Idle) {
                    SlotState::Running(s) => Some(s),
                    _ => None,
                },
            )
            .collect();
        futures_util::future::join_all(servers.iter().map(|s| s.shutdown())).await;
    }
}

impl Inner {
    /// The diagnostics of `path` over all servers, by position.
    fn merged(&self, path: &Path) -> FileDiagnostics {
        let mut diagnostics: Vec<Diagnostic> = self
            .diagnostics
            .lock()
            .get(path)
            .map(|per| per.values().flatten().cloned().collect())
            .unwrap_or_default();
        diagnostics.sort_by(|a, b| {
            (a.line, a.column, a.severity, &a.message)
                .cmp(&(b.line, b.column, b.severity, &b.message))
        });
        diagnostics.dedup();
        FileDiagnostics {
            path: path.to_path_buf(),
            diagnostics,
        }
    }

    /// Keep what one server said about a file; tell watchers when it changed anything.
    fn record(&self, key: &SlotKey, path: &Path, diagnostics: Vec<Diagnostic>) {
        let changed = {
            let mut all = self.diagnostics.lock();
            let per = all.entry(path.to_path_buf()).or_default();
            if diagnostics.is_empty() {
                per.remove(key).is_some_and(|old| !old.is_empty())
            } else {
                per.insert(key.clone(), diagnostics.clone()).as_ref() != Some(&diagnostics)
            }
        };
        if changed {
            let _ = self.events.send(HostEvent::Diagnostics(self.merged(path)));
        }
    }

    /// Tell watchers, once.
    fn notice(&self, message: &str) {
        if self.said.lock().insert(message.to_string()) {
            tracing::info!("lsp: {message}");
            let _ = self.events.send(HostEvent::Notice {
                message: message.to_string(),
            });
        }
    }

    /// Tell watchers and, the first time, a check's result; `true` that first time.
    fn tell(&self, message: &str) -> bool {
        self.notice(message);
        self.told.lock().insert(message.to_string())
    }

    fn on_server_event(self: &Arc<Self>, event: ServerEvent) {
        match event {
            ServerEvent::Published {
                serial,
                path,
                diagnostics,
            } => {
                let key = self.serials.lock().get(&serial).cloned();
                if let Some(key) = key {
                    self.record(&key, &path, diagnostics);
                }
            }
            ServerEvent::Exited { serial, detail } => self.on_exit(serial, detail),
        }
    }

    /// A running server's output ended: a crash unless it was asked to stop.
    fn on_exit(self: &Arc<Self>, serial: u64, detail: String) {
        let Some(key) = self.serials.lock().remove(&serial) else {
            return;
        };
        let restart_in = {
            let mut slots = self.slots.lock();
            let Some(slot) = slots.get_mut(&key) else {
                return;
            };
            let SlotState::Running(server) = &slot.state else {
                return;
            };
            if server.serial() != serial || server.closing() {
                return;
            }
            let now = Instant::now();
            match slot.restarts.crashed(now.duration_since(slot.up_since)) {
                RestartDecision::GiveUp { attempts } => {
                    let reason = format!(
                        "{} stopped {} times in a row ({detail}); it stays off until March restarts",
                        key.0,
                        attempts + 1
                    );
                    slot.state = SlotState::Disabled(reason.clone());
                    self.notice(&reason);
                    None
                }
                RestartDecision::RestartAfter { wait, .. } => {
                    slot.state = SlotState::Backoff(now + wait);
                    self.notice(&format!(
                        "{} stopped ({detail}); restarting it in {} s",
                        key.0,
                        wait.as_secs()
                    ));
                    Some(wait)
                }
            }
        };
        // What it said is stale now.
        let files: Vec<PathBuf> = self
            .diagnostics
            .lock()
            .iter()
            .filter(|(_, per)| per.contains_key(&key))
            .map(|(p, _)| p.clone())
            .collect();
        for path in files {
            self.record(&key, &path, Vec::new());
        }
        if let Some(backoff) = restart_in {
            let weak = Arc::downgrade(self);
            tokio::spawn(async move {
                tokio::time::sleep(backoff).await;
                let Some(inner) = weak.upgrade() else { return };
                let Some(config) = inner.configs.iter().find(|c| c.name == key.0).cloned() else {
                    return;
                };
                let _ = inner
                    .server(&key, &config, Instant::now() + INITIALIZE_TIMEOUT)
                    .await;
            });
        }
    }

    /// The running server of a slot: started if need be, waited for until `deadline`.
    async fn server(
        self: &Arc<Self>,
        key: &SlotKey,
        config: &LspServerConfig,
        deadline: Instant,
    ) -> Result<Arc<LanguageServer>, Unavailable> {
        let mut ready = {
            let mut slots = self.slots.lock();
            let slot = slots.entry(key.clone()).or_insert_with(|| Slot {
                state: SlotState::Idle,
                restarts: RestartCounter::new(RestartPolicy::LANGUAGE_SERVER),
                up_since: Instant::now(),
                last_used: Instant::now(),
                open: BTreeSet::new(),
            });
            slot.last_used = Instant::now();
            match &slot.state {
                SlotState::Running(server) => return Ok(server.clone()),
                SlotState::Starting(ready) => ready.clone(),
                SlotState::Disabled(reason) => return Err(Unavailable::Broken(reason.clone())),
                SlotState::Backoff(until) if Instant::now() < *until => {
                    return Err(Unavailable::Pending);
                }
                SlotState::Missing(at) if at.elapsed() < MISSING_RECHECK => {
                    return Err(Unavailable::Missing { say: None });
                }
                _ => match find_program(&config.command) {
                    None => {
                        slot.state = SlotState::Missing(Instant::now());
                        let say = (!config.built_in).then(|| {
                            format!(
                                "{}: command `{}` not found (see [lsp.servers.{}] in config.toml)",
                                config.name, config.command, config.name
                            )
                        });
                        return Err(Unavailable::Missing { say });
                    }
                    Some(program) => {
                        let (tx, rx) = watch::channel(None);
                        slot.state = SlotState::Starting(rx.clone());
                        let reopen = slot.open.clone();
                        tokio::spawn(self.clone().start(
                            key.clone(),
                            config.clone(),
                            program,
                            tx,
                            reopen,
                        ));
                        rx
                    }
                },
            }
        };
        let outcome = tokio::time::timeout_at(deadline, ready.wait_for(Option::is_some)).await;
        match outcome {
            Ok(Ok(ready)) => match ready.as_ref() {
                Some(Ok(server)) => Ok(server.clone()),
                Some(Err(reason)) => Err(Unavailable::Broken(reason.clone())),
                None => Err(Unavailable::Pending),
            },
            Ok(Err(_)) => Err(Unavailable::Broken(format!("{} could not start", key.0))),
            Err(_) => Err(Unavailable::Pending),
        }
    }

    async fn start(
        self: Arc<Self>,
        key: SlotKey,
        config: LspServerConfig,
        program: PathBuf,
        ready: watch::Sender<ServerReady>,
        reopen: BTreeSet<PathBuf>,
    ) {
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        self.serials.lock().insert(serial, key.clone());
        let started = LanguageServer::start(
            &config,
            &program,
            &key.1,
            serial,
            self.server_events.clone(),
        )
        .await;
        match started {
            Ok(server) => {
                let server = Arc::new(server);
                tracing::info!(server = %key.0, root = %key.1.display(), pull = server.pulls(), "language server started");
                if let Some(slot) = self.slots.lock().get_mut(&key) {
                    slot.state = SlotState::Running(server.clone());
                    slot.up_since = Instant::now();
                }
                let _ = ready.send(Some(Ok(server.clone())));
                // After a restart: open again what the crashed one had open.
                for path in reopen {
                    if let Ok(text) = tokio::fs::read_to_string(&path).await {
                        server.sync(&path, &text, &config.language_id(&path)).await;
                        if server.pulls() {
                            let deadline = Instant::now() + Duration::from_secs(10);
                            if let Some(items) = server.pull(&path, deadline).await {
                                self.record(&key, &path, items);
                            }
                        }
                    }
                }
            }
            Err(e) => {
                self.serials.lock().remove(&serial);
                let reason = format!("{} could not start: {e}", config.name);
                if let Some(slot) = self.slots.lock().get_mut(&key) {
                    slot.state = SlotState::Disabled(reason.clone());
                }
                self.notice(&reason);
                let _ = ready.send(Some(Err(reason)));
            }
        }
    }

    /// A file is gone: its servers close it, and its diagnostics go.
    async fn forget(&self, path: &Path) {
        let servers: Vec<(SlotKey, Arc<LanguageServer>)> = self
            .slots
            .lock()
            .iter_mut()
            .filter_map(|(key, slot)| match &slot.state {
                SlotState::Running(server) if slot.open.remove(path) => {
                    Some((key.clone(), server.clone()))
                }
                _ => None,
            })
            .collect();
        for (_, server) in &servers {
            server.close(path).await;
        }
        let keys: Vec<SlotKey> = self
            .diagnostics
            .lock()
            .get(path)
            .map(|per| per.keys().cloned().collect())
            .unwrap_or_default();
        for key in keys {
            self.record(&key, path, Vec::new());
        }
        self.diagnostics.lock().remove(path);
    }

    async fn stop_idle(&self) {
        let idle: Vec<Arc<LanguageServer>> = self
            .slots
            .lock()
            .values_mut()
            .filter(|slot| {
                matches!(slot.state, SlotState::Running(_)) && slot.last_used.elapsed() >= self.idle
            })
            .filter_map(|slot| {
                slot.open.clear();
                match std::mem::replace(&mut slot.state, SlotState::Idle) {
                    SlotState::Running(server) => Some(server),
                    _ => None,
                }
            })
            .collect();
        for server in idle {
            tracing::info!(
                server = server.name(),
                "shutting down an idle language server"
            );
            server.shutdown().await;
        }
    }

    /// Check `path` with one server; `Ok(true)` when it answered in time.
    async fn check_with(
        self: &Arc<Self>,
        config: &LspServerConfig,
        path: &Path,
        text: &str,
        deadline: Instant,
    ) -> Result<bool, Unavailable> {
        let root = root_for(&self.project, path, &config.root_markers);
        let key = (config.name.clone(), root);
        let server = self.server(&key, config, deadline).await?;
        if let Some(slot) = self.slots.lock().get_mut(&key) {
            slot.open.insert(path.to_path_buf());
        }
        let since = server.published_count(path);
        server.sync(path, text, &config.language_id(path)).await;
        let got = if server.pulls() {
            server.pull(path, deadline).await
        } else {
            server.wait_published(path, since, deadline).await
        };
        match got {
            Some(items) => {
                self.record(&key, path, items);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

#[async_trait]
impl Diagnostics for LspHost {
    async fn check(&self, path: &Path, text: &str, wait: Duration) -> Result<Checked, LspError> {
        let inner = &self.inner;
        let deadline = Instant::now() + wait;
        let configs: Vec<&LspServerConfig> =
            inner.configs.iter().filter(|c| c.handles(path)).collect();
        let seen =
            inner.slots.lock().values().any(|slot| {
                slot.open.contains(path) && matches!(slot.state, SlotState::Running(_))
            });
        let before = seen.then(|| inner.merged(path).diagnostics);
        let outcomes = futures_util::future::join_all(
            configs
                .iter()
                .map(|config| inner.check_with(config, path, text, deadline)),
        )
        .await;
        let mut checked = Checked::default();
        let mut missing = Vec::new();
        for (config, outcome) in configs.iter().zip(outcomes) {
            match outcome {
                Ok(true) => checked.answered.push(config.name.clone()),
                Ok(false) | Err(Unavailable::Pending) => checked.pending.push(config.name.clone()),
                Err(Unavailable::Missing { say }) => {
                    missing.push(config.command.clone());
                    if let Some(say) = say
                        && inner.tell(&say)
                    {
                        checked.notices.push(say);
                    }
                }
                Err(Unavailable::Broken(reason)) => {
                    if inner.tell(&reason) {
                        checked.notices.push(reason);
                    }
                }
            }
        }
        if !configs.is_empty() && missing.len() == configs.len() {
            let ext = path.extension().map(|e| e.to_string_lossy().into_owned());
            let message = format!(
                "no language server installed for .{} files (looked for {})",
                ext.unwrap_or_default(),
                missing.join(", ")
            );
            if inner.tell(&message) {
                checked.notices.push(message);
            }
        }
        checked.diagnostics = inner.merged(path).diagnostics;
        checked.before = before;
        Ok(checked)
    }

    async fn query(
        &self,
        path: Option<&Path>,
        wait: Duration,
    ) -> Result<Vec<FileDiagnostics>, LspError> {
        match path {
            Some(path) => {
                let text = match tokio::fs::read(path).await {
                    Ok(text) => text,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        self.inner.forget(path).await;
                        return Ok(vec![FileDiagnostics {
                            path: path.to_path_buf(),
                            diagnostics: Vec::new(),
                        }]);
                    }
                    Err(e) => {
                        return Err(LspError::Read {
                            path: path.to_path_buf(),
                            reason: e.to_string(),
                        });
                    }
                };
                let text = String::from_utf8_lossy(&text);
                let checked = self.check(path, &text, wait).await?;
                Ok(vec![FileDiagnostics {
                    path: path.to_path_buf(),
                    diagnostics: checked.diagnostics,
                }])
            }
            None => {
                let files: Vec<PathBuf> = self.inner.diagnostics.lock().keys().cloned().collect();
                Ok(files
                    .iter()
                    .map(|p| self.inner.merged(p))
                    .filter(|f| !f.diagnostics.is_empty())
                    .collect())
            }
        }
    }
}

/// The nearest directory above `path` (up to the project) holding one of `markers`; the
/// project itself when none does.
pub(crate) fn root_for(project: &Path, path: &Path, markers: &[String]) -> PathBuf {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if !d.starts_with(project) {
            break;
        }
        if markers.iter().any(|m| d.join(m).exists()) {
            return d.to_path_buf();
        }
        if d == project {
            break;
        }
        dir = d.parent();
    }
    if path.starts_with(project) {
        project.to_path_buf()
    } else {
        path.parent().unwrap_or(project).to_path_buf()
    }
}

/// The program `command` names: a path, or a name looked up in `PATH`.
pub(crate) fn find_program(command: &str) -> Option<PathBuf> {
    let runnable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        let p = PathBuf::from(command);
        return runnable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|p| runnable(p))
}
