//! Opening sessions: a new one, or one from its transcript (`session/load`,
//! `session/resume`), with its model, settings, tools, MCP servers and state.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A session about to be set up from a new or an existing transcript.
struct Opened {
    id: String,
    cwd: PathBuf,
    store: SessionStore,
    registry: Arc<ModelRegistry>,
    settings: Settings,
    config: Arc<Config>,
    state: SessionState,
    /// The MCP servers the client gave.
    mcp_servers: Vec<agent_client_protocol::v1::schema::McpServer>,
}

impl Server {
    pub(super) async fn new_session(
        &self,
        req: NewSessionRequest,
        cx: ConnectionTo<Client>,
    ) -> Result<(NewSessionResponse, Arc<Session>), Error> {
        let cwd = checked_cwd(&req.cwd)?;
        // Settings first: a session without a usable model leaves no file behind.
        let (registry, settings, config) = self
            .settings(&SessionContext::default(), false, None)
            .await?;
        let paths = self.paths.clone();
        let dir = cwd.clone();
        let store = blocking(move || SessionStore::create_for_cwd(&paths, &dir))
            .await?
            .map_err(|e| errors::internal(e.to_string()))?;
        let id = store.session_id().to_string();
        let state = SessionState::created(self.paths.march_sessions_dir(), &id, &cwd, &store);
        let session = self.register(
            Opened {
                id,
                cwd,
                store,
                registry,
                settings,
                config,
                state,
                mcp_servers: req.mcp_servers.clone(),
            },
            &cx,
        );
        session
            .state
            .opened(TimelineKind::Created, &session.settings)
            .await;
        tracing::info!(session = %session.id(), path = %session.path().display(), "session/new");
        let response = NewSessionResponse::new(session.id().to_string())
            .config_options(session.config_options())
            .modes(session.modes());
        Ok((response, session))
    }

    pub(super) async fn load_session(
        &self,
        req: LoadSessionRequest,
        cx: ConnectionTo<Client>,
    ) -> Result<(LoadSessionResponse, Arc<Session>), Error> {
        let session = self
            .reopen(
                &req.session_id.0,
                &req.cwd,
                &req.mcp_servers,
                &cx,
                TimelineKind::Loaded,
            )
            .await?;
        let port = AcpPort::new(cx.clone(), session.id().to_string());
        // The whole conversation goes out before the answer, as ACP requires.
        let updates = session.replay();
        tracing::info!(session = %session.id(), updates = updates.len(), "session/load");
        for update in updates {
            port.notify(update);
        }
        if let Some(title) = session.state.title() {
            port.notify(SessionUpdate::SessionInfoUpdate(
                SessionInfoUpdate::new().title(title),
            ));
        }
        if let Some(usage) = session.stored_usage() {
            port.notify(usage);
        }
        let response = LoadSessionResponse::new()
            .config_options(session.config_options())
            .modes(session.modes());
        Ok((response, session))
    }

    pub(super) async fn resume_session(
        &self,
        req: ResumeSessionRequest,
        cx: ConnectionTo<Client>,
    ) -> Result<(ResumeSessionResponse, Arc<Session>), Error> {
        let session = self
            .reopen(
                &req.session_id.0,
                &req.cwd,
                &req.mcp_servers,
                &cx,
                TimelineKind::Resumed,
            )
            .await?;
        tracing::info!(session = %session.id(), "session/resume");
        // No replay, but the session's tokens and cost are part of what a client shows.
        if let Some(usage) = session.stored_usage() {
            AcpPort::new(cx.clone(), session.id().to_string()).notify(usage);
        }
        let response = ResumeSessionResponse::new()
            .config_options(session.config_options())
            .modes(session.modes());
        Ok((response, session))
    }

    /// The session in memory, or loaded from its file with the settings its March state
    /// saved; `event` goes on its timeline either way.
    async fn reopen(
        &self,
        id: &str,
        cwd: &Path,
        mcp_servers: &[agent_client_protocol::v1::schema::McpServer],
        cx: &ConnectionTo<Client>,
        event: TimelineKind,
    ) -> Result<Arc<Session>, Error> {
        let session = match self.session(id) {
            Some(session) => session,
            None => self.open(id, cwd, mcp_servers, cx).await?,
        };
        session.state.opened(event, &session.settings).await;
        Ok(session)
    }

