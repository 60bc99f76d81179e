//! `march mcp list | get | add | remove`: the MCP servers a session in this directory gets,
//! checked by starting them as a session would; servers added to and removed from
//! config.toml line-wise, the rest of the file kept.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use march_core::config::Config;
use march_core::mcp_config::{McpServerDef, McpTransport, project_servers};
use march_core::mcp_trust::McpTrust;
use march_core::paths::MarchPaths;
use march_core::restart::RestartPolicy;
use march_tools::mcp::{McpHub, ServerPhase, ServerStatus};
use serde::Serialize;

use crate::cli::{McpAddArgs, McpCommand, McpGetArgs, McpListArgs};
use crate::config_file;

/// The project file of Claude Code's format.
const PROJECT_FILE: &str = ".mcp.json";

/// Run a `march mcp` subcommand.
pub fn run(paths: &MarchPaths, command: &McpCommand) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List(args) => list(paths, args),
        McpCommand::Get(args) => get(paths, args),
        McpCommand::Add(args) => add(paths, args),
        McpCommand::Remove(arg) => remove(paths, &arg.name),
    }
}

/// One server as `list` and `get` show it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    name: String,
    /// `config.toml` or `.mcp.json`.
    origin: String,
    transport: Option<String>,
    target: Option<String>,
    /// `ready`, `failed`, `disabled in config`, `not trusted`, `not checked`…
    state: String,
    tools: Vec<String>,
    prompts: Vec<String>,
    error: Option<String>,
    #[serde(skip)]
    def: Option<McpServerDef>,
}

impl Entry {
    fn new(name: &str, origin: &str, def: Option<McpServerDef>, state: &str) -> Entry {
        Entry {
            name: name.to_string(),
            origin: origin.to_string(),
            transport: def.as_ref().map(|d| d.transport.label().to_string()),
            target: def.as_ref().map(|d| d.transport.target()),
            state: state.to_string(),
            tools: Vec::new(),
            prompts: Vec::new(),
            error: None,
            def,
        }
    }
}

/// Every server a session started here would know of, in the order a session takes them.
fn entries(paths: &MarchPaths, cwd: &Path) -> anyhow::Result<Vec<Entry>> {
    let config = Config::load(paths).context("cannot read the config")?;
    let env = |var: &str| std::env::var(var).ok();
    let mut out = Vec::new();
    for (name, server) in &config.mcp.servers {
        if !server.enabled {
            out.push(Entry::new(name, "config.toml", None, "disabled in config"));
            continue;
        }
        let mut one = config.mcp.clone();
        one.servers = BTreeMap::from([(name.clone(), server.clone())]);
        match one.servers(&env).pop() {
            Some(Ok(def)) => out.push(Entry::new(name, "config.toml", Some(def), "not checked")),
            Some(Err(e)) => {
                let mut entry = Entry::new(name, "config.toml", None, "invalid");
                entry.error = Some(e.reason);
                out.push(entry);
            }
            None => {}
        }
    }
    let file = cwd.join(PROJECT_FILE);
    if !config.mcp.project_servers {
        return Ok(out);
    }
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(out);
    };
    let trust = McpTrust::load(&paths.mcp_trust_file()).answer(cwd, &text);
    let state = match trust {
        Some(true) => "not checked",
        Some(false) => "refused for this project",
        None => "not trusted yet",
    };
    match project_servers(&text, &env) {
        Ok(servers) => {
            for server in servers {
                match server {
                    Ok(def) => {
                        let name = def.name.clone();
                        let def = config.mcp.with_limits(def);
                        out.push(Entry::new(&name, PROJECT_FILE, Some(def), state));
                    }
                    Err(e) => {
                        let mut entry = Entry::new(&e.name, PROJECT_FILE, None, "invalid");
                        entry.error = Some(e.reason);
                        out.push(entry);
                    }
                }
            }
        }
        Err(e) => {
            let mut entry = Entry::new(PROJECT_FILE, PROJECT_FILE, None, "invalid");
            entry.error = Some(e);
            out.push(entry);
        }
    }
    Ok(out)
}

