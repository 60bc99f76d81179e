//! The user's `config.toml`: default model, thinking level and provider settings.
//!
//! Unknown keys are ignored so that older builds keep reading newer config files; a known key
//! with the wrong type is an error, since silently dropping it would surprise the user.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::model::{Api, ReasoningFormat, StructuredOutputFormat, ThinkingLevel};
use crate::paths::MarchPaths;

mod capabilities;

pub use capabilities::{
    BrowserConfig, GatewayConfig, ImagesConfig, MemoryConfig, MemoryServerConfig, RecallConfig,
    SearchProviderName, TelegramConfig, WebConfig, WebSearchConfig,
};

/// Why the config file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read config file {}: {error}", path.display())]
    Read {
        /// The config file.
        path: PathBuf,
        /// The I/O error (part of the message, so not also a `source`).
        error: std::io::Error,
    },
    /// The file is not valid TOML or a known key has the wrong type.
    #[error("invalid config file {}: {error}", path.display())]
    Parse {
        /// The config file.
        path: PathBuf,
        /// The TOML error, with line and column (part of the message, so not also a `source`).
        error: toml::de::Error,
    },
}

/// The contents of `config.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Config {
    /// The model used when none is chosen, as `provider/model-id`.
    pub default_model: Option<String>,
    /// The thinking level used when none is chosen.
    pub thinking: Option<ThinkingLevel>,
    /// `[providers.<name>]` tables: overrides of built-in providers and new ones.
    pub providers: BTreeMap<String, ProviderConfig>,
    /// The `[memory]` table.
    pub memory: MemoryConfig,
    /// The `[recall]` table.
    pub recall: RecallConfig,
    /// The `[compaction]` table (pi's defaults: on, 16384 reserved, 20000 kept).
    pub compaction: crate::compaction::CompactionSettings,
    /// `[agents.<name>]` tables: ACP agents a pane can run besides March's own runner.
    pub agents: BTreeMap<String, AgentConfig>,
    /// The agent new agent panes run (default: `march`, March's own runner).
    pub default_agent: Option<String>,
    /// The permission mode new sessions start in: `ask`, `auto-edit` or `yolo`.
    pub permission_mode: Option<PermissionModeName>,
    /// Milliseconds a permission dialog takes no answer after it appears and after the last
    /// key typed into its pane (type-ahead stays in the prompt); default 500, 0 turns the
    /// guard off.
    pub permission_guard_ms: Option<u64>,
    /// The theme: a built-in (`dark`, `light`) or `themes/<name>.toml` in the config dir.
    pub theme: Option<String>,
    /// The `[notifications]` table: how the workspace says a background session needs you.
    pub notifications: NotificationConfig,
    /// The `[workspace]` table.
    pub workspace: WorkspaceConfig,
    /// The `[shell]` table: shell panes.
    pub shell: ShellConfig,
    /// The `[lsp]` table: language servers for diagnostics.
    pub lsp: crate::lsp_config::LspConfig,
    /// The `[requests]` table: how long a silent model server is waited on.
    pub requests: RequestsConfig,
    /// The `[limits]` table: where a turn is stopped.
    pub limits: LimitsConfig,
    /// The `[mcp]` table: MCP servers whose tools sessions get.
    pub mcp: crate::mcp_config::McpConfig,
    /// The `[sandbox]` table: how the commands an agent runs are confined.
    pub sandbox: SandboxConfig,
    /// The `[worktrees]` table: where agents' git worktrees go.
    pub worktrees: WorktreesConfig,
    /// The `[ssh]` table: how projects on other machines are reached.
    pub ssh: SshConfig,
    /// `[remotes.NAME]`: projects on other machines, by name.
    pub remotes: std::collections::BTreeMap<String, RemoteProjectConfig>,
    /// The `[web]` table: how far the web tools may go.
    pub web: WebConfig,
    /// The `[browser]` table: the browser the browser daemon drives.
    pub browser: BrowserConfig,
    /// The `[images]` table: the image model `image_generate` asks.
    pub images: ImagesConfig,
    /// The `[gateway]` table: `march gateway`'s adapters.
    pub gateway: GatewayConfig,
}

/// The `[ssh]` table: March reaches other machines with the user's own OpenSSH client.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct SshConfig {
    /// The OpenSSH client.
    pub command: String,
    /// Arguments before the host on every connection (e.g. `["-F", "other_config"]`).
    pub args: Vec<String>,
    /// March on the other machines (a name on their PATH, or a path there).
    pub march: String,
}