    /// Load a session from its transcript and its March state, and register it.
    async fn open(
        &self,
        id: &str,
        cwd: &Path,
        mcp_servers: &[agent_client_protocol::v1::schema::McpServer],
        cx: &ConnectionTo<Client>,
    ) -> Result<Arc<Session>, Error> {
        let cwd = checked_cwd(cwd)?;
        let sessions_dir = self.paths.sessions_dir();
        let states_dir = self.paths.march_sessions_dir();
        let paths = self.paths.clone();
        let (wanted, dir) = (id.to_string(), cwd.clone());
        let (store, saved) = blocking(move || {
            let path = listing::find(&sessions_dir, Some(&dir), &wanted)?;
            let store = open_store(&path, &march_session_dir(&paths, &dir));
            Some(store.map(|store| (store, state::load_saved(&states_dir, &wanted))))
        })
        .await?
        .ok_or_else(|| errors::session_not_found(id))?
        .map_err(|e| errors::internal(e.to_string()))?;
        let recorded_thinking = store
            .entries()
            .iter()
            .any(|e| matches!(e.kind, EntryKind::ThinkingLevelChange(_)));
        let (registry, settings, config) = self
            .settings(&store.context(), recorded_thinking, saved.as_ref())
            .await?;
        let state =
            SessionState::reopened(self.paths.march_sessions_dir(), saved, id, &cwd, &store);
        Ok(self.register(
            Opened {
                id: id.to_string(),
                cwd,
                store,
                registry,
                settings,
                config,
                state,
                mcp_servers: mcp_servers.to_vec(),
            },
            cx,
        ))
    }

    /// Fresh config and registry, and the settings a session starts with: those its March
    /// state saved, else the model its transcript last used and its recorded thinking level,
    /// else the configured ones (a model only while its provider is usable); mode `ask`
    /// unless the state saved another.
    async fn settings(
        &self,
        context: &SessionContext,
        recorded_thinking: bool,
        saved: Option<&MarchSession>,
    ) -> Result<(Arc<ModelRegistry>, Settings, Arc<Config>), Error> {
        let paths = self.paths.clone();
        let (config, registry) = blocking(move || -> Result<_, String> {
            let config = Config::load(&paths).map_err(|e| e.to_string())?;
            let registry = ModelRegistry::load(&paths).map_err(|e| e.to_string())?;
            Ok((config, registry))
        })
        .await?
        .map_err(errors::internal)?;
        let recorded_model = context.model.as_ref().map(|(p, id)| format!("{p}/{id}"));
        let wanted = saved.and_then(|s| s.model.clone()).into_iter();
        let model = choose_model(&config, &registry, wanted.chain(recorded_model))?;
        let thinking = match (saved.and_then(|s| s.thinking), context.thinking()) {
            (Some(level), _) => level,
            (None, Some(level)) if recorded_thinking => level,
            _ => config.thinking.unwrap_or_default(),
        };
        let settings = Settings {
            model,
            thinking,
            mode: state::saved_mode(saved).unwrap_or_default(),
            limits: saved
                .and_then(|s| s.limits.as_ref())
                .map_or_else(|| Limits::from_config(&config.limits), Limits::from_saved),
        };
        Ok((Arc::new(registry), settings, Arc::new(config)))
    }

