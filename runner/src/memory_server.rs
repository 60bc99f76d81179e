//! `march memory serve | status`: the memory server's entry point and what `status` asks.
//! The server itself is `march_tools::memory::server`; its clients' tokens are kept in
//! `auth.json` like API keys (`memory-client:NAME`), and the token this machine shows a
//! remote server as `memory-remote`.

use std::path::PathBuf;
use std::time::Duration;

use march_core::auth::AuthStore;
use march_core::config::Config;
use march_core::paths::MarchPaths;
use march_tools::memory::server::{
    MemoryClient, MemoryServerConfig, TlsFiles, serve_memory as serve_on,
};
use serde::{Deserialize, Serialize};

/// The `auth.json` entry prefix of the clients a memory server hears.
pub const CLIENT_PREFIX: &str = "memory-client:";
/// The `auth.json` entry of the token this machine shows a remote memory server.
pub const REMOTE_TOKEN: &str = "memory-remote";

/// What a running server writes about itself, for `march memory status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerState {
    /// Its process.
    pub pid: u32,
    /// Where it listens.
    pub listen: String,
    /// Whether it speaks HTTPS.
    pub tls: bool,
    /// The memory it serves.
    pub dir: PathBuf,
}

fn state_file(paths: &MarchPaths) -> PathBuf {
    paths.data_dir.join("memory-server.json")
}

/// The clients `auth.json` names (`memory-client:NAME`).
pub fn clients(auth: &AuthStore) -> Vec<MemoryClient> {
    auth.named_tokens(CLIENT_PREFIX)
}

/// The body of `march memory serve`: serve `[memory.server]` until interrupted or
/// terminated.
pub async fn serve_memory(paths: MarchPaths) -> Result<(), String> {
    let config = Config::load(&paths)
        .map_err(|e| e.to_string())?
        .memory
        .server;
    let auth = AuthStore::load(&paths).map_err(|e| e.to_string())?;
    let tls = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => Some(TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
        }),
        (None, None) => None,
        _ => return Err("[memory.server] needs both tls_cert and tls_key, or neither".into()),
    };
    let dir = config.dir.clone().unwrap_or_else(|| paths.memory_dir());
    let listener = tokio::net::TcpListener::bind(&config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let listen = listener
        .local_addr()
        .map_or_else(|_| config.listen.clone(), |a| a.to_string());
    let state = ServerState {
        pid: std::process::id(),
        listen: listen.clone(),
        tls: tls.is_some(),
        dir: dir.clone(),
    };
    let state_path = state_file(&paths);
    let written = serde_json::to_vec_pretty(&state).map_err(|e| e.to_string())?;
    march_core::atomic_file::write_file(
        &state_path,
        &written,
        march_core::atomic_file::FileMode::Kept,
    )
    .map_err(|e| format!("cannot write {}: {e}", state_path.display()))?;
    let stop = march_core::signals::stop_token();
    let scheme = if state.tls { "https" } else { "http" };
    tracing::info!(listen, dir = %dir.display(), "memory server serving");
    println!("Serving {} at {scheme}://{listen}", dir.display());
    let served = serve_on(
        listener,
        MemoryServerConfig {
            dir,
            clients: clients(&auth),
            tls,
        },
        stop,
    )
    .await;
    let _ = std::fs::remove_file(&state_path);
    served.map_err(|e| e.to_string())
}

/// A memory server as `march memory status` found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    /// Its address.
    pub url: String,
    /// Its files and their bytes, or why it could not be asked.
    pub answer: Result<(u64, u64), String>,
}

/// What `march memory status` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryStatus {
    /// The server this machine runs, if one runs: its state, and what it answers.
    pub local: Option<(ServerState, Reached)>,
    /// The remote memory `[memory] remote` names, what it answers, and how many appends
    /// wait for it here.
    pub remote: Option<(Reached, usize)>,
}

impl MemoryStatus {
    /// Neither a server here nor a remote memory.
    pub fn is_empty(&self) -> bool {
        self.local.is_none() && self.remote.is_none()
    }
}

/// Where the files of the memory server at `url` are mirrored: one directory per server.
pub fn mirror_dir(paths: &MarchPaths, url: &str) -> PathBuf {
    let name: String = url
        .trim_end_matches('/')
        .split("://")
        .last()
        .unwrap_or(url)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    paths.data_dir.join("memory-remote").join(name)
}

/// Asks the server this machine runs (if any) and the remote one (if configured) how they
/// are.
pub async fn memory_status(paths: &MarchPaths) -> Result<MemoryStatus, String> {
    let config = Config::load(paths).map_err(|e| e.to_string())?;
    let auth = AuthStore::load(paths).map_err(|e| e.to_string())?;
    let local = match std::fs::read(state_file(paths))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<ServerState>(&bytes).ok())
        .filter(|state| std::path::Path::new(&format!("/proc/{}", state.pid)).exists())
    {
        Some(state) => {
            let scheme = if state.tls { "https" } else { "http" };
            let url = format!("{scheme}://{}", state.listen);
            let token = clients(&auth).into_iter().next().map(|c| c.token);
            let answer = ask(&url, token.as_deref(), state.tls).await;
            Some((state, Reached { url, answer }))
        }
        None => None,
    };
    let remote = match &config.memory.remote {
        Some(url) => {
            let token = remote_token(&auth);
            let answer = ask(url, token.as_deref(), false).await;
            let queued = std::fs::read_dir(mirror_dir(paths, url).join(".queued"))
                .map(|entries| entries.flatten().count())
                .unwrap_or(0);
            Some((
                Reached {
                    url: url.clone(),
                    answer,
                },
                queued,
            ))
        }
        None => None,
    };
    Ok(MemoryStatus { local, remote })
}

/// The token shown to the remote memory server: `MARCH_MEMORY_TOKEN`, else `auth.json`.
pub fn remote_token(auth: &AuthStore) -> Option<String> {
    std::env::var("MARCH_MEMORY_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .or_else(|| auth.get(REMOTE_TOKEN).map(str::to_string))
}

/// `GET /v1/status` of the server at `url`: its file count and bytes. A local server with
/// its own certificate is asked without checking it (the state file says it is ours).
async fn ask(url: &str, token: Option<&str>, own_tls: bool) -> Result<(u64, u64), String> {
    let Some(token) = token else {
        return Err("no token to show it".into());
    };
    let client = march_core::http::client_builder(Duration::from_secs(3))
        .timeout(Duration::from_secs(5))
        .danger_accept_invalid_certs(own_tls)
        .build()
        .map_err(|e| e.to_string())?;
    let answer = client
        .get(format!("{}/v1/status", url.trim_end_matches('/')))
        .bearer_auth(token)
        .send()
        .await
        .map_err(|e| format!("unreachable: {e}"))?;
    let status = answer.status();
    let body: serde_json::Value = answer
        .json()
        .await
        .map_err(|e| format!("not a memory server's answer: {e}"))?;
    if !status.is_success() {
        return Err(format!(
            "answered {status}: {}",
            body["error"].as_str().unwrap_or("?")
        ));
    }
    Ok((
        body["files"].as_u64().unwrap_or(0),
        body["bytes"].as_u64().unwrap_or(0),
    ))
}
