//! Session config options: model, thinking level, permission mode and turn limits, as ACP
//! `configOptions`.

use std::time::Duration;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption, SessionMode, SessionModeState,
};
use march_core::model::{Model, ModelRegistry, ThinkingLevel};
use march_tools::exec::sandbox::{Sandbox, SandboxMode};

use super::errors;

/// Config option id of the model select.
pub(crate) const MODEL: &str = "model";
/// Config option id of the thinking level select.
pub(crate) const THINKING: &str = "thinking";
/// Config option id of the permission mode select.
pub(crate) const PERMISSIONS: &str = "permissions";
/// Config option id of the select of model calls per prompt.
pub(crate) const MAX_TURNS: &str = "max_turns";
/// Config option id of the select of seconds a tool call may run.
pub(crate) const TOOL_TIMEOUT: &str = "tool_timeout";
/// Config option id of the sandbox mode select.
pub(crate) const SANDBOX: &str = "sandbox";
/// The category of the sandbox select (ACP leaves `_` categories to implementations).
pub(crate) const SANDBOX_CATEGORY: &str = "_sandbox";
/// The value id of "no limit".
const NO_LIMIT: &str = "none";
/// `max_turns` values offered besides "none" and the current one.
const TURN_CHOICES: [u32; 5] = [10, 25, 50, 100, 200];
/// `tool_timeout` seconds offered besides "none" and the current one.
const TIMEOUT_CHOICES: [u64; 6] = [30, 60, 120, 300, 600, 1800];

/// How the permission gate treats tool calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum PermissionMode {
    /// Every call not harmless by its annotations asks.
    #[default]
    Ask,
    /// Calls confined to paths inside the project (edit, write) run; others ask.
    AutoEdit,
    /// Everything runs without asking.
    Yolo,
}

impl PermissionMode {
    const ALL: [PermissionMode; 3] = [
        PermissionMode::Ask,
        PermissionMode::AutoEdit,
        PermissionMode::Yolo,
    ];

    /// The value id on the wire.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Ask => "ask",
            PermissionMode::AutoEdit => "auto-edit",
            PermissionMode::Yolo => "yolo",
        }
    }

    fn label(self) -> &'static str {
        match self {
            PermissionMode::Ask => "Ask",
            PermissionMode::AutoEdit => "Auto-edit",
            PermissionMode::Yolo => "Yolo",
        }
    }

    fn description(self) -> &'static str {
        match self {
            PermissionMode::Ask => "Ask before every tool call that changes something",
            PermissionMode::AutoEdit => {
                "Edit and write files inside the project without asking; ask for the rest"
            }
            PermissionMode::Yolo => "Run every tool call without asking",
        }
    }

    /// The mode with this value id.
    pub(crate) fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == value)
    }
}

/// The permission modes as ACP session modes (`session/set_mode` takes their ids).
pub(crate) fn session_modes(current: PermissionMode) -> SessionModeState {
    SessionModeState::new(
        current.as_str(),
        PermissionMode::ALL
            .iter()
            .map(|m| SessionMode::new(m.as_str(), m.label()).description(m.description()))
            .collect::<Vec<_>>(),
    )
}

/// What a session runs with; changes apply from the next model request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    /// The model.
    pub model: Model,
    /// The reasoning level.
    pub thinking: ThinkingLevel,
    /// The permission mode.
    pub mode: PermissionMode,
    /// Where a turn is stopped.
    pub limits: Limits,
}

/// Where a session's turns are stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Limits {
    /// Model calls one prompt may make.
    pub max_turns: Option<u32>,
    /// How long a tool call may run (the config's per-tool overrides still apply).
    pub tool_timeout: Option<Duration>,
    /// Set for this session by the user (and saved with it), not taken from the config.
    pub chosen: bool,
}

impl Limits {
    /// The limits of `[limits]` in the config.
    pub(crate) fn from_config(config: &march_core::config::LimitsConfig) -> Self {
        Limits {
            max_turns: config.max_turns,
            tool_timeout: config.tool_timeout.map(Duration::from_secs_f64),
            chosen: false,
        }
    }

