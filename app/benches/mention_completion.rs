//! `@` completion over a generated 100,000-file tree, against `fd` and `find | fzf --filter`
//! in the same run.
//!
//! The tree: 100 crates × 10 modules × 100 files (100,000 files, 1,100 directories), plus
//! a `target/` of 20,000 files that `.gitignore` hides. Timed, median of runs:
//! - listing: March's walker (`file_walk::list`, what the app runs off the loop when `@` is
//!   first typed) against `fdfind --hidden=no` and `find` over the same tree;
//! - first results: the listing plus the popup's first matches for `@` (what the user waits
//!   for once per project and 10 s);
//! - per keystroke: each key of a query typed after `@` into a real `AgentPane` (match and
//!   narrow on the loop), against `fzf --filter` of the same query over the same list (its
//!   time includes reading the list, as a shell pipeline pays it on every key).
//!
//! Run: `cargo bench -p march --bench mention_completion` (needs `fdfind`/`fd` and `fzf`
//! on PATH for the references; without them only March's numbers are printed).

#![allow(clippy::unwrap_used)] // A benchmark's setup fails loudly.

#[path = "../src/workspace/file_walk.rs"]
#[allow(dead_code)]
mod file_walk;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use march_panes::agent::{AgentPane, PaneEvent};

const RUNS: usize = 7;
const QUERY: &str = "c42mod7f13";

fn generate(root: &Path) {
    for c in 0..100 {
        for m in 0..10 {
            let dir = root.join(format!("crate_{c}/src/mod_{m}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..100 {
                std::fs::write(dir.join(format!("file_{f}.rs")), "").unwrap();
            }
        }
    }
    for t in 0..20 {
        let dir = root.join(format!("target/debug/deps_{t}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..1000 {
            std::fs::write(dir.join(format!("artifact_{f}.o")), "").unwrap();
        }
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(mut f: impl FnMut()) -> Duration {
    median(
        (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn which(names: &[&str]) -> Option<String> {
    names.iter().find_map(|n| {
        Command::new("sh")
            .args(["-c", &format!("command -v {n}")])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|_| (*n).to_string())
    })
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    print!("generating the tree… ");
    std::io::stdout().flush().unwrap();
    generate(root);
    let files = file_walk::list(root);
    println!("{} entries listed (ignored target/ left out)", files.len());

    let march_list = time(|| {
        std::hint::black_box(file_walk::list(root));
    });
    println!("listing        march walker          {}", ms(march_list));
    let fd = which(&["fdfind", "fd"]);
    if let Some(fd) = &fd {
        let t = time(|| {
            let out = Command::new(fd)
                .arg(".")
                .current_dir(root)
                .output()
                .unwrap();
            std::hint::black_box(out.stdout.len());
        });
        println!("listing        {fd}                {}", ms(t));
    }
    let t = time(|| {
        let out = Command::new("find")
            .args([".", "-path", "./target", "-prune", "-o", "-print"])
            .current_dir(root)
            .output()
            .unwrap();
        std::hint::black_box(out.stdout.len());
    });
    println!("listing        find                  {}", ms(t));

    // First results: the listing, handed to a pane that has `@` typed.
    let first = time(|| {
        let mut pane = AgentPane::new("bench");
        assert_eq!(pane.handle_key(key('@')), PaneEvent::ListFiles);
        pane.set_files(Arc::new(file_walk::list(root)));
        std::hint::black_box(&pane);
    });
    println!("first results  march (list + popup)  {}", ms(first));

    // Per keystroke, in a pane that has the files.
    let shared = Arc::new(files.clone());
    let mut per_key: Vec<Vec<Duration>> = vec![Vec::new(); QUERY.len()];
    for _ in 0..RUNS {
        let mut pane = AgentPane::new("bench");
        pane.set_files(shared.clone());
        pane.handle_key(key('@'));
        for (i, c) in QUERY.chars().enumerate() {
            let t = Instant::now();
            std::hint::black_box(pane.handle_key(key(c)));
            per_key[i].push(t.elapsed());
        }
    }
    let list_text = files.join("\n");
    let fzf = which(&["fzf"]);
    println!("per keystroke (query {QUERY:?}, typed after @):");
    println!("  typed        march pane            fzf --filter");
    for (i, times) in per_key.into_iter().enumerate() {
        let q = &QUERY[..=i];
        let fzf_time = fzf.as_ref().map(|fzf| {
            time(|| {
                let mut child = Command::new(fzf)
                    .args(["--filter", q])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap();
                let mut stdin = child.stdin.take().unwrap();
                let text = list_text.clone();
                let writer = std::thread::spawn(move || {
                    let _ = stdin.write_all(text.as_bytes());
                });
                let out = child.wait_with_output().unwrap();
                writer.join().unwrap();
                std::hint::black_box(out.stdout.len());
            })
        });
        println!(
            "  @{q:<11} {:<21} {}",
            ms(median(times)),
            fzf_time.map(ms).unwrap_or_else(|| "(no fzf)".to_string())
        );
    }
}
