//! Registry tests: merge rules, resolution, credentials, discovery.

use super::*;
use std::path::Path;
use std::time::Duration;

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let vars: BTreeMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| vars.get(name).cloned()
}

fn config(text: &str) -> Config {
    Config::parse(text, Path::new("config.toml")).unwrap()
}

fn registry(text: &str, vars: &[(&str, &str)]) -> ModelRegistry {
    ModelRegistry::new(
        builtin_providers(),
        &config(text),
        AuthStore::empty("/nonexistent/auth.json"),
        env(vars),
    )
    .unwrap()
}

#[test]
fn builtins_without_config() {
    let reg = registry("", &[]);
    assert_eq!(reg.providers().len(), builtin_providers().len());
    assert!(reg.find("openai", "gpt-4.1").is_some());
    assert!(reg.find("openai", "nope").is_none());
    assert!(reg.provider("ollama").unwrap().local);
}

#[test]
fn config_overrides_builtin_provider() {
    let reg = registry(
        r#"
[providers.openai]
base_url = "https://proxy.example/v1/"
api_key_env = "PROXY_KEY"
headers = { "X-Team" = "a" }

[[providers.openai.models]]
id = "gpt-4.1"
max_tokens = 1000
cost = { output = 9.5 }

[[providers.openai.models]]
id = "my-finetune"
reasoning = true
"#,
        &[("PROXY_KEY", "pk")],
    );
    let openai = reg.provider("openai").unwrap();
    assert_eq!(openai.base_url, "https://proxy.example/v1");
    assert_eq!(openai.headers["X-Team"], "a");
    let builtin = builtin_providers()
        .into_iter()
        .find(|p| p.name == "openai")
        .unwrap();
    assert_eq!(openai.models.len(), builtin.models.len() + 1);

    // Replaced: set fields change, the rest is inherited from the built-in entry.
    let gpt = reg.find("openai", "gpt-4.1").unwrap();
    let old = builtin.model("gpt-4.1").unwrap();
    assert_eq!(gpt.max_tokens, 1000);
    assert_eq!(gpt.cost.output, 9.5);
    assert_eq!(gpt.cost.input, old.cost.input);
    assert_eq!(gpt.context_window, old.context_window);
    assert_eq!(gpt.name, old.name);
    assert_eq!(gpt.base_url, "https://proxy.example/v1");

    // Added: provider defaults plus what is set.
    let ft = reg.find("openai", "my-finetune").unwrap();
    let defaults = Model::openai_compatible("openai", "my-finetune", "https://proxy.example/v1");
    assert_eq!(
        ft,
        &Model {
            reasoning: true,
            ..defaults
        }
    );
    assert_eq!(reg.api_key("openai").as_deref(), Some("pk"));
    assert_eq!(
        reg.credential_source("openai"),
        CredentialSource::Env("PROXY_KEY".into())
    );
}

#[test]
fn provider_reasoning_format_respects_model_choices() {
    let reg = registry(
        "[providers.xai]\nreasoning_format = \"template-kwargs\"\n",
        &[],
    );
    // grok-4 chose `none` in the catalog; grok-3-mini followed the provider.
    assert_eq!(
        reg.find("xai", "grok-4").unwrap().reasoning_format,
        ReasoningFormat::None
    );
    assert_eq!(
        reg.find("xai", "grok-3-mini").unwrap().reasoning_format,
        ReasoningFormat::TemplateKwargs
    );
}

#[test]
fn new_provider_needs_api() {
    let err = ModelRegistry::new(
        builtin_providers(),
        &config("[providers.together]\nbase_url = \"https://api.together.xyz/v1\"\n"),
        AuthStore::empty("a.json"),
        env(&[]),
    )
    .unwrap_err();
    assert!(matches!(err, RegistryError::MissingApi { .. }));
    assert!(err.to_string().contains("`together`"), "{err}");
}

#[test]
fn new_providers() {
    let reg = registry(
        r#"
[providers.claude-proxy]
api = "anthropic-messages"
base_url = "https://proxy.example/anthropic/v1"
api_key_env = "CP_KEY"
models = [{ id = "claude-x", max_tokens = 4096 }]

[providers.box]
api = "openai-completions"
base_url = "http://localhost:9000/v1"
reasoning_format = "template-kwargs"
models = [{ id = "qwen3" }]
"#,
        &[],
    );
    let cp = reg.provider("claude-proxy").unwrap();
    assert!(!cp.local);
    let model = reg.find("claude-proxy", "claude-x").unwrap();
    assert_eq!(model.api, Api::AnthropicMessages);
    assert_eq!(model.max_tokens, 4096);
    assert_eq!(
        model.context_window,
        Model::anthropic("p", "m", "u").context_window
    );
    assert_eq!(
        reg.credential_source("claude-proxy"),
        CredentialSource::Missing(Some("CP_KEY".into()))
    );

    let local = reg.provider("box").unwrap();
    assert!(local.local);
    assert_eq!(
        reg.find("box", "qwen3").unwrap().reasoning_format,
        ReasoningFormat::TemplateKwargs
    );
    assert_eq!(reg.credential_source("box"), CredentialSource::NotNeeded);
    assert_eq!(reg.api_key("box"), None);
}

