//! Opening a session the one way every March client does (the workspace's panes, `march
//! -p`): `session/new` or `session/load`, then the model and permission mode asked for,
//! each found by its ACP category.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    LoadSessionRequest, NewSessionRequest, SessionConfigId, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigValueId, SessionId, SessionModeState,
    SetSessionConfigOptionRequest,
};

use super::{ClientError, Connection};

/// Which session to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionTarget {
    /// A new one.
    New,
    /// An earlier one, replayed as updates before the answer.
    Load(SessionId),
}

/// What the session should be set to once open; `None` leaves the agent's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSettings {
    /// The model's id.
    pub model: Option<String>,
    /// The permission mode (March's runner: `ask`, `auto-edit`, `yolo`, …).
    pub permissions: Option<String>,
}

/// An open session and its config options as the agent last reported them.
#[derive(Debug, Clone)]
pub struct OpenedSession {
    /// The agent's id of the session.
    pub session_id: SessionId,
    /// The options after every setting was applied.
    pub options: Vec<SessionConfigOption>,
    /// The agent's session modes, when it offers modes.
    pub modes: Option<SessionModeState>,
}

/// A setting [`open_session`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// The model.
    Model,
    /// The permission mode.
    Permissions,
}

impl Setting {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Model => "model",
            Setting::Permissions => "permissions",
        }
    }

    /// The ACP category its option has, and the id to fall back on for agents that give none.
    fn category(self) -> (SessionConfigOptionCategory, &'static str) {
        match self {
            Setting::Model => (SessionConfigOptionCategory::Model, "model"),
            Setting::Permissions => (SessionConfigOptionCategory::Mode, "permissions"),
        }
    }
}

/// Why a session could not be opened as asked.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// `session/new` or `session/load` failed.
    #[error("cannot open the session: {0}")]
    Open(ClientError),
    /// The session opened, but the agent offers no option for this setting.
    #[error("the agent offers no {} choice", .setting.name())]
    NoOption {
        /// The setting.
        setting: Setting,
        /// The session, open with the agent's defaults.
        opened: Box<OpenedSession>,
    },
    /// The session opened, but the agent refused the value.
    #[error("cannot set {} to {value}: {error}", .setting.name())]
    Refused {
        /// The setting.
        setting: Setting,
        /// The value asked for.
        value: String,
        /// The agent's answer.
        error: ClientError,
        /// The session, open with what was applied before.
        opened: Box<OpenedSession>,
    },
}

/// Opens `target` in `cwd` on `connection` and applies `settings` in order (model, then
/// permissions). A failed setting is an error that still carries the open session, so a
/// caller may carry on with the agent's defaults (the workspace) or stop (`march -p`).
pub async fn open_session(
    connection: &Connection,
    cwd: &Path,
    target: SessionTarget,
    settings: &SessionSettings,
) -> Result<OpenedSession, OpenError> {
    let mut opened = match target {
        SessionTarget::New => {
            let response = connection
                .new_session(NewSessionRequest::new(cwd))
                .await
                .map_err(OpenError::Open)?;
            OpenedSession {
                session_id: response.session_id,
                options: response.config_options.unwrap_or_default(),
                modes: response.modes,
            }
        }
        SessionTarget::Load(id) => {
            let response = connection
                .load_session(LoadSessionRequest::new(id.clone(), cwd))
                .await
                .map_err(OpenError::Open)?;
            OpenedSession {
                session_id: id,
                options: response.config_options.unwrap_or_default(),
                modes: response.modes,
            }
        }
    };
    let wanted = [
        (Setting::Model, settings.model.as_deref()),
        (Setting::Permissions, settings.permissions.as_deref()),
    ];
    for (setting, value) in wanted {
        let Some(value) = value else { continue };
        let (category, fallback) = setting.category();
        let Some(id) = find_config_option(&opened.options, category, fallback) else {
            return Err(OpenError::NoOption {
                setting,
                opened: Box::new(opened),
            });
        };
        let request = SetSessionConfigOptionRequest::new(
            opened.session_id.clone(),
            id,
            SessionConfigValueId::new(value),
        );
        match connection.set_config_option(request).await {
            Ok(response) => opened.options = response.config_options,
            Err(error) => {
                return Err(OpenError::Refused {
                    setting,
                    value: value.to_string(),
                    error,
                    opened: Box::new(opened),
                });
            }
        }
    }
    Ok(opened)
}

/// The id of the option of `category` (by category first, as ACP intends), else of the option
/// called `fallback_id`.
pub fn find_config_option(
    options: &[SessionConfigOption],
    category: SessionConfigOptionCategory,
    fallback_id: &str,
) -> Option<SessionConfigId> {
    options
        .iter()
        .find(|option| option.category.as_ref() == Some(&category))
        .or_else(|| options.iter().find(|option| &*option.id.0 == fallback_id))
        .map(|option| option.id.clone())
}
