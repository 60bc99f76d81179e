//! Conformance of a shell pane's cell attributes with tmux after full-screen programs exit:
//! `top`, `less` and `vim` run in a shell pane of the real `march` (read through `vt100`) and
//! in a tmux pane of the same size (read with `capture-pane -e`), then plain output follows;
//! every cell of the shell's screen must have the same text, bold, italic, underline and
//! inverse in both. Colours are not compared: March paints the default ones with its theme.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use acp_client::Harness;
use pty::PtyMarch;

const PREFIX: &[u8] = b"\x01";

/// One cell as compared: its text and attributes.
#[derive(Debug, Clone, PartialEq)]
struct Look {
    text: String,
    bold: bool,
    italic: bool,
    underline: bool,
    inverse: bool,
}

fn look(cell: Option<&vt100::Cell>) -> Look {
    let Some(cell) = cell else {
        return Look {
            text: String::new(),
            bold: false,
            italic: false,
            underline: false,
            inverse: false,
        };
    };
    // A blank cell reads "" whether it was erased or holds a space.
    let text = cell.contents().trim().to_string();
    Look {
        text,
        bold: cell.bold(),
        italic: cell.italic(),
        underline: cell.underline(),
        inverse: cell.inverse(),
    }
}

/// A tmux server of this test's own (its own socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux {args:?}: {:?}", out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pane's screen as `vt100` reads `capture-pane -e`.
    fn screen(&self, rows: u16, cols: u16) -> vt100::Parser {
        let text = self.run(&["capture-pane", "-e", "-p", "-t", "t"]);
        let mut parser = vt100::Parser::new(rows, cols, 0);
        // capture-pane ends lines with \n only; each row starts at column 0.
        let lines: Vec<&str> = text.split('\n').take(usize::from(rows)).collect();
        parser.process(lines.join("\r\n").as_bytes());
        parser
    }

    /// Polls `capture-pane` until `pred` holds: tmux tells nobody when its screen changes.
    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = self.run(&["capture-pane", "-p", "-t", "t"]);
            if pred(&text) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "tmux: timed out waiting for {what}:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// When a step is done: a text shows, or one is gone.
#[derive(Clone, Copy)]
enum Done {
    Shows(&'static str),
    Gone(&'static str),
    /// A prompt on a line below the one with this text (top leaves its last frame).
    PromptBelow(&'static str),
}

impl Done {
    fn holds(self, screen: &str) -> bool {
        match self {
            Done::Shows(t) => screen.contains(t),
            Done::Gone(t) => !screen.contains(t),
            Done::PromptBelow(t) => screen
                .lines()
                .skip_while(|l| !l.contains(t))
                .skip(1)
                .any(|l| l.contains('$')),
        }
    }
}

/// The steps both terminals go through: keys to type (a line, or raw keys when they end in
/// `\r` or are `q`), and when the step is done.
fn steps(file: &Path) -> Vec<(String, Done)> {
    let file = file.display();
    vec![
        // top: its bold header and inverse column titles, then `q`.
        ("top -d 1".to_string(), Done::Shows("Tasks:")),
        ("q".to_string(), Done::PromptBelow("Tasks:")),
        (format!("less {file}"), Done::Shows("line-0030")),
        ("q".to_string(), Done::Gone("line-0030")),
        (
            format!("vim -u NONE -N -n {file}"),
            Done::Shows("line-0030"),
        ),
        (":q!\r".to_string(), Done::Gone("line-0030")),
        // Plain output over where the programs drew.
        ("seq 1000000 1000060".to_string(), Done::Shows("1000060")),
        (
            "printf 'END-%s\\n' $((40+2))".to_string(),
            Done::Shows("END-42"),
        ),
    ]
}

#[test]
fn no_attribute_outlives_top_less_or_vim() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let h = runtime.block_on(Harness::new(vec![]));
    std::thread::spawn(move || runtime.block_on(std::future::pending::<()>()));
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[shell]\ncommand = \"/bin/sh\"\nhangup_grace_ms = 300\n");
    std::fs::write(&config, text).unwrap();
    let file = h.project().join("lines.txt");
    let body: String = (1..=200).map(|i| format!("line-{i:04}\n")).collect();
    std::fs::write(&file, body).unwrap();

    let home = h.dir.path().join("home");
    let ps1 = [("PS1", OsStr::new("$ "))];
    let mut m = PtyMarch::spawn_clean(&[], &h.project(), &home, &h.march_home(), &ps1);
    m.wait_text("March · project");
    m.send(PREFIX);
    m.send(b"t");
    m.wait_text("sh · project");
    // The pane's size, for tmux's pane.
    m.type_line("stty size | sed 's/ /x/; s/^/SIZE-/'");
    let screen = m.wait_for("the pane's size", |t| {
        t.lines().any(|l| l.contains("SIZE-") && !l.contains("sed"))
    });
    let size = screen
        .lines()
        .find_map(|l| {
            let at = l.find("SIZE-")?;
            let rest = &l[at + 5..];
            let (rows, cols) = rest.split_once('x')?;
            let cols: String = cols.chars().take_while(char::is_ascii_digit).collect();
            Some((rows.parse::<u16>().ok()?, cols.parse::<u16>().ok()?))
        })
        .unwrap();
    let (rows, cols) = size;

    let tmux = Tmux {
        socket: format!("march-attr-{}", std::process::id()),
    };
    let shell = format!(
        "env -i PATH={} HOME={} TERM=xterm-256color PS1='$ ' /bin/sh",
        std::env::var("PATH").unwrap(),
        home.display()
    );
    tmux.run(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        &cols.to_string(),
        "-y",
        &rows.to_string(),
        "-c",
        &h.project().display().to_string(),
        &shell,
    ]);
    tmux.run(&["set", "-g", "status", "off"]);
    tmux.run(&[
        "resize-window",
        "-t",
        "t",
        "-x",
        &cols.to_string(),
        "-y",
        &rows.to_string(),
    ]);
    tmux.wait_for("the prompt", |t| t.contains('$'));
    // Both start from a clean screen.
    m.type_line("clear");
    tmux.run(&["send-keys", "-t", "t", "clear", "Enter"]);

