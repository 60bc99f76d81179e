//! The body of `march browser serve`: one per user, on its socket under the data directory.
//! It starts the browser at the first request that needs one (headless by default, with a
//! profile of its own), or connects to the user's browser; keeps each session's tabs apart;
//! and exits after an idle time or on `stop`, closing the browser it launched.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::accessibility::GetFullAxTreeParams;
use chromiumoxide::cdp::browser_protocol::dom::{
    BackendNodeId, FocusParams, GetBoxModelParams, ScrollIntoViewIfNeededParams,
};
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, InsertTextParams,
};
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::layout::Point;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::{Browser, Page};
use futures_util::StreamExt;
use march_core::config::BrowserConfig;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::net::UnixStream;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::protocol::{Request, SessionTabs, Status, TabInfo, Target};
use crate::daemon::{claim_socket, reply_line};
use crate::lsp::framing::{MAX_SOCKET_LINE_BYTES, RawLine, read_raw_line};

#[derive(Deserialize)]
struct RequestLine {
    id: u64,
    #[serde(flatten)]
    request: Request,
}

/// The browser the daemon drives.
struct Running {
    browser: Browser,
    /// Drives the DevTools connection; ends when the browser goes away.
    handler: tokio::task::JoinHandle<()>,
    version: String,
    /// The process, when the daemon launched it (not the user's own browser).
    pid: Option<u32>,
}

struct Tab {
    id: u32,
    page: Page,
}

#[derive(Default)]
struct Tabs {
    tabs: Vec<Tab>,
    current: Option<u32>,
}

impl Tabs {
    fn current(&self) -> Result<&Page, String> {
        let id = self
            .current
            .ok_or("no page is open: navigate to one first")?;
        self.tabs
            .iter()
            .find(|t| t.id == id)
            .map(|t| &t.page)
            .ok_or_else(|| "no page is open: navigate to one first".into())
    }
}

struct Daemon {
    config: BrowserConfig,
    data_dir: PathBuf,
    browser: tokio::sync::Mutex<Option<Running>>,
    sessions: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Tabs>>>>,
    next_tab: AtomicU32,
    last_request: Mutex<Instant>,
    stop: CancellationToken,
}

/// Serves the browser daemon on its socket under `data_dir` unless another process does;
/// returns when it stops.
pub async fn run_browser_daemon(data_dir: &Path, config: BrowserConfig) -> Result<(), String> {
    let socket = super::socket_path(data_dir);
    let Some(claimed) = claim_socket(&socket)? else {
        return Ok(());
    };
    let idle = Duration::from_secs(config.idle_minutes.max(1) * 60);
    let daemon = Arc::new(Daemon {
        config,
        data_dir: data_dir.to_path_buf(),
        browser: tokio::sync::Mutex::new(None),
        sessions: Mutex::new(HashMap::new()),
        next_tab: AtomicU32::new(1),
        last_request: Mutex::new(Instant::now()),
        stop: CancellationToken::new(),
    });
    // A daemon killed outright leaves its browser running, holding the profile.
    end_leftover_browser(&daemon.pid_file(), &super::profile_dir(data_dir)).await;
    tracing::info!(socket = %socket.display(), "browser daemon serving");
    loop {
        let quiet = idle.saturating_sub(daemon.last_request.lock().elapsed());
        tokio::select! {
            accepted = claimed.listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(serve_connection(daemon.clone(), stream));
                }
                Err(e) => tracing::warn!("browser daemon: accept failed: {e}"),
            },
            () = tokio::time::sleep(quiet) => {
                if daemon.last_request.lock().elapsed() >= idle {
                    tracing::info!("browser daemon: idle, stopping");
                    break;
                }
            }
            () = daemon.stop.cancelled() => break,
        }
    }
    daemon.shut_down().await;
    let _ = std::fs::remove_file(&socket);
    tracing::info!("browser daemon done");
    Ok(())
}