#[test]
fn resolve_specs() {
    let reg = registry(
        "[providers.azure]\napi = \"openai-completions\"\nbase_url = \"https://az.example/v1\"\nmodels = [{ id = \"gpt-4.1\" }]\n",
        &[],
    );
    assert_eq!(reg.resolve("openai/gpt-5").unwrap().provider, "openai");
    assert_eq!(reg.resolve("gpt-5").unwrap().provider, "openai");

    // OpenRouter ids contain '/': split at the first one only.
    let or = reg
        .resolve("openrouter/anthropic/claude-sonnet-4.5")
        .unwrap();
    assert_eq!(
        (or.provider.as_str(), or.id.as_str()),
        ("openrouter", "anthropic/claude-sonnet-4.5")
    );
    // A bare OpenRouter id whose prefix is also a provider name still finds OpenRouter's.
    let or = reg.resolve("anthropic/claude-sonnet-4.5").unwrap();
    assert_eq!(or.provider, "openrouter");
    let or = reg.resolve("google/gemini-2.5-pro").unwrap();
    assert_eq!(or.provider, "openrouter");

    // Unlisted ids on a known provider get its defaults (local servers, new models).
    let local = reg.resolve("ollama/qwen3:8b").unwrap();
    assert_eq!(local.id, "qwen3:8b");
    assert_eq!(local.base_url, "http://127.0.0.1:11434/v1");

    match reg.resolve("gpt-4.1").unwrap_err() {
        RegistryError::AmbiguousModel { candidates, .. } => {
            assert_eq!(candidates, ["openai/gpt-4.1", "azure/gpt-4.1"]);
        }
        other => panic!("{other}"),
    }
    assert_eq!(reg.resolve("azure/gpt-4.1").unwrap().provider, "azure");

    for spec in ["no-such-model", "nowhere/gpt-5", "", "openai/"] {
        let err = reg.resolve(spec).unwrap_err();
        assert!(
            matches!(err, RegistryError::UnknownModel { .. }),
            "{spec}: {err}"
        );
    }
}

#[test]
fn credential_sources() {
    let dir = tempfile::tempdir().unwrap();
    let mut auth = AuthStore::empty(dir.path().join("auth.json"));
    auth.set("anthropic", "from-file").unwrap();
    let reg = ModelRegistry::new(
        builtin_providers(),
        &Config::default(),
        auth,
        env(&[
            ("OPENAI_API_KEY", "sk"),
            ("ANTHROPIC_API_KEY", "from-env"),
            ("XAI_API_KEY", ""),
        ]),
    )
    .unwrap();
    assert_eq!(
        reg.credential_source("openai"),
        CredentialSource::Env("OPENAI_API_KEY".into())
    );
    assert_eq!(reg.api_key("openai").as_deref(), Some("sk"));
    // auth.json wins over the environment.
    assert_eq!(
        reg.credential_source("anthropic"),
        CredentialSource::AuthFile
    );
    assert_eq!(reg.api_key("anthropic").as_deref(), Some("from-file"));
    // An empty variable counts as unset.
    assert_eq!(
        reg.credential_source("xai"),
        CredentialSource::Missing(Some("XAI_API_KEY".into()))
    );
    assert_eq!(reg.api_key("xai"), None);
    assert_eq!(reg.credential_source("vllm"), CredentialSource::NotNeeded);
    assert_eq!(
        reg.credential_source("nope"),
        CredentialSource::Missing(None)
    );
    assert!(!CredentialSource::Missing(None).is_usable());
    assert!(CredentialSource::NotNeeded.is_usable());
}

#[test]
fn default_model_choice() {
    let reg = registry("", &[("ANTHROPIC_API_KEY", "k")]);
    let model = reg.default_model(&Config::default()).unwrap().unwrap();
    assert_eq!(model.provider, "anthropic");
    let chosen = config("default_model = \"openai/gpt-4.1\"\n");
    assert_eq!(reg.default_model(&chosen).unwrap().unwrap().id, "gpt-4.1");
    assert!(
        registry("", &[])
            .default_model(&Config::default())
            .unwrap()
            .is_none()
    );
    let bad = config("default_model = \"nope\"\n");
    assert!(reg.default_model(&bad).is_err());
}

#[test]
fn load_reports_config_errors() {
    let dir = tempfile::tempdir().unwrap();
    let paths = MarchPaths::at(dir.path());
    assert!(ModelRegistry::load(&paths).is_ok());
    std::fs::write(paths.config_file(), "default_model = [1]\n").unwrap();
    let err = ModelRegistry::load(&paths).unwrap_err();
    assert!(err.to_string().contains("config.toml"), "{err}");
}

