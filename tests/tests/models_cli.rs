//! `march models` run as a real process with a clean environment and a temporary MARCH_HOME.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};

use march_e2e::{ScriptedServerProcess, march_bin};

/// A temporary home: `home/` for HOME and `march/` for MARCH_HOME.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        for sub in ["home", "march"] {
            std::fs::create_dir_all(dir.path().join(sub))
                .unwrap_or_else(|e| panic!("create {sub}: {e}"));
        }
        Home { dir }
    }

    fn march_home(&self) -> PathBuf {
        self.dir.path().join("march")
    }

    fn write_config(&self, text: &str) -> PathBuf {
        let path = self.march_home().join("config.toml");
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// Run `march` with only PATH, HOME, MARCH_HOME and `env` set.
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(march_bin());
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("MARCH_HOME", self.march_home());
        for (name, value) in env {
            command.env(name, value);
        }
        command
            .output()
            .unwrap_or_else(|e| panic!("cannot run march: {e}"))
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The text block of one provider: its header line up to the next blank line.
fn provider_block<'a>(text: &'a str, name: &str) -> &'a str {
    text.split("\n\n")
        .find(|block| block.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no block for {name} in:\n{text}"))
}

fn json_provider<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["providers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no provider {name} in {report}"))
}

/// The value of the first header named `name` in a recorded request (names are lowercase).
fn header<'a>(request: &'a serde_json::Value, name: &str) -> Option<&'a str> {
    request["headers"]
        .as_array()?
        .iter()
        .find(|pair| pair[0] == name)
        .and_then(|pair| pair[1].as_str())
}

