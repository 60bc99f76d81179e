//! The browser daemon (`march browser serve`) driving a real headless Chromium, reached as
//! runners reach it (`march_tools::browser`, over its socket): a local page is read, clicked,
//! typed into and photographed; two sessions keep their tabs apart; a daemon killed outright
//! is started again by the next request and leaves no browser behind; `march browser stop`
//! leaves no browser process.

#![allow(clippy::unwrap_used)] // Helpers outside #[test] fns fail the test on setup failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use march_e2e::march_bin;
use march_testkit::{PageReply, PageServer};
use march_tools::browser::protocol::{Request, Status, Target};
use march_tools::daemon::DaemonClient;
use serde_json::Value;

const PAGE: &str = r#"<!doctype html><html><head><title>Form test</title></head><body>
<main><h1>Greeting desk</h1><p id="state">Waiting</p>
<button id="change" onclick="document.getElementById('state').textContent = 'Changed!'">Change</button>
<form onsubmit="event.preventDefault(); document.getElementById('state').textContent = 'Hello, ' + document.getElementById('name').value">
<label for="name">Name</label><input id="name" type="text"></form>
</main></body></html>"#;

const OTHER: &str =
    "<html><head><title>Other page</title></head><body><p>Elsewhere</p></body></html>";

const LIMIT: Duration = Duration::from_secs(90);

/// A March home whose browser is the test's Chromium.
fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let chromium = march_testkit::test_tools::chromium();
    std::fs::write(
        home.path().join("config.toml"),
        format!("[browser]\nexecutable = \"{}\"\n", chromium.display()),
    )
    .unwrap();
    home
}

/// A client as a runner has one: it starts `march browser serve` when nobody answers.
fn client(home: &Path) -> DaemonClient {
    let data = home.join("data");
    let start = (
        PathBuf::from("/usr/bin/env"),
        vec![
            format!("MARCH_HOME={}", home.display()).into(),
            march_bin().into_os_string(),
            "browser".into(),
            "serve".into(),
        ],
    );
    DaemonClient::new(march_tools::browser::socket_path(&data), Some(start))
}

async fn pages() -> PageServer {
    let routes = [
        ("/form".to_string(), PageReply::ok("text/html", PAGE)),
        ("/other".to_string(), PageReply::ok("text/html", OTHER)),
    ];
    PageServer::start(routes.into_iter().collect())
        .await
        .unwrap()
}

async fn call(client: &DaemonClient, request: Request) -> Value {
    client
        .call(&request, LIMIT)
        .await
        .unwrap_or_else(|e| panic!("{request:?}: {e}"))
}

async fn status(client: &DaemonClient) -> Status {
    serde_json::from_value(call(client, Request::Status).await).unwrap()
}

fn alive(pid: u32) -> bool {
    // A zombie (exited, not yet reaped by its parent) is gone for our purpose.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')))
}

/// Processes whose command line names `profile` (the daemon's browser and its helpers).
fn browsers_on(profile: &Path) -> Vec<u32> {
    let needle = profile.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&needle))
                && alive(*pid)
        })
        .collect()
}

