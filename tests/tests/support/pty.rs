//! Running the real `march` binary in a pseudo-terminal and reading its screen through the
//! `vt100` crate, as a user would see it.

#![allow(dead_code)] // Each test binary uses a different part.

use parking_lot::{Condvar, Mutex};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// How long any wait on the screen may take before the test fails.
pub const SCREEN_LIMIT: Duration = Duration::from_secs(60);

/// The parsed screen, updated by a reader thread; the condvar wakes waiters on new output.
struct Screen {
    parser: Mutex<(vt100::Parser, bool)>,
    changed: Condvar,
    /// Control sequences the screen model does not keep (bells, OSC notifications), as
    /// they arrived: every BEL and every OSC 9, each as its raw bytes.
    signals: Mutex<Vec<Vec<u8>>>,
    /// The control data of every kitty graphics command written (`a=T,i=…`).
    graphics: Mutex<Vec<String>>,
}

/// What the terminal in the PTY answers when asked what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalKind {
    /// A terminal without pictures: it answers the device attributes and status reports.
    Plain,
    /// A terminal with kitty's graphics protocol and 8×16 pixel cells.
    Kitty,
}

/// `march` in a PTY: a client of the workspace server it starts (or attaches to).
pub struct PtyMarch {
    child: Box<dyn Child + Send + Sync>,
    master: Box<dyn MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    screen: Arc<Screen>,
    /// The environment it was started with, for the CLI commands a test runs beside it.
    env: Vec<(String, std::ffi::OsString)>,
    /// Where it was started.
    cwd: std::path::PathBuf,
}

impl PtyMarch {
    /// Start `march ARGS` in `cwd` at `cols`×`rows` with exactly the environment `env`
    /// (plus TERM).
    pub fn spawn(
        args: &[&str],
        cwd: &Path,
        env: &[(&str, &std::ffi::OsStr)],
        cols: u16,
        rows: u16,
    ) -> PtyMarch {
        Self::spawn_as(args, cwd, env, cols, rows, TerminalKind::Plain)
    }

