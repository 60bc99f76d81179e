//! End-to-end checks of the `march-scripted-server` binary.

use march_testkit::client::post_json;
use march_testkit::{RecordedRequest, Script, Turn};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_march-scripted-server");

/// A path in the temp dir no other test run will use.
fn temp_path(tag: &str, ext: &str) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    std::env::temp_dir().join(format!(
        "march-testkit-{tag}-{}-{nanos}.{ext}",
        std::process::id()
    ))
}

#[tokio::test]
async fn binary_serves_a_script_file_and_records_requests() -> anyhow::Result<()> {
    let script_path = temp_path("script", "json");
    let record_path = temp_path("record", "jsonl");
    let script = Script::new(vec![Turn::text("from the binary")]);
    std::fs::write(&script_path, serde_json::to_string(&script)?)?;

    let mut child = Command::new(BIN)
        .arg("--script")
        .arg(&script_path)
        .arg("--port=0")
        .arg("--record")
        .arg(&record_path)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
    let line = BufReader::new(stdout)
        .lines()
        .next_line()
        .await?
        .ok_or_else(|| anyhow::anyhow!("binary exited without a listening line"))?;
    let url = line
        .strip_prefix("listening on http://")
        .and_then(|rest| rest.strip_suffix("/v1"))
        .ok_or_else(|| anyhow::anyhow!("unexpected line {line:?}"))?;
    let addr: SocketAddr = url.parse()?;
    assert!(addr.ip().is_loopback() && addr.port() != 0);

    let body = serde_json::json!({"model": "m", "stream": true});
    let response = post_json(addr, "/v1/chat/completions", &body).await?;
    assert_eq!(response.status, 200);
    assert!(response.complete);
    assert!(response.text().contains("from the binary"));

    // The request is recorded before it is answered, so the line is already there.
    let recorded = std::fs::read_to_string(&record_path)?;
    let lines: Vec<RecordedRequest> = recorded
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].path, "/v1/chat/completions");
    assert_eq!(lines[0].body, body);

    child.kill().await?;
    let _ = std::fs::remove_file(&script_path);
    let _ = std::fs::remove_file(&record_path);
    Ok(())
}

#[tokio::test]
async fn bad_arguments_exit_2_and_help_exits_0() -> anyhow::Result<()> {
    let bad = Command::new(BIN).arg("--bogus").output().await?;
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown argument `--bogus`"));

    let missing = Command::new(BIN).arg("--port").arg("80x").output().await?;
    assert_eq!(missing.status.code(), Some(2));

    let no_script = Command::new(BIN).output().await?;
    assert_eq!(no_script.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_script.stderr).contains("--script"));

    let help = Command::new(BIN).arg("--help").output().await?;
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).starts_with("usage: march-scripted-server"));
    Ok(())
}

#[tokio::test]
async fn unreadable_or_invalid_script_exits_1() -> anyhow::Result<()> {
    let absent = temp_path("absent", "json");
    let out = Command::new(BIN)
        .arg("--script")
        .arg(&absent)
        .output()
        .await?;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read script"));
    assert!(out.stdout.is_empty());

    let invalid = temp_path("invalid", "json");
    std::fs::write(&invalid, r#"{"turns":[{"kind":"nope"}]}"#)?;
    let out = Command::new(BIN)
        .arg("--script")
        .arg(&invalid)
        .output()
        .await?;
    let _ = std::fs::remove_file(&invalid);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid script"));
    Ok(())
}
