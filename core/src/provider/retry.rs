//! Retry policy for requests that fail before the first token.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

/// How often and how patiently to retry a request that failed before any content arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Delay before the first retry; doubles each time, plus up to the same again as jitter.
    pub base_delay: Duration,
    /// A server asking to wait longer than this fails at once instead.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The delay before retry number `attempt` (0-based), honouring a server's request.
    /// `None` means the server asked for longer than `max_delay`.
    pub fn delay(&self, attempt: u32, server_asked: Option<Duration>) -> Option<Duration> {
        if let Some(asked) = server_asked {
            return (asked <= self.max_delay).then_some(asked);
        }
        let base = self.base_delay.saturating_mul(1u32 << attempt.min(16));
        let jitter_ms = fastrand::u64(0..=self.base_delay.as_millis() as u64);
        Some(
            base.saturating_add(Duration::from_millis(jitter_ms))
                .min(self.max_delay),
        )
    }
}

/// How long a silent model server is waited on, and how often a request that stalled is sent
/// again: together they bound one turn's wait on a server that has stopped answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallPolicy {
    /// From sending the request to the response's headers.
    pub first_byte: Duration,
    /// Between any two pieces of the response body once it started (keepalive comments
    /// count: a server that sends them is alive, however long the model thinks).
    pub idle: Duration,
    /// Attempts after one that stalled (either timeout); other failures follow
    /// [`RetryPolicy`].
    pub max_stall_retries: u32,
}

impl Default for StallPolicy {
    fn default() -> Self {
        StallPolicy {
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(300),
            max_stall_retries: 1,
        }
    }
}

/// Statuses worth retrying: timeouts, rate limits, overload and gateway errors.
pub fn is_retryable_status(status: StatusCode) -> bool {
    matches!(
        status.as_u16(),
        408 | 409 | 425 | 429 | 500 | 502 | 503 | 504 | 529
    )
}

/// The wait a server asked for via `retry-after-ms` or `Retry-After` (seconds or HTTP date).
pub fn server_retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) =
        header_str(headers, "retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_millis(ms.max(0.0) as u64));
    }
    let value = header_str(headers, "retry-after")?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Some(Duration::from_millis((secs.max(0.0) * 1000.0) as u64));
    }
    http_date_delay(value)
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Parse an IMF-fixdate such as `Wed, 21 Oct 2015 07:28:00 GMT` into a delay from now.
fn http_date_delay(value: &str) -> Option<Duration> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as i64
        + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time.split(':').filter_map(|p| p.parse().ok()).collect();
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    // Days from civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let target = days * 86_400 + h * 3600 + m * 60 + s;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs() as i64;
    Some(Duration::from_secs((target - now).max(0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_ms_are_honoured() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(server_retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(server_retry_after(&h), Some(Duration::from_millis(150)));
    }

    #[test]
    fn retry_after_http_date_in_the_past_means_now() {
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(server_retry_after(&h), Some(Duration::ZERO));
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter_and_respects_the_cap() {
        let p = RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        };
        for attempt in 0..3 {
            let d = p.delay(attempt, None).unwrap();
            let base = 100u64 << attempt;
            assert!(
                d >= Duration::from_millis(base) && d <= Duration::from_millis(base + 100),
                "{d:?}"
            );
        }
        assert_eq!(p.delay(10, None), Some(Duration::from_millis(1000)));
        assert_eq!(p.delay(0, Some(Duration::from_secs(5))), None);
    }
}
