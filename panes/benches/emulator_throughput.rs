//! Which terminal emulator the shell pane should be built on (issue 8): `vt100` against
//! `alacritty_terminal`, fed the same bytes in the same run, at 200×50 with 10,000 lines of
//! scrollback, in 4 KiB chunks as a PTY read delivers them.
//!
//! Workloads, made by a fixed-seed generator so every run sees the same bytes, with LF
//! turned into CRLF as a tty's ONLCR does:
//! - mixed: word lines, SGR-coloured lines (16, 256 and true colour, bold, underline,
//!   reverse), CR + erase-line progress bars, cursor-addressed status updates, UTF-8 with
//!   wide characters and emoji, tab-separated columns;
//! - plain: word lines only;
//! - seq: the output of `seq 1 5000000`.
//!
//! Run: `cargo bench -p march-panes --bench emulator_throughput`.

use std::hint::black_box;
use std::time::Instant;

const ROWS: u16 = 50;
const COLS: u16 = 200;
const SCROLLBACK: usize = 10_000;
const CHUNK: usize = 4096;
const RUNS: usize = 3;
/// Size of the mixed and plain workloads.
const MB: usize = 32_000_000;

/// A small linear congruential generator: the same stream on every machine.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(0x5851_f42d_4c95_7f2d)
            .wrapping_add(0x1405_7b7e_f767_814f);
        (self.0 >> 33) % n
    }

    fn of<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "build",
    "error[E0308]:",
    "warning:",
    "Finished",
    "release",
    "src/lib.rs:17:9",
    "let",
    "match",
    "Option<String>",
    "Some(x)",
    "None",
    "tokio::spawn",
    "GET",
    "/v1/chat/completions",
    "201",
    "elapsed=3ms",
    "TRACE",
    "pane",
    "runner",
    "-rw-r--r--",
    "staff",
    "8192",
    "Nov",
    "09:41",
    "Cargo.toml",
    "main.rs",
    "test",
    "passed;",
    "failed;",
    "ok",
    "thread",
    "panicked",
    "at",
    "expected",
    "found",
    "commit",
    "9f8e7d6",
    "origin/main",
    "rebase",
    "--quiet",
];
const WIDE: &[&str] = &[
    "résumé",
    "Ärger",
    "año",
    "…",
    "✔",
    "✘",
    "⇒",
    "┃",
    "━",
    "╭─╮",
    "漢字",
    "東京都",
    "서울",
    "🙂",
    "🦀",
    "π",
    "∫",
    "Ωmega",
    "façade",
    "Здравствуйте",
];

fn words(r: &mut Lcg, out: &mut Vec<u8>, max_cols: u64) {
    let want = r.below(max_cols + 1) as usize;
    let start = out.len();
    while out.len() - start < want {
        out.extend_from_slice(r.of(WORDS).as_bytes());
        out.push(b' ');
    }
}

fn sgr(r: &mut Lcg, out: &mut Vec<u8>) {
    let code = match r.below(7) {
        0 => format!("\x1b[{}m", 30 + r.below(8)),
        1 => format!("\x1b[1;{}m", 90 + r.below(8)),
        2 => format!("\x1b[38;5;{}m", r.below(256)),
        3 => format!(
            "\x1b[38;2;{};{};{}m",
            r.below(256),
            r.below(256),
            r.below(256)
        ),
        4 => "\x1b[4m".to_string(),
        5 => "\x1b[7m".to_string(),
        _ => format!("\x1b[48;5;{}m", r.below(256)),
    };
    out.extend_from_slice(code.as_bytes());
}

