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
//! Also: March's emulator (alacritty_terminal plus the compact history it moves scrolled
//! lines into), the cost of one frame of a 200×50 shell pane, and of a resize that reflows
//! 10,000 lines of history.
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

/// Seconds March's emulator (alacritty_terminal with the compact history) takes for `data`.
fn run_march(data: &[u8]) -> f64 {
    use march_panes::terminal::{AlacrittyEmulator, TerminalEmulator};
    let start = Instant::now();
    let mut term = AlacrittyEmulator::with_scrollback_bytes(ROWS, COLS, usize::MAX, SCROLLBACK);
    for chunk in data.chunks(CHUNK) {
        term.feed(chunk);
    }
    black_box(term.cursor());
    start.elapsed().as_secs_f64()
}

/// Microseconds per frame: the screen drawn into a ratatui buffer and diffed with the last
/// frame, one frame per 64 KiB of `data` (the screen has scrolled in between): March's
/// `draw_screen` from its emulator, and the same copy from `vt100`'s screen (what
/// tui-term-style widgets do) as the reference.
fn frames(data: &[u8]) -> (f64, f64) {
    use march_panes::terminal::{AlacrittyEmulator, TermPalette, TerminalEmulator, draw_screen};
    use march_panes::theme::Theme;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Modifier, Style};
    let area = Rect::new(0, 0, COLS, ROWS);
    let palette = TermPalette::new(&Theme::default());
    let (mut march, mut reference) = (Vec::new(), Vec::new());
    let mut term = AlacrittyEmulator::with_scrollback_bytes(ROWS, COLS, usize::MAX, SCROLLBACK);
    let mut parser = vt100::Parser::new(ROWS, COLS, SCROLLBACK);
    let (mut prev_a, mut prev_b) = (Buffer::empty(area), Buffer::empty(area));
    let convert = |c: vt100::Color| match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    };
    for chunk in data.chunks(65536).take(400) {
        term.feed(chunk);
        parser.process(chunk);
        let start = Instant::now();
        let mut buf = Buffer::empty(area);
        draw_screen(&term, area, &mut buf, &palette, &|_, _| None);
        black_box(prev_a.diff(&buf).len());
        march.push(start.elapsed().as_secs_f64() * 1e6);
        prev_a = buf;
        let start = Instant::now();
        let mut buf = Buffer::empty(area);
        let screen = parser.screen();
        for row in 0..ROWS {
            for col in 0..COLS {
                if let Some(cell) = screen.cell(row, col) {
                    let mut style = Style::default()
                        .fg(convert(cell.fgcolor()))
                        .bg(convert(cell.bgcolor()));
                    if cell.bold() {
                        style = style.add_modifier(Modifier::BOLD);
                    }
                    if cell.italic() {
                        style = style.add_modifier(Modifier::ITALIC);
                    }
                    if cell.underline() {
                        style = style.add_modifier(Modifier::UNDERLINED);
                    }
                    if cell.inverse() {
                        style = style.add_modifier(Modifier::REVERSED);
                    }
                    let target = &mut buf[(col, row)];
                    target.set_symbol(if cell.has_contents() {
                        cell.contents()
                    } else {
                        " "
                    });
                    target.set_style(style);
                }
            }
        }
        black_box(prev_b.diff(&buf).len());
        reference.push(start.elapsed().as_secs_f64() * 1e6);
        prev_b = buf;
    }
    (median(march), median(reference))
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
        "{:<14} {:>9} {:>12} {:>18} {:>8} {:>14}",
        "workload", "MB", "vt100 MB/s", "alacritty MB/s", "ratio", "march MB/s"
    );
    for (name, data) in &workloads {
        let mb = data.len() as f64 / 1e6;
        let mut vt = Vec::new();
        let mut alac = Vec::new();
        let mut ratios = Vec::new();
        let mut march = Vec::new();
        for _ in 0..RUNS {
            let a = run_vt100(data);
            let b = run_alacritty(data);
            let c = run_march(data);
            vt.push(mb / a);
            alac.push(mb / b);
            ratios.push(a / b);
            march.push(mb / c);
        }
        println!(
            "{name:<14} {mb:>9.1} {:>12.1} {:>18.1} {:>7.2}x {:>14.1}",
            median(vt),
            median(alac),
            median(ratios),
            median(march)
        );
    }
    // A resize reflows the history: 10,000 full lines of 200 columns cut to 120 and back.
    use march_panes::terminal::{AlacrittyEmulator, TerminalEmulator};
    let lines = workload::full_lines(10_050, usize::from(COLS));
    let mut reflows = Vec::new();
    for _ in 0..RUNS {
        let mut term = AlacrittyEmulator::new(ROWS, COLS, SCROLLBACK);
        term.feed(&lines);
        let start = Instant::now();
        term.resize(ROWS, 120);
        term.resize(ROWS, COLS);
        reflows.push(start.elapsed().as_secs_f64() * 1e3 / 2.0);
        black_box(term.scrollback_lines());
    }
    println!(
        "resize {COLS} -> 120 columns with {SCROLLBACK} lines of history: {:.1} ms",
        median(reflows)
    );
    let (march, reference) = frames(&workloads[0].1);
    println!(
        "frame at {COLS}x{ROWS} (draw into a buffer + diff), mixed: march {march:.0} us, vt100 copy {reference:.0} us"
    );
}
