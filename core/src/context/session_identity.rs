//! `session_identity`: where and when this session runs.

use std::path::PathBuf;

/// Facts about the session's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionIdentity {
    /// The project directory.
    pub cwd: PathBuf,
    /// Other directories of the workspace the agent may touch.
    pub workspace_dirs: Vec<PathBuf>,
    /// Operating system and architecture.
    pub platform: String,
    /// The user's shell.
    pub shell: String,
    /// Today's date, `YYYY-MM-DD` (UTC).
    pub date: String,
}

impl SessionIdentity {
    /// Read from the process environment for a session in `cwd`.
    pub fn detect(cwd: PathBuf, workspace_dirs: Vec<PathBuf>) -> Self {
        SessionIdentity {
            cwd,
            workspace_dirs,
            platform: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            shell: std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into()),
            date: today_utc(),
        }
    }

    /// The section text.
    pub fn render(&self) -> String {
        let mut out = format!(
            "Current working directory: {}\nPlatform: {}\nShell: {}\nCurrent date: {}",
            self.cwd.display(),
            self.platform,
            self.shell,
            self.date
        );
        if !self.workspace_dirs.is_empty() {
            out.push_str("\nOther workspace directories:");
            for d in &self.workspace_dirs {
                out.push_str(&format!("\n- {}", d.display()));
            }
        }
        out
    }
}

/// `YYYY-MM-DD` for now in UTC, without a date crate.
pub fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_423), (2025, 12, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