    /// Build the session around a store and register it; a session already registered under
    /// the id (two loads racing) wins.
    fn register(&self, opened: Opened, cx: &ConnectionTo<Client>) -> Arc<Session> {
        let terminals = Arc::new(ClientTerminals::default());
        let client = *self.client.lock();
        let yolo = opened.settings.mode == crate::agent::options::PermissionMode::Yolo;
        let sandbox: Sandbox =
            crate::sandbox_exec::session_policy(&opened.config.sandbox, yolo, &opened.cwd).into();
        if let Some(mode) = opened.state.saved_sandbox() {
            sandbox.set_mode(mode);
        }
        let mut ctx = client.tool_context(&opened.cwd, cx, &opened.id, &terminals, &sandbox);
        let mut notes = Memory::from_config(&self.paths, &opened.cwd, &opened.config.memory);
        // A memory server beside the local files: mirrored, and appended to through the tool.
        let remote_memory = match (&notes, &opened.config.memory.remote) {
            (Some(_), Some(url)) => {
                match crate::agent::remote_memory::SessionRemote::open(&self.paths, url) {
                    Ok(remote) => Some(remote),
                    Err(e) => {
                        tracing::warn!("remote memory {url} is not used: {e}");
                        None
                    }
                }
            }
            _ => None,
        };
        if let Some(remote) = &remote_memory {
            notes = notes.map(|memory| memory.with_remote(remote.memory.mirror().to_path_buf()));
            ctx = ctx.with_remote_memory(remote.memory.clone());
        }
        if let Some(notes) = &notes {
            ctx = ctx.with_memory(notes.clone());
        }
        let forward = client.diagnostics.then_some(cx);
        if let Some(lsp) = self.lsp.access(&opened.cwd, &opened.config, forward) {
            ctx = ctx.with_lsp(lsp);
        }
        if let Some(socket) = &self.workspace {
            ctx = ctx.with_workspace(socket.clone());
        }
        ctx = ctx.with_web(march_tools::web::FetchLimits::from_config(
            &opened.config.web,
        ));
        // The browser is offered where one can be driven: one found, or one to connect to.
        let browser = &opened.config.browser;
        if browser.connect.is_some() || march_tools::browser::find_browser(browser).is_some() {
            ctx = ctx.with_browser(march_tools::browser::BrowserAccess {
                client: self.browser.clone(),
                session: opened.id.to_string(),
            });
        }
        if let Some(images) = images_of(&opened.config.images, &opened.registry) {
            ctx = ctx.with_images(images);
        }
        ctx = ctx.with_avatars(march_core::paths::avatar_dir(&self.paths.config_dir));
        // A search provider without its key is left out (the model is not offered a tool
        // that can only fail), and the log says why.
        match march_tools::web::SearchApi::from_config(&opened.config.web, |var| {
            std::env::var(var).ok()
        }) {
            Ok(Some(api)) => ctx = ctx.with_search(api),
            Ok(None) => {}
            Err(e) => tracing::warn!("web_search is not offered: {e}"),
        }
        let tools = ToolRegistry::available(&ctx).tools().to_vec();
        let templates =
            march_core::prompt_templates::load(&march_core::prompt_templates::template_dirs(
                &self.paths.config_dir,
                std::env::var_os("HOME").map(PathBuf::from).as_deref(),
                &opened.cwd,
            ));
        let (skills, skill_problems) = march_core::skills::load(&march_core::skills::skill_dirs(
            &self.paths.config_dir,
            std::env::var_os("HOME").map(PathBuf::from).as_deref(),
            &opened.cwd,
        ));
        let commands = Arc::new(crate::agent::commands::SlashCommands::new(
            templates,
            skills,
            skill_problems,
        ));
        let mcp = crate::agent::mcp::SessionMcp::new(
            &opened.cwd,
            &opened.config.mcp,
            &opened.mcp_servers,
            self.paths.mcp_trust_file(),
            Arc::new(AcpPort::new(cx.clone(), opened.id.clone())),
            client,
            commands.clone(),
        );
        let session = Session::new(SessionSetup {
            id: opened.id,
            cwd: opened.cwd,
            config_dir: self.paths.config_dir.clone(),
            provider: Arc::new(KeyedProvider::new(
                self.http.clone(),
                opened.registry.clone(),
            )),
            registry: opened.registry,
            tools,
            store: opened.store,
            settings: opened.settings,
            config: opened.config,
            history: self.history.clone(),
            notes,
            remote_memory,
            client,
            terminals,
            state: Arc::new(opened.state),
            mcp,
            sandbox,
            commands,
        });
        self.sessions
            .lock()
            .entry(session.id().to_string())
            .or_insert(session)
            .clone()
    }
}

