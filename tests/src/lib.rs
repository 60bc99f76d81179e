//! Helpers shared by March's end-to-end tests in `tests/tests/`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// The workspace root, the directory holding the top-level `Cargo.toml`.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map_or_else(|| manifest_dir.to_path_buf(), Path::to_path_buf)
}

/// The file `name` of `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// The `march` binary, built once per test process with the same profile as the test.
///
/// Cargo only builds binaries of the package under test, so this runs `$CARGO build`.
/// Panics with cargo's output if the build fails: nothing can be tested without the binary.
/// Runs git with `args` in `dir`, which must succeed; its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("git: {e}"));
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn march_bin() -> PathBuf {
    workspace_bin("march")
}

/// The `march-scripted-server` binary of march-testkit, built like [`march_bin`].
pub fn scripted_server_bin() -> PathBuf {
    workspace_bin("march-scripted-server")
}

/// The workspace's binary `bin`, after building all of them once per test process.
fn workspace_bin(bin: &str) -> PathBuf {
    static PROFILE_DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = match PROFILE_DIR.get_or_init(build_bins) {
        Ok(dir) => dir,
        Err(message) => panic!("cannot build the workspace's binaries: {message}"),
    };
    let path = dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "cargo built the binaries but {} is missing",
        path.display()
    );
    path
}

/// Builds every binary of the workspace into the test's own target and profile directory,
/// returning that directory.
///
/// `--workspace --examples` makes cargo resolve features as `cargo test --workspace` does
/// (the whole workspace, dev-dependencies on), so the build reuses the test build's
/// artifacts instead of compiling a second copy of the crates with other features.
fn build_bins() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    // The test runs as <target>/<profile>/deps/<test>; the binary lands in <target>/<profile>.
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| format!("unexpected test binary location {}", exe.display()))?;
    let target_dir = profile_dir
        .parent()
        .ok_or_else(|| format!("unexpected profile directory {}", profile_dir.display()))?;
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("unexpected profile directory {}", profile_dir.display()))?;

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace_root())
        .args(["build", "--quiet", "--workspace", "--bins", "--examples"])
        .arg("--target-dir")
        .arg(target_dir);
    // `cargo test` builds the dev profile into `debug`; other profiles use their own name.
    match profile {
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        other => {
            command.args(["--profile", other]);
        }
    }
    let output = command
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo build failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(profile_dir.to_path_buf())
}

/// `march-scripted-server` running as a child process, killed and reaped on drop.
///
/// The script and the request record live in a temporary directory owned by the value.
pub struct ScriptedServerProcess {
    child: Child,
    base_url: String,
    record: PathBuf,
    // Fields drop after `Drop::drop`, so the directory goes once the child is gone.
    _dir: tempfile::TempDir,
}

impl ScriptedServerProcess {
    /// Starts the server on a free port, playing `script`: the JSON form of
    /// `march_testkit::Script`, e.g. `{"turns": [], "models": ["m1", "m2"]}`.
    ///
    /// Panics with the server's stderr if it does not announce its address.
    pub fn start(script: &serde_json::Value) -> ScriptedServerProcess {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let script_path = dir.path().join("script.json");
        std::fs::write(&script_path, script.to_string())
            .unwrap_or_else(|e| panic!("write {}: {e}", script_path.display()));
        let record = dir.path().join("requests.jsonl");
        let stderr_path = dir.path().join("stderr.txt");
        let stderr = File::create(&stderr_path)
            .unwrap_or_else(|e| panic!("create {}: {e}", stderr_path.display()));

        let mut child = Command::new(scripted_server_bin())
            .arg("--script")
            .arg(&script_path)
            .arg("--record")
            .arg(&record)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run march-scripted-server: {e}"));

        let mut line = String::new();
        let read = match child.stdout.take() {
            Some(stdout) => BufReader::new(stdout)
                .read_line(&mut line)
                .map_err(|e| e.to_string()),
            None => Err("no stdout pipe".to_string()),
        };
        let base_url = read.and_then(|_| {
            line.trim_end()
                .strip_prefix("listening on ")
                .map(str::to_string)
                .ok_or_else(|| format!("unexpected first line {line:?}"))
        });
        match base_url {
            Ok(base_url) => ScriptedServerProcess {
                child,
                base_url,
                record,
                _dir: dir,
            },
            Err(message) => {
                let _ = child.kill();
                let status = child.wait();
                let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
                panic!("march-scripted-server did not start ({message}, {status:?}):\n{stderr}");
            }
        }
    }

    /// The API base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The server's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Every request recorded so far, in arrival order, as the JSON form of
    /// `march_testkit::RecordedRequest` (`method`, `path`, `headers` as `[name, value]`
    /// pairs with lowercase names, `body`, `raw_body`).
    ///
    /// A request is recorded before it is answered, so a client that got its response
    /// is always on the list.
    pub fn recorded_requests(&self) -> Vec<serde_json::Value> {
        let text = match std::fs::read_to_string(&self.record) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => panic!("read {}: {e}", self.record.display()),
        };
        // A line still being written (the read caught it half done) is not a record yet.
        text.split_inclusive('\n')
            .filter(|line| line.ends_with('\n') && !line.trim().is_empty())
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("invalid record line {line:?}: {e}"))
            })
            .collect()
    }
}

impl Drop for ScriptedServerProcess {
    fn drop(&mut self) {
        // The server only stops when killed; reap it so no zombie is left either.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_server_process_starts_and_is_reaped() {
        let server = ScriptedServerProcess::start(&serde_json::json!({"models": ["m1"]}));
        assert!(
            server.base_url().starts_with("http://127.0.0.1:"),
            "{}",
            server.base_url()
        );
        assert!(server.base_url().ends_with("/v1"), "{}", server.base_url());
        assert!(server.recorded_requests().is_empty());
        let pid = server.id();
        drop(server);
        #[cfg(target_os = "linux")]
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "process {pid} is still there"
        );
        let _ = pid;
    }
}
