//! Runner startup: wall time from spawning `march runner` to the answer to `session/new`,
//! through the Runner Process Client (`march_runner::client`), as the app starts a session.
//!
//! Target (issue 4): spawn → initialize → session/new under 50 ms.
//!
//! It runs the built binary, so build it first, with the same profile:
//!
//! ```sh
//! cargo build --release -p march
//! cargo bench -p march-runner --bench runner_startup
//! ```
//!
//! `MARCH_HOME` is a temporary directory whose `config.toml` names a provider at a local TCP
//! port that nobody answers; the benchmark checks afterwards that no connection reached it
//! (`session/new` must not call the model). Each run is interleaved with the references, so a
//! busy machine slows them alike:
//! - `/bin/true` spawned and waited for with `std::process::Command` (the process start floor),
//! - `/bin/true` through the client's `RunnerProcess` (own process group, piped stdio, reaper
//!   task), the floor for the client's way of spawning,
//! - `march --version` (loading the `march` binary itself, no runtime, no ACP).
#![allow(clippy::expect_used, clippy::unwrap_used)] // a benchmark aborts on setup failure

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use march_runner::client::schema::{NewSessionRequest, SessionUpdate};
use march_runner::client::{
    ConnectOptions, RunnerClient, RunnerCommand, RunnerEvent, RunnerProcess,
};

/// Measured runs per case.
const RUNS: usize = 30;
/// Runs before measuring, so page cache and the dynamic loader are warm.
const WARMUP: usize = 3;
/// How long a finished runner gets to exit before its group is killed (not timed).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// `target/<profile>/march`, next to this bench's `target/<profile>/deps/` directory.
fn march_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("bench executable not in target/<profile>/deps");
    let bin = profile_dir.join("march");
    if !bin.is_file() {
        eprintln!(
            "runner_startup: the march binary is missing at {}\n\
             build it first with: cargo build --release -p march",
            bin.display()
        );
        std::process::exit(1);
    }
    bin
}

/// A MARCH_HOME whose only provider points at `base_url`, a HOME and a project directory.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(base_url: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "march", "project"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let config = format!(
            "default_model = \"bench/m\"\n\n[providers.bench]\napi = \"openai-completions\"\n\
             base_url = \"{base_url}\"\napi_key_env = \"BENCH_API_KEY\"\n\n\
             [[providers.bench.models]]\nid = \"m\"\n"
        );
        std::fs::write(dir.path().join("march/config.toml"), config).unwrap();
        Setup { dir }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// `command` in the project with only PATH of the bench's environment.
    fn command(&self, command: RunnerCommand) -> RunnerCommand {
        let mut command = command
            .cwd(self.project())
            .env("HOME", self.dir.path().join("home"))
            .env("MARCH_HOME", self.dir.path().join("march"))
            .env("BENCH_API_KEY", "bench-key");
        for (name, _) in std::env::vars_os() {
            if !["PATH", "HOME", "MARCH_HOME", "BENCH_API_KEY"]
                .iter()
                .any(|keep| name == *keep)
            {
                command = command.env_remove(name);
            }
        }
        command
    }
}

