//! A session's MCP servers as the user reads them: the `/mcp` listing (state, where each
//! came from, tools, prompts, last error) and the supervisor's one-line summary.

use march_runner::client::{ServerPhase, ServerStatus};

/// Tools named in full in `/mcp` before the rest are counted.
const TOOLS_LISTED: usize = 12;

/// What `/mcp` shows when the session has no servers.
pub const NO_SERVERS: &str = "No MCP servers. Add one with `march mcp add NAME -- COMMAND ARGS` \
     (or `--url URL`), as [mcp.servers.NAME] in config.toml, or in the project's .mcp.json.";

/// The `/mcp` listing: a paragraph per server.
pub fn describe(servers: &[ServerStatus]) -> String {
    let mut out = String::new();
    for s in servers {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!(
            "{} — {} · {} {} ({})\n",
            s.name,
            s.phase.label(),
            s.transport,
            s.target,
            s.origin
        ));
        if !s.tools.is_empty() {
            let mut names: Vec<&str> = s
                .tools
                .iter()
                .take(TOOLS_LISTED)
                .map(|t| short(t, &s.name))
                .collect();
            let more = s.tools.len().saturating_sub(TOOLS_LISTED);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            names.sort_unstable();
            out.push_str(&format!(
                "  tools ({}): {}{more}\n",
                s.tools.len(),
                names.join(", ")
            ));
        } else if s.phase == ServerPhase::Ready {
            out.push_str("  no tools\n");
        }
        if !s.prompts.is_empty() {
            let commands: Vec<String> = s.prompts.iter().map(|p| format!("/{p}")).collect();
            out.push_str(&format!("  prompts: {}\n", commands.join(" ")));
        }
        if s.resources {
            out.push_str("  resources: read with the mcp_resources tool\n");
        }
        if s.restarts > 0 {
            out.push_str(&format!("  restarted {} times\n", s.restarts));
        }
        if let Some(error) = reason(s) {
            out.push_str(&format!("  last error: {error}\n"));
        }
    }
    out.trim_end().to_string()
}

/// The server's last error without the `MCP server NAME: ` the runner's messages start with.
fn reason(s: &ServerStatus) -> Option<&str> {
    let error = s.last_error.as_deref()?;
    let prefix = format!("MCP server {}: ", s.name);
    let mut rest = error;
    // A start failure names the server twice ("… could not start: MCP server x: …").
    while let Some(r) = rest.strip_prefix(prefix.as_str()) {
        rest = r;
    }
    Some(rest)
}

/// A tool's name without the `mcp__<server>__` the model sees.
fn short<'a>(tool: &'a str, server: &str) -> &'a str {
    tool.strip_prefix("mcp__")
        .and_then(|rest| rest.strip_prefix(server))
        .and_then(|rest| rest.strip_prefix("__"))
        .unwrap_or(tool)
}

/// The supervisor's fact about a session's servers (`MCP 2/3`), and the ones in trouble
/// with why, one line each.
pub fn summary(servers: &[ServerStatus]) -> Option<(String, Vec<String>)> {
    if servers.is_empty() {
        return None;
    }
    let ready = servers
        .iter()
        .filter(|s| s.phase == ServerPhase::Ready)
        .count();
    let trouble = servers
        .iter()
        .filter(|s| matches!(s.phase, ServerPhase::Disabled | ServerPhase::Restarting))
        .map(|s| {
            let why = reason(s).unwrap_or("no reason given");
            format!("MCP {} {}: {why}", s.name, s.phase.label())
        })
        .collect();
    Some((format!("MCP {ready}/{} ready", servers.len()), trouble))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, phase: ServerPhase, tools: &[&str], error: Option<&str>) -> ServerStatus {
        ServerStatus {
            name: name.to_string(),
            transport: "stdio".to_string(),
            target: format!("{name}-server --stdio"),
            origin: "config.toml".to_string(),
            phase,
            tools: tools.iter().map(|t| format!("mcp__{name}__{t}")).collect(),
            prompts: Vec::new(),
            resources: false,
            restarts: 0,
            last_error: error.map(str::to_string),
        }
    }

    #[test]
    fn the_listing_names_state_origin_tools_and_last_error() {
        let mut db = server("db", ServerPhase::Ready, &["query", "schema"], None);
        db.prompts = vec!["mcp__db__explain".to_string()];
        db.resources = true;
        let mut broken = server(
            "broken",
            ServerPhase::Disabled,
            &[],
            Some("MCP server broken: exited with 3"),
        );
        broken.restarts = 3;
        let text = describe(&[db, broken]);
        assert_eq!(
            text,
            "db — ready · stdio db-server --stdio (config.toml)\n\
             \x20 tools (2): query, schema\n\
             \x20 prompts: /mcp__db__explain\n\
             \x20 resources: read with the mcp_resources tool\n\
             \n\
             broken — disabled · stdio broken-server --stdio (config.toml)\n\
             \x20 restarted 3 times\n\
             \x20 last error: exited with 3"
        );
    }

    #[test]
    fn many_tools_are_counted_and_the_summary_counts_ready_ones() {
        let names: Vec<String> = (0..20).map(|i| format!("t{i:02}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let big = server("big", ServerPhase::Ready, &refs, None);
        assert!(describe(std::slice::from_ref(&big)).contains("tools (20): t00, t01"));
        assert!(describe(std::slice::from_ref(&big)).contains("t11 and 8 more"));
        let down = server("down", ServerPhase::Restarting, &[], Some("crashed"));
        let (fact, trouble) = summary(&[big, down]).unwrap();
        assert_eq!(fact, "MCP 1/2 ready");
        assert_eq!(trouble, vec!["MCP down restarting: crashed".to_string()]);
        assert_eq!(summary(&[]), None);
    }
}