    /// Limits saved with a session.
    pub(crate) fn from_saved(saved: &march_core::march_session::SessionLimits) -> Self {
        Limits {
            max_turns: saved.max_turns,
            tool_timeout: saved
                .tool_timeout
                .and_then(|s| Duration::try_from_secs_f64(s).ok()),
            chosen: true,
        }
    }

    /// What is saved with the session: only limits the user chose.
    pub(crate) fn saved(&self) -> Option<march_core::march_session::SessionLimits> {
        self.chosen
            .then(|| march_core::march_session::SessionLimits {
                max_turns: self.max_turns,
                tool_timeout: self.tool_timeout.map(|d| d.as_secs_f64()),
            })
    }
}

/// `90` as `1m 30s`, `30` as `30s`, `600` as `10m`.
fn seconds_label(secs: u64) -> String {
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m {s}s"),
    }
}

/// A select of `choices` plus "none" and the current value.
fn limit_select(
    current: Option<u64>,
    choices: &[u64],
    label: impl Fn(u64) -> String,
) -> (String, Vec<SessionConfigSelectOption>) {
    let mut values: Vec<u64> = choices.to_vec();
    if let Some(c) = current.filter(|c| !values.contains(c)) {
        values.push(c);
        values.sort_unstable();
    }
    let mut options = vec![SessionConfigSelectOption::new(NO_LIMIT, "No limit")];
    options.extend(
        values
            .into_iter()
            .map(|v| SessionConfigSelectOption::new(v.to_string(), label(v))),
    );
    let current = current.map_or_else(|| NO_LIMIT.to_string(), |c| c.to_string());
    (current, options)
}

/// A limit's value id: "none", or a whole number above zero within `max`.
fn limit_value(config_id: &str, value: &str, max: u64) -> Result<Option<u64>, Error> {
    if value == NO_LIMIT {
        return Ok(None);
    }
    match value.parse::<u64>() {
        Ok(n) if n > 0 && n <= max => Ok(Some(n)),
        _ => Err(errors::invalid_params(format!(
            "config option `{config_id}` takes `{NO_LIMIT}` or a whole number from 1 to {max}, \
             not `{value}`"
        ))),
    }
}

/// A validated `session/set_config_option`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change {
    /// Switch the model.
    Model(Model),
    /// Switch the thinking level.
    Thinking(ThinkingLevel),
    /// Switch the permission mode.
    Mode(PermissionMode),
    /// Set the model calls one prompt may make.
    MaxTurns(Option<u32>),
    /// Set how long a tool call may run.
    ToolTimeout(Option<Duration>),
    /// Switch the sandbox the agent's commands run in.
    Sandbox(SandboxMode),
}

const SANDBOX_MODES: [(SandboxMode, &str, &str); 3] = [
    (
        SandboxMode::ReadOnly,
        "sandbox read-only",
        "Commands may read but not write (devices such as /dev/null aside)",
    ),
    (
        SandboxMode::WorkspaceWrite,
        "sandbox workspace-write",
        "Commands may write only under the project and the temporary directories",
    ),
    (
        SandboxMode::Full,
        "no sandbox",
        "Commands run with your full access",
    ),
];

/// The sandbox select: its modes, the current one named as not enforceable when the kernel
/// cannot (commands are then refused, never run unconfined).
fn sandbox_select(sandbox: &Sandbox) -> SessionConfigOption {
    let current = sandbox.mode();
    let missing = sandbox.unenforceable();
    let values = SANDBOX_MODES
        .iter()
        .map(|(mode, name, description)| {
            let (name, description) = match &missing {
                Some(why) if *mode == current => (
                    format!("{name} (cannot be enforced)"),
                    format!("{description}; {why}"),
                ),
                _ => (name.to_string(), description.to_string()),
            };
            SessionConfigSelectOption::new(mode.as_str(), name).description(description)
        })
        .collect::<Vec<_>>();
    let network = if sandbox.network() {
        "network allowed"
    } else {
        "network off"
    };
    SessionConfigOption::select(SANDBOX, "Sandbox", current.as_str(), values)
        .description(format!(
            "How far the commands the agent runs are confined ({network} in a sandbox)"
        ))
        .category(SessionConfigOptionCategory::Other(
            SANDBOX_CATEGORY.to_string(),
        ))
}