    /// [`Self::spawn`] in a terminal of `kind`.
    pub fn spawn_as(
        args: &[&str],
        cwd: &Path,
        env: &[(&str, &std::ffi::OsStr)],
        cols: u16,
        rows: u16,
        kind: TerminalKind,
    ) -> PtyMarch {
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap_or_else(|e| panic!("openpty: {e}"));
        let mut cmd = CommandBuilder::new(march_e2e::march_bin());
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env_clear();
        cmd.env("TERM", "xterm-256color");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair
            .slave
            .spawn_command(cmd)
            .unwrap_or_else(|e| panic!("spawn march in a pty: {e}"));
        drop(pair.slave);
        let mut reader = pair
            .master
            .try_clone_reader()
            .unwrap_or_else(|e| panic!("pty reader: {e}"));
        let writer = Arc::new(Mutex::new(
            pair.master
                .take_writer()
                .unwrap_or_else(|e| panic!("pty writer: {e}")),
        ));
        let screen = Arc::new(Screen {
            parser: Mutex::new((vt100::Parser::new(rows, cols, 0), false)),
            changed: Condvar::new(),
            signals: Mutex::new(Vec::new()),
            graphics: Mutex::new(Vec::new()),
        });
        let feed = screen.clone();
        let answers = writer.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // An OSC sequence cut by a read boundary, kept until its end arrives.
            let mut pending: Vec<u8> = Vec::new();
            let mut carry: Vec<u8> = Vec::new();
            // The end of what was read before, so a sequence cut by a read is still seen.
            let mut tail: Vec<u8> = Vec::new();
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => 0,
                    Ok(n) => n,
                };
                let mut guard = feed.parser.lock();
                if n == 0 {
                    guard.1 = true;
                    feed.changed.notify_all();
                    return;
                }
                guard
                    .0
                    .process(&stand_in_replacements(&mut carry, &buf[..n]));
                record_signals(&buf[..n], &mut pending, &feed.signals);
                answer_queries(kind, &mut tail, &buf[..n], &answers, &feed.graphics);
                feed.changed.notify_all();
            }
        });
        PtyMarch {
            child,
            master: pair.master,
            writer,
            screen,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_os_string()))
                .collect(),
            cwd: cwd.to_path_buf(),
        }
    }

    /// `march ARGS` run to its end beside this one (same environment and directory): its
    /// exit code and stdout.
    pub fn cli(&self, args: &[&str]) -> (i32, String) {
        let out = self
            .command(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run march {args:?}: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        (out.status.code().unwrap_or(-1), format!("{stdout}{stderr}"))
    }

    /// `march ARGS` beside it: its directory and environment, no terminal.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(march_e2e::march_bin());
        command
            .args(args)
            .current_dir(&self.cwd)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// Hangs up its terminal: SIGHUP to `march`, as the kernel sends the session leader
    /// when a terminal goes away; waits for it to exit.
    pub fn hang_up(&mut self) {
        self.signal(rustix::process::Signal::HUP);
        self.wait_exit();
    }

    /// Kills `march` with SIGKILL, giving it no chance to restore anything; waits for it.
    pub fn kill9(&mut self) {
        self.signal(rustix::process::Signal::KILL);
        self.wait_exit();
    }

    fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.pid() as i32)
            .unwrap_or_else(|| panic!("march has no pid"));
        rustix::process::kill_process(pid, signal).unwrap_or_else(|e| panic!("kill: {e}"));
    }

    /// The running workspaces, as `march ls --json` prints them.
    pub fn workspaces(&self) -> Vec<serde_json::Value> {
        let (code, out) = self.cli(&["ls", "--json"]);
        assert_eq!(code, 0, "march ls: {out}");
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// The process id of the workspace server this client is attached to (the one of its
    /// directory, else the only one).
    pub fn server_pid(&self) -> u32 {
        let all = self.workspaces();
        let cwd = self.cwd.canonicalize().unwrap_or_else(|_| self.cwd.clone());
        let mine = all
            .iter()
            .find(|w| {
                w["dirs"]
                    .as_array()
                    .is_some_and(|d| d.iter().any(|d| d.as_str() == cwd.to_str()))
            })
            .or(all.first())
            .unwrap_or_else(|| panic!("no workspace server runs"));
        mine["pid"].as_u64().unwrap_or(0) as u32
    }

    /// The screen's text, rows joined by newlines.
    pub fn text(&self) -> String {
        let guard = self.screen.parser.lock();
        guard.0.screen().contents()
    }

    /// Wait until `pred` holds for the screen text; fails the test with the screen after
    /// [`SCREEN_LIMIT`].
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + SCREEN_LIMIT;
        let mut guard = self.screen.parser.lock();
        loop {
            let text = guard.0.screen().contents();
            if pred(&text) {
                return text;
            }
            let now = Instant::now();
            if now >= deadline || guard.1 {
                drop(guard);
                panic!(
                    "timed out waiting for {what}; the screen:\n{text}\n{}",
                    self.log_tails()
                );
            }
            self.screen.changed.wait_for(&mut guard, deadline - now);
        }
    }

    /// Waits until `pred` holds of the parsed screen (cells with their attributes).
    pub fn wait_screen(&self, what: &str, pred: impl Fn(&vt100::Screen) -> bool) {
        let deadline = Instant::now() + SCREEN_LIMIT;
        let mut guard = self.screen.parser.lock();
        loop {
            if pred(guard.0.screen()) {
                return;
            }
            let now = Instant::now();
            if now >= deadline || guard.1 {
                let text = guard.0.screen().contents();
                drop(guard);
                panic!(
                    "timed out waiting for {what}; the screen:\n{text}\n{}",
                    self.log_tails()
                );
            }
            self.screen.changed.wait_for(&mut guard, deadline - now);
        }
    }

    /// Looks at the parsed screen (cells with their attributes).
    pub fn with_screen<T>(&self, f: impl FnOnce(&vt100::Screen) -> T) -> T {
        let guard = self.screen.parser.lock();
        f(guard.0.screen())
    }

    /// Wait until the screen shows `needle`.
    pub fn wait_text(&self, needle: &str) -> String {
        self.wait_for(&format!("`{needle}` on screen"), |t| t.contains(needle))
    }

    /// `march ARGS` in `cwd` at 120×40 with a clean environment: PATH, HOME, MARCH_HOME,
    /// XDG_RUNTIME_DIR (`run` in MARCH_HOME, so its servers are its own) and `extra` only.
    pub fn spawn_clean(
        args: &[&str],
        cwd: &Path,
        home: &Path,
        march_home: &Path,
        extra: &[(&str, &std::ffi::OsStr)],
    ) -> PtyMarch {
        Self::spawn_sized(args, cwd, home, march_home, extra, 120, 40)
    }

    /// [`Self::spawn_clean`] in a terminal of `kind`.
    pub fn spawn_clean_as(
        kind: TerminalKind,
        args: &[&str],
        cwd: &Path,
        home: &Path,
        march_home: &Path,
    ) -> PtyMarch {
        let env = clean_env(home, march_home);
        let env: Vec<(&str, &std::ffi::OsStr)> =
            env.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
        PtyMarch::spawn_as(args, cwd, &env, 120, 40, kind)
    }

    /// [`Self::spawn_clean`] at `cols`×`rows`.
    pub fn spawn_sized(
        args: &[&str],
        cwd: &Path,
        home: &Path,
        march_home: &Path,
        extra: &[(&str, &std::ffi::OsStr)],
        cols: u16,
        rows: u16,
    ) -> PtyMarch {
        let env = clean_env(home, march_home);
        let mut env: Vec<(&str, &std::ffi::OsStr)> =
            env.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
        env.extend_from_slice(extra);
        PtyMarch::spawn(args, cwd, &env, cols, rows)
    }

    /// Types `text` and Enter.
    pub fn type_line(&mut self, text: &str) {
        self.send(text.as_bytes());
        self.send(b"\r");
    }

    /// Quits with `Ctrl-a Q` and checks March exited cleanly.
    pub fn quit(&mut self) {
        self.send(b"\x01");
        self.send(b"Q");
        // When work would be lost March asks once; a test that quits means it.
        let mut confirmed = false;
        let code = self.wait_exit_while(|m| {
            if !confirmed && m.text().contains("again to go ahead") {
                confirmed = true;
                m.send(b"\x01");
                m.send(b"Q");
            }
        });
        assert_eq!(code, 0, "march exited with an error");
    }

    /// Quits with `Ctrl-a Q` expecting March to ask first (work would be lost): checks the
    /// question names `what`, then confirms.
    pub fn quit_confirming(&mut self, what: &str) {
        self.send(b"\x01");
        self.send(b"Q");
        let screen = self.wait_text("again to go ahead");
        assert!(screen.contains(what), "{screen}");
        assert!(
            self.child.try_wait().is_ok_and(|s| s.is_none()),
            "quit without asking"
        );
        self.send(b"\x01");
        self.send(b"Q");
        assert_eq!(self.wait_exit(), 0, "march exited with an error");
    }

    /// Type `bytes` as the user would.
    pub fn send(&mut self, bytes: &[u8]) {
        let mut writer = self.writer.lock();
        writer
            .write_all(bytes)
            .and_then(|()| writer.flush())
            .unwrap_or_else(|e| panic!("write to pty: {e}"));
    }

    /// The control data of every kitty graphics command March wrote so far.
    pub fn graphics(&self) -> Vec<String> {
        self.screen.graphics.lock().clone()
    }

    /// Resize the terminal. The screen model is resized first, so the frames drawn for the
    /// new size land in a screen of that size.
    pub fn resize(&self, cols: u16, rows: u16) {
        {
            let mut guard = self.screen.parser.lock();
            guard.0.screen_mut().set_size(rows, cols);
        }
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap_or_else(|e| panic!("resize: {e}"));
    }

    /// The text put on the clipboard so far (OSC 52 payloads, decoded), in order.
    pub fn clipboard(&self) -> Vec<String> {
        self.signals()
            .iter()
            .filter_map(|s| s.strip_prefix(b"\x1b]52;"))
            .filter_map(|rest| {
                let rest = rest
                    .strip_suffix(b"\x07")
                    .or(rest.strip_suffix(b"\x1b\\"))?;
                let at = rest.iter().position(|&b| b == b';')?;
                Some(String::from_utf8_lossy(&base64_decode(&rest[at + 1..])).into_owned())
            })
            .collect()
    }

    /// Waits until the clipboard got `n` texts, and gives the last.
    pub fn wait_clipboard(&self, n: usize) -> String {
        self.wait_for(&format!("{n} copies (OSC 52)"), |_| {
            self.clipboard().len() >= n
        });
        self.clipboard().pop().unwrap_or_default()
    }

    /// The bells, OSC 9 notifications and OSC 52 copies written so far, in order.
    pub fn signals(&self) -> Vec<Vec<u8>> {
        self.screen.signals.lock().clone()
    }

    /// The process id of `march`.
    pub fn pid(&self) -> u32 {
        self.child.process_id().unwrap_or(0)
    }

    /// The last lines of every log March wrote under its `MARCH_HOME`, for a failure's
    /// message: what the processes were doing when the screen stopped changing.
    fn log_tails(&self) -> String {
        const LINES: usize = 40;
        let Some((_, home)) = self.env.iter().find(|(k, _)| k == "MARCH_HOME") else {
            return String::new();
        };
        let dir = std::path::Path::new(home).join("data").join("logs");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return format!("(no logs in {})", dir.display());
        };
        let mut out = String::new();
        for entry in entries.flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(LINES)..];
            out.push_str(&format!(
                "--- {} (last {} lines)\n{}\n",
                entry.path().display(),
                tail.len(),
                tail.join("\n")
            ));
        }
        out
    }

    /// Wait for `march` to exit; its exit code.
    pub fn wait_exit(&mut self) -> u32 {
        self.wait_exit_while(|_| {})
    }

    /// [`Self::wait_exit`], calling `each` while March still runs.
    fn wait_exit_while(&mut self, mut each: impl FnMut(&mut PtyMarch)) -> u32 {
        let deadline = Instant::now() + SCREEN_LIMIT;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.exit_code(),
                Ok(None) if Instant::now() < deadline => {
                    each(self);
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(None) => panic!(
                    "march did not exit; the screen:\n{}\n{}",
                    self.text(),
                    self.log_tails()
                ),
                Err(e) => panic!("wait for march: {e}"),
            }
        }
    }
}

