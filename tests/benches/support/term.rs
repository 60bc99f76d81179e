//! What the workspace benches share: `march` (or another program) in a 200×50 PTY read
//! into `vt100`, process CPU and memory from `/proc`, and the streamed answer they use.

#![allow(dead_code)] // Each bench uses a different part.

use parking_lot::Mutex;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use march_testkit::Turn;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

pub const COLS: u16 = 200;
pub const ROWS: u16 = 50;

/// The last words of [`streamed_answer`], to wait for.
pub const ANSWER_END: &str = "That is the whole change.";

/// About 2,000 tokens of markdown (paragraphs, a list, code) in 500 deltas, `delay_ms`
/// apart, ending with [`ANSWER_END`].
pub fn streamed_answer(delay_ms: u64) -> Turn {
    streamed_answer_tagged(delay_ms, "")
}

/// [`streamed_answer`] with each paragraph starting with `tag`: sessions side by side
/// answering apart, not showing the same rows.
#[allow(dead_code)] // Not every bench that includes this file uses it.
pub fn streamed_answer_tagged(delay_ms: u64, tag: &str) -> Turn {
    let piece = tag.to_string()
        + "The parser keeps **nested** brackets now. Each `Token` carries its span, \
                 so errors point at the right column.\n\n- lexer: skips comments\n- parser: \
                 recovers after a bad token\n\n```rust\nfn parse(input: &str) -> Ast {\n    \
                 Parser::new(input).run()\n}\n```\n\n";
    let text = piece.repeat(30);
    let chars: Vec<char> = text.chars().collect();
    let per = chars.len().div_ceil(500);
    let mut events: Vec<_> = chars
        .chunks(per)
        .map(|c| march_testkit::Event::text(c.iter().collect::<String>()))
        .collect();
    events.push(march_testkit::Event::text(ANSWER_END));
    Turn::stream(events).with_delay(delay_ms)
}

/// A program in a PTY: its screen and a count of the bytes it wrote.
pub struct Term {
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    pub writer: Box<dyn Write + Send>,
    pub screen: Arc<Mutex<vt100::Parser>>,
    pub bytes: Arc<AtomicU64>,
}

/// `cmd` running on a new PTY of `rows` × `cols`: its child, and the master's reader,
/// writer and the master itself (to keep alive as long as the reader runs).
pub struct Pty {
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    pub reader: Box<dyn Read + Send>,
    pub writer: Box<dyn Write + Send>,
    pub master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Pty {
    pub fn spawn(cmd: CommandBuilder, rows: u16, cols: u16) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        Pty {
            child,
            reader,
            writer,
            master: pair.master,
        }
    }
}

impl Term {
    pub fn spawn(cmd: CommandBuilder) -> Term {
        let Pty {
            child,
            mut reader,
            writer,
            master,
        } = Pty::spawn(cmd, ROWS, COLS);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
        let bytes = Arc::new(AtomicU64::new(0));
        let (s, b) = (screen.clone(), bytes.clone());
        std::thread::spawn(move || {
            // Keep the master alive as long as the reader runs.
            let _master = master;
            let mut buf = [0u8; 16384];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                b.fetch_add(n as u64, Ordering::Relaxed);
                s.lock().process(&buf[..n]);
            }
        });
        Term {
            child,
            writer,
            screen,
            bytes,
        }
    }

    pub fn wait_for(&self, needle: &str, count: usize) -> Duration {
        let start = Instant::now();
        loop {
            if self
                .screen
                .lock()
                .screen()
                .contents()
                .matches(needle)
                .count()
                >= count
            {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no `{needle}` on screen:\n{}",
                self.screen.lock().screen().contents()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().unwrap()
    }

    /// Waits up to `limit` for the program to exit; whether it did.
    pub fn wait_exit(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// (utime + stime in clock ticks, RSS in KB) of `pid`.
pub fn proc_stats(pid: u32) -> (u64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rfind(')').map(|i| &stat[i + 2..]).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    (ticks, rss)
}

/// CPU time of every thread of `pid` so far, in nanoseconds (the scheduler's own count,
/// finer than the clock ticks of `/proc/PID/stat`).
pub fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// `pid` and its descendants.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let parent = all[i];
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for e in dir.flatten() {
                let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                    continue;
                };
                let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
                let after = stat.rfind(')').map(|i| &stat[i + 2..]).unwrap_or("");
                if after.split_whitespace().nth(1) == Some(&parent.to_string()) {
                    all.push(p);
                }
            }
        }
        i += 1;
    }
    all
}

