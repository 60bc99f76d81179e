//! A session's remote memory against a real memory server on loopback: mirrored at sync, the
//! mirror kept when the server is down, appends kept while it is down and sent when it is
//! back, a wrong token refused.

use std::net::SocketAddr;

use march_core::context::MemoryLayer;
use march_core::memory::Memory;
use tokio::net::TcpListener;

use super::*;
use crate::memory::server::{MemoryClient, MemoryServerConfig, serve_memory};

const TOKEN: &str = "token-of-laptop";

/// A server on `addr` (a free port when it ends in :0) serving `dir`: its address, the token
/// that stops it, and its task, which ends once it no longer listens.
async fn server(
    dir: &Path,
    addr: &str,
) -> (
    SocketAddr,
    CancellationToken,
    tokio::task::JoinHandle<Result<(), crate::memory::server::MemoryServerError>>,
) {
    let listener = TcpListener::bind(addr).await.unwrap();
    let at = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let config = MemoryServerConfig {
        dir: dir.to_path_buf(),
        clients: vec![MemoryClient {
            name: "laptop".into(),
            token: TOKEN.into(),
        }],
        tls: None,
    };
    let task = tokio::spawn(serve_memory(listener, config, stop.clone()));
    (at, stop, task)
}

fn remote(at: SocketAddr, token: &str, mirror: &Path) -> RemoteMemory {
    RemoteMemory::new(
        &format!("http://{at}"),
        Some(token.into()),
        mirror.to_path_buf(),
    )
    .unwrap()
}

const LIMIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn the_servers_files_are_mirrored_and_reach_the_context() {
    let served = tempfile::tempdir().unwrap();
    std::fs::write(
        served.path().join("team.md"),
        "## Deploys\n- staging needs the VPN\n",
    )
    .unwrap();
    let (at, _stop, _) = server(served.path(), "127.0.0.1:0").await;
    let here = tempfile::tempdir().unwrap();
    let mirror = here.path().join("mirror");
    let memory = remote(at, TOKEN, &mirror);
    // A stale file in the mirror goes.
    std::fs::create_dir_all(&mirror).unwrap();
    std::fs::write(mirror.join("gone.md"), "old").unwrap();
    // A name that needs encoding in a URL.
    std::fs::write(served.path().join("on call.md"), "- pager rota\n").unwrap();
    memory.sync(LIMIT).await.unwrap();
    assert!(!mirror.join("gone.md").exists());
    assert_eq!(
        std::fs::read_to_string(mirror.join("on call.md")).unwrap(),
        "- pager rota\n"
    );
    assert_eq!(
        memory
            .append("on call.md", "Rota", "Ana this week")
            .await
            .unwrap(),
        RemoteAppend::Sent { new_section: true }
    );
    let served_text = std::fs::read_to_string(served.path().join("on call.md")).unwrap();
    assert!(served_text.contains("- Ana this week"), "{served_text}");
    let notes = Memory::new(
        here.path().join("global"),
        here.path().join("project"),
        Path::new(".march/memory.md"),
        4000,
    )
    .with_remote(mirror.clone());
    let layer = MemoryLayer::load(&notes);
    let rendered = layer.render();
    assert!(
        rendered.contains("<memory scope=\"remote\" file=\"team.md\">")
            && rendered.contains("staging needs the VPN"),
        "{rendered}"
    );
    let found = notes.search("vpn", None);
    assert_eq!(found.hits.len(), 1);
    assert_eq!(
        found.hits[0].file.scope,
        march_core::memory::MemoryScope::Remote
    );
}

#[tokio::test]
async fn a_wrong_token_is_refused_and_the_mirror_stays() {
    let served = tempfile::tempdir().unwrap();
    let (at, _stop, _) = server(served.path(), "127.0.0.1:0").await;
    let here = tempfile::tempdir().unwrap();
    let mirror = here.path().join("mirror");
    std::fs::create_dir_all(&mirror).unwrap();
    std::fs::write(mirror.join("kept.md"), "- cached\n").unwrap();
    let e = remote(at, "guess", &mirror).sync(LIMIT).await.unwrap_err();
    assert!(
        matches!(&e, RemoteError::Refused(m) if m.contains("401")),
        "{e}"
    );
    assert!(mirror.join("kept.md").exists());
    // A refused append is an error, not a queued one.
    let e = remote(at, "guess", &mirror)
        .append("kept.md", "S", "t")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("401"), "{e}");
    assert_eq!(remote(at, "guess", &mirror).queued(), 0);
}

#[tokio::test]
async fn appends_made_while_the_server_is_down_arrive_once_it_is_back() {
    let served = tempfile::tempdir().unwrap();
    std::fs::write(served.path().join("notes.md"), "## Build\n- use mold\n").unwrap();
    let (at, stop, task) = server(served.path(), "127.0.0.1:0").await;
    let here = tempfile::tempdir().unwrap();
    let mirror = here.path().join("mirror");
    let memory = remote(at, TOKEN, &mirror);
    memory.sync(LIMIT).await.unwrap();
    assert_eq!(
        memory
            .append("notes.md", "Build", "cargo build -j2 on CI")
            .await
            .unwrap(),
        RemoteAppend::Sent { new_section: false }
    );

    // Down: the sync fails and leaves the mirror; appends are kept, in order, and seen here.
    stop.cancel();
    // Its task ends once it no longer listens.
    task.await.unwrap().unwrap();
    let e = memory.sync(Duration::from_secs(1)).await.unwrap_err();
    assert!(matches!(e, RemoteError::Unreachable(_)), "{e}");
    for n in 0..3 {
        let done = memory
            .append("notes.md", "Offline", &format!("noted while down {n}"))
            .await
            .unwrap();
        assert_eq!(done, RemoteAppend::Queued);
    }
    assert_eq!(memory.queued(), 3);
    let mirrored = std::fs::read_to_string(mirror.join("notes.md")).unwrap();
    assert!(mirrored.contains("- noted while down 2"), "{mirrored}");
    assert!(
        !std::fs::read_to_string(served.path().join("notes.md"))
            .unwrap()
            .contains("down")
    );

    // Back on the same address: the next sync sends them first, in order, then mirrors.
    let (_, _stop, _) = server(served.path(), &at.to_string()).await;
    memory.sync(LIMIT).await.unwrap();
    assert_eq!(memory.queued(), 0);
    let text = std::fs::read_to_string(served.path().join("notes.md")).unwrap();
    let at0 = text.find("noted while down 0").unwrap();
    let at2 = text.find("noted while down 2").unwrap();
    assert!(
        at0 < at2 && text.contains("- cargo build -j2 on CI"),
        "{text}"
    );
    assert_eq!(text.matches("noted while down").count(), 3, "{text}");
    assert_eq!(
        std::fs::read_to_string(mirror.join("notes.md")).unwrap(),
        text
    );
}
