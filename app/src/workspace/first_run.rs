//! First-run setup inside a session's pane: what the setup view asks for, done with the
//! files in `setup`, and the session's agent started once a model is usable.

use march_panes::setup::SetupEvent;

use super::agent::{AgentDriver, AgentEvent, SessionOpen};
use super::layout::PaneId;
use super::router::SessionKey;
use super::{Workspace, setup};

impl Workspace {
    /// Look for local servers in the background for session `key`'s setup.
    pub(super) fn probe(&self, key: SessionKey) {
        let Some(paths) = self.launcher.paths.clone() else {
            return;
        };
        let events = self.launcher.events.clone();
        tokio::spawn(async move {
            let providers = setup::probe(paths).await;
            let _ = events.send((key, AgentEvent::SetupProviders(providers)));
        });
    }

    /// Leave setup in session `key` when a model is usable now: its agent starts.
    fn retry_setup(&mut self, key: SessionKey) {
        let Some(paths) = self.launcher.paths.clone() else {
            return;
        };
        let reason = setup::reason(&paths);
        let l = &self.launcher;
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
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
                    view.set_providers(setup::providers(&paths));
                    view.set_probing(true);
                }
                self.probe(key);
            }
        }
    }

    /// Show `result` in session `key`'s setup; on success see whether the agent can start.
    fn setup_done(&mut self, key: SessionKey, result: Result<String, String>) {
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
    }

    /// A custom server's models were listed (or not): the view uses one, offers several or
    /// asks for the id.
    pub(super) fn setup_models(&mut self, key: SessionKey, result: Result<Vec<String>, String>) {
        let event = match self.sessions.get_mut(&key).and_then(|s| s.setup.as_mut()) {
            Some(view) => view.custom_models(result),
            None => return,
        };
        self.session_setup_event(key, event);
    }

    /// What the setup view in pane `pane` asked for.
    pub fn setup_event(&mut self, pane: PaneId, event: SetupEvent) {
        if let Some(key) = self.panes.get(&pane).copied() {
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
            SetupEvent::SaveKey {
                provider,
                key: api_key,
            } => {
                let result = setup::save_key(&paths, &provider, &api_key);
                self.setup_done(key, result);
            }
            SetupEvent::UseLocal { provider, model } => {
                let result = setup::set_default_model(&paths, &format!("{provider}/{model}"));
                self.setup_done(key, result);
            }
            SetupEvent::SaveBaseUrl {
                url,
                api_key,
                model: Some(model),
            } => {
                let result = setup::save_custom_server(&paths, &url, api_key.as_deref(), &model);
                self.setup_done(key, result);
            }
            SetupEvent::SaveBaseUrl {
                url,
                api_key,
                model: None,
            } => {
                // Which model to use is the server's to say; nothing is written meanwhile.
                let events = self.launcher.events.clone();
                tokio::spawn(async move {
                    let result = setup::list_server_models(&url, api_key.as_deref()).await;
                    let _ = events.send((key, AgentEvent::SetupModels { result }));
                });
            }
        }
    }
}
