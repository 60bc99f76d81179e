//! Deterministic terminal workloads for benchmarks: the same bytes on every machine and in
//! every run, from a fixed-seed generator.
//!
//! - mixed: word lines, SGR-coloured lines (16, 256 and true colour, bold, underline,
//!   reverse), CR + erase-line progress bars, cursor-addressed status updates, UTF-8 with
//!   wide characters and emoji, tab-separated columns;
//! - plain: word lines only;
//! - seq: the output of `seq 1 5000000`.

#![allow(clippy::cast_possible_truncation)]

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

fn mixed_line(r: &mut Lcg, out: &mut Vec<u8>, eol: &[u8]) {
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
            let row = 1 + r.below(50);
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
    out.extend_from_slice(eol);
}

fn plain_line(r: &mut Lcg, out: &mut Vec<u8>, eol: &[u8]) {
    words(r, out, 120);
    out.extend_from_slice(eol);
}

fn generate(size: usize, eol: &[u8], line: fn(&mut Lcg, &mut Vec<u8>, &[u8])) -> Vec<u8> {
    let mut r = Lcg(0x6d61_7263_6821);
    let mut out = Vec::with_capacity(size + 4096);
    while out.len() < size {
        line(&mut r, &mut out, eol);
    }
    out
}

/// At least `size` bytes (whole lines) of mixed terminal output, lines ending in
/// `eol` (`\n` for a file to `cat`, `\r\n` for what a tty delivers).
pub fn mixed(size: usize, eol: &[u8]) -> Vec<u8> {
    generate(size, eol, mixed_line)
}

/// At least `size` bytes of plain word lines ending in `eol`.
pub fn plain(size: usize, eol: &[u8]) -> Vec<u8> {
    generate(size, eol, plain_line)
}

/// What `seq 1 5000000` prints, lines ending in `eol`.
pub fn seq(eol: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(45_000_000);
    for i in 1..=5_000_000u32 {
        out.extend_from_slice(i.to_string().as_bytes());
        out.extend_from_slice(eol);
    }
    out
}

/// `lines` lines of `cols` random lowercase letters each (full-width history lines, for
/// the scrollback memory measure).
pub fn full_lines(lines: usize, cols: usize) -> Vec<u8> {
    let mut r = Lcg(7);
    let mut out = Vec::with_capacity(lines * (cols + 1));
    for _ in 0..lines {
        for _ in 0..cols {
            out.push(b'a' + r.below(26) as u8);
        }
        out.push(b'\n');
    }
    out
}