    for (keys, done) in steps(&file) {
        let raw = keys.ends_with('\r');
        let typed = keys.trim_end_matches('\r');
        // March: keys into the focused shell pane.
        if raw || typed == "q" {
            m.send(typed.as_bytes());
            if raw {
                m.send(b"\r");
            }
        } else {
            m.type_line(typed);
        }
        m.wait_for(&keys, |t| done.holds(t));
        // tmux: the same keys.
        if raw || typed == "q" {
            tmux.run(&["send-keys", "-t", "t", "-l", typed]);
            if raw {
                tmux.run(&["send-keys", "-t", "t", "Enter"]);
            }
        } else {
            tmux.run(&["send-keys", "-t", "t", "-l", typed]);
            tmux.run(&["send-keys", "-t", "t", "Enter"]);
        }
        tmux.wait_for(&keys, |t| done.holds(t));
    }
    // Settled: the prompt after END-42 in both.
    m.wait_for("the last prompt", |t| {
        t.lines()
            .skip_while(|l| !l.contains("END-42") || l.contains("printf"))
            .nth(1)
            .is_some_and(|l| l.contains("$"))
    });
    tmux.wait_for("the last prompt", |t| {
        t.lines()
            .skip_while(|l| !l.contains("END-42") || l.contains("printf"))
            .nth(1)
            .is_some_and(|l| l.contains("$"))
    });

    let reference = tmux.screen(rows, cols);
    let reference = reference.screen();
    let find_end = |screen: &vt100::Screen, width: u16| -> (u16, u16) {
        let (h, _) = screen.size();
        for row in 0..h {
            for col in 0..width {
                let text: String = (0..6)
                    .map(|i| {
                        screen
                            .cell(row, col + i)
                            .map(|c| c.contents())
                            .unwrap_or_default()
                    })
                    .collect();
                if text == "END-42" {
                    return (row, col);
                }
            }
        }
        panic!("END-42 not found")
    };
    let (t_row, t_col) = find_end(reference, cols);
    let (m_row, m_col) = m.with_screen(|s| find_end(s, 120));
    assert_eq!(t_col, 0, "tmux's line starts the pane");
    let mismatches: Vec<String> = m.with_screen(|screen| {
        let mut out = Vec::new();
        for row in 0..rows {
            // Rows above the pane's top in March do not exist in the mapping.
            let Some(m_at) = (m_row + row).checked_sub(t_row) else {
                continue;
            };
            for col in 0..cols {
                let want = look(reference.cell(row, col));
                let got = look(screen.cell(m_at, m_col + col));
                if want != got {
                    out.push(format!("row {row} col {col}: tmux {want:?}, march {got:?}"));
                }
            }
        }
        out
    });
    assert!(
        mismatches.is_empty(),
        "{} cells differ, first: {:#?}\nmarch:\n{}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(10)],
        m.text()
    );
    m.quit();
}
