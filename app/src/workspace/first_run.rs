//! First-run setup inside a session's pane: what the setup view asks for, done with the
//! files in `setup`, and the session's agent started once a model is usable.

use march_panes::setup::SetupEvent;

use march_panes::setup::SetupProvider;

use super::agent::{AgentDriver, SessionOpen};
use super::jobs::JobDone;
use super::layout::PaneId;
use super::router::SessionKey;
use super::{Workspace, setup};

impl Workspace {
    /// Look for local servers in the background for session `key`'s setup.
    pub(super) fn probe(&self, key: SessionKey) {
        let Some(paths) = self.launcher.paths.clone() else {
            return;
        };
        self.launcher.jobs.spawn(async move {
            JobDone::SetupProviders {
                session: key,
                providers: setup::probe(paths).await,
            }
        });
    }

    /// The local servers probed for session `key`'s setup.
    pub(super) fn setup_providers(
        &mut self,
        key: SessionKey,
        providers: Vec<SetupProvider>,
    ) -> bool {
        let Some(setup) = self.sessions.get_mut(&key).and_then(|s| s.setup.as_mut()) else {
            return false;
        };
        setup.set_providers(providers);
        setup.set_probing(false);
        self.is_visible(key)
    }

    /// See, off the loop (config and credentials are read), whether session `key` can leave
    /// setup now.
    fn retry_setup(&self, key: SessionKey) {
        let Some(paths) = self.launcher.paths.clone() else {
            return;
        };
        self.launcher.jobs.blocking(move || {
            let reason = setup::reason(&paths);
            let providers = match reason {
                Some(_) => setup::providers(&paths),
                None => Vec::new(),
            };
            JobDone::SetupChecked {
                session: key,
                reason,
                providers,
            }
        });
    }

    /// Whether session `key` can leave setup: its agent starts, or the view says why not.
    pub(super) fn setup_checked(
        &mut self,
        key: SessionKey,
        reason: Option<String>,
        providers: Vec<SetupProvider>,
    ) -> bool {
        self.launcher.setup_needed = reason.clone();
        if reason.is_some() {
            self.launcher.setup_providers = providers.clone();
        }
        let l = &self.launcher;
        let Some(slot) = self.sessions.get_mut(&key) else {
            return false;
        };
        match reason {
            None => {
                slot.setup = None;
                slot.driver = AgentDriver::start(
                    key,
                    l.spec.clone(),
                    slot.project.clone(),
                    SessionOpen::New(l.mode),
                    l.events.clone(),
                );
                slot.view.notice("Setup done: starting the agent.");
            }
            Some(reason) => {
                if let Some(view) = slot.setup.as_mut() {
                    view.set_message(reason, true);
                    view.set_providers(providers);
                    view.set_probing(true);
                }
                self.probe(key);
            }
        }
        self.is_visible(key)
    }

    /// Show `result` in session `key`'s setup; on success see whether the agent can start.
    pub(super) fn setup_done(&mut self, key: SessionKey, result: Result<String, String>) -> bool {
        let ok = result.is_ok();
        if let Some(view) = self.sessions.get_mut(&key).and_then(|s| s.setup.as_mut()) {
            match result {
                Ok(message) => view.set_message(message, false),
                Err(e) => view.set_message(e, true),
            }
        }
        if ok {
            self.retry_setup(key);
        }
        self.is_visible(key)
    }

    /// A custom server's models were listed (or not): the view uses one, offers several or
    /// asks for the id.
    pub(super) fn setup_models(
        &mut self,
        key: SessionKey,
        result: Result<Vec<String>, String>,
    ) -> bool {
        let event = match self.sessions.get_mut(&key).and_then(|s| s.setup.as_mut()) {
            Some(view) => view.custom_models(result),
            None => return false,
        };
        self.session_setup_event(key, event);
        self.is_visible(key)
    }

    /// What the setup view in pane `pane` asked for.
    pub fn setup_event(&mut self, pane: PaneId, event: SetupEvent) {
        if let Some(key) = self.agent_session(pane) {
            self.session_setup_event(key, event);
        }
    }

    /// What session `key`'s setup view asked for.
    fn session_setup_event(&mut self, key: SessionKey, event: SetupEvent) {
        let Some(paths) = self.launcher.paths.clone() else {
            return;
        };
        match event {
            SetupEvent::None | SetupEvent::Redraw => {}
            SetupEvent::Retry => self.retry_setup(key),
            // Saving writes the config and credentials: off the loop.
            SetupEvent::SaveKey {
                provider,
                key: api_key,
            } => self.launcher.jobs.blocking(move || JobDone::SetupSaved {
                session: key,
                result: setup::save_key(&paths, &provider, &api_key),
            }),
            SetupEvent::UseLocal { provider, model } => {
                self.launcher.jobs.blocking(move || JobDone::SetupSaved {
                    session: key,
                    result: setup::set_default_model(&paths, &format!("{provider}/{model}")),
                })
            }
            SetupEvent::SaveBaseUrl {
                url,
                api_key,
                model: Some(model),
            } => self.launcher.jobs.blocking(move || JobDone::SetupSaved {
                session: key,
                result: setup::save_custom_server(&paths, &url, api_key.as_deref(), &model),
            }),
            SetupEvent::SaveBaseUrl {
                url,
                api_key,
                model: None,
            } => {
                // Which model to use is the server's to say; nothing is written meanwhile.
                self.launcher.jobs.spawn(async move {
                    JobDone::SetupModels {
                        session: key,
                        result: setup::list_server_models(&url, api_key.as_deref()).await,
                    }
                });
            }
        }
    }
}
