//! Shells' output read on the UI loop's own reactor: the PTY's readiness wakes the loop's
//! thread, which reads and parses a little output (an echo) itself and draws it, instead of
//! a reader thread waking the loop (a second wake-up on every keystroke's way back). A burst
//! goes to the pane's parser thread (see `march_panes::shell::PtyOutput`).

use std::sync::Arc;

use march_panes::shell::{OutputReader, PtyOutput, ReadOutcome};
use tokio::io::Interest;
use tokio::sync::Notify;

use crate::reactor::watch;

/// Where new shells' output is read: on the loop when one runs here, else on threads.
pub(super) fn output_reader() -> OutputReader {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => OutputReader::Loop(Arc::new(move |output| {
            handle.spawn(read_output(output));
        })),
        Err(_) => OutputReader::Thread,
    }
}

/// Reads `output` as it becomes readable until it ends.
async fn read_output(mut output: PtyOutput) {
    let resumed = Arc::new(Notify::new());
    {
        let resumed = resumed.clone();
        output.resumed(Arc::new(move || resumed.notify_one()));
    }
    let mut fd = match output
        .fd()
        .try_clone_to_owned()
        .and_then(|fd| watch(fd, Interest::READABLE))
    {
        Ok(fd) => fd,
        Err(e) => return read_on_thread(output, &e),
    };
    loop {
        match output.read_now() {
            ReadOutcome::Ended => return,
            ReadOutcome::Handed => {
                // Not watched while the parser thread reads: every piece of a flood would
                // wake the loop for nothing.
                let copy = fd.into_inner();
                // A permit is kept when the parser gives reading back before this waits.
                resumed.notified().await;
                fd = match watch(copy, Interest::READABLE) {
                    Ok(fd) => fd,
                    Err(e) => return read_on_thread(output, &e),
                };
            }
            ReadOutcome::Quiet => {
                let deadline = output.sync_deadline().map(tokio::time::Instant::from_std);
                tokio::select! {
                    ready = fd.readable() => match ready {
                        // Readiness that comes after this is kept: the next read sees it.
                        Ok(mut guard) => guard.clear_ready(),
                        Err(e) => {
                            tracing::warn!("watching a shell's output failed: {e}");
                            return;
                        }
                    },
                    () = sleep_until(deadline), if deadline.is_some() => output.expire_sync(),
                }
            }
        }
    }
}

/// The loop cannot watch `output`: a thread of its own reads it.
fn read_on_thread(output: PtyOutput, why: &std::io::Error) {
    tracing::warn!("a shell's output cannot be watched by the loop ({why}): a thread reads it");
    if let Err(e) = output.read_on_thread() {
        tracing::warn!("nor by a thread of its own: {e}");
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_panes::shell::{ShellNotice, ShellPane, ShellSpec, Wake};
    use std::time::Duration;
    use tokio::sync::mpsc;

    /// Runs `script` in a shell pane read on this test's loop until it exits; its lines.
    async fn run(script: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let wake: Wake = Arc::new(move |notice| {
            let _ = tx.send(notice);
        });
        let mut spec = ShellSpec::user_shell(dir.path());
        spec.program = "/bin/sh".into();
        spec.args = vec!["-c".into(), script.into()];
        let reader = output_reader();
        assert!(matches!(reader, OutputReader::Loop(_)));
        let pane = ShellPane::spawn(spec, wake, reader).unwrap();
        let exited = async {
            while let Some(notice) = rx.recv().await {
                if notice == ShellNotice::Exited {
                    return;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(120), exited)
            .await
            .expect("the program did not exit");
        let term = pane.terminal();
        let term = term.lock();
        (0..term.line_count())
            .map(|i| term.line_text(i))
            .filter(|l| !l.is_empty())
            .collect()
    }

    #[tokio::test]
    async fn a_little_output_and_a_flood_both_arrive_whole_and_in_order() {
        assert_eq!(run("printf 'hi\\n'").await, ["hi"]);
        // A flood goes to the parser thread and back, many times: every line kept (the
        // newest 10,000) is there, in order, and what came after it too.
        let lines = run("seq 1 200000; echo done").await;
        let (last, numbers) = lines.split_last().unwrap();
        assert_eq!(last, "done");
        assert!(numbers.len() >= 9_000, "{}", numbers.len());
        let numbers: Vec<u32> = numbers.iter().map(|l| l.parse().unwrap()).collect();
        assert_eq!(numbers.last(), Some(&200_000));
        assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1));
    }
}
