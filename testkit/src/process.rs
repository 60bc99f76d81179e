//! Process checks for tests that must prove no child, grandchild or zombie is left behind.

use std::path::Path;
use std::time::Duration;

/// The process state letter from `/proc/<pid>/stat`, or `None` once the pid is gone.
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the parenthesised command name, which may itself contain spaces.
    let after = &stat[stat.rfind(')')? + 1..];
    after.trim_start().chars().next()
}

/// Wait (generously, up to 30 s) until `pid` is gone; a zombie counts as gone when
/// `zombie_ok` (grandchildren are reaped by init, not by the code under test).
pub async fn wait_gone(pid: u32, zombie_ok: bool) -> bool {
    for _ in 0..600 {
        match proc_state(pid) {
            None => return true,
            Some('Z') if zombie_ok => return true,
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    false
}

/// Wait (up to 30 s) until `file` holds at least `n` pids, one per line.
///
/// # Panics
/// When the pids never arrive: the test cannot go on without them.
pub async fn read_pids(file: &Path, n: usize) -> Vec<u32> {
    for _ in 0..600 {
        if let Ok(text) = std::fs::read_to_string(file) {
            let pids: Vec<u32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
            if pids.len() >= n {
                return pids;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never got {n} pids in {}", file.display())
}