#[test]
fn models_shows_credentials() {
    let home = Home::new();
    let output = home.run(&["models"], &[("OPENAI_API_KEY", "sk-test")]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let auth = home.march_home().join("auth.json");

    let openai = provider_block(&text, "openai");
    assert!(openai.contains("https://api.openai.com/v1"), "{openai}");
    assert!(
        openai.contains("\n  credentials: ok (env OPENAI_API_KEY)\n"),
        "{openai}"
    );
    assert!(openai.contains("\n  gpt-4.1 "), "{openai}");
    let anthropic = provider_block(&text, "anthropic");
    assert!(
        anthropic.contains(&format!(
            "credentials: missing: set ANTHROPIC_API_KEY or add it to {}",
            auth.display()
        )),
        "{anthropic}"
    );
    assert!(anthropic.contains("claude-sonnet-4-5"), "{anthropic}");
    let ollama = provider_block(&text, "ollama");
    assert!(
        ollama.contains("credentials: not needed (local)"),
        "{ollama}"
    );
    assert!(stderr(&output).is_empty(), "{}", stderr(&output));
    // Logs go to the log file, never to the terminal.
    assert!(home.march_home().join("data/logs/march.log").is_file());
}

#[test]
fn models_json_matches() {
    let home = Home::new();
    let output = home.run(&["models", "--json"], &[("OPENAI_API_KEY", "sk-test")]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();

    let openai = json_provider(&report, "openai");
    assert_eq!(openai["api"], "openai-completions");
    assert_eq!(openai["credentials"]["status"], "ok");
    assert_eq!(openai["credentials"]["source"], "env");
    assert_eq!(openai["credentials"]["env"], "OPENAI_API_KEY");
    assert_eq!(openai["credentials"]["text"], "ok (env OPENAI_API_KEY)");
    let gpt = openai["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "gpt-4.1")
        .unwrap();
    assert!(gpt["context_window"].as_u64().unwrap() > 0);
    assert!(openai.get("discovery").is_none());

    let anthropic = json_provider(&report, "anthropic");
    assert_eq!(anthropic["credentials"]["status"], "missing");
    assert_eq!(anthropic["credentials"]["env"], "ANTHROPIC_API_KEY");
    assert_eq!(
        json_provider(&report, "vllm")["credentials"]["status"],
        "not_needed"
    );
    assert_eq!(
        report["auth_file"],
        home.march_home().join("auth.json").display().to_string()
    );
}

#[test]
fn discover_lists_served_models() {
    let server = ScriptedServerProcess::start(&serde_json::json!({
        "turns": [],
        "models": ["m1", "m2"],
    }));
    let home = Home::new();
    home.write_config(&format!(
        "[providers.scripted]\napi = \"openai-completions\"\nbase_url = \"{}\"\napi_key_env = \"SCRIPTED_KEY\"\n",
        server.base_url()
    ));
    let env = [("SCRIPTED_KEY", "secret")];

    let output = home.run(&["models", "--discover"], &env);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let block = provider_block(&text, "scripted");
    assert!(
        block.contains("credentials: ok (env SCRIPTED_KEY)"),
        "{block}"
    );
    assert!(block.contains("discovered 2 models:"), "{block}");
    assert!(block.contains("\n  m1 "), "{block}");
    assert!(block.contains("\n  m2 "), "{block}");
    // Providers without credentials are not queried.
    assert!(
        provider_block(&text, "anthropic").contains("discovery: skipped (no credentials)"),
        "{text}"
    );
    let requests = server.recorded_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert_eq!(request["method"], "GET", "{request}");
    let path = request["path"].as_str().unwrap();
    assert!(path.ends_with("/models"), "{request}");
    assert_eq!(
        header(request, "authorization"),
        Some("Bearer secret"),
        "{request}"
    );

    let output = home.run(&["models", "--discover", "--json"], &env);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let discovery = &json_provider(&report, "scripted")["discovery"];
    assert_eq!(discovery["status"], "ok");
    let ids: Vec<&str> = discovery["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["m1", "m2"]);
    assert_eq!(
        json_provider(&report, "anthropic")["discovery"]["status"],
        "skipped"
    );
    assert_eq!(server.recorded_requests().len(), 2);
}

#[test]
fn discover_notes_a_local_server_that_is_not_running() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let home = Home::new();
    let url = format!("http://127.0.0.1:{port}/v1");
    home.write_config(&format!("[providers.ollama]\nbase_url = \"{url}\"\n"));
    let output = home.run(&["models", "--discover"], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let block = provider_block(&text, "ollama");
    assert!(
        block.contains(&format!("discovery: no server running at {url}")),
        "{block}"
    );
}

#[test]
fn invalid_config_exits_1_naming_the_file() {
    let home = Home::new();
    let path = home.write_config("default_model = 3\n");
    let output = home.run(&["models"], &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.starts_with("march: "), "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(stdout(&output).is_empty());
}

#[cfg(unix)]
#[test]
fn readable_auth_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    let auth = home.march_home().join("auth.json");
    std::fs::write(&auth, "{}").unwrap();
    std::fs::set_permissions(&auth, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = home.run(&["models"], &[]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains(&format!("chmod 600 {}", auth.display())),
        "{err}"
    );
}

#[test]
fn no_subcommand_exits_2_with_a_message() {
    let home = Home::new();
    for args in [&[][..], &["some/dir"][..]] {
        let output = home.run(args, &[]);
        assert_eq!(output.status.code(), Some(2));
        let err = stderr(&output);
        assert!(err.contains("workspace"), "{err}");
        assert!(err.contains("march models"), "{err}");
        assert!(stdout(&output).is_empty());
    }
}

#[test]
fn logs_go_to_the_file_filtered_by_march_log() {
    let log_text = |env: &[(&str, &str)]| {
        let home = Home::new();
        let output = home.run(&["models"], env);
        assert!(output.status.success(), "{}", stderr(&output));
        std::fs::read_to_string(home.march_home().join("data/logs/march.log")).unwrap()
    };
    assert!(log_text(&[]).contains("march started"));
    assert!(!log_text(&[("MARCH_LOG", "warn")]).contains("march started"));
}