impl Default for SshConfig {
    fn default() -> Self {
        SshConfig {
            command: "ssh".to_string(),
            args: Vec::new(),
            march: "march".to_string(),
        }
    }
}

/// A `[remotes.NAME]` table: a project on another machine.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RemoteProjectConfig {
    /// `ssh://HOST/PATH` (HOST as `ssh` takes it: a name from the SSH config, `user@host`).
    pub url: String,
}

/// The `[worktrees]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct WorktreesConfig {
    /// The directory agents' worktrees are made in (`~/` is the home directory); unset,
    /// `worktrees` in March's data directory, outside every project.
    pub dir: Option<PathBuf>,
}

impl WorktreesConfig {
    /// The directory worktrees are made in: `dir`, else `<data dir>/worktrees`.
    pub fn root(&self, paths: &crate::paths::MarchPaths) -> PathBuf {
        match &self.dir {
            Some(dir) => match (dir.strip_prefix("~"), std::env::var_os("HOME")) {
                (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
                _ => dir.clone(),
            },
            None => paths.data_dir.join("worktrees"),
        }
    }
}

/// The `[sandbox]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SandboxConfig {
    /// `read-only`, `workspace-write` or `full`; unset, `workspace-write` in the ask and
    /// auto-edit permission modes and `full` in yolo.
    pub mode: Option<SandboxModeName>,
    /// Whether confined commands may open TCP connections.
    pub network: bool,
    /// `landlock` (the default) or `none`, which says no mode can be enforced.
    pub mechanism: SandboxMechanism,
}

/// How far agent commands are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxModeName {
    /// Nothing written but devices.
    ReadOnly,
    /// Writes under the project and the temporary directories.
    WorkspaceWrite,
    /// Not confined.
    Full,
}

impl SandboxModeName {
    /// Its name (`workspace-write`).
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxModeName::ReadOnly => "read-only",
            SandboxModeName::WorkspaceWrite => "workspace-write",
            SandboxModeName::Full => "full",
        }
    }
}

/// What confines agent commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMechanism {
    /// The kernel's Landlock LSM.
    #[default]
    Landlock,
    /// Nothing: every confining mode is reported as not enforceable.
    None,
}

/// The `[limits]` table: bounds on one turn.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LimitsConfig {
    /// Model calls one prompt may make before its turn ends (none: no limit).
    #[serde(deserialize_with = "positive_count")]
    pub max_turns: Option<u32>,
    /// Seconds any one tool call may run before the turn ends (none: no limit).
    #[serde(deserialize_with = "some_positive_seconds")]
    pub tool_timeout: Option<f64>,
    /// Seconds by tool name, over `tool_timeout` (`[limits.tool_timeouts]`).
    #[serde(deserialize_with = "seconds_by_name")]
    pub tool_timeouts: std::collections::BTreeMap<String, f64>,
}

impl LimitsConfig {
    /// The tool limits a turn runs with: a timeout set here ends the turn.
    pub fn tool_timeouts(&self) -> crate::agent_loop::ToolTimeouts {
        crate::agent_loop::ToolTimeouts {
            default: self.tool_timeout.map(Duration::from_secs_f64),
            per_tool: self
                .tool_timeouts
                .iter()
                .map(|(name, secs)| (name.clone(), Duration::from_secs_f64(*secs)))
                .collect(),
            ends_run: true,
        }
    }
}

fn some_positive_seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    positive_seconds(d).map(Some)
}

fn seconds_by_name<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<std::collections::BTreeMap<String, f64>, D::Error> {
    let table = std::collections::BTreeMap::<String, f64>::deserialize(d)?;
    for (name, secs) in &table {
        if !(secs.is_finite() && *secs > 0.0 && *secs <= 86_400.0) {
            return Err(serde::de::Error::custom(format!(
                "tool_timeouts.{name}: {secs} is not a number of seconds above 0 and at most 86400"
            )));
        }
    }
    Ok(table)
}

/// A count above zero, when given.
fn positive_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    match u32::deserialize(d)? {
        0 => Err(serde::de::Error::custom(
            "0 is not a limit: leave the key out for none",
        )),
        n => Ok(Some(n)),
    }
}

