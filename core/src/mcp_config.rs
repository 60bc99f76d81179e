//! MCP servers as the user keeps them: the `[mcp]` table of `config.toml`, a project's
//! `.mcp.json` (Claude Code's format) and the list an ACP client sends in `session/new`, all
//! read into one [`McpServerDef`] each.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// The project file that lists MCP servers in Claude Code's format.
pub const PROJECT_FILE: &str = ".mcp.json";

/// The `[mcp]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct McpConfig {
    /// Seconds a server gets to start and answer the handshake.
    pub start_timeout: f64,
    /// Seconds one tool call may take before it is cancelled and the model told so.
    pub call_timeout: f64,
    /// Whether a project's `.mcp.json` is offered (it is still asked for once per project).
    pub project_servers: bool,
    /// `[mcp.servers.<name>]` tables.
    pub servers: BTreeMap<String, McpServerConfig>,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            start_timeout: 30.0,
            call_timeout: 300.0,
            project_servers: true,
            servers: BTreeMap::new(),
        }
    }
}

/// One `[mcp.servers.<name>]` table: a program to run (`command`) or a server to reach
/// (`url`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program, spoken to over stdio.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables it gets besides March's own.
    pub env: BTreeMap<String, String>,
    /// Its working directory (default: the project's).
    pub cwd: Option<PathBuf>,
    /// A streamable HTTP endpoint instead of a program.
    pub url: Option<String>,
    /// HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// An environment variable holding a bearer token for `Authorization`.
    pub bearer_token_env_var: Option<String>,
    /// Whether it is used.
    pub enabled: bool,
    /// Seconds to start (over `[mcp] start_timeout`).
    pub start_timeout: Option<f64>,
    /// Seconds per call (over `[mcp] call_timeout`).
    pub call_timeout: Option<f64>,
    /// Only these of its tools are offered, when given.
    pub enabled_tools: Option<Vec<String>>,
    /// These of its tools are never offered.
    pub disabled_tools: Vec<String>,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        McpServerConfig {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            bearer_token_env_var: None,
            enabled: true,
            start_timeout: None,
            call_timeout: None,
            enabled_tools: None,
            disabled_tools: Vec::new(),
        }
    }
}

/// How March reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process spoken to over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
        /// Its working directory (`None`: the project's).
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint.
        url: String,
        /// Headers for every request (a bearer token among them).
        headers: BTreeMap<String, String>,
    },
}

impl McpTransport {
    /// `stdio` or `http`, for lists.
    pub fn label(&self) -> &'static str {
        match self {
            McpTransport::Stdio { .. } => "stdio",
            McpTransport::Http { .. } => "http",
        }
    }

    /// The command line or the URL, for lists.
    pub fn target(&self) -> String {
        match self {
            McpTransport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            McpTransport::Http { url, .. } => url.clone(),
        }
    }
}

/// Where a server was configured; a later source hides an earlier one of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum McpOrigin {
    /// `config.toml`.
    Config,
    /// The project's `.mcp.json`.
    Project,
    /// The ACP client, in `session/new`.
    Client,
}

impl McpOrigin {
    /// Where, in words.
    pub fn describe(self) -> &'static str {
        match self {
            McpOrigin::Config => "config.toml",
            McpOrigin::Project => ".mcp.json",
            McpOrigin::Client => "the client",
        }
    }
}

/// One server as it will be started.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerDef {
    /// Its name, in its tools' names (`mcp__<name>__<tool>`).
    pub name: String,
    /// How it is reached.
    pub transport: McpTransport,
    /// How long it gets to start.
    pub start_timeout: Duration,
    /// How long one call may take.
    pub call_timeout: Duration,
    /// Only these tools, when given.
    pub enabled_tools: Option<Vec<String>>,
    /// Never these tools.
    pub disabled_tools: Vec<String>,
    /// Where it was configured.
    pub origin: McpOrigin,
}

impl McpServerDef {
    /// A server with the default limits and every tool offered.
    pub fn new(name: impl Into<String>, transport: McpTransport, origin: McpOrigin) -> Self {
        let defaults = McpConfig::default();
        McpServerDef {
            name: name.into(),
            transport,
            start_timeout: Duration::from_secs_f64(defaults.start_timeout),
            call_timeout: Duration::from_secs_f64(defaults.call_timeout),
            enabled_tools: None,
            disabled_tools: Vec::new(),
            origin,
        }
    }

    /// Whether tool `name` (the server's own name for it) is offered.
    pub fn offers(&self, name: &str) -> bool {
        let allowed = self
            .enabled_tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == name));
        allowed && !self.disabled_tools.iter().any(|t| t == name)
    }
}

/// A server entry that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("MCP server {name}: {reason}")]
pub struct McpConfigError {
    /// The server.
    pub name: String,
    /// What is wrong.
    pub reason: String,
}