#[test]
fn loopback_detection() {
    assert!(is_loopback("http://localhost:8080/v1"));
    assert!(is_loopback("http://127.0.0.2/v1"));
    assert!(is_loopback("http://[::1]:8000/v1"));
    assert!(!is_loopback("https://api.openai.com/v1"));
    assert!(!is_loopback("not a url"));
}

/// Serve one canned HTTP response per connection, recording the request heads.
async fn canned_server(
    response: &'static str,
) -> (String, tokio::sync::mpsc::UnboundedReceiver<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
            let _ = socket.write_all(response.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    (format!("http://{addr}/v1"), rx)
}

fn with_provider(name: &str, api: &str, base_url: &str, vars: &[(&str, &str)]) -> ModelRegistry {
    registry(
        &format!(
            "[providers.{name}]\napi = \"{api}\"\nbase_url = \"{base_url}\"\napi_key_env = \"K\"\nheaders = {{ \"X-Extra\" = \"1\" }}\n"
        ),
        vars,
    )
}

#[tokio::test]
async fn discovery_against_scripted_server() {
    let server = march_testkit::ScriptedServer::start(march_testkit::Script {
        turns: vec![],
        models: vec!["m1".into(), "m2".into()],
    })
    .await
    .unwrap();
    let reg = registry(
        &format!(
            "[providers.scripted]\napi = \"openai-completions\"\nbase_url = \"{}\"\napi_key_env = \"SCRIPTED_KEY\"\nheaders = {{ \"X-Extra\" = \"yes\" }}\nmodels = [{{ id = \"m2\", context_window = 4096 }}]\n",
            server.base_url()
        ),
        &[("SCRIPTED_KEY", "secret")],
    );
    let models = reg
        .discover("scripted", Duration::from_secs(3))
        .await
        .unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["m1", "m2"]);
    assert_eq!(
        models[0],
        reg.provider("scripted").unwrap().default_model("m1")
    );
    // A configured model keeps its data.
    assert_eq!(models[1].context_window, 4096);

    let requests = server.requests();
    let request = requests.last().unwrap();
    assert!(request.path.ends_with("/models"), "{}", request.path);
    assert_eq!(request.header("authorization"), Some("Bearer secret"));
    assert_eq!(request.header("x-extra"), Some("yes"));
}

#[tokio::test]
async fn anthropic_discovery_headers() {
    let (url, mut heads) = canned_server(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n\
         {\"data\":[{\"id\":\"claude-x\",\"display_name\":\"Claude X\"}],\"has_more\":false}",
    )
    .await;
    let reg = with_provider("ant", "anthropic-messages", &url, &[("K", "ak")]);
    let models = reg.discover("ant", Duration::from_secs(3)).await.unwrap();
    assert_eq!(models.len(), 1);
    assert_eq!(models[0].name, "Claude X");
    assert_eq!(models[0].api, Api::AnthropicMessages);
    let head = heads.recv().await.unwrap().to_ascii_lowercase();
    assert!(head.starts_with("get /v1/models?limit=1000 "), "{head}");
    assert!(head.contains("\r\nx-api-key: ak\r\n"), "{head}");
    assert!(
        head.contains("\r\nanthropic-version: 2023-06-01\r\n"),
        "{head}"
    );
    assert!(head.contains("\r\nx-extra: 1\r\n"), "{head}");
    assert!(!head.contains("authorization"), "{head}");
}

#[tokio::test]
async fn discovery_reports_http_errors() {
    let (url, _heads) = canned_server(
        "HTTP/1.1 401 Unauthorized\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n\
         <html><head><title>401 Authorization Required</title></head><body><center><h1>401</h1></center></body></html>",
    )
    .await;
    let reg = with_provider("web", "openai-completions", &url, &[]);
    let err = reg
        .discover("web", Duration::from_secs(3))
        .await
        .unwrap_err();
    assert!(
        matches!(err, RegistryError::Status { status: 401, .. }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!("{url}/models answered HTTP 401: 401 Authorization Required")
    );

    let (url, _heads) =
        canned_server("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n<html>not json</html>").await;
    let reg = with_provider("web", "openai-completions", &url, &[]);
    let err = reg
        .discover("web", Duration::from_secs(3))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::BadModelList { .. }), "{err}");
}

#[tokio::test]
async fn discovery_against_closed_port() {
    // Bind then drop a listener so the port is very likely closed.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let reg = with_provider("gone", "openai-completions", &url, &[]);
    let err = reg
        .discover("gone", Duration::from_secs(3))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::Unreachable { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("the server at {url} is not reachable")),
        "{msg}"
    );

    let err = reg
        .discover("nope", Duration::from_secs(1))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::UnknownProvider { .. }));
}
