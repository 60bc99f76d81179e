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

use march_testkit::workload;
use std::time::Instant;

const ROWS: u16 = 50;
const COLS: u16 = 200;
const SCROLLBACK: usize = 10_000;
const CHUNK: usize = 4096;
const RUNS: usize = 3;
/// Size of the mixed and plain workloads.
const MB: usize = 32_000_000;

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
        ("mixed", workload::mixed(MB, b"\r\n")),
        ("plain", workload::plain(MB, b"\r\n")),
        ("seq 1 5000000", workload::seq(b"\r\n")),
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