async fn serve_connection(daemon: Arc<Daemon>, stream: UnixStream) {
    let (read, write) = stream.into_split();
    let (out, writer) = crate::daemon::line_writer(write);
    // The sessions this runner acted for: their tabs close when it goes (ended, or crashed).
    let mut touched = std::collections::HashSet::new();
    let mut reader = BufReader::new(read);
    while let Ok(Some(line)) = read_raw_line(&mut reader, MAX_SOCKET_LINE_BYTES).await {
        *daemon.last_request.lock() = Instant::now();
        let parsed = match line {
            RawLine::Line(bytes) => serde_json::from_slice::<RequestLine>(&bytes)
                .map_err(|e| format!("bad request: {e}")),
            RawLine::TooLong => Err("bad request: too long".into()),
        };
        let RequestLine { id, request } = match parsed {
            Ok(line) => line,
            Err(e) => {
                let _ = out.send(reply_line(0, Err(e)));
                continue;
            }
        };
        if let Some(session) = request.session() {
            touched.insert(session.to_string());
        }
        let daemon = daemon.clone();
        let out = out.clone();
        tokio::spawn(async move {
            let stop = matches!(request, Request::Stop);
            // A panic in a library under one request answers that request and spares the rest.
            let worker = daemon.clone();
            let result = tokio::spawn(async move { worker.handle(request).await })
                .await
                .unwrap_or_else(|e| Err(format!("the browser daemon failed on this request: {e}")));
            *daemon.last_request.lock() = Instant::now();
            let _ = out.send(reply_line(id, result));
            if stop {
                daemon.stop.cancel();
            }
        });
    }
    drop(out);
    let _ = writer.await;
    for session in touched {
        let _ = daemon.handle(Request::Release { session }).await;
    }
}

impl Daemon {
    fn pid_file(&self) -> PathBuf {
        self.data_dir.join("browser").join("browser.pid")
    }