/// One run's times in milliseconds.
#[derive(Default)]
struct Samples {
    true_std: Vec<f64>,
    true_client: Vec<f64>,
    version: Vec<f64>,
    initialize: Vec<f64>,
    session_new: Vec<f64>,
    /// The stderr of runners that did not exit with status 0 after the client closed.
    unclean_exits: Vec<String>,
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Spawn `march runner`, initialize, `session/new` (timed), then close it (not timed).
async fn runner_once(setup: &Setup, march: &Path, samples: &mut Samples) {
    let command = setup.command(RunnerCommand::new(march).arg("runner"));
    let start = Instant::now();
    let (client, mut events) = RunnerClient::spawn(&command, &ConnectOptions::default())
        .await
        .unwrap();
    let initialized = ms(start);
    let response = client
        .connection()
        .new_session(NewSessionRequest::new(setup.project()))
        .await
        .unwrap();
    let created = ms(start);
    assert!(!response.session_id.0.is_empty(), "session/new gave no id");
    samples.initialize.push(initialized);
    samples.session_new.push(created);

    // The runner announces its commands right after the answer; closing before that
    // notification is out makes its write fail (broken pipe), which is not what is measured.
    let announced = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while let Some(event) = events.recv().await {
            if let RunnerEvent::Update(n) = event
                && matches!(n.update, SessionUpdate::AvailableCommandsUpdate(_))
            {
                return;
            }
        }
    });
    let _ = announced.await;
    let watcher = client.process().exit_watcher();
    client.shutdown(SHUTDOWN_GRACE).await;
    let (exit, stderr) = watcher.wait().await;
    if !exit.success() {
        samples
            .unclean_exits
            .push(format!("{exit:?}: {}", stderr.trim()));
    }
}

async fn measure(setup: &Setup, march: &Path, samples: &mut Samples) {
    let start = Instant::now();
    let status = Command::new("/bin/true").status().unwrap();
    samples.true_std.push(ms(start));
    assert!(status.success());

    let command = setup.command(RunnerCommand::new("/bin/true"));
    let start = Instant::now();
    let process = RunnerProcess::spawn(&command).unwrap();
    let exit = process.wait().await;
    samples.true_client.push(ms(start));
    assert!(exit.success());

    let start = Instant::now();
    let status = Command::new(march)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    samples.version.push(ms(start));
    assert!(status.success());

    runner_once(setup, march, samples).await;
}

/// Median and 90th percentile (nearest rank).
fn stats(values: &[f64]) -> (f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (rank(0.5), rank(0.9))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list`
    }
    let march = march_bin();
    // The provider's address: a port that accepts nothing, so any model call shows up.
    let model_port = TcpListener::bind("127.0.0.1:0").unwrap();
    model_port.set_nonblocking(true).unwrap();
    let base_url = format!("http://{}/v1", model_port.local_addr().unwrap());
    let setup = Setup::new(&base_url);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut samples = Samples::default();
    runtime.block_on(async {
        let mut warmup = Samples::default();
        for _ in 0..WARMUP {
            measure(&setup, &march, &mut warmup).await;
        }
        for _ in 0..RUNS {
            measure(&setup, &march, &mut samples).await;
        }
    });
    match model_port.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("session/new contacted the model server (from {peer})"),
        Err(e) => panic!("checking the model port failed: {e}"),
    }

    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "march runner startup, {RUNS} runs each after {WARMUP} warm-up runs (ms)"
    )
    .unwrap();
    writeln!(out, "{:<52} {:>7} {:>7}", "case", "median", "p90").unwrap();
    let rows = [
        (
            "/bin/true, std::process::Command (process floor)",
            &samples.true_std,
        ),
        ("/bin/true, client RunnerProcess", &samples.true_client),
        ("march --version (binary load)", &samples.version),
        ("march runner: spawn -> initialize", &samples.initialize),
        (
            "march runner: spawn -> initialize -> session/new",
            &samples.session_new,
        ),
    ];
    for (name, values) in rows {
        let (median, p90) = stats(values);
        writeln!(out, "{name:<52} {median:>7.2} {p90:>7.2}").unwrap();
    }
    if let Some(first) = samples.unclean_exits.first() {
        writeln!(
            out,
            "warning: {} of {RUNS} runners did not exit with status 0 after the client closed \
             (first: {first})",
            samples.unclean_exits.len()
        )
        .unwrap();
    }
    let (median, _) = stats(&samples.session_new);
    writeln!(
        out,
        "target: spawn -> session/new under 50 ms: {}; no request reached the model server",
        if median < 50.0 { "met" } else { "NOT met" }
    )
    .unwrap();
}
