//! First run: when no model can be used, the agent pane shows setup instead of starting an
//! agent. This module does the I/O behind it: what is configured, which local servers
//! answer, storing a pasted key in `auth.json` (mode 0600), and choosing a model in
//! `config.toml` without disturbing the rest of the file.

use std::time::Duration;

use march_core::auth::AuthStore;
use march_core::config::Config;
use march_core::model::{Api, CredentialSource, ModelRegistry, ProviderInfo};
use march_core::paths::MarchPaths;
use march_panes::setup::{ProviderStatus, SetupProvider};

use crate::config_file;

/// How long a local server gets to list its models.
const PROBE_TIMEOUT: Duration = Duration::from_millis(600);

/// Why no agent can start yet (`None` when a model is usable). Only March's own runner is
/// checked: other agents bring their own credentials.
pub fn reason(paths: &MarchPaths) -> Option<String> {
    let config = match Config::load(paths) {
        Ok(config) => config,
        Err(e) => return Some(e.to_string()),
    };
    if config
        .default_agent
        .as_deref()
        .is_some_and(|a| a != "march")
    {
        return None;
    }
    let registry = match ModelRegistry::load(paths) {
        Ok(registry) => registry,
        Err(e) => return Some(e.to_string()),
    };
    match registry.default_model(&config) {
        Ok(Some(model)) => match registry.credential_source(&model.provider) {
            source if source.is_usable() => None,
            _ => Some(format!(
                "The model {}/{} needs an API key for {}.",
                model.provider, model.id, model.provider
            )),
        },
        Ok(None) => Some(
            "No model can be used yet: no API key was found in the environment or in \
             auth.json, and no model is chosen in config.toml."
                .to_string(),
        ),
        Err(e) => Some(e.to_string()),
    }
}

/// Every provider with what is known without asking the network; local servers are listed
/// as not running until [`probe`] says otherwise.
pub fn providers(paths: &MarchPaths) -> Vec<SetupProvider> {
    let Ok(registry) = ModelRegistry::load(paths) else {
        return Vec::new();
    };
    registry
        .providers()
        .iter()
        .map(|p| SetupProvider {
            name: p.name.clone(),
            env_var: p.api_key_env.clone(),
            status: if p.local {
                ProviderStatus::LocalNotRunning
            } else {
                match registry.credential_source(&p.name) {
                    CredentialSource::Env(var) => ProviderStatus::KeyInEnv(var),
                    CredentialSource::AuthFile => ProviderStatus::KeyStored,
                    _ => ProviderStatus::NoKey,
                }
            },
        })
        .collect()
}

/// [`providers`], with each local server asked which models it serves.
pub async fn probe(paths: MarchPaths) -> Vec<SetupProvider> {
    let mut list = providers(&paths);
    let Ok(registry) = ModelRegistry::load(&paths) else {
        return list;
    };
    let asks = list
        .iter()
        .enumerate()
        .filter(|(_, p)| p.status == ProviderStatus::LocalNotRunning)
        .map(|(i, p)| {
            let registry = &registry;
            let name = p.name.clone();
            async move { (i, registry.discover(&name, PROBE_TIMEOUT).await) }
        });
    for (i, found) in futures_util::future::join_all(asks).await {
        if let Ok(models) = found {
            list[i].status = ProviderStatus::LocalRunning {
                models: models.into_iter().map(|m| m.id).collect(),
            };
        }
    }
    list
}

/// Store `key` for `provider` in `auth.json`; what to tell the user.
pub fn save_key(paths: &MarchPaths, provider: &str, key: &str) -> Result<String, String> {
    let key = key.trim();
    if key.is_empty() {
        return Err("the key is empty".to_string());
    }
    let mut store = AuthStore::load(paths).map_err(|e| e.to_string())?;
    store.set(provider, key).map_err(|e| e.to_string())?;
    Ok(format!(
        "Saved the key for {provider} in {} (mode 0600).",
        store.path().display()
    ))
}