    async fn handle(&self, request: Request) -> Result<Value, String> {
        match request {
            Request::Navigate {
                session,
                url,
                new_tab,
            } => self.navigate(&session, &url, new_tab).await,
            Request::Read { session, outline } => {
                let tabs = self.tabs(&session);
                let tabs = tabs.lock().await;
                read(tabs.current()?, outline).await
            }
            Request::Click { session, target } => {
                let tabs = self.tabs(&session);
                let tabs = tabs.lock().await;
                let page = tabs.current()?;
                let node = node_of(page, &target).await?;
                let point = center(page, node).await?;
                page.click(point).await.map_err(cdp_error)?;
                where_now(page).await
            }
            Request::Type {
                session,
                target,
                text,
                submit,
            } => {
                let tabs = self.tabs(&session);
                let tabs = tabs.lock().await;
                let page = tabs.current()?;
                let node = node_of(page, &target).await?;
                let focus = FocusParams::builder().backend_node_id(node).build();
                page.execute(focus).await.map_err(cdp_error)?;
                page.execute(InsertTextParams::new(text))
                    .await
                    .map_err(cdp_error)?;
                if submit {
                    press_enter(page).await?;
                }
                where_now(page).await
            }
            Request::Scroll {
                session,
                target,
                pixels,
            } => {
                let tabs = self.tabs(&session);
                let tabs = tabs.lock().await;
                let page = tabs.current()?;
                if let Some(target) = target {
                    let node = node_of(page, &target).await?;
                    scroll_to(page, node).await?;
                } else {
                    page.evaluate(format!("window.scrollBy(0, {pixels})"))
                        .await
                        .map_err(cdp_error)?;
                }
                let at = page
                    .evaluate("[window.scrollY, document.documentElement.scrollHeight]")
                    .await
                    .map_err(cdp_error)?;
                Ok(json!({ "scroll": at.value().cloned() }))
            }
            Request::WaitFor {
                session,
                text,
                timeout_ms,
            } => {
                let tabs = self.tabs(&session);
                let tabs = tabs.lock().await;
                wait_for(tabs.current()?, &text, Duration::from_millis(timeout_ms)).await
            }
            Request::Screenshot { session, full_page } => {
                let tabs = self.tabs(&session);
                let tabs = tabs.lock().await;
                let params = ScreenshotParams::builder()
                    .format(CaptureScreenshotFormat::Png)
                    .full_page(full_page)
                    .build();
                let png = tabs
                    .current()?
                    .screenshot(params)
                    .await
                    .map_err(cdp_error)?;
                let size = imagesize::blob_size(&png).map_err(|e| e.to_string())?;
                Ok(json!({
                    "png": base64::engine::general_purpose::STANDARD.encode(&png),
                    "width": size.width,
                    "height": size.height,
                }))
            }
            Request::Evaluate {
                session,
                expression,
            } => {
                let tabs = self.tabs(&session);
                let tabs = tabs.lock().await;
                let result = tabs
                    .current()?
                    .evaluate(expression)
                    .await
                    .map_err(cdp_error)?;
                Ok(json!({ "value": result.value().cloned() }))
            }
            Request::Tabs { session } => {
                let tabs = self.tabs(&session);
                let tabs = tabs.lock().await;
                Ok(json!({ "tabs": list(&tabs).await }))
            }
            Request::SwitchTab { session, tab } => {
                let tabs = self.tabs(&session);
                let mut tabs = tabs.lock().await;
                let page = tabs
                    .tabs
                    .iter()
                    .find(|t| t.id == tab)
                    .map(|t| t.page.clone())
                    .ok_or_else(|| format!("this session has no tab {tab}"))?;
                tabs.current = Some(tab);
                let _ = page.bring_to_front().await;
                where_now(&page).await
            }
            Request::CloseTab { session, tab } => {
                let tabs = self.tabs(&session);
                let mut tabs = tabs.lock().await;
                let at = tabs
                    .tabs
                    .iter()
                    .position(|t| t.id == tab)
                    .ok_or_else(|| format!("this session has no tab {tab}"))?;
                let closed = tabs.tabs.remove(at);
                let _ = closed.page.close().await;
                if tabs.current == Some(tab) {
                    tabs.current = tabs.tabs.last().map(|t| t.id);
                }
                Ok(json!({ "tabs": list(&tabs).await }))
            }
            Request::Release { session } => {
                let tabs = self.sessions.lock().remove(&session);
                if let Some(tabs) = tabs {
                    for tab in tabs.lock().await.tabs.drain(..) {
                        let _ = tab.page.close().await;
                    }
                }
                Ok(Value::Null)
            }
            Request::Status => self.status().await,
            Request::Stop => Ok(Value::Null),
        }
    }

    fn tabs(&self, session: &str) -> Arc<tokio::sync::Mutex<Tabs>> {
        self.sessions
            .lock()
            .entry(session.to_string())
            .or_default()
            .clone()
    }

    async fn navigate(&self, session: &str, url: &str, new_tab: bool) -> Result<Value, String> {
        let tabs = self.tabs(session);
        let mut tabs = tabs.lock().await;
        // A tab whose page died with a browser that was restarted is gone.
        let page = match tabs.current() {
            Ok(page) if !new_tab && page.url().await.is_ok() => page.clone(),
            _ => {
                let page = self.new_page().await?;
                let id = self.next_tab.fetch_add(1, Ordering::Relaxed);
                tabs.tabs.retain(|t| !t.page.target_id().inner().is_empty());
                tabs.tabs.push(Tab {
                    id,
                    page: page.clone(),
                });
                tabs.current = Some(id);
                page
            }
        };
        page.goto(url)
            .await
            .map_err(|e| format!("cannot open {url}: {e}"))?;
        let mut answer = where_now(&page).await?;
        answer["tab"] = json!(tabs.current);
        Ok(answer)
    }