impl Drop for PtyMarch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        // The servers a test started end with it (when it has a runtime dir of its own).
        if self.env.iter().any(|(k, _)| k == "XDG_RUNTIME_DIR") {
            let _ = self.cli(&["kill-server", "--force"]);
        }
    }
}

/// Finds lone BELs and OSC 9 sequences (`ESC ] 9 ; … BEL`) in `bytes`; `pending` carries
/// an OSC cut at the end of one read into the next. Other OSC sequences (titles) end in BEL
/// too and are skipped whole.
fn record_signals(bytes: &[u8], pending: &mut Vec<u8>, out: &Mutex<Vec<Vec<u8>>>) {
    let mut found = Vec::new();
    for &b in bytes {
        if !pending.is_empty() {
            pending.push(b);
            if b == 0x07 || pending.ends_with(b"\x1b\\") {
                if pending.starts_with(b"\x1b]9;") || pending.starts_with(b"\x1b]52;") {
                    found.push(std::mem::take(pending));
                }
                pending.clear();
            } else if pending.len() == 2 && b != b']' {
                pending.clear();
            }
        } else if b == 0x1b {
            pending.push(b);
        } else if b == 0x07 {
            found.push(vec![0x07]);
        }
    }
    out.lock().extend(found);
}

/// The pids of the descendants of `pid` (children, their children…), from /proc.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(p) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
                continue;
            };
            // The parent pid is the second field after the command in parentheses.
            let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            let fields: Vec<&str> = after.split_whitespace().collect();
            if let Some(ppid) = fields.get(1).and_then(|f| f.parse::<u32>().ok()) {
                parents.push((p, ppid));
            }
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for (child, _) in parents.iter().filter(|(_, pp)| *pp == parent) {
            out.push(*child);
            frontier.push(*child);
        }
    }
    out
}