/// Set `default_model = "spec"` in `config.toml`: the existing top-level line is replaced,
/// else one is added at the top; the rest of the file (comments included) is kept as is.
pub fn set_default_model(paths: &MarchPaths, spec: &str) -> Result<String, String> {
    let file = paths.config_file();
    let text = config_file::read(&file)?;
    let line = format!("default_model = {}", config_file::toml_string(spec));
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let top_level_end = lines
        .iter()
        .position(|l| l.trim_start().starts_with('['))
        .unwrap_or(lines.len());
    match lines[..top_level_end]
        .iter()
        .position(|l| l.trim_start().starts_with("default_model"))
    {
        Some(i) => lines[i] = line,
        None => lines.insert(0, line),
    }
    let mut new = lines.join("\n");
    new.push('\n');
    config_file::write(&file, &new)?;
    Ok(format!("Chose {spec} in {}.", file.display()))
}

/// Add an OpenAI-compatible provider at `url` (named `custom`, or `custom-2`… when taken),
/// with `api_key` in auth.json when given. Returns the provider's name.
pub fn add_custom_provider(
    paths: &MarchPaths,
    url: &str,
    api_key: Option<&str>,
) -> Result<String, String> {
    let file = paths.config_file();
    let text = config_file::read(&file)?;
    let config = Config::parse(&text, &file).map_err(|e| e.to_string())?;
    let name = std::iter::once("custom".to_string())
        .chain((2..).map(|n| format!("custom-{n}")))
        .find(|n| !config.providers.contains_key(n))
        .unwrap_or_else(|| "custom".to_string());
    let mut new = text;
    config_file::append_table(
        &mut new,
        &format!("providers.{name}"),
        &format!(
            "api = \"openai-completions\"\nbase_url = {}\n",
            config_file::toml_string(url.trim().trim_end_matches('/'))
        ),
    );
    config_file::write(&file, &new)?;
    if let Some(key) = api_key.filter(|k| !k.trim().is_empty()) {
        save_key(paths, &name, key)?;
    }
    Ok(name)
}

/// The models an OpenAI-compatible server at `url` lists, asked with `api_key`, before
/// anything about it is saved.
pub async fn list_server_models(url: &str, api_key: Option<&str>) -> Result<Vec<String>, String> {
    let info = ProviderInfo {
        name: "custom".to_string(),
        api: Api::OpenAiCompletions,
        base_url: url.trim().trim_end_matches('/').to_string(),
        api_key_env: None,
        local: false,
        headers: Default::default(),
        reasoning_format: Default::default(),
        models: Vec::new(),
    };
    let models = info
        .discover(api_key.filter(|k| !k.trim().is_empty()), PROBE_TIMEOUT * 5)
        .await
        .map_err(|e| e.to_string())?;
    Ok(models.into_iter().map(|m| m.id).collect())
}