/// The `[requests]` table: patience with model servers that go silent.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default)]
pub struct RequestsConfig {
    /// Seconds from sending a request to the response's headers.
    #[serde(deserialize_with = "positive_seconds")]
    pub first_byte_timeout: f64,
    /// Seconds the response may go quiet once it started (keepalives count as activity).
    #[serde(deserialize_with = "positive_seconds")]
    pub idle_timeout: f64,
    /// How often a request that stalled is sent again before the turn ends with an error.
    pub stall_retries: u32,
}

impl Default for RequestsConfig {
    fn default() -> Self {
        let policy = crate::provider::StallPolicy::default();
        RequestsConfig {
            first_byte_timeout: policy.first_byte.as_secs_f64(),
            idle_timeout: policy.idle.as_secs_f64(),
            stall_retries: policy.max_stall_retries,
        }
    }
}

impl RequestsConfig {
    /// The policy model requests follow.
    pub fn stall_policy(&self) -> crate::provider::StallPolicy {
        crate::provider::StallPolicy {
            first_byte: Duration::from_secs_f64(self.first_byte_timeout),
            idle: Duration::from_secs_f64(self.idle_timeout),
            max_stall_retries: self.stall_retries,
        }
    }
}

/// A number of seconds above zero and at most a day.
fn positive_seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let secs = f64::deserialize(d)?;
    if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 {
        Ok(secs)
    } else {
        Err(serde::de::Error::custom(format!(
            "{secs} is not a number of seconds above 0 and at most 86400"
        )))
    }
}

/// The `[shell]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ShellConfig {
    /// The program shell panes run (default: `$SHELL`, else `/bin/sh`).
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Lines of history a shell pane keeps at most.
    pub scrollback_lines: usize,
    /// Memory a shell pane's history may take at most, in bytes (whichever limit is met
    /// first wins).
    pub scrollback_bytes: usize,
    /// What happens to a pane whose shell exits.
    pub on_exit: ShellExit,
    /// Let programs in shell panes set the system clipboard (OSC 52).
    pub osc52: bool,
    /// Milliseconds a closed pane's programs get after the hang-up before they are killed.
    pub hangup_grace_ms: u64,
    /// When copy mode's search ignores case.
    pub search_case: SearchCaseName,
}

/// When a search ignores case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchCaseName {
    /// When the query has no capital letter.
    #[default]
    Smart,
    /// Always.
    Ignore,
    /// Never.
    Match,
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            command: None,
            args: Vec::new(),
            scrollback_lines: 10_000,
            scrollback_bytes: 32 << 20,
            on_exit: ShellExit::CloseOnSuccess,
            osc52: true,
            hangup_grace_ms: 2_000,
            search_case: SearchCaseName::Smart,
        }
    }
}

/// What happens to a shell pane when its shell exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShellExit {
    /// The pane closes.
    Close,
    /// The pane closes when the shell succeeded; a failure stays to be read.
    CloseOnSuccess,
    /// The pane stays, marked with the exit status (Enter starts the shell again).
    Keep,
}

/// The `[workspace]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WorkspaceConfig {
    /// Seconds a session no pane shows may sit idle before its runner is stopped (it
    /// starts again, reloading the session, when the session is shown); 0 never stops one.
    pub stop_idle_after: u64,
}

impl Default for WorkspaceConfig {
    fn default() -> Self {
        WorkspaceConfig {
            stop_idle_after: 900,
        }
    }
}

/// The `[notifications]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct NotificationConfig {
    /// Ring the terminal bell.
    pub bell: bool,
    /// Send a desktop notification (OSC 9, shown by terminals that support it).
    pub osc9: bool,
    /// Also notify when a background turn ends (not only when one needs an answer or fails).
    pub on_done: bool,
}

impl Default for NotificationConfig {
    fn default() -> Self {
        NotificationConfig {
            bell: true,
            osc9: true,
            on_done: false,
        }
    }
}

/// The permission modes a session can start in (the runner's `permissions` config option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionModeName {
    /// Ask before anything that is not harmless.
    Ask,
    /// Edits and writes inside the project run; the rest asks.
    AutoEdit,
    /// Everything runs without asking.
    Yolo,
}

impl PermissionModeName {
    /// The value id of the runner's `permissions` option.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionModeName::Ask => "ask",
            PermissionModeName::AutoEdit => "auto-edit",
            PermissionModeName::Yolo => "yolo",
        }
    }
}