    /// A new tab in the browser, which is started (or started again) when needed.
    async fn new_page(&self) -> Result<Page, String> {
        let mut slot = self.browser.lock().await;
        if slot.as_ref().is_some_and(|r| r.handler.is_finished()) {
            tracing::warn!("browser daemon: the browser went away; starting it again");
            *slot = None;
            // Its tabs went with it.
            self.sessions.lock().clear();
        }
        if slot.is_none() {
            *slot = Some(self.start_browser().await?);
        }
        let running = slot.as_ref().ok_or("no browser")?;
        running
            .browser
            .new_page("about:blank")
            .await
            .map_err(|e| format!("cannot open a tab: {e}"))
    }

    async fn start_browser(&self) -> Result<Running, String> {
        let (width, height) = (self.config.width, self.config.height);
        let viewport = Viewport {
            width,
            height,
            device_scale_factor: Some(1.0),
            ..Viewport::default()
        };
        let (mut browser, mut handler) = match &self.config.connect {
            Some(address) => {
                // chromiumoxide asks the browser's HTTP endpoint for its socket with reqwest.
                march_core::http::install_crypto_provider();
                let config = chromiumoxide::handler::HandlerConfig {
                    viewport: Some(viewport),
                    request_timeout: Duration::from_secs(30),
                    ..Default::default()
                };
                Browser::connect_with_config(address.clone(), config)
                    .await
                    .map_err(|e| format!("cannot connect to the browser at {address}: {e}"))?
            }
            None => {
                let executable = super::find_browser(&self.config).ok_or(
                    "no Chromium-family browser found: install chromium, or set \
                     [browser] executable, or [browser] connect to a browser of your own",
                )?;
                let profile = super::profile_dir(&self.data_dir);
                std::fs::create_dir_all(&profile)
                    .map_err(|e| format!("cannot create {}: {e}", profile.display()))?;
                let mut builder = chromiumoxide::BrowserConfig::builder()
                    .chrome_executable(&executable)
                    .user_data_dir(&profile)
                    .window_size(width, height)
                    .viewport(viewport)
                    .launch_timeout(Duration::from_secs(30))
                    .request_timeout(Duration::from_secs(30))
                    .arg("--disable-dev-shm-usage")
                    .arg("--disable-crash-reporter")
                    // Chromium keeps crash reports and some state under the user's config
                    // directory whatever its profile: under March's data directory instead.
                    .env(
                        "XDG_CONFIG_HOME",
                        self.data_dir
                            .join("browser")
                            .join("config")
                            .to_string_lossy(),
                    );
                if self.config.headed {
                    builder = builder.with_head();
                }
                // Chromium's sandbox cannot run as root.
                if rustix::process::geteuid().is_root() {
                    builder = builder.no_sandbox();
                }
                let config = builder.build()?;
                Browser::launch(config)
                    .await
                    .map_err(|e| format!("cannot start {}: {e}", executable.display()))?
            }
        };
        let handler = tokio::spawn(async move {
            // Messages this crate does not know are reported as errors; the connection
            // goes on until the browser closes it.
            while let Some(event) = handler.next().await {
                if let Err(e) = event {
                    tracing::debug!("browser daemon: {e}");
                }
            }
        });
        let version = match browser.version().await {
            Ok(v) => v.product,
            Err(e) => format!("unknown ({e})"),
        };
        let pid = browser.get_mut_child().and_then(|c| c.inner.id());
        if let Some(pid) = pid {
            let _ = std::fs::write(self.pid_file(), pid.to_string());
        }
        tracing::info!(%version, ?pid, "browser daemon: browser ready");
        Ok(Running {
            browser,
            handler,
            version,
            pid,
        })
    }