/// Save the server at `url` as a provider (its key in auth.json) and `model` on it as the
/// default; what to tell the user.
pub fn save_custom_server(
    paths: &MarchPaths,
    url: &str,
    api_key: Option<&str>,
    model: &str,
) -> Result<String, String> {
    let provider = add_custom_provider(paths, url, api_key)?;
    set_default_model(paths, &format!("{provider}/{}", model.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> (tempfile::TempDir, MarchPaths) {
        let dir = tempfile::tempdir().unwrap();
        let paths = MarchPaths::at(dir.path());
        (dir, paths)
    }

    #[test]
    fn choosing_a_model_keeps_the_rest_of_the_file() {
        let (_dir, paths) = home();
        std::fs::write(
            paths.config_file(),
            "# my settings\nthinking = \"low\"\n\n[providers.ollama]\n# local\n",
        )
        .unwrap();
        set_default_model(&paths, "ollama/qwen3:8b").unwrap();
        let text = std::fs::read_to_string(paths.config_file()).unwrap();
        assert_eq!(
            text,
            "default_model = \"ollama/qwen3:8b\"\n# my settings\nthinking = \"low\"\n\n[providers.ollama]\n# local\n"
        );
        set_default_model(&paths, "openai/gpt-4.1").unwrap();
        let text = std::fs::read_to_string(paths.config_file()).unwrap();
        assert!(
            text.starts_with("default_model = \"openai/gpt-4.1\"\n# my settings"),
            "{text}"
        );
        assert_eq!(text.matches("default_model").count(), 1);
    }

    #[test]
    fn a_custom_server_becomes_a_provider_and_its_key_is_stored_privately() {
        let (_dir, paths) = home();
        let name = add_custom_provider(&paths, "http://127.0.0.1:9999/v1/", Some("sk-x")).unwrap();
        assert_eq!(name, "custom");
        let config = Config::load(&paths).unwrap();
        assert_eq!(
            config.providers["custom"].base_url.as_deref(),
            Some("http://127.0.0.1:9999/v1")
        );
        let auth = AuthStore::load(&paths).unwrap();
        assert_eq!(auth.get("custom"), Some("sk-x"));
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(paths.auth_file())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            add_custom_provider(&paths, "http://h/v1", None).unwrap(),
            "custom-2"
        );
    }

    /// A server on loopback that answers every request `404 Not Found` (no `/models`).
    async fn server_without_models() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let _ = stream
                    .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot found")
                    .await;
            }
        });
        format!("http://{addr}/v1")
    }

    #[tokio::test]
    async fn a_server_without_a_model_list_is_saved_only_with_a_typed_model() {
        let (_dir, paths) = home();
        let url = server_without_models().await;
        let err = list_server_models(&url, Some("sk-1")).await.unwrap_err();
        assert!(err.contains("404"), "{err}");
        // Asking wrote nothing.
        assert!(!paths.config_file().exists());
        assert!(!paths.auth_file().exists());
        let said = save_custom_server(&paths, &url, Some("sk-1"), " my-model ").unwrap();
        assert!(said.contains("custom/my-model"), "{said}");
        let config = Config::load(&paths).unwrap();
        assert_eq!(config.default_model.as_deref(), Some("custom/my-model"));
        assert_eq!(
            config.providers["custom"].base_url.as_deref(),
            Some(url.as_str())
        );
        assert_eq!(AuthStore::load(&paths).unwrap().get("custom"), Some("sk-1"));
        // And the model resolves, unlisted as it is.
        let registry = ModelRegistry::load(&paths).unwrap();
        assert_eq!(registry.resolve("custom/my-model").unwrap().id, "my-model");
    }

    #[tokio::test]
    async fn a_server_with_a_model_list_is_asked_before_anything_is_saved() {
        let (_dir, paths) = home();
        let server = march_testkit::ScriptedServer::start(
            march_testkit::Script::new(vec![]).with_models(["alpha", "beta"]),
        )
        .await
        .unwrap();
        let models = list_server_models(&server.base_url(), None).await.unwrap();
        assert_eq!(models, ["alpha", "beta"]);
        assert!(!paths.config_file().exists());
    }

    #[test]
    fn a_broken_config_is_not_overwritten() {
        let (_dir, paths) = home();
        std::fs::write(paths.config_file(), "thinking = [\n").unwrap();
        let err = set_default_model(&paths, "a/b").unwrap_err();
        assert!(err.starts_with("not saved"), "{err}");
        assert_eq!(
            std::fs::read_to_string(paths.config_file()).unwrap(),
            "thinking = [\n"
        );
    }

    #[test]
    fn without_any_key_setup_is_needed_and_a_stored_key_ends_it() {
        let (_dir, paths) = home();
        // The environment of the test process may hold real keys: judge by a config that
        // names a provider whose key can only come from auth.json (not on loopback, where
        // servers need no key).
        std::fs::write(
            paths.config_file(),
            "default_model = \"mine/m\"\n[providers.mine]\napi = \"openai-completions\"\nbase_url = \"https://models.example.invalid/v1\"\n[[providers.mine.models]]\nid = \"m\"\n",
        )
        .unwrap();
        assert!(reason(&paths).is_some());
        save_key(&paths, "mine", "sk-1").unwrap();
        assert_eq!(reason(&paths), None);
    }
}