fn mixed_line(r: &mut Lcg, out: &mut Vec<u8>) {
    match r.below(100) {
        0..55 => words(r, out, 120),
        55..75 => {
            for _ in 0..1 + r.below(6) {
                sgr(r, out);
                out.extend_from_slice(r.of(WORDS).as_bytes());
                out.extend_from_slice(b"\x1b[0m ");
            }
        }
        75..85 => {
            // A progress bar redrawn in place.
            for step in 0..10 {
                let done = "#".repeat(step * 4);
                let line = format!("\r\x1b[K[{done:<40}] {:>3}%", step * 10);
                out.extend_from_slice(line.as_bytes());
            }
        }
        85..90 => {
            // A status line written at a fixed place, then back.
            let row = 1 + r.below(u64::from(ROWS));
            let line = format!("\x1b7\x1b[{row};1H\x1b[K{}\x1b8", r.of(WORDS));
            out.extend_from_slice(line.as_bytes());
        }
        90..97 => {
            for _ in 0..1 + r.below(8) {
                out.extend_from_slice(r.of(WIDE).as_bytes());
                out.push(b' ');
            }
        }
        _ => {
            for _ in 0..1 + r.below(5) {
                out.extend_from_slice(r.of(WORDS).as_bytes());
                out.push(b'\t');
            }
        }
    }
    out.extend_from_slice(b"\r\n");
}

fn plain_line(r: &mut Lcg, out: &mut Vec<u8>) {
    words(r, out, 120);
    out.extend_from_slice(b"\r\n");
}

fn generate(size: usize, line: fn(&mut Lcg, &mut Vec<u8>)) -> Vec<u8> {
    let mut r = Lcg(0x6d61_7263_6821);
    let mut out = Vec::with_capacity(size + 4096);
    while out.len() < size {
        line(&mut r, &mut out);
    }
    out
}

fn seq() -> Vec<u8> {
    let mut out = Vec::with_capacity(45_000_000);
    for i in 1..=5_000_000u32 {
        out.extend_from_slice(i.to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Seconds `vt100` takes for `data`.
fn run_vt100(data: &[u8]) -> f64 {
    let start = Instant::now();
    let mut parser = vt100::Parser::new(ROWS, COLS, SCROLLBACK);
    for chunk in data.chunks(CHUNK) {
        parser.process(chunk);
    }
    black_box(parser.screen().cursor_position());
    start.elapsed().as_secs_f64()
}

/// Seconds `alacritty_terminal` takes for `data`.
fn run_alacritty(data: &[u8]) -> f64 {
    use alacritty_terminal::event::VoidListener;
    use alacritty_terminal::term::test::TermSize;
    use alacritty_terminal::term::{Config, Term};
    use alacritty_terminal::vte::ansi::Processor;
    let start = Instant::now();
    let config = Config {
        scrolling_history: SCROLLBACK,
        ..Config::default()
    };
    let size = TermSize::new(usize::from(COLS), usize::from(ROWS));
    let mut term = Term::new(config, &size, VoidListener);
    let mut processor: Processor = Processor::new();
    for chunk in data.chunks(CHUNK) {
        processor.advance(&mut term, chunk);
    }
    black_box(term.grid().cursor.point);
    start.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let workloads: Vec<(&str, Vec<u8>)> = vec![
        ("mixed", generate(MB, mixed_line)),
        ("plain", generate(MB, plain_line)),
        ("seq 1 5000000", seq()),
    ];
    println!(
        "{COLS}x{ROWS}, {SCROLLBACK} lines of scrollback, {CHUNK}-byte chunks; medians of {RUNS} interleaved runs"
    );
    println!(
        "{:<14} {:>9} {:>12} {:>18} {:>8}",
        "workload", "MB", "vt100 MB/s", "alacritty MB/s", "ratio"
    );
    for (name, data) in &workloads {
        let mb = data.len() as f64 / 1e6;
        let mut vt = Vec::new();
        let mut alac = Vec::new();
        let mut ratios = Vec::new();
        for _ in 0..RUNS {
            let a = run_vt100(data);
            let b = run_alacritty(data);
            vt.push(mb / a);
            alac.push(mb / b);
            ratios.push(a / b);
        }
        println!(
            "{name:<14} {mb:>9.1} {:>12.1} {:>18.1} {:>7.2}x",
            median(vt),
            median(alac),
            median(ratios)
        );
    }
}