/// Start the checkable entries (as one session would, in parallel, each within its start
/// timeout, without restarts) and fill in what they offer.
fn check(cwd: &Path, entries: &mut [Entry]) -> anyhow::Result<()> {
    let defs: Vec<McpServerDef> = entries
        .iter()
        .filter(|e| e.state == "not checked")
        .filter_map(|e| e.def.clone())
        .collect();
    if defs.is_empty() {
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let status: Vec<ServerStatus> = runtime.block_on(async {
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
        status
    });
    for s in status {
        let Some(entry) = entries
            .iter_mut()
            .find(|e| e.name == s.name && e.state == "not checked")
        else {
            continue;
        };
        entry.state = match s.phase {
            ServerPhase::Ready | ServerPhase::Stopped if s.last_error.is_none() => "ready",
            _ => "failed",
        }
        .to_string();
        entry.tools = s.tools;
        entry.prompts = s.prompts;
        entry.error = s.last_error;
    }
    Ok(())
}

fn cwd() -> anyhow::Result<PathBuf> {
    let dir = std::env::current_dir().context("cannot read the current directory")?;
    Ok(dir.canonicalize().unwrap_or(dir))
}

fn list(paths: &MarchPaths, args: &McpListArgs) -> anyhow::Result<ExitCode> {
    let cwd = cwd()?;
    let mut entries = entries(paths, &cwd)?;
    if !args.no_check {
        check(&cwd, &mut entries)?;
    }
    if args.json {
        for e in &entries {
            println!("{}", serde_json::to_string(e)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        println!(
            "No MCP servers in {} or {}.\nAdd one: march mcp add NAME -- COMMAND [ARGS...]   or   march mcp add NAME --url URL",
            paths.config_file().display(),
            cwd.join(PROJECT_FILE).display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            vec![
                e.name.clone(),
                e.state.clone(),
                if e.state == "ready" {
                    e.tools.len().to_string()
                } else {
                    "-".to_string()
                },
                e.origin.clone(),
                format!(
                    "{} {}",
                    e.transport.as_deref().unwrap_or(""),
                    e.target.as_deref().unwrap_or("")
                )
                .trim()
                .to_string(),
            ]
        })
        .collect();
    print!(
        "{}",
        crate::table::render(&["NAME", "STATE", "TOOLS", "FROM", "SERVER"], &rows)
    );
    for e in &entries {
        if let Some(error) = &e.error {
            println!("{}: {}", e.name, one_line(error));
        } else if e.state == "not trusted yet" {
            println!(
                "{}: a session here asks whether to trust {PROJECT_FILE} before it starts it",
                e.name
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn get(paths: &MarchPaths, args: &McpGetArgs) -> anyhow::Result<ExitCode> {
    let cwd = cwd()?;
    let mut entries = entries(paths, &cwd)?;
    // A later definition of a name (the project's) is the one a session uses.
    let Some(at) = entries.iter().rposition(|e| e.name == args.name) else {
        eprintln!("march: no MCP server named {}", args.name);
        return Ok(ExitCode::FAILURE);
    };
    let mut entry = entries.swap_remove(at);
    if !args.no_check {
        check(&cwd, std::slice::from_mut(&mut entry))?;
    }
    let from = if entry.origin == PROJECT_FILE {
        cwd.join(PROJECT_FILE)
    } else {
        paths.config_file()
    };
    println!("{}", entry.name);
    println!("  defined in: {}", from.display());
    println!("  state: {}", entry.state);
    if let Some(def) = &entry.def {
        match &def.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                println!("  transport: stdio");
                println!("  command: {command}");
                if !args.is_empty() {
                    println!("  args: {}", args.join(" "));
                }
                // Values may be secrets: only the names.
                if !env.is_empty() {
                    let keys: Vec<&str> = env.keys().map(String::as_str).collect();
                    println!("  env: {}", keys.join(", "));
                }
                if let Some(cwd) = cwd {
                    println!("  cwd: {}", cwd.display());
                }
            }
            McpTransport::Http { url, headers } => {
                println!("  transport: streamable HTTP");
                println!("  url: {url}");
                if !headers.is_empty() {
                    let keys: Vec<&str> = headers.keys().map(String::as_str).collect();
                    println!("  headers: {}", keys.join(", "));
                }
            }
        }
        println!(
            "  timeouts: {} s to start, {} s per call",
            def.start_timeout.as_secs_f64(),
            def.call_timeout.as_secs_f64()
        );
        if let Some(only) = &def.enabled_tools {
            println!("  only tools: {}", only.join(", "));
        }
        if !def.disabled_tools.is_empty() {
            println!("  never tools: {}", def.disabled_tools.join(", "));
        }
    }
    if !entry.tools.is_empty() {
        println!("  tools: {}", entry.tools.join(", "));
    }
    if !entry.prompts.is_empty() {
        let commands: Vec<String> = entry.prompts.iter().map(|p| format!("/{p}")).collect();
        println!("  prompts: {}", commands.join(" "));
    }
    if let Some(error) = &entry.error {
        println!("  error: {}", one_line(error));
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `name` can be a server's name: it is a TOML bare key and part of tool names.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `KEY = value` for an inline table.
fn inline_table(pairs: &[(String, String)]) -> String {
    let items: Vec<String> = pairs
        .iter()
        .map(|(k, v)| {
            let key = if valid_name(k) {
                k.clone()
            } else {
                config_file::toml_string(k)
            };
            format!("{key} = {}", config_file::toml_string(v))
        })
        .collect();
    format!("{{ {} }}", items.join(", "))
}

/// The `[mcp.servers.NAME]` table's lines for `args`.
fn table_body(args: &McpAddArgs) -> anyhow::Result<String> {
    let mut body = String::new();
    match (&args.url, args.command.split_first()) {
        (Some(url), None) => {
            body.push_str(&format!("url = {}\n", config_file::toml_string(url)));
            let mut headers = Vec::new();
            for h in &args.headers {
                let Some((name, value)) = h.split_once(':') else {
                    bail!("header {h:?} is not NAME: VALUE");
                };
                headers.push((name.trim().to_string(), value.trim().to_string()));
            }
            if !headers.is_empty() {
                body.push_str(&format!("headers = {}\n", inline_table(&headers)));
            }
            if let Some(var) = &args.bearer_token_env_var {
                body.push_str(&format!(
                    "bearer_token_env_var = {}\n",
                    config_file::toml_string(var)
                ));
            }
        }
        (None, Some((command, rest))) => {
            body.push_str(&format!(
                "command = {}\n",
                config_file::toml_string(command)
            ));
            if !rest.is_empty() {
                let items: Vec<String> = rest.iter().map(|a| config_file::toml_string(a)).collect();
                body.push_str(&format!("args = [{}]\n", items.join(", ")));
            }
        }
        (Some(_), Some(_)) => bail!("give --url or a command after --, not both"),
        (None, None) => bail!(
            "give the server's command after --: march mcp add {} -- COMMAND [ARGS...] (or --url URL)",
            args.name
        ),
    }
    let mut env = Vec::new();
    for e in &args.env {
        let Some((key, value)) = e.split_once('=') else {
            bail!("environment variable {e:?} is not KEY=VALUE");
        };
        env.push((key.to_string(), value.to_string()));
    }
    if !env.is_empty() {
        body.push_str(&format!("env = {}\n", inline_table(&env)));
    }
    for (key, secs) in [
        ("start_timeout", args.start_timeout),
        ("call_timeout", args.call_timeout),
    ] {
        if let Some(secs) = secs {
            body.push_str(&format!("{key} = {}\n", toml::Value::Float(secs)));
        }
    }
    Ok(body)
}

fn add(paths: &MarchPaths, args: &McpAddArgs) -> anyhow::Result<ExitCode> {
    if !valid_name(&args.name) {
        bail!(
            "{:?} cannot be a server's name: use letters, digits, _ and - (at most 40)",
            args.name
        );
    }
    let file = paths.config_file();
    let text = config_file::read(&file).map_err(anyhow::Error::msg)?;
    let config = Config::parse(&text, &file).context("config.toml does not load as it is")?;
    if config.mcp.servers.contains_key(&args.name) {
        bail!(
            "{} already has MCP server {}: remove it first (march mcp remove {})",
            file.display(),
            args.name,
            args.name
        );
    }
    let body = table_body(args)?;
    let mut new = text;
    config_file::append_table(&mut new, &format!("mcp.servers.{}", args.name), &body);
    config_file::write(&file, &new).map_err(anyhow::Error::msg)?;
    println!(
        "Added MCP server {} to {}; its tools are mcp__{}__<tool> in sessions started from now.",
        args.name,
        file.display(),
        args.name
    );
    Ok(ExitCode::SUCCESS)
}

fn remove(paths: &MarchPaths, name: &str) -> anyhow::Result<ExitCode> {
    let file = paths.config_file();
    let text = config_file::read(&file).map_err(anyhow::Error::msg)?;
    let config = Config::parse(&text, &file).context("config.toml does not load as it is")?;
    if !config.mcp.servers.contains_key(name) {
        let project = cwd()?.join(PROJECT_FILE);
        let in_project = std::fs::read_to_string(&project)
            .ok()
            .and_then(|t| project_servers(&t, &|_| None).ok())
            .is_some_and(|s| {
                s.iter().any(|d| match d {
                    Ok(d) => d.name == name,
                    Err(e) => e.name == name,
                })
            });
        if in_project {
            eprintln!(
                "march: {name} is defined in {}, which is the project's: edit it there",
                project.display()
            );
        } else {
            eprintln!("march: {} has no MCP server {name}", file.display());
        }
        return Ok(ExitCode::FAILURE);
    }
    let Some(new) = config_file::remove_table(&text, &format!("mcp.servers.{name}")) else {
        bail!(
            "MCP server {name} is not written as a [mcp.servers.{name}] table in {}: edit it by hand",
            file.display()
        );
    };
    config_file::write(&file, &new).map_err(anyhow::Error::msg)?;
    println!("Removed MCP server {name} from {}.", file.display());
    Ok(ExitCode::SUCCESS)
}

/// A message on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add_args(name: &str) -> McpAddArgs {
        McpAddArgs {
            name: name.to_string(),
            url: None,
            env: Vec::new(),
            headers: Vec::new(),
            bearer_token_env_var: None,
            start_timeout: None,
            call_timeout: None,
            command: Vec::new(),
        }
    }

    #[test]
    fn a_command_server_is_written_as_a_table_that_loads_back() {
        let mut args = add_args("db");
        args.command = vec!["npx".into(), "-y".into(), "db \"mcp\"".into()];
        args.env = vec!["TOKEN=a=b".into(), "my.var=1".into()];
        args.start_timeout = Some(10.0);
        let body = table_body(&args).unwrap();
        assert_eq!(
            body,
            "command = \"npx\"\nargs = [\"-y\", 'db \"mcp\"']\n\
             env = { TOKEN = \"a=b\", \"my.var\" = \"1\" }\nstart_timeout = 10.0\n"
        );
        let mut text = String::new();
        config_file::append_table(&mut text, "mcp.servers.db", &body);
        let config = Config::parse(&text, Path::new("config.toml")).unwrap();
        let db = &config.mcp.servers["db"];
        assert_eq!(db.args[1], "db \"mcp\"");
        assert_eq!(db.env["my.var"], "1");
    }

    #[test]
    fn an_http_server_takes_headers_and_a_bearer_variable_and_bad_input_is_refused() {
        let mut args = add_args("web");
        args.url = Some("https://mcp.example.com/mcp".into());
        args.headers = vec!["X-Team: core".into()];
        args.bearer_token_env_var = Some("WEB_TOKEN".into());
        assert_eq!(
            table_body(&args).unwrap(),
            "url = \"https://mcp.example.com/mcp\"\nheaders = { X-Team = \"core\" }\n\
             bearer_token_env_var = \"WEB_TOKEN\"\n"
        );
        args.headers = vec!["no colon".into()];
        assert!(table_body(&args).is_err());
        assert!(table_body(&add_args("empty")).is_err());
        assert!(!valid_name("a.b") && !valid_name("") && valid_name("my-db_2"));
    }
}
