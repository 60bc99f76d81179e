//! Timed samples as the benches report them: median, tail and worst.

#![allow(dead_code)] // Each bench uses part of it.

use std::time::Duration;

/// The `q` quantile (0 to 1) of `sorted`.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

/// Prints `name`'s p50, p90, p99 and max on one line; the p50.
pub fn report(name: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let p50 = quantile(&samples, 0.5);
    println!(
        "{name:<44} p50 {:>7.2} ms  p90 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms",
        ms(p50),
        ms(quantile(&samples, 0.9)),
        ms(quantile(&samples, 0.99)),
        ms(samples.last().copied().unwrap_or_default()),
    );
    p50
}