impl McpConfig {
    /// The enabled servers of `[mcp.servers]`, each ready to start or with what is wrong
    /// with it; `env` looks up environment variables (bearer tokens).
    pub fn servers(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Vec<Result<McpServerDef, McpConfigError>> {
        self.servers
            .iter()
            .filter(|(_, s)| s.enabled)
            .map(|(name, s)| self.def(name, s, env))
            .collect()
    }

    fn def(
        &self,
        name: &str,
        s: &McpServerConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<McpServerDef, McpConfigError> {
        let error = |reason: String| McpConfigError {
            name: name.to_string(),
            reason,
        };
        let transport = match (&s.command, &s.url) {
            (Some(command), None) => McpTransport::Stdio {
                command: command.clone(),
                args: s.args.clone(),
                env: s.env.clone(),
                cwd: s.cwd.clone(),
            },
            (None, Some(url)) => {
                let mut headers = s.headers.clone();
                if let Some(var) = &s.bearer_token_env_var {
                    let token = env(var)
                        .filter(|t| !t.is_empty())
                        .ok_or_else(|| error(format!("bearer_token_env_var {var} is not set")))?;
                    headers.insert("Authorization".to_string(), format!("Bearer {token}"));
                }
                McpTransport::Http {
                    url: url.clone(),
                    headers,
                }
            }
            (Some(_), Some(_)) => return Err(error("give `command` or `url`, not both".into())),
            (None, None) => return Err(error("give `command` (stdio) or `url` (http)".into())),
        };
        let seconds = |own: Option<f64>, default: f64, key: &str| {
            let secs = own.unwrap_or(default);
            if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 {
                Ok(Duration::from_secs_f64(secs))
            } else {
                Err(error(format!(
                    "{key}: {secs} is not a number of seconds above 0 and at most 86400"
                )))
            }
        };
        Ok(McpServerDef {
            name: name.to_string(),
            transport,
            start_timeout: seconds(s.start_timeout, self.start_timeout, "start_timeout")?,
            call_timeout: seconds(s.call_timeout, self.call_timeout, "call_timeout")?,
            enabled_tools: s.enabled_tools.clone(),
            disabled_tools: s.disabled_tools.clone(),
            origin: McpOrigin::Config,
        })
    }

    /// [`McpServerDef::new`]'s limits taken from this table (values out of range are left
    /// at the defaults, as a config server's would be refused).
    pub fn with_limits(&self, mut def: McpServerDef) -> McpServerDef {
        let usable = |secs: f64| secs.is_finite() && secs > 0.0 && secs <= 86_400.0;
        if usable(self.start_timeout) {
            def.start_timeout = Duration::from_secs_f64(self.start_timeout);
        }
        if usable(self.call_timeout) {
            def.call_timeout = Duration::from_secs_f64(self.call_timeout);
        }
        def
    }
}

/// One entry of `.mcp.json` (Claude Code's format).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProjectEntry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProjectFile {
    #[serde(default)]
    mcp_servers: BTreeMap<String, serde_json::Value>,
}

/// The servers of a project's `.mcp.json`: each ready to start or with what is wrong with
/// it. `${VAR}` and `${VAR:-default}` in commands, arguments, environment, URLs and headers
/// are expanded from `env`, as Claude Code does. A file that is not JSON is an error.
pub fn project_servers(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Result<McpServerDef, McpConfigError>>, String> {
    let file: ProjectFile =
        serde_json::from_str(text).map_err(|e| format!("invalid .mcp.json: {e}"))?;
    Ok(file
        .mcp_servers
        .into_iter()
        .map(|(name, value)| project_server(&name, value, env))
        .collect())
}

fn project_server(
    name: &str,
    value: serde_json::Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<McpServerDef, McpConfigError> {
    let error = |reason: String| McpConfigError {
        name: name.to_string(),
        reason,
    };
    let entry: ProjectEntry =
        serde_json::from_value(value).map_err(|e| error(format!("in .mcp.json: {e}")))?;
    let x = |s: &str| expand_vars(s, env);
    let map = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
        m.iter().map(|(k, v)| (k.clone(), x(v))).collect()
    };
    let transport = match (entry.kind.as_deref(), &entry.command, &entry.url) {
        (None | Some("stdio"), Some(command), None) => McpTransport::Stdio {
            command: x(command),
            args: entry.args.iter().map(|a| x(a)).collect(),
            env: map(&entry.env),
            cwd: None,
        },
        (None | Some("http"), None, Some(url)) => McpTransport::Http {
            url: x(url),
            headers: map(&entry.headers),
        },
        (Some("sse"), _, _) => {
            return Err(error(
                "the legacy SSE transport is not supported; use the server's streamable HTTP \
                 endpoint (\"type\": \"http\")"
                    .into(),
            ));
        }
        (Some(other), _, _) if !matches!(other, "stdio" | "http") => {
            return Err(error(format!("unknown transport type {other:?}")));
        }
        _ => return Err(error("give `command` (stdio) or `url` (http)".into())),
    };
    Ok(McpServerDef::new(name, transport, McpOrigin::Project))
}

/// `${VAR}` and `${VAR:-default}` replaced from `env`; an unset variable without a default
/// becomes empty.
fn expand_vars(s: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((var, default)) => (var, Some(default)),
            None => (inner, None),
        };
        let value = env(var).filter(|v| !v.is_empty() || default.is_none());
        out.push_str(&value.or(default.map(str::to_string)).unwrap_or_default());
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(var: &str) -> Option<String> {
        match var {
            "TOKEN" => Some("s3cret".into()),
            "HOME" => Some("/home/u".into()),
            _ => None,
        }
    }

    #[test]
    fn config_servers_become_definitions_with_their_limits() {
        let config: McpConfig = toml::from_str(
            r#"
            call_timeout = 60
            [servers.files]
            command = "npx"
            args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
            env = { DEBUG = "1" }
            disabled_tools = ["write_file"]
            [servers.remote]
            url = "https://example.com/mcp"
            bearer_token_env_var = "TOKEN"
            headers = { "X-Team" = "a" }
            start_timeout = 5
            [servers.off]
            command = "x"
            enabled = false
            "#,
        )
        .unwrap();
        let defs: Vec<_> = config
            .servers(&env)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(defs.len(), 2, "the disabled one is left out");
        assert_eq!(defs[0].name, "files");
        assert_eq!(defs[0].call_timeout, Duration::from_secs(60));
        assert!(defs[0].offers("read_file") && !defs[0].offers("write_file"));
        assert_eq!(
            defs[0].transport.target(),
            "npx -y @modelcontextprotocol/server-filesystem ."
        );
        let McpTransport::Http { url, headers } = &defs[1].transport else {
            panic!("http")
        };
        assert_eq!(url, "https://example.com/mcp");
        assert_eq!(headers["Authorization"], "Bearer s3cret");
        assert_eq!(headers["X-Team"], "a");
        assert_eq!(defs[1].start_timeout, Duration::from_secs(5));
    }

    #[test]
    fn a_broken_entry_is_an_error_of_its_own() {
        let config: McpConfig = toml::from_str(
            r#"
            [servers.both]
            command = "x"
            url = "http://y"
            [servers.none]
            [servers.token]
            url = "http://y"
            bearer_token_env_var = "MISSING"
            [servers.slow]
            command = "x"
            call_timeout = 0
            [servers.fine]
            command = "x"
            enabled_tools = ["a"]
            "#,
        )
        .unwrap();
        let results = config.servers(&env);
        let errors: Vec<String> = results
            .iter()
            .filter_map(|r| r.as_ref().err().map(ToString::to_string))
            .collect();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("MISSING is not set")));
        assert!(errors.iter().any(|e| e.contains("not both")));
        let fine = results.iter().find_map(|r| r.as_ref().ok()).unwrap();
        assert!(fine.offers("a") && !fine.offers("b"));
        assert!(toml::from_str::<McpConfig>("[servers.x]\ncomand = \"typo\"").is_err());
    }

    #[test]
    fn claude_codes_mcp_json_is_read_with_variables_expanded() {
        let text = r#"{
          "mcpServers": {
            "db": {"command": "${HOME}/bin/db-mcp", "args": ["--token", "${TOKEN}"],
                   "env": {"LEVEL": "${LEVEL:-info}"}},
            "docs": {"type": "http", "url": "https://docs.example/mcp",
                     "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "old": {"type": "sse", "url": "https://old.example/sse"},
            "bad": {"args": []}
          }
        }"#;
        let servers = project_servers(text, &env).unwrap();
        let ok: Vec<&McpServerDef> = servers.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(ok.len(), 2);
        let db = ok.iter().find(|d| d.name == "db").unwrap();
        assert_eq!(
            db.transport,
            McpTransport::Stdio {
                command: "/home/u/bin/db-mcp".into(),
                args: vec!["--token".into(), "s3cret".into()],
                env: BTreeMap::from([("LEVEL".into(), "info".into())]),
                cwd: None,
            }
        );
        assert_eq!(db.origin, McpOrigin::Project);
        let docs = ok.iter().find(|d| d.name == "docs").unwrap();
        assert_eq!(docs.transport.target(), "https://docs.example/mcp");
        let errors: Vec<String> = servers
            .iter()
            .filter_map(|r| r.as_ref().err().map(ToString::to_string))
            .collect();
        assert!(
            errors
                .iter()
                .any(|e| e.contains("old") && e.contains("SSE")),
            "{errors:?}"
        );
        assert!(project_servers("{not json", &env).is_err());
    }

    #[test]
    fn variables_expand_like_a_shell_s() {
        assert_eq!(expand_vars("a${TOKEN}b", &env), "as3cretb");
        assert_eq!(expand_vars("${NOPE}", &env), "");
        assert_eq!(expand_vars("${NOPE:-x}", &env), "x");
        assert_eq!(expand_vars("${TOKEN:-x}", &env), "s3cret");
        assert_eq!(expand_vars("unclosed ${X", &env), "unclosed ${X");
    }
}