/// The bytes to give `vt100`, with U+FFFD as `?`: `vt100` drops the replacement character
/// where a terminal shows it in one column. `carry` keeps the start of one cut by a read.
fn stand_in_replacements(carry: &mut Vec<u8>, bytes: &[u8]) -> Vec<u8> {
    const REPLACEMENT: &[u8] = "\u{fffd}".as_bytes();
    let mut all = std::mem::take(carry);
    all.extend_from_slice(bytes);
    let keep = (1..REPLACEMENT.len())
        .rev()
        .find(|&k| all.len() >= k && all.ends_with(&REPLACEMENT[..k]))
        .unwrap_or(0);
    carry.extend_from_slice(&all[all.len() - keep..]);
    all.truncate(all.len() - keep);
    let mut out = Vec::with_capacity(all.len());
    let mut rest = all.as_slice();
    while let Some(at) = rest
        .windows(REPLACEMENT.len())
        .position(|w| w == REPLACEMENT)
    {
        out.extend_from_slice(&rest[..at]);
        out.push(b'?');
        rest = &rest[at + REPLACEMENT.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// Standard base64 (padding optional), for OSC 52 payloads.
fn base64_decode(text: &[u8]) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &c in text {
        let Some(v) = value(c) else { continue };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// PATH, HOME, MARCH_HOME and XDG_RUNTIME_DIR (`run` in MARCH_HOME, so its servers are
/// its own, created here).
fn clean_env(home: &Path, march_home: &Path) -> Vec<(&'static str, std::ffi::OsString)> {
    let runtime = march_home.join("run");
    std::fs::create_dir_all(&runtime).unwrap_or_else(|e| panic!("runtime dir: {e}"));
    vec![
        ("PATH", std::env::var_os("PATH").unwrap_or_default()),
        ("HOME", home.as_os_str().to_os_string()),
        ("MARCH_HOME", march_home.as_os_str().to_os_string()),
        ("XDG_RUNTIME_DIR", runtime.into_os_string()),
    ]
}

/// `march ARGS` as a plain child process (no terminal) in `cwd`, with the clean
/// environment of [`PtyMarch::spawn_clean`].
pub fn march_command(
    args: &[&str],
    cwd: &Path,
    home: &Path,
    march_home: &Path,
) -> std::process::Command {
    let mut command = std::process::Command::new(march_e2e::march_bin());
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(clean_env(home, march_home));
    command
}

/// Answers what March asks the terminal (the graphics query ends in a status report every
/// terminal answers), as a terminal of `kind` would, and records kitty graphics commands.
fn answer_queries(
    kind: TerminalKind,
    tail: &mut Vec<u8>,
    read: &[u8],
    answers: &Mutex<Box<dyn Write + Send>>,
    graphics: &Mutex<Vec<String>>,
) {
    let old = tail.len();
    tail.extend_from_slice(read);
    let find_all = |needle: &[u8]| -> Vec<usize> {
        tail.windows(needle.len())
            .enumerate()
            .filter(|(at, w)| *w == needle && at + needle.len() > old)
            .map(|(at, _)| at)
            .collect()
    };
    let kitty = kind == TerminalKind::Kitty;
    let mut replies: Vec<(usize, &[u8])> = Vec::new();
    for at in find_all(b"\x1b_Gi=31,s=1,v=1,a=q") {
        if kitty {
            replies.push((at, b"\x1b_Gi=31;OK\x1b\\"));
        }
    }
    for at in find_all(b"\x1b[16t") {
        if kitty {
            replies.push((at, b"\x1b[6;16;8t"));
        }
    }
    for at in find_all(b"\x1b[c") {
        replies.push((at, b"\x1b[?62;22c"));
    }
    for at in find_all(b"\x1b[5n") {
        replies.push((at, b"\x1b[0n"));
    }
    replies.sort_by_key(|(at, _)| *at);
    if !replies.is_empty() {
        let mut writer = answers.lock();
        for (_, reply) in replies {
            let _ = writer.write_all(reply);
        }
        let _ = writer.flush();
    }
    // Kitty graphics commands: their control data, up to the payload.
    let mut at = 0;
    while let Some(found) = tail[at..].windows(3).position(|w| w == b"\x1b_G") {
        let start = at + found + 3;
        let Some(len) = tail[start..].iter().position(|&b| b == b';' || b == 0x1b) else {
            break;
        };
        if start + len > old {
            let control = String::from_utf8_lossy(&tail[start..start + len]).into_owned();
            graphics.lock().push(control);
        }
        at = start + len;
    }
    let keep = tail.len().saturating_sub(256);
    tail.drain(..keep);
}
