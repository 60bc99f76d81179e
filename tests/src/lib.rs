//! Helpers shared by March's end-to-end tests in `tests/tests/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root, the directory holding the top-level `Cargo.toml`.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map_or_else(|| manifest_dir.to_path_buf(), Path::to_path_buf)
}

/// The `march` binary, built once per test process with the same profile as the test.
///
/// Cargo only builds binaries of the package under test, so this runs `$CARGO build`.
/// Panics with cargo's output if the build fails: nothing can be tested without the binary.
pub fn march_bin() -> PathBuf {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(build_march) {
        Ok(path) => path.clone(),
        Err(message) => panic!("cannot build the march binary: {message}"),
    }
}

fn build_march() -> Result<PathBuf, String> {
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
        .args(["build", "--quiet", "-p", "march", "--bin", "march"])
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
    let bin = profile_dir.join(format!("march{}", std::env::consts::EXE_SUFFIX));
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!("cargo succeeded but {} is missing", bin.display()))
    }
}
