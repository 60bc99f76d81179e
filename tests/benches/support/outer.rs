//! A program driven through an outer PTY whose output is drained as fast as it comes (an
//! infinitely fast terminal), with keystroke-to-echo timing; shared by the benches.

#![allow(dead_code)] // Each bench uses part of it.

use parking_lot::Mutex;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;

use super::term::{Pty, ms};

/// Letters timed per latency run.
pub const SAMPLES: usize = 200;

/// Where the drain sends printed letters and when they arrived, while someone listens.
pub type LetterTap = Arc<Mutex<Option<mpsc::Sender<(u8, Instant)>>>>;

/// A program in an outer PTY, its output drained as fast as it comes.
pub struct Outer {
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    pub writer: Box<dyn Write + Send>,
    pub screen: Arc<Mutex<vt100::Parser>>,
    /// Parse into `screen` (off while timing: the drain should cost nothing).
    pub parsing: Arc<AtomicBool>,
    pub bytes: Arc<AtomicU64>,
    /// Where printed letters go, with when they arrived, while someone listens.
    pub letters: LetterTap,
}

/// Finds letters printed as text (not inside escape sequences) in terminal output.
#[derive(Default)]
pub struct TextScan {
    state: u8,
}

impl TextScan {
    const GROUND: u8 = 0;
    const ESC: u8 = 1;
    const CSI: u8 = 2;
    const STRING: u8 = 3;
    const STRING_ESC: u8 = 4;
    const ESC_ARG: u8 = 5;

    pub fn scan(&mut self, bytes: &[u8], mut found: impl FnMut(u8)) {
        for &b in bytes {
            self.state = match (self.state, b) {
                (Self::GROUND, 0x1b) => Self::ESC,
                (Self::GROUND, b'a'..=b'z') => {
                    found(b);
                    Self::GROUND
                }
                (Self::GROUND, _) => Self::GROUND,
                (Self::ESC, b'[') => Self::CSI,
                (Self::ESC, b']' | b'P' | b'_' | b'^') => Self::STRING,
                (Self::ESC, b'(' | b')' | b'#' | b'%') => Self::ESC_ARG,
                (Self::ESC | Self::ESC_ARG, _) => Self::GROUND,
                (Self::CSI, 0x40..=0x7e) => Self::GROUND,
                (Self::CSI, _) => Self::CSI,
                (Self::STRING, 0x07) => Self::GROUND,
                (Self::STRING, 0x1b) => Self::STRING_ESC,
                (Self::STRING_ESC, b'\\') => Self::GROUND,
                (Self::STRING | Self::STRING_ESC, _) => Self::STRING,
                _ => Self::GROUND,
            };
        }
    }
}

impl Outer {
    pub fn spawn(cmd: CommandBuilder, rows: u16, cols: u16) -> Outer {
        let Pty {
            child,
            mut reader,
            writer,
            master,
        } = Pty::spawn(cmd, rows, cols);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let parsing = Arc::new(AtomicBool::new(true));
        let bytes = Arc::new(AtomicU64::new(0));
        let letters: LetterTap = Arc::default();
        let (s, p, b, l) = (
            screen.clone(),
            parsing.clone(),
            bytes.clone(),
            letters.clone(),
        );
        std::thread::spawn(move || {
            let _master = master;
            let mut buf = vec![0u8; 65536];
            let mut scan = TextScan::default();
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let at = Instant::now();
                b.fetch_add(n as u64, Ordering::Relaxed);
                if let Some(tx) = l.lock().as_ref() {
                    scan.scan(&buf[..n], |c| {
                        let _ = tx.send((c, at));
                    });
                }
                if p.load(Ordering::Relaxed) {
                    s.lock().process(&buf[..n]);
                }
            }
        });
        Outer {
            child,
            writer,
            screen,
            parsing,
            bytes,
            letters,
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    pub fn wait_text(&self, needle: &str) {
        let start = Instant::now();
        while !self.screen.lock().screen().contents().contains(needle) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no `{needle}` on screen:\n{}",
                self.screen.lock().screen().contents()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().unwrap()
    }

    /// Keystroke-to-echo latency: `SAMPLES` letters, 10–30 ms apart, each timed from its
    /// write until the letter is printed back.
    pub fn latency(&mut self) -> Vec<Duration> {
        self.latency_with(SAMPLES, 10, |_| {})
    }

    /// Keystroke-to-echo latency of `samples` letters, `gap_ms` to twice that apart; `before`
    /// runs before each letter is written (the load to measure under).
    pub fn latency_with(
        &mut self,
        samples: usize,
        gap_ms: u64,
        mut before: impl FnMut(&mut Self),
    ) -> Vec<Duration> {
        let (tx, rx) = mpsc::channel();
        *self.letters.lock() = Some(tx);
        let mut out = Vec::new();
        let mut gap = 0x2545_f491_u64;
        for i in 0..samples {
            before(self);
            while rx.try_recv().is_ok() {}
            let letter = b'a' + (i % 26) as u8;
            let start = Instant::now();
            self.send(&[letter]);
            loop {
                let (c, at) = rx
                    .recv_timeout(Duration::from_secs(30))
                    .unwrap_or_else(|_| panic!("no echo of {}", letter as char));
                if c == letter && at >= start {
                    out.push(at.duration_since(start));
                    break;
                }
            }
            gap = gap.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            std::thread::sleep(Duration::from_millis(gap_ms + (gap >> 33) % (gap_ms + 1)));
        }
        *self.letters.lock() = None;
        out
    }
}

impl Drop for Outer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn quantile(v: &[Duration], q: f64) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s[((s.len() as f64 * q) as usize).min(s.len() - 1)]
}

pub fn describe(v: &[Duration]) -> String {
    format!(
        "median {:.3} ms, p95 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(quantile(v, 0.5)),
        ms(quantile(v, 0.95)),
        ms(quantile(v, 0.99)),
        ms(quantile(v, 1.0))
    )
}