    async fn status(&self) -> Result<Value, String> {
        let (browser, browser_pid) = match &*self.browser.lock().await {
            Some(r) if !r.handler.is_finished() => (Some(r.version.clone()), r.pid),
            _ => (None, None),
        };
        let sessions: Vec<(String, Arc<tokio::sync::Mutex<Tabs>>)> = self
            .sessions
            .lock()
            .iter()
            .map(|(s, t)| (s.clone(), t.clone()))
            .collect();
        let mut listed = Vec::new();
        for (session, tabs) in sessions {
            let tabs = list(&*tabs.lock().await).await;
            if !tabs.is_empty() {
                listed.push(SessionTabs { session, tabs });
            }
        }
        listed.sort_by(|a, b| a.session.cmp(&b.session));
        let status = Status {
            pid: std::process::id(),
            browser,
            browser_pid,
            sessions: listed,
        };
        serde_json::to_value(status).map_err(|e| e.to_string())
    }

    /// Closes every tab, and the browser when the daemon launched it.
    async fn shut_down(&self) {
        let sessions: Vec<_> = self.sessions.lock().drain().map(|(_, t)| t).collect();
        for tabs in sessions {
            for tab in tabs.lock().await.tabs.drain(..) {
                let _ = tab.page.close().await;
            }
        }
        if let Some(mut running) = self.browser.lock().await.take() {
            if running.pid.is_some() {
                let _ = running.browser.close().await;
                let waited =
                    tokio::time::timeout(Duration::from_secs(10), running.browser.wait()).await;
                if waited.is_err() {
                    let _ = running.browser.kill().await;
                }
                let _ = std::fs::remove_file(self.pid_file());
                // Its helpers (zygote, GPU, renderers) end after it, a moment later.
                end_processes_on(&super::profile_dir(&self.data_dir), Duration::from_secs(5)).await;
            }
            running.handler.abort();
        }
    }
}

/// The processes (not this one) whose command line names `profile`: a browser on it and its
/// helpers.
fn processes_on(profile: &Path) -> Vec<i32> {
    let needle = profile.to_string_lossy().into_owned();
    let me = std::process::id() as i32;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let running = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit_once(") ")
                    .is_some_and(|(_, r)| !r.starts_with('Z'))
            });
            running
                && std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&needle))
        })
        .collect()
}

