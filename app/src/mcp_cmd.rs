//! `march mcp list | get | add | remove`: the MCP servers a session in this directory gets,
//! checked by starting them as a session would; servers added to and removed from
//! config.toml line-wise, the rest of the file kept.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use march_core::config::Config;
use march_core::paths::MarchPaths;
use march_runner::mcp_check::{self, McpEntry, NOT_TRUSTED};

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

/// The servers a session in `cwd` would get.
fn entries(paths: &MarchPaths, cwd: &std::path::Path) -> anyhow::Result<Vec<McpEntry>> {
    let config = Config::load(paths).context("cannot read the config")?;
    Ok(mcp_check::entries(
        &config.mcp,
        cwd,
        &paths.mcp_trust_file(),
    ))
}

/// Start the entries to check them, on a runtime of their own.
fn check(cwd: &std::path::Path, entries: &mut [McpEntry]) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(mcp_check::check(cwd, entries));
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
        } else if e.state == NOT_TRUSTED {
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
    for (key, value) in &entry.details {
        println!("  {key}: {value}");
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
        let cwd = cwd()?;
        let project = cwd.join(PROJECT_FILE);
        let in_project = entries(paths, &cwd)?
            .iter()
            .any(|e| e.name == name && e.origin == PROJECT_FILE);
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
        let config = Config::parse(&text, std::path::Path::new("config.toml")).unwrap();
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
