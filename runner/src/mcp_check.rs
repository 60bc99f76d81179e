//! The MCP servers a session in a directory would get, for `march mcp list | get`: their
//! definitions read as a session reads them, and each started once (as a session would, in
//! parallel, within its start timeout, without restarts) to check it. The runner side of
//! the binary owns this, as it owns every running tool.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use march_core::mcp_config::{
    McpConfig, McpServerDef, McpTransport, PROJECT_FILE as PROJECT_MCP_FILE, project_servers,
};
use march_core::mcp_trust::McpTrust;
use march_core::restart::RestartPolicy;
use march_tools::mcp::{McpHub, ServerPhase};
use serde::Serialize;

/// What an entry's state is before it was started.
pub const NOT_CHECKED: &str = "not checked";
/// The state of a project's server whose `.mcp.json` was never answered.
pub const NOT_TRUSTED: &str = "not trusted yet";

/// One server as `march mcp list` and `get` show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpEntry {
    /// Its name.
    pub name: String,
    /// `config.toml` or `.mcp.json`.
    pub origin: String,
    /// `stdio` or `http`, when its definition is usable.
    pub transport: Option<String>,
    /// Its command line or URL.
    pub target: Option<String>,
    /// `ready`, `failed`, `disabled in config`, `invalid`, [`NOT_TRUSTED`], [`NOT_CHECKED`]…
    pub state: String,
    /// Its tools as the model sees them (once started).
    pub tools: Vec<String>,
    /// Its prompts as slash commands (once started).
    pub prompts: Vec<String>,
    /// What is wrong with it.
    pub error: Option<String>,
    /// How it is defined, line by line (environment and header values left out: they may
    /// be secrets).
    pub details: Vec<(String, String)>,
    #[serde(skip)]
    def: Option<McpServerDef>,
}

impl McpEntry {
    fn new(name: &str, origin: &str, def: Option<McpServerDef>, state: &str) -> McpEntry {
        McpEntry {
            name: name.to_string(),
            origin: origin.to_string(),
            transport: def.as_ref().map(|d| d.transport.label().to_string()),
            target: def.as_ref().map(|d| d.transport.target()),
            state: state.to_string(),
            tools: Vec::new(),
            prompts: Vec::new(),
            error: None,
            details: def.as_ref().map(details).unwrap_or_default(),
            def,
        }
    }

    fn invalid(name: &str, origin: &str, error: String) -> McpEntry {
        let mut entry = McpEntry::new(name, origin, None, "invalid");
        entry.error = Some(error);
        entry
    }
}

/// A definition as `key: value` lines.
fn details(def: &McpServerDef) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut add = |k: &str, v: String| out.push((k.to_string(), v));
    match &def.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            add("transport", "stdio".into());
            add("command", command.clone());
            if !args.is_empty() {
                add("args", args.join(" "));
            }
            if !env.is_empty() {
                add("env", env.keys().cloned().collect::<Vec<_>>().join(", "));
            }
            if let Some(cwd) = cwd {
                add("cwd", cwd.display().to_string());
            }
        }
        McpTransport::Http { url, headers } => {
            add("transport", "streamable HTTP".into());
            add("url", url.clone());
            if !headers.is_empty() {
                add(
                    "headers",
                    headers.keys().cloned().collect::<Vec<_>>().join(", "),
                );
            }
        }
    }
    add(
        "timeouts",
        format!(
            "{} s to start, {} s per call",
            def.start_timeout.as_secs_f64(),
            def.call_timeout.as_secs_f64()
        ),
    );
    if let Some(only) = &def.enabled_tools {
        add("only tools", only.join(", "));
    }
    if !def.disabled_tools.is_empty() {
        add("never tools", def.disabled_tools.join(", "));
    }
    out
}

/// Every server a session started in `cwd` would know of from `config` and the project's
/// `.mcp.json` (with the answer about it in `trust_file`), in the order a session takes them.
pub fn entries(config: &McpConfig, cwd: &Path, trust_file: &Path) -> Vec<McpEntry> {
    let env = |var: &str| std::env::var(var).ok();
    let mut out = Vec::new();
    for (name, server) in &config.servers {
        if !server.enabled {
            out.push(McpEntry::new(
                name,
                "config.toml",
                None,
                "disabled in config",
            ));
            continue;
        }
        let mut one = config.clone();
        one.servers = BTreeMap::from([(name.clone(), server.clone())]);
        match one.servers(&env).pop() {
            Some(Ok(def)) => out.push(McpEntry::new(name, "config.toml", Some(def), NOT_CHECKED)),
            Some(Err(e)) => out.push(McpEntry::invalid(name, "config.toml", e.reason)),
            None => {}
        }
    }
    if !config.project_servers {
        return out;
    }
    let Ok(text) = std::fs::read_to_string(cwd.join(PROJECT_MCP_FILE)) else {
        return out;
    };
    let state = match McpTrust::load(trust_file).answer(cwd, &text) {
        Some(true) => NOT_CHECKED,
        Some(false) => "refused for this project",
        None => NOT_TRUSTED,
    };
    match project_servers(&text, &env) {
        Ok(servers) => {
            for server in servers {
                match server {
                    Ok(def) => {
                        let name = def.name.clone();
                        let def = config.with_limits(def);
                        out.push(McpEntry::new(&name, PROJECT_MCP_FILE, Some(def), state));
                    }
                    Err(e) => out.push(McpEntry::invalid(&e.name, PROJECT_MCP_FILE, e.reason)),
                }
            }
        }
        Err(e) => out.push(McpEntry::invalid(PROJECT_MCP_FILE, PROJECT_MCP_FILE, e)),
    }
    out
}

/// Start the entries not yet checked (as one session in `cwd` would: in parallel, each
/// within its start timeout, no restarts), record what each offers or why it failed, and
/// stop them.
pub async fn check(cwd: &Path, entries: &mut [McpEntry]) {
    let defs: Vec<McpServerDef> = entries
        .iter()
        .filter(|e| e.state == NOT_CHECKED)
        .filter_map(|e| e.def.clone())
        .collect();
    if defs.is_empty() {
        return;
    }
    let once = RestartPolicy {
        max_attempts: 0,
        initial_backoff: Duration::from_secs(1),
        max_backoff: Duration::from_secs(1),
        healthy_after: Duration::from_secs(60),
    };
    let hub = McpHub::with_policy(cwd.to_path_buf(), defs, Vec::new(), Arc::new(|_| {}), once);
    hub.ensure_started().await;
    let status = hub.status();
    hub.shutdown().await;
    for s in status {
        let Some(entry) = entries
            .iter_mut()
            .find(|e| e.name == s.name && e.state == NOT_CHECKED)
        else {
            continue;
        };
        entry.state = if s.phase == ServerPhase::Ready && s.last_error.is_none() {
            "ready"
        } else {
            "failed"
        }
        .to_string();
        entry.tools = s.tools;
        entry.prompts = s.prompts;
        entry.error = s.last_error;
    }
}