/// One `[agents.<name>]` table: an ACP agent command.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// The program (looked up in `PATH` unless it is a path).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
}

/// One `[providers.<name>]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ProviderConfig {
    /// Wire format; required for a provider that is not built in.
    pub api: Option<Api>,
    /// Base URL including the version path, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: Option<String>,
    /// Environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Extra HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// How reasoning is requested from this provider's models.
    pub reasoning_format: Option<ReasoningFormat>,
    /// Models to add, or to override built-in ones with the same id.
    pub models: Vec<ModelConfig>,
}

/// One `[[providers.<name>.models]]` entry; unset fields keep the built-in or default value.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ModelConfig {
    /// Model id as the provider spells it.
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// Whether the model reasons.
    #[serde(default)]
    pub reasoning: Option<bool>,
    /// Whether the model accepts images.
    #[serde(default)]
    pub images: Option<bool>,
    /// Context window in tokens.
    #[serde(default)]
    pub context_window: Option<u64>,
    /// Maximum output tokens.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// How reasoning is requested, if different from the provider's.
    #[serde(default)]
    pub reasoning_format: Option<ReasoningFormat>,
    /// How a JSON answer is asked for (`native` or `prompt`).
    #[serde(default)]
    pub structured_output: Option<StructuredOutputFormat>,
    /// Prices per million tokens.
    #[serde(default)]
    pub cost: Option<CostConfig>,
}

/// Prices per million tokens; unset fields keep the built-in value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CostConfig {
    /// Input price.
    pub input: Option<f64>,
    /// Output price.
    pub output: Option<f64>,
    /// Cache read price.
    pub cache_read: Option<f64>,
    /// Cache write price.
    pub cache_write: Option<f64>,
}

impl Config {
    /// Read `config.toml` from the config directory; a missing file gives the default config.
    pub fn load(paths: &MarchPaths) -> Result<Self, ConfigError> {
        Self::load_file(&paths.config_file())
    }

    /// Read a config file; a missing file gives the default config.
    pub fn load_file(path: &Path) -> Result<Self, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(error) => Err(ConfigError::Read {
                path: path.to_path_buf(),
                error,
            }),
        }
    }

    /// Parse config text; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|error| ConfigError::Parse {
            path: path.to_path_buf(),
            error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = r#"
default_model = "openai/gpt-4.1"
thinking = "high"

[providers.openai]
api_key_env = "MY_OPENAI_KEY"
headers = { "X-Org" = "acme" }

[providers.local]
api = "openai-completions"
base_url = "http://127.0.0.1:9000/v1"
reasoning_format = "template-kwargs"

