//! A remote project's uncommitted changes, read on its host over two `ssh` runs: git's status
//! there, then every changed file's text in HEAD and on disk in one stream of length-prefixed
//! blobs (a connection per file would take seconds).

use march_core::config::SshConfig;

use super::diffs::DiffInput;
use super::uncommitted::{Against, StatusEntry, parse_status, sized_input};
use crate::remote::{Remote, quote};

/// Runs the shell `script` on the host, sent on stdin (`sh -s`: no limit on its length, no
/// login shell reading it); its stdout, or what went wrong.
fn run(remote: &Remote, ssh: &SshConfig, script: &str) -> Result<Vec<u8>, String> {
    use std::io::Write as _;
    let mut child = std::process::Command::new(&ssh.command)
        .args(&ssh.args)
        .args(["-T", "-o", "BatchMode=yes", "--", &remote.host, "sh -s"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", ssh.command))?;
    if let Some(mut stdin) = child.stdin.take() {
        let script = script.to_string();
        // Written from a thread of its own: ssh reads it while the output comes back.
        std::thread::spawn(move || stdin.write_all(script.as_bytes()));
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{}: {e}", ssh.command))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        let said = String::from_utf8_lossy(&out.stderr);
        Err(said
            .lines()
            .last()
            .unwrap_or("ssh failed")
            .trim()
            .to_string())
    }
}

/// The next blob of `stream` (`N\n` then N bytes, or `-1\n` for none); `None` when the
/// stream ended early.
fn blob(stream: &mut &[u8]) -> Option<Option<String>> {
    let end = stream.iter().position(|&b| b == b'\n')?;
    let size = std::str::from_utf8(&stream[..end]).ok()?.trim().to_string();
    *stream = &stream[end + 1..];
    if size == "-1" {
        return Some(None);
    }
    let size: usize = size.parse().ok()?;
    let bytes = stream.get(..size)?;
    *stream = &stream[size..];
    Some(Some(String::from_utf8_lossy(bytes).into_owned()))
}

/// The shell line that prints, for each entry, its text in HEAD then on disk, as blobs.
fn texts_script(top: &str, entries: &[StatusEntry]) -> String {
    let mut line = format!(
        "cd {} || exit 3; at_head() {{ n=$(git cat-file -s \"HEAD:$1\" 2>/dev/null) && \
         echo \"$n\" && git cat-file blob \"HEAD:$1\" || echo -1; }}; on_disk() {{ n=$(wc -c < \
         \"$1\" 2>/dev/null) && [ -f \"$1\" ] && echo $n && head -c \"$n\" -- \"$1\" || echo -1; }}",
        quote(top)
    );
    for e in entries {
        let before = match (&e.code == b"??", &e.source) {
            (true, _) => "echo -1".to_string(),
            (false, Some(source)) => format!("at_head {}", quote(source)),
            (false, None) => format!("at_head {}", quote(&e.path)),
        };
        line.push_str(&format!("; {before}; on_disk {}", quote(&e.path)));
    }
    line
}

/// The changed files of the remote project, as the local pane shows a local one's.
pub(super) fn remote_inputs(
    remote: &Remote,
    ssh: &SshConfig,
) -> Result<(Vec<DiffInput>, Against), String> {
    let status = run(
        remote,
        ssh,
        &format!(
            "cd {} && git rev-parse --show-toplevel && git status --porcelain=v1 -z \
             --untracked-files=all -- .",
            quote(&remote.path)
        ),
    )
    .map_err(|e| format!("not a git repository on {} ({e})", remote.host))?;
    let split = status
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("git said nothing")?;
    let top = String::from_utf8_lossy(&status[..split]).trim().to_string();
    let entries = parse_status(&status[split + 1..]);
    if entries.is_empty() {
        return Ok((Vec::new(), Against::head()));
    }
    let texts = run(remote, ssh, &texts_script(&top, &entries))?;
    let mut stream: &[u8] = &texts;
    let below = remote
        .path
        .strip_prefix(&top)
        .map(|p| p.trim_start_matches('/').to_string())
        .unwrap_or_default();
    let mut inputs = Vec::new();
    for entry in &entries {
        let (Some(before), Some(after)) = (blob(&mut stream), blob(&mut stream)) else {
            return Err("the file texts from the host ended early".to_string());
        };
        let shown = match entry.path.strip_prefix(&below) {
            Some(rest) if !below.is_empty() => rest.trim_start_matches('/').to_string(),
            _ => entry.path.clone(),
        };
        inputs.push(sized_input(shown, before, after));
    }
    Ok((inputs, Against::head()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_come_in_order_and_a_short_stream_is_an_error() {
        let data = b"5\nhello-1\n3\nab\n";
        let mut s: &[u8] = data;
        assert_eq!(blob(&mut s), Some(Some("hello".to_string())));
        assert_eq!(blob(&mut s), Some(None));
        assert_eq!(blob(&mut s), Some(Some("ab\n".to_string())));
        assert_eq!(blob(&mut s), None);
        let mut short: &[u8] = b"10\nabc";
        assert_eq!(blob(&mut short), None);
    }

    #[test]
    fn the_texts_script_runs_as_a_shell_reads_it() {
        // The script as the host's shell would run it, here, on a real repository.
        let (_dir, root) = crate::workspace::test_repo();
        std::fs::write(root.join("a b.txt"), "old\n").unwrap();
        crate::workspace::git_in(&root, &["add", "."]);
        crate::workspace::git_in(&root, &["commit", "-qm", "one"]);
        std::fs::write(root.join("a b.txt"), "new\n").unwrap();
        std::fs::write(root.join("it's.txt"), "fresh\n").unwrap();
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(["status", "--porcelain=v1", "-z", "--untracked-files=all"])
            .output()
            .unwrap()
            .stdout;
        let entries = parse_status(&status);
        let script = texts_script(root.to_str().unwrap(), &entries);
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .unwrap()
            .stdout;
        let mut s: &[u8] = &out;
        let mut got = Vec::new();
        for e in &entries {
            got.push((e.path.clone(), blob(&mut s).unwrap(), blob(&mut s).unwrap()));
        }
        got.sort();
        assert_eq!(
            got,
            [
                (
                    "a b.txt".to_string(),
                    Some("old\n".to_string()),
                    Some("new\n".to_string())
                ),
                ("it's.txt".to_string(), None, Some("fresh\n".to_string())),
            ]
        );
    }
}