/// `provider/model-id`, the value id of a model.
pub(crate) fn model_spec(model: &Model) -> String {
    format!("{}/{}", model.provider, model.id)
}

/// Models that can be called now: their provider has a key or is a local server.
pub(crate) fn usable_models(registry: &ModelRegistry) -> Vec<Model> {
    registry
        .providers()
        .iter()
        .filter(|p| registry.credential_source(&p.name).is_usable())
        .flat_map(|p| p.models.iter().cloned())
        .collect()
}

/// The complete option list for `settings`.
pub(crate) fn config_options(
    settings: &Settings,
    registry: &ModelRegistry,
    sandbox: &Sandbox,
) -> Vec<SessionConfigOption> {
    let current = model_spec(&settings.model);
    let mut models: Vec<SessionConfigSelectOption> = usable_models(registry)
        .iter()
        .map(|m| SessionConfigSelectOption::new(model_spec(m), m.name.clone()))
        .collect();
    // The current model is always offered, even one resolved outside the usable list.
    if !models.iter().any(|o| *o.value.0 == *current) {
        models.insert(
            0,
            SessionConfigSelectOption::new(current.clone(), settings.model.name.clone()),
        );
    }
    let thinking = ThinkingLevel::ALL
        .iter()
        .map(|l| SessionConfigSelectOption::new(l.as_str(), l.as_str()))
        .collect::<Vec<_>>();
    let modes = PermissionMode::ALL
        .iter()
        .map(|m| SessionConfigSelectOption::new(m.as_str(), m.label()).description(m.description()))
        .collect::<Vec<_>>();
    vec![
        SessionConfigOption::select(MODEL, "Model", current, models)
            .category(SessionConfigOptionCategory::Model),
        SessionConfigOption::select(THINKING, "Thinking", settings.thinking.as_str(), thinking)
            .description("How much the model reasons (only reasoning models use it)".to_string())
            .category(SessionConfigOptionCategory::ThoughtLevel),
        SessionConfigOption::select(PERMISSIONS, "Permissions", settings.mode.as_str(), modes)
            .description("When tool calls need your approval".to_string())
            .category(SessionConfigOptionCategory::Mode),
        {
            let current = settings.limits.max_turns.map(u64::from);
            let (current, values) = limit_select(current, &TURN_CHOICES.map(u64::from), |n| {
                format!("{n} model calls")
            });
            SessionConfigOption::select(MAX_TURNS, "Max turns", current, values)
                .description("Model calls one prompt may make before its turn stops".to_string())
        },
        {
            let current = settings.limits.tool_timeout.map(|d| d.as_secs().max(1));
            let (current, values) = limit_select(current, &TIMEOUT_CHOICES, seconds_label);
            SessionConfigOption::select(TOOL_TIMEOUT, "Tool timeout", current, values)
                .description("How long one tool call may run before the turn stops".to_string())
        },
        sandbox_select(sandbox),
    ]
}

/// The model `value` names: one offered, or, as `default_model` would, any id on a provider
/// that can be called now (unlisted and newly released models resolve with the provider's
/// defaults; docs/CONFIG.md, "Model specs").
fn model_change(value: &str, registry: &ModelRegistry) -> Result<Model, Error> {
    if let Some(model) = usable_models(registry)
        .into_iter()
        .find(|m| model_spec(m) == value)
    {
        return Ok(model);
    }
    let model = registry
        .resolve(value)
        .map_err(|e| errors::invalid_params(format!("model `{value}`: {e}")))?;
    if !registry.credential_source(&model.provider).is_usable() {
        return Err(errors::invalid_params(format!(
            "model `{value}`: its provider {} has no API key (set one with `march` setup, \
             auth.json or the provider's environment variable)",
            model.provider
        )));
    }
    Ok(model)
}

