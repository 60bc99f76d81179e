//! The memory server over real HTTP on loopback: tokens, every operation, 20 clients
//! appending at once, and TLS with a test certificate.

use std::time::Duration;

use super::*;

struct Running {
    url: String,
    dir: tempfile::TempDir,
    stop: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn clients() -> Vec<MemoryClient> {
    ["laptop", "ci"]
        .iter()
        .map(|name| MemoryClient {
            name: name.to_string(),
            token: format!("token-of-{name}"),
        })
        .collect()
}

async fn start(tls: Option<TlsFiles>) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let stop = CancellationToken::new();
    let config = MemoryServerConfig {
        dir: dir.path().to_path_buf(),
        clients: clients(),
        tls,
    };
    tokio::spawn(serve_memory(listener, config, stop.clone()));
    Running {
        url: format!("{scheme}://127.0.0.1:{port}"),
        dir,
        stop,
    }
}

fn http() -> reqwest::Client {
    march_core::http::client(Duration::from_secs(10)).unwrap()
}

async fn get(url: &str, token: &str) -> (u16, Value) {
    let answer = http().get(url).bearer_auth(token).send().await.unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap())
}

async fn post(client: &reqwest::Client, url: &str, token: &str, body: Value) -> (u16, Value) {
    let answer = client
        .post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap())
}

#[tokio::test]
async fn a_client_lists_reads_searches_and_appends_with_its_token() {
    let server = start(None).await;
    std::fs::write(
        server.dir.path().join("notes.md"),
        "# Notes\n\n## Build\n- cargo nextest is faster here\n",
    )
    .unwrap();
    let token = "token-of-laptop";
    let (code, status) = get(&format!("{}/v1/status", server.url), token).await;
    assert_eq!((code, status["files"].as_u64()), (200, Some(1)), "{status}");
    let (_, listed) = get(&format!("{}/v1/files", server.url), token).await;
    assert_eq!(listed["files"][0]["name"], "notes.md");
    let (code, read) = get(&format!("{}/v1/files/notes", server.url), token).await;
    assert_eq!(code, 200);
    assert!(read["text"].as_str().unwrap().contains("nextest"));
    let (code, _) = get(&format!("{}/v1/files/absent.md", server.url), token).await;
    assert_eq!(code, 404);
    // Only plain file names: nothing outside the directory.
    let (code, refused) = get(&format!("{}/v1/files/..%2Fsecret.md", server.url), token).await;
    assert_eq!(code, 400, "{refused}");

    let (code, appended) = post(
        &http(),
        &format!("{}/v1/files/notes.md/append", server.url),
        token,
        json!({ "section": "Deploys", "text": "staging needs the VPN" }),
    )
    .await;
    assert_eq!(
        (code, appended["newSection"].as_bool()),
        (200, Some(true)),
        "{appended}"
    );
    let (_, found) = get(&format!("{}/v1/search?q=staging%20vpn", server.url), token).await;
    assert_eq!(found["hits"][0]["file"], "notes.md", "{found}");
    assert_eq!(found["hits"][0]["text"], "- staging needs the VPN");
    let text = std::fs::read_to_string(server.dir.path().join("notes.md")).unwrap();
    assert!(
        text.ends_with("## Deploys\n\n- staging needs the VPN\n"),
        "{text}"
    );
    // A body that is not an append.
    let (code, said) = post(
        &http(),
        &format!("{}/v1/files/notes.md/append", server.url),
        token,
        json!({ "text": "no section" }),
    )
    .await;
    assert_eq!(code, 400, "{said}");
}

#[tokio::test]
async fn a_wrong_or_missing_token_is_refused() {
    let server = start(None).await;
    let url = format!("{}/v1/files", server.url);
    for token in ["token-of-laptopX", "token-of-lapto", "", "token-of-someone"] {
        let (code, said) = get(&url, token).await;
        assert_eq!(code, 401, "{token:?}: {said}");
    }
    let answer = http().get(&url).send().await.unwrap();
    assert_eq!(answer.status().as_u16(), 401);
    let (code, _) = get(&url, "token-of-ci").await;
    assert_eq!(code, 200);
    // Refused appends change nothing.
    let (code, _) = post(
        &http(),
        &format!("{}/v1/files/notes.md/append", server.url),
        "guess",
        json!({ "section": "S", "text": "t" }),
    )
    .await;
    assert_eq!(code, 401);
    assert!(!server.dir.path().join("notes.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_clients_appending_at_once_lose_nothing_and_never_interleave() {
    let server = start(None).await;
    let url = format!("{}/v1/files/shared.md/append", server.url);
    let per_client = 10;
    let mut tasks = Vec::new();
    for c in 0..20 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            // A connection of its own per client.
            let client = http();
            for e in 0..per_client {
                let text = format!(
                    "- c{c} e{e} first line\n  c{c} e{e} second line\n  c{c} e{e} third line"
                );
                let section = format!("Section {}", (c + e) % 3);
                let (code, said) = post(
                    &client,
                    &url,
                    "token-of-ci",
                    json!({ "section": section, "text": text }),
                )
                .await;
                assert_eq!(code, 200, "{said}");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let text = std::fs::read_to_string(server.dir.path().join("shared.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for c in 0..20 {
        for e in 0..per_client {
            let first = format!("- c{c} e{e} first line");
            let at: Vec<usize> = lines
                .iter()
                .enumerate()
                .filter(|(_, l)| **l == first)
                .map(|(i, _)| i)
                .collect();
            assert_eq!(at.len(), 1, "entry c{c} e{e} is there once:\n{text}");
            // Its three lines are together.
            assert_eq!(lines[at[0] + 1], format!("  c{c} e{e} second line"));
            assert_eq!(lines[at[0] + 2], format!("  c{c} e{e} third line"));
        }
    }
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("## Section "))
            .count(),
        3
    );
}

#[tokio::test]
async fn over_tls_with_a_certificate_the_client_trusts() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/tls");
    let tls = TlsFiles {
        cert: format!("{fixtures}/localhost.crt").into(),
        key: format!("{fixtures}/localhost.key").into(),
    };
    let server = start(Some(tls)).await;
    let cert = std::fs::read(format!("{fixtures}/localhost.crt")).unwrap();
    let trusting = march_core::http::client_builder(Duration::from_secs(10))
        .tls_certs_only([reqwest::Certificate::from_pem(&cert).unwrap()])
        .build()
        .unwrap();
    let answer = trusting
        .get(format!("{}/v1/status", server.url))
        .bearer_auth("token-of-laptop")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    // A client that does not trust it, and one that speaks plain HTTP, get nothing.
    let untrusting = http().get(format!("{}/v1/status", server.url)).send().await;
    assert!(untrusting.is_err());
    let plain = server.url.replace("https://", "http://");
    let plain = http().get(format!("{plain}/v1/status")).send().await;
    assert!(plain.is_err() || !plain.unwrap().status().is_success());
}

#[tokio::test]
async fn a_server_without_clients_or_with_a_bad_certificate_does_not_start() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = MemoryServerConfig {
        dir: std::env::temp_dir(),
        clients: Vec::new(),
        tls: None,
    };
    let e = serve_memory(listener, config, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("march memory token add"), "{e}");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = MemoryServerConfig {
        dir: std::env::temp_dir(),
        clients: clients(),
        tls: Some(TlsFiles {
            cert: "/nonexistent/cert.pem".into(),
            key: "/nonexistent/key.pem".into(),
        }),
    };
    let e = serve_memory(listener, config, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/cert.pem"), "{e}");
}
