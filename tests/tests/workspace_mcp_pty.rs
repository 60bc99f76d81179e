//! MCP servers as the user manages and sees them: `march mcp add | list | get | remove`
//! editing config.toml, and in the workspace `/mcp`, a destructive MCP tool asking in the
//! pane, and the supervisor's rows, with the Python SDK test server and one that cannot
//! start.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use march_testkit::{Event, Turn};
use workspace::*;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/python_mcp_server.py");

fn python() -> String {
    march_testkit::test_tools::mcp_python()
        .display()
        .to_string()
}

#[test]
fn march_mcp_adds_lists_gets_and_removes_servers_keeping_the_config_file() {
    let h = tokio_harness(vec![]);
    let config = h.march_home().join("config.toml");
    let before = format!(
        "# my providers\n{}",
        std::fs::read_to_string(&config).unwrap()
    );
    std::fs::write(&config, &before).unwrap();

    let python = python();
    let (code, out, err) = h.run_march(&[
        "mcp", "add", "fx", "-e", "LEVEL=2", "--", &python, FIXTURE, "--name", "fx",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = h.run_march(&["mcp", "add", "gone", "--", "/nonexistent/mcp-server"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = h.run_march(&["mcp", "add", "fx", "--", "other"]);
    assert_ne!(code, 0);
    assert!(err.contains("already has MCP server fx"), "{err}");
    let (code, _, err) = h.run_march(&["mcp", "add", "bad.name", "--", "x"]);
    assert!(
        code != 0 && err.contains("cannot be a server's name"),
        "{err}"
    );
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.starts_with(&before),
        "the file is kept as it was: {text}"
    );
    assert!(text.contains("[mcp.servers.fx]\ncommand = "), "{text}");

    // list starts each server to check it.
    let (code, out, err) = h.run_march(&["mcp", "list"]);
    assert_eq!(code, 0, "{err}");
    let row = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{out}"))
            .to_string()
    };
    assert!(
        row("fx").contains("ready") && row("fx").contains(" 11 "),
        "{out}"
    );
    assert!(row("gone").contains("failed"), "{out}");
    assert!(out.contains("gone: MCP server gone: cannot start"), "{out}");

    let (code, out, _) = h.run_march(&["mcp", "get", "fx"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("env: LEVEL") && !out.contains("LEVEL=2"),
        "values stay hidden: {out}"
    );
    assert!(
        out.contains("mcp__fx__echo") && out.contains("/mcp__fx__review"),
        "{out}"
    );
    assert_ne!(h.run_march(&["mcp", "get", "nothing"]).0, 0);

    let (code, _, err) = h.run_march(&["mcp", "remove", "gone"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = h.run_march(&["mcp", "remove", "fx"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    assert_ne!(h.run_march(&["mcp", "remove", "fx"]).0, 0);
}

#[test]
fn slash_mcp_shows_the_servers_a_destructive_tool_asks_and_the_supervisor_counts_them() {
    let h = tokio_harness(vec![
        Turn::stream(vec![Event::tool_call(
            "c1",
            "mcp__fx__delete_everything",
            &[r#"{"confirm":"yes"}"#],
        )]),
        Turn::text("Deleted it."),
    ]);
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\n[mcp.servers.fx]\ncommand = {:?}\nargs = [{FIXTURE:?}, \"--name\", \"fx\"]\n\
         [mcp.servers.gone]\ncommand = \"/nonexistent/mcp-server\"\n",
        python()
    ));
    std::fs::write(&config, text).unwrap();
    let mut m = start(&h);
    m.type_line("/mcp");
    let screen = m.wait_for("the servers listed", |t| {
        t.contains("fx — ready") && t.contains("tools (11)") && t.contains("gone — ")
    });
    assert!(screen.contains("/mcp__fx__review"), "{screen}");

    // Destructive by its annotations: asked in the pane even though it is a server's tool.
    m.type_line("delete everything");
    m.wait_text("Allow once");
    m.send(b"1");
    m.wait_text("Deleted it.");
    assert!(
        h.server.requests()[1].raw_body.contains("deleted (yes)"),
        "the tool ran"
    );

    m.send(PREFIX);
    m.send(b"S");
    m.wait_for("the servers in the supervisor", |t| {
        t.contains("MCP 1/2 ready")
            && (t.contains("MCP gone restarting: cannot start")
                || t.contains("MCP gone disabled: cannot start"))
    });
    m.send(ESC);
    m.wait_for("the supervisor to close", |t| !t.contains("Supervisor ·"));
    let server_runs = working_in(&h.project()).iter().any(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("python_mcp_server"))
    });
    assert!(server_runs, "the server runs in the project");
    m.quit();
    // The servers ended with their session: nothing live is left working in the project.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !working_in(&h.project()).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(working_in(&h.project()), Vec::<u32>::new());
}

/// Live processes whose working directory is `dir`.
fn working_in(dir: &std::path::Path) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir)
                && march_testkit::process::proc_state(*pid).is_some_and(|s| s != 'Z')
        })
        .collect()
}