/// Check a requested option change against what is offered.
pub(crate) fn parse_change(
    config_id: &str,
    value: &SessionConfigOptionValue,
    registry: &ModelRegistry,
) -> Result<Change, Error> {
    let Some(value) = value.as_value_id() else {
        return Err(errors::invalid_params(format!(
            "config option `{config_id}` takes a value id, not a boolean"
        )));
    };
    let value: &str = &value.0;
    match config_id {
        MODEL => model_change(value, registry).map(Change::Model),
        THINKING => value
            .parse::<ThinkingLevel>()
            .map(Change::Thinking)
            .map_err(errors::invalid_params),
        PERMISSIONS => PermissionMode::parse(value)
            .map(Change::Mode)
            .ok_or_else(|| {
                errors::invalid_params(format!(
                    "unknown permission mode `{value}` (ask, auto-edit, yolo)"
                ))
            }),
        MAX_TURNS => limit_value(config_id, value, u64::from(u32::MAX))
            .map(|n| Change::MaxTurns(n.map(|n| n as u32))),
        TOOL_TIMEOUT => limit_value(config_id, value, 86_400)
            .map(|n| Change::ToolTimeout(n.map(Duration::from_secs))),
        SANDBOX => value
            .parse::<SandboxMode>()
            .map(Change::Sandbox)
            .map_err(errors::invalid_params),
        other => Err(errors::invalid_params(format!(
            "unknown config option `{other}` (model, thinking, permissions, max_turns, \
             tool_timeout, sandbox)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{SessionConfigKind, SessionConfigSelectOptions};
    use march_core::auth::AuthStore;
    use march_core::config::Config;

    fn registry() -> ModelRegistry {
        let config = Config::parse(
            r#"
            [providers.scripted]
            api = "openai-completions"
            base_url = "http://127.0.0.1:9/v1"
            [[providers.scripted.models]]
            id = "m"
            [[providers.scripted.models]]
            id = "n"
            "#,
            std::path::Path::new("config.toml"),
        )
        .unwrap();
        let auth = AuthStore::empty("/nonexistent/auth.json");
        ModelRegistry::new(
            march_core::model::builtin_providers(),
            &config,
            auth,
            |_| None,
        )
        .unwrap()
    }

    fn values(option: &SessionConfigOption) -> (String, Vec<String>) {
        let SessionConfigKind::Select(select) = &option.kind else {
            panic!("not a select");
        };
        let SessionConfigSelectOptions::Ungrouped(list) = &select.options else {
            panic!("grouped");
        };
        (
            select.current_value.0.to_string(),
            list.iter().map(|o| o.value.0.to_string()).collect(),
        )
    }

    #[test]
    fn options_list_usable_models_levels_and_modes() {
        let reg = registry();
        let settings = Settings {
            model: reg.resolve("scripted/m").unwrap(),
            thinking: ThinkingLevel::Low,
            mode: PermissionMode::Ask,
            limits: Limits {
                max_turns: Some(40),
                tool_timeout: None,
                chosen: false,
            },
        };
        let dir = tempfile::tempdir().unwrap();
        let sandbox: Sandbox =
            march_tools::exec::sandbox::SandboxPolicy::new(SandboxMode::WorkspaceWrite, dir.path())
                .into();
        let options = config_options(&settings, &reg, &sandbox);
        let ids: Vec<&str> = options.iter().map(|o| &*o.id.0).collect();
        assert_eq!(
            ids,
            [
                MODEL,
                THINKING,
                PERMISSIONS,
                MAX_TURNS,
                TOOL_TIMEOUT,
                SANDBOX
            ]
        );
        assert_eq!(
            values(&options[5]),
            (
                "workspace-write".into(),
                ["read-only", "workspace-write", "full"]
                    .map(String::from)
                    .to_vec()
            )
        );
        // The current limit is offered among the choices, in order.
        assert_eq!(
            values(&options[3]),
            (
                "40".into(),
                ["none", "10", "25", "40", "50", "100", "200"]
                    .map(String::from)
                    .to_vec()
            )
        );
        assert_eq!(values(&options[4]).0, "none");
        assert_eq!(seconds_label(90), "1m 30s");
        assert_eq!(seconds_label(600), "10m");
        let (current, models) = values(&options[0]);
        assert_eq!(current, "scripted/m");
        // No builtin provider has a key here, so only the local scripted models are offered.
        assert_eq!(models, ["scripted/m", "scripted/n"]);
        assert_eq!(
            values(&options[1]),
            (
                "low".into(),
                ["off", "minimal", "low", "medium", "high", "xhigh"]
                    .map(String::from)
                    .to_vec()
            )
        );
        assert_eq!(
            values(&options[2]),
            (
                "ask".into(),
                ["ask", "auto-edit", "yolo"].map(String::from).to_vec()
            )
        );
    }

    #[test]
    fn a_mode_the_kernel_cannot_enforce_is_named_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut policy =
            march_tools::exec::sandbox::SandboxPolicy::new(SandboxMode::ReadOnly, dir.path());
        policy.enforce = false;
        let option = sandbox_select(&policy.into());
        let SessionConfigKind::Select(select) = &option.kind else {
            panic!("not a select");
        };
        let SessionConfigSelectOptions::Ungrouped(list) = &select.options else {
            panic!("grouped");
        };
        let names: Vec<&str> = list.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sandbox read-only (cannot be enforced)",
                "sandbox workspace-write",
                "no sandbox"
            ]
        );
    }

    #[test]
    fn changes_are_validated() {
        let reg = registry();
        let v = SessionConfigOptionValue::value_id;
        assert!(matches!(
            parse_change(MODEL, &v("scripted/n"), &reg),
            Ok(Change::Model(m)) if m.id == "n"
        ));
        // An id the provider does not list resolves, as default_model would.
        assert!(matches!(
            parse_change(MODEL, &v("scripted/brand-new-model"), &reg),
            Ok(Change::Model(m)) if m.id == "brand-new-model" && m.provider == "scripted"
        ));
        let err = parse_change(MODEL, &v("openai/gpt-5"), &reg).unwrap_err();
        assert!(err.message.contains("has no API key"), "{err:?}");
        assert!(parse_change(MODEL, &v("nowhere/x"), &reg).is_err());
        assert_eq!(
            parse_change(THINKING, &v("high"), &reg).ok(),
            Some(Change::Thinking(ThinkingLevel::High))
        );
        assert!(parse_change(THINKING, &v("max"), &reg).is_err());
        assert_eq!(
            parse_change(PERMISSIONS, &v("auto-edit"), &reg).ok(),
            Some(Change::Mode(PermissionMode::AutoEdit))
        );
        assert_eq!(
            parse_change(MAX_TURNS, &v("7"), &reg).ok(),
            Some(Change::MaxTurns(Some(7)))
        );
        assert_eq!(
            parse_change(TOOL_TIMEOUT, &v("none"), &reg).ok(),
            Some(Change::ToolTimeout(None))
        );
        assert_eq!(
            parse_change(TOOL_TIMEOUT, &v("45"), &reg).ok(),
            Some(Change::ToolTimeout(Some(Duration::from_secs(45))))
        );
        for bad in ["0", "-3", "many", "86401"] {
            let err = parse_change(TOOL_TIMEOUT, &v(bad), &reg).unwrap_err();
            assert!(err.message.contains("from 1 to 86400"), "{bad}: {err:?}");
        }
        assert_eq!(
            parse_change(SANDBOX, &v("read-only"), &reg).ok(),
            Some(Change::Sandbox(SandboxMode::ReadOnly))
        );
        let err = parse_change(SANDBOX, &v("none"), &reg).unwrap_err();
        assert!(err.message.contains("workspace-write"), "{err:?}");
        let err = parse_change("color", &v("red"), &reg).unwrap_err();
        assert_eq!(err.code, agent_client_protocol::ErrorCode::INVALID_PARAMS);
        assert!(parse_change(MODEL, &SessionConfigOptionValue::boolean(true), &reg).is_err());
    }
}