/// Open a session file for appending. Damage is logged; the good entries load. March never
/// appends to pi's older formats: such a file is continued in a new v3 file in `dir`, or,
/// if March did that before, its continuation is opened instead.
fn open_store(path: &Path, dir: &Path) -> Result<SessionStore, SessionError> {
    let (mut store, report) = SessionStore::open(path)?;
    if !report.is_clean() {
        tracing::warn!(path = %path.display(), ?report, "session file loaded with damage");
    }
    if store.source_version() == CURRENT_VERSION {
        return Ok(store);
    }
    if let Some(next) = listing::continuation(dir, path) {
        tracing::info!(from = %path.display(), to = %next.display(), "following a continuation");
        return SessionStore::open(&next).map(|(store, _)| store);
    }
    store.continue_in_new_file(dir)?;
    tracing::info!(from = %path.display(), to = %store.path().display(), "continued a pi file");
    Ok(store)
}

/// A session's directory must be an existing absolute path.
fn checked_cwd(cwd: &Path) -> Result<PathBuf, Error> {
    if !cwd.is_absolute() {
        return Err(errors::invalid_params(format!(
            "cwd must be an absolute path, got `{}`",
            cwd.display()
        )));
    }
    if !cwd.is_dir() {
        return Err(errors::invalid_params(format!(
            "cwd `{}` is not a directory",
            cwd.display()
        )));
    }
    Ok(cwd.to_path_buf())
}

/// The session's model: the first of `wanted` (`provider/id`: the saved one, then the one
/// the transcript last used) that can still be called, else the configured default; an
/// error that says what to configure when nothing is usable.
fn choose_model(
    config: &Config,
    registry: &ModelRegistry,
    mut wanted: impl Iterator<Item = String>,
) -> Result<Model, Error> {
    let usable = |m: &Model| registry.credential_source(&m.provider).is_usable();
    if let Some(model) = wanted.find_map(|spec| registry.resolve(&spec).ok().filter(usable)) {
        return Ok(model);
    }
    let model = registry
        .default_model(config)
        .map_err(|e| errors::internal(format!("cannot choose a model: {e}")))?
        .ok_or_else(|| {
            errors::internal(format!(
                "no model to use: set `default_model` in config.toml or add an API key to {}",
                registry.auth_file().display()
            ))
        })?;
    match registry.credential_source(&model.provider) {
        source if source.is_usable() => Ok(model),
        CredentialSource::Missing(Some(var)) => Err(errors::internal(format!(
            "model `{}/{}` cannot be used: provider `{}` has no API key (set {var} or add a key to {})",
            model.provider,
            model.id,
            model.provider,
            registry.auth_file().display()
        ))),
        _ => Err(errors::internal(format!(
            "model `{}/{}` cannot be used: provider `{}` has no API key (add one to {})",
            model.provider,
            model.id,
            model.provider,
            registry.auth_file().display()
        ))),
    }
}

/// The image model `[images]` names, through its provider's address and key; `None` (and
/// the log says why) when none is named or its provider is unknown.
fn images_of(
    config: &march_core::config::ImagesConfig,
    registry: &march_core::model::ModelRegistry,
) -> Option<march_tools::image::Images> {
    let spec = config.model.as_deref()?;
    let Some((provider, model)) = spec
        .split_once('/')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
    else {
        tracing::warn!(
            "[images] model {spec:?} is not provider/model: image_generate is not offered"
        );
        return None;
    };
    let Some(info) = registry.provider(provider) else {
        tracing::warn!(
            "[images] model {spec:?}: no provider {provider:?}: image_generate is not offered"
        );
        return None;
    };
    let api = march_tools::image::ImageApi::new(
        provider,
        model,
        &info.base_url,
        registry.api_key(provider),
        config.size.clone(),
        config.price_per_image,
    );
    Some(march_tools::image::Images {
        api,
        dir: config.dir.clone(),
    })
}