async fn gone_within(what: &str, check: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn stop(home: &Path) -> String {
    let out = Command::new(march_bin())
        .args(["browser", "stop"])
        .env("MARCH_HOME", home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn session(name: &str) -> String {
    name.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_page_is_read_clicked_typed_into_and_photographed() {
    let home = home();
    let pages = pages().await;
    let client = client(home.path());
    let s = session("s1");
    let opened = call(
        &client,
        Request::Navigate {
            session: s.clone(),
            url: pages.url("/form"),
            new_tab: false,
        },
    )
    .await;
    assert_eq!(opened["title"], "Form test");
    assert_eq!(opened["url"], pages.url("/form"));

    let read = call(
        &client,
        Request::Read {
            session: s.clone(),
            outline: false,
        },
    )
    .await;
    let text = read["text"].as_str().unwrap();
    assert!(text.starts_with("# Greeting desk"), "{text}");
    assert!(text.contains("Waiting"), "{text}");

    // The outline names the button with a ref; clicking it changes the text.
    let outline = call(
        &client,
        Request::Read {
            session: s.clone(),
            outline: true,
        },
    )
    .await;
    let outline = outline["text"].as_str().unwrap();
    let line = outline
        .lines()
        .find(|l| l.contains("button \"Change\""))
        .unwrap_or_else(|| panic!("no button in {outline}"));
    let reference: i64 = line
        .rsplit("[ref=")
        .next()
        .and_then(|r| r.trim_end_matches(']').parse().ok())
        .unwrap_or_else(|| panic!("no ref in {line}"));
    assert!(outline.contains("textbox \"Name\""), "{outline}");
    call(
        &client,
        Request::Click {
            session: s.clone(),
            target: Target {
                reference: Some(reference),
                selector: None,
            },
        },
    )
    .await;
    call(
        &client,
        Request::WaitFor {
            session: s.clone(),
            text: "Changed!".into(),
            timeout_ms: 10_000,
        },
    )
    .await;

    // Typing into the form and pressing Enter sends it.
    call(
        &client,
        Request::Type {
            session: s.clone(),
            target: Target {
                reference: None,
                selector: Some("#name".into()),
            },
            text: "Ada".into(),
            submit: true,
        },
    )
    .await;
    call(
        &client,
        Request::WaitFor {
            session: s.clone(),
            text: "Hello, Ada".into(),
            timeout_ms: 10_000,
        },
    )
    .await;
    let missing = client
        .call(
            &Request::WaitFor {
                session: s.clone(),
                text: "never there".into(),
                timeout_ms: 300,
            },
            LIMIT,
        )
        .await
        .unwrap_err();
    assert!(
        missing.contains("did not appear within 300 ms"),
        "{missing}"
    );

    // A screenshot is a PNG of the configured size (1280×800 by default).
    let shot = call(
        &client,
        Request::Screenshot {
            session: s.clone(),
            full_page: false,
        },
    )
    .await;
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["png"].as_str().unwrap())
        .unwrap();
    let image = image::load_from_memory_with_format(&png, image::ImageFormat::Png).unwrap();
    assert_eq!((image.width(), image.height()), (1280, 800));
    assert_eq!(
        (shot["width"].as_u64(), shot["height"].as_u64()),
        (Some(1280), Some(800))
    );

    let browser = status(&client).await.browser_pid.unwrap();
    assert_eq!(stop(home.path()).trim(), "The browser daemon stopped.");
    assert!(!alive(browser), "the browser process is gone after stop");
    let profile = march_tools::browser::profile_dir(&home.path().join("data"));
    assert_eq!(
        browsers_on(&profile),
        Vec::<u32>::new(),
        "no browser process is left"
    );
    assert_eq!(
        stop(home.path()).trim(),
        "The browser daemon is not running."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_keep_their_tabs_apart() {
    let home = home();
    let pages = pages().await;
    let client = client(home.path());
    let navigate = |s: &str, path: &str| Request::Navigate {
        session: session(s),
        url: pages.url(path),
        new_tab: false,
    };
    // In parallel, through one daemon.
    let (a, b) = tokio::join!(
        call(&client, navigate("a", "/form")),
        call(&client, navigate("b", "/other"))
    );
    assert_eq!(
        (a["title"].as_str(), b["title"].as_str()),
        (Some("Form test"), Some("Other page"))
    );
    let read = |s: &str| Request::Read {
        session: session(s),
        outline: false,
    };
    let (ra, rb) = tokio::join!(call(&client, read("a")), call(&client, read("b")));
    assert!(ra["text"].as_str().unwrap().contains("Greeting desk"));
    assert!(rb["text"].as_str().unwrap().contains("Elsewhere"));
    // B cannot reach A's tab.
    let a_tab = a["tab"].as_u64().unwrap() as u32;
    let e = client
        .call(
            &Request::SwitchTab {
                session: session("b"),
                tab: a_tab,
            },
            LIMIT,
        )
        .await
        .unwrap_err();
    assert_eq!(e, format!("this session has no tab {a_tab}"));
    let listed = status(&client).await;
    let by_session: Vec<(String, Vec<String>)> = listed
        .sessions
        .iter()
        .map(|s| {
            (
                s.session.clone(),
                s.tabs.iter().map(|t| t.title.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(
        by_session,
        [
            ("a".to_string(), vec!["Form test".to_string()]),
            ("b".to_string(), vec!["Other page".to_string()])
        ]
    );
    // A session that ends gives its tabs back.
    call(
        &client,
        Request::Release {
            session: session("a"),
        },
    )
    .await;
    let listed = status(&client).await;
    assert_eq!(listed.sessions.len(), 1);
    assert_eq!(listed.sessions[0].session, "b");
    stop(home.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_daemon_is_started_again_and_its_browser_does_not_linger() {
    let home = home();
    let pages = pages().await;
    let client = client(home.path());
    let navigate = Request::Navigate {
        session: session("s"),
        url: pages.url("/other"),
        new_tab: false,
    };
    call(&client, navigate.clone()).await;
    let before = status(&client).await;
    let old_browser = before.browser_pid.unwrap();
    let daemon = rustix::process::Pid::from_raw(before.pid as i32).unwrap();
    rustix::process::kill_process(daemon, rustix::process::Signal::KILL).unwrap();
    gone_within("the daemon dies", || !alive(before.pid)).await;

    // The same client, as a runner's: its next request starts a new daemon, which ends the
    // browser the old one left before starting its own.
    let again = call(&client, navigate).await;
    assert_eq!(again["title"], "Other page");
    let after = status(&client).await;
    assert_ne!(after.pid, before.pid);
    assert!(!alive(old_browser), "the killed daemon's browser was ended");
    let profile = march_tools::browser::profile_dir(&home.path().join("data"));
    let new_browser = after.browser_pid.unwrap();
    assert!(browsers_on(&profile).contains(&new_browser));
    stop(home.path());
    assert_eq!(browsers_on(&profile), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_own_browser_is_driven_and_left_running() {
    let chromium = march_testkit::test_tools::chromium();
    let own_profile = tempfile::tempdir().unwrap();
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    // The user's browser, started with remote debugging as they would.
    let mut args = vec![
        "--headless".to_string(),
        format!("--remote-debugging-port={port}"),
        format!("--user-data-dir={}", own_profile.path().display()),
        "--disable-dev-shm-usage".into(),
        "--disable-crash-reporter".into(),
    ];
    if rustix::process::geteuid().is_root() {
        args.push("--no-sandbox".into());
    }
    let mut own = Command::new(&chromium)
        .args(&args)
        // Its crash reports and state stay out of the user's home.
        .env("XDG_CONFIG_HOME", own_profile.path())
        .arg("about:blank")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let address = format!("http://127.0.0.1:{port}");
    gone_within("the user's browser listens", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!("[browser]\nconnect = \"{address}\"\n"),
    )
    .unwrap();
    let pages = pages().await;
    let client = client(home.path());
    let opened = call(
        &client,
        Request::Navigate {
            session: session("s"),
            url: pages.url("/other"),
            new_tab: false,
        },
    )
    .await;
    assert_eq!(opened["title"], "Other page");
    let listed = status(&client).await;
    assert_eq!(listed.browser_pid, None, "not the daemon's own browser");
    assert!(listed.browser.is_some());
    assert_eq!(stop(home.path()).trim(), "The browser daemon stopped.");
    assert!(
        own.try_wait().unwrap().is_none() && alive(own.id()),
        "the user's browser keeps running"
    );
    let _ = own.kill();
    let _ = own.wait();
}