pub fn tree_stats(pid: u32) -> (u64, u64) {
    tree(pid)
        .into_iter()
        .map(proc_stats)
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `march --fresh` in `project` with a clean environment: every run starts from one pane,
/// whatever an earlier run left saved for the same directory.
pub fn march_command(home: &Path, project: &Path) -> CommandBuilder {
    march_args_command(home, project, &["--fresh"])
}

/// `march ARGS` (`attach`, …) in `cwd` in a PTY with a clean environment: TERM, PATH, and
/// HOME, MARCH_HOME and the runtime directory under `home`.
pub fn march_args_command(home: &Path, cwd: &Path, args: &[&str]) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(march_e2e::march_bin());
    cmd.args(args);
    cmd.cwd(cwd);
    cmd.env_clear();
    cmd.env("TERM", "xterm-256color");
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd.env("HOME", home.join("home"));
    cmd.env("MARCH_HOME", home.join("march"));
    cmd.env("XDG_RUNTIME_DIR", runtime_dir(home));
    cmd
}

/// The runtime directory of the bench's workspace servers (its own, made when missing).
pub fn runtime_dir(home: &Path) -> std::path::PathBuf {
    let dir = home.join("run");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `march ARGS` with the environment [`march_command`] gives, run to its end: its stdout.
pub fn march_cli(home: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(march_e2e::march_bin())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.join("home"))
        .env("MARCH_HOME", home.join("march"))
        .env("XDG_RUNTIME_DIR", runtime_dir(home))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The process id of the one workspace server running under `home`.
pub fn server_pid(home: &Path) -> u32 {
    let listed = march_cli(home, &["ls", "--json"]);
    let first = listed.lines().next().expect("no workspace server runs");
    let info: serde_json::Value = serde_json::from_str(first).unwrap();
    info["pid"].as_u64().unwrap() as u32
}

/// (CPU ticks, RSS in KB) of March's own processes: the client `client` and the workspace
/// server under `home` (not the runners and shells the server started).
pub fn march_stats(home: &Path, client: u32) -> (u64, u64) {
    let (a, b) = (proc_stats(client), proc_stats(server_pid(home)));
    (a.0 + b.0, a.1 + b.1)
}

/// Ends every workspace server under `home` (a bench's terminals closing only detach).
pub fn kill_servers(home: &Path) {
    march_cli(home, &["kill-server", "--force"]);
}

/// A bench's home: `home`, `march` (its config pointing at the scripted server at
/// `base_url`) and `project` under a temporary directory; the directory and the project.
pub fn bench_home(base_url: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["home", "march", "project"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    write_scripted_config(&dir.path().join("march"), base_url);
    let project = dir.path().join("project").canonicalize().unwrap();
    (dir, project)
}

/// Writes `march_home/config.toml` pointing March at the scripted model server.
pub fn write_scripted_config(march_home: &Path, base_url: &str) {
    std::fs::create_dir_all(march_home).unwrap();
    std::fs::write(
        march_home.join("config.toml"),
        format!(
            "default_model = \"scripted/m\"\n[providers.scripted]\napi = \"openai-completions\"\n\
             base_url = \"{base_url}\"\n[[providers.scripted.models]]\nid = \"m\"\n"
        ),
    )
    .unwrap();
}