/// Waits up to `grace` for the processes on `profile` to end, then kills what is left.
async fn end_processes_on(profile: &Path, grace: Duration) {
    let deadline = Instant::now() + grace;
    loop {
        let left = processes_on(profile);
        if left.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            tracing::warn!(
                ?left,
                "browser daemon: browser processes did not end; killing them"
            );
            for pid in left {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Ends the browser a killed daemon left (its pid file names it, and it runs on our
/// profile), so the profile is free for a new one.
async fn end_leftover_browser(pid_file: &Path, profile: &Path) {
    let Some(pid) = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|p| p.trim().parse::<i32>().ok())
    else {
        return;
    };
    let _ = std::fs::remove_file(pid_file);
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let ours = String::from_utf8_lossy(&cmdline).contains(&*profile.to_string_lossy());
    let Some(pid) = rustix::process::Pid::from_raw(pid).filter(|_| ours) else {
        return;
    };
    tracing::info!(
        pid = pid.as_raw_nonzero().get(),
        "browser daemon: ending a browser left running"
    );
    // Its helpers (zygote, renderers) share its process group, the dead daemon's: end them
    // all, unless that group is ours.
    let group = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero()))
        .ok()
        .and_then(|stat| {
            let after_name = stat.rsplit_once(") ")?.1.to_string();
            after_name.split_whitespace().nth(2)?.parse::<i32>().ok()
        })
        .and_then(rustix::process::Pid::from_raw);
    if let Some(group) = group
        && Some(group) != rustix::process::getpgid(None).ok()
    {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    end_processes_on(profile, Duration::ZERO).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::path::Path::new(&format!("/proc/{}", pid.as_raw_nonzero())).exists()
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn cdp_error(e: chromiumoxide::error::CdpError) -> String {
    e.to_string()
}

/// Where the page is now, and its title.
async fn where_now(page: &Page) -> Result<Value, String> {
    let url = page.url().await.map_err(cdp_error)?.unwrap_or_default();
    let title = page.get_title().await.ok().flatten().unwrap_or_default();
    Ok(json!({ "url": url, "title": title }))
}

async fn read(page: &Page, outline: bool) -> Result<Value, String> {
    let mut answer = where_now(page).await?;
    let text = if outline {
        let tree = page
            .execute(GetFullAxTreeParams::default())
            .await
            .map_err(cdp_error)?;
        super::outline::outline(&tree.result.nodes)
    } else {
        let html = page.content().await.map_err(cdp_error)?;
        let base = answer["url"]
            .as_str()
            .and_then(|u| reqwest::Url::parse(u).ok());
        crate::web::page::readable(&html, base.as_ref()).markdown
    };
    answer["text"] = json!(text);
    Ok(answer)
}

/// The element `target` names.
async fn node_of(page: &Page, target: &Target) -> Result<BackendNodeId, String> {
    if let Some(reference) = target.reference {
        return Ok(BackendNodeId::new(reference));
    }
    let Some(selector) = &target.selector else {
        return Err("name the element: a ref from the outline, or a CSS selector".into());
    };
    let element = page
        .find_element(selector.clone())
        .await
        .map_err(|e| format!("no element matches {selector}: {e}"))?;
    Ok(element.backend_node_id)
}

async fn scroll_to(page: &Page, node: BackendNodeId) -> Result<(), String> {
    let scroll = ScrollIntoViewIfNeededParams::builder()
        .backend_node_id(node)
        .build();
    page.execute(scroll)
        .await
        .map_err(|e| format!("element {} is not on the page: {e}", node.inner()))?;
    Ok(())
}

/// The middle of the element, scrolled into view.
async fn center(page: &Page, node: BackendNodeId) -> Result<Point, String> {
    scroll_to(page, node).await?;
    let params = GetBoxModelParams::builder().backend_node_id(node).build();
    let model = page
        .execute(params)
        .await
        .map_err(|e| format!("element {} has no box (hidden?): {e}", node.inner()))?;
    let quad = model.result.model.content.inner();
    if quad.len() < 8 {
        return Err(format!("element {} has no box", node.inner()));
    }
    let x = (quad[0] + quad[2] + quad[4] + quad[6]) / 4.0;
    let y = (quad[1] + quad[3] + quad[5] + quad[7]) / 4.0;
    Ok(Point { x, y })
}

async fn press_enter(page: &Page) -> Result<(), String> {
    for kind in [DispatchKeyEventType::KeyDown, DispatchKeyEventType::KeyUp] {
        let mut key = DispatchKeyEventParams::builder()
            .r#type(kind.clone())
            .key("Enter")
            .code("Enter")
            .windows_virtual_key_code(13);
        if kind == DispatchKeyEventType::KeyDown {
            key = key.text("\r");
        }
        page.execute(key.build()?).await.map_err(cdp_error)?;
    }
    Ok(())
}

async fn wait_for(page: &Page, text: &str, limit: Duration) -> Result<Value, String> {
    let needle = serde_json::to_string(text).map_err(|e| e.to_string())?;
    let check = format!("!!document.body && document.body.innerText.includes({needle})");
    let deadline = Instant::now() + limit;
    loop {
        let found = page.evaluate(check.as_str()).await.map_err(cdp_error)?;
        if found.value() == Some(&Value::Bool(true)) {
            return where_now(page).await;
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "\"{text}\" did not appear within {} ms",
                limit.as_millis()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn list(tabs: &Tabs) -> Vec<TabInfo> {
    let mut listed = Vec::new();
    for tab in &tabs.tabs {
        let url = tab.page.url().await.ok().flatten().unwrap_or_default();
        let title = tab
            .page
            .get_title()
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        listed.push(TabInfo {
            tab: tab.id,
            url,
            title,
            current: tabs.current == Some(tab.id),
        });
    }
    listed
}