[[providers.local.models]]
id = "qwen3-coder"
name = "Qwen3 Coder"
reasoning = true
context_window = 262144
cost = { input = 0.5 }
"#;

    #[test]
    fn parses_a_full_config() {
        let config = Config::parse(FULL, Path::new("config.toml")).unwrap();
        assert_eq!(config.default_model.as_deref(), Some("openai/gpt-4.1"));
        assert_eq!(config.thinking, Some(ThinkingLevel::High));
        let openai = &config.providers["openai"];
        assert_eq!(openai.api, None);
        assert_eq!(openai.api_key_env.as_deref(), Some("MY_OPENAI_KEY"));
        assert_eq!(openai.headers["X-Org"], "acme");
        let local = &config.providers["local"];
        assert_eq!(local.api, Some(Api::OpenAiCompletions));
        assert_eq!(
            local.reasoning_format,
            Some(ReasoningFormat::TemplateKwargs)
        );
        let model = &local.models[0];
        assert_eq!(model.id, "qwen3-coder");
        assert_eq!(model.reasoning, Some(true));
        assert_eq!(model.images, None);
        assert_eq!(model.context_window, Some(262_144));
        let cost = model.cost.unwrap();
        assert_eq!((cost.input, cost.output), (Some(0.5), None));
    }

    #[test]
    fn requests_table_sets_the_stall_policy_and_refuses_nonsense() {
        let defaults = Config::parse("", Path::new("c.toml")).unwrap();
        assert_eq!(
            defaults.requests.stall_policy(),
            crate::provider::StallPolicy::default()
        );
        let config = Config::parse(
            "[requests]\nfirst_byte_timeout = 0.5\nidle_timeout = 600\nstall_retries = 0\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let policy = config.requests.stall_policy();
        assert_eq!(policy.first_byte, Duration::from_millis(500));
        assert_eq!(policy.idle, Duration::from_secs(600));
        assert_eq!(policy.max_stall_retries, 0);
        for bad in [
            "first_byte_timeout = 0",
            "idle_timeout = -3",
            "idle_timeout = 1e9",
        ] {
            let err = Config::parse(&format!("[requests]\n{bad}\n"), Path::new("c.toml"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("not a number of seconds above 0"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn limits_table_sets_max_turns_and_refuses_zero() {
        let defaults = Config::parse("", Path::new("c.toml")).unwrap();
        assert_eq!(defaults.limits.max_turns, None);
        let config = Config::parse("[limits]\nmax_turns = 12\n", Path::new("c.toml")).unwrap();
        assert_eq!(config.limits.max_turns, Some(12));
        let err = Config::parse("[limits]\nmax_turns = 0\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("0 is not a limit"), "{err}");
    }

    #[test]
    fn limits_table_sets_tool_timeouts_by_name() {
        let defaults = Config::parse("", Path::new("c.toml")).unwrap();
        assert_eq!(defaults.limits.tool_timeouts().limit_for("bash"), None);
        let config = Config::parse(
            "[limits]\ntool_timeout = 30\n[limits.tool_timeouts]\nbash = 600\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let timeouts = config.limits.tool_timeouts();
        assert!(timeouts.ends_run);
        assert_eq!(timeouts.limit_for("bash"), Some(Duration::from_secs(600)));
        assert_eq!(timeouts.limit_for("read"), Some(Duration::from_secs(30)));
        for bad in ["tool_timeout = 0", "[limits.tool_timeouts]\nbash = -1"] {
            let err = Config::parse(&format!("[limits]\n{bad}\n"), Path::new("c.toml"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("not a number of seconds above 0"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn wrong_type_names_the_file() {
        let err = Config::parse("thinking = 3\n", Path::new("/x/config.toml")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("/x/config.toml"), "{msg}");
        assert!(msg.contains("thinking"), "{msg}");

        let err = Config::parse(
            "[providers.p]\nmodels = [{ id = \"m\", context_window = \"big\" }]\n",
            Path::new("c.toml"),
        )
        .unwrap_err();
        assert!(matches!(err, ConfigError::Parse { .. }));
    }

    #[test]
    fn invalid_toml_is_an_error() {
        let err = Config::parse("default_model = \n", Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().starts_with("invalid config file c.toml"));
    }

    #[test]
    fn unknown_keys_are_ignored() {
        let text = "future_key = 1\n[providers.openai]\nfuture = true\n[keymaps]\nx = 1\n";
        let config = Config::parse(text, Path::new("c.toml")).unwrap();
        assert!(config.providers.contains_key("openai"));
        assert_eq!(config.default_model, None);
    }

    #[test]
    fn model_without_id_is_an_error() {
        let text = "[[providers.p.models]]\nname = \"x\"\n";
        assert!(Config::parse(text, Path::new("c.toml")).is_err());
    }

    #[test]
    fn memory_table_has_defaults_and_overrides() {
        let config = Config::parse("", Path::new("c.toml")).unwrap();
        assert!(config.memory.enabled);
        assert_eq!(config.memory.project_file, Path::new(".march/memory.md"));
        assert_eq!(config.memory.budget_tokens, 4000);
        let text = "[memory]\nproject_file = \"docs/MEMORY.md\"\nbudget_tokens = 500\n";
        let config = Config::parse(text, Path::new("c.toml")).unwrap();
        assert!(config.memory.enabled);
        assert_eq!(config.memory.project_file, Path::new("docs/MEMORY.md"));
        assert_eq!(config.memory.budget_tokens, 500);
        let config = Config::parse("[memory]\nenabled = false\n", Path::new("c.toml")).unwrap();
        assert!(!config.memory.enabled);
        assert!(Config::parse("[memory]\nbudget_tokens = -1\n", Path::new("c.toml")).is_err());
    }

    #[test]
    fn missing_file_is_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let paths = MarchPaths::at(dir.path());
        assert_eq!(Config::load(&paths).unwrap(), Config::default());
        std::fs::write(paths.config_file(), "default_model = \"a/b\"\n").unwrap();
        let config = Config::load(&paths).unwrap();
        assert_eq!(config.default_model.as_deref(), Some("a/b"));
    }
}
