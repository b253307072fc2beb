//! When to try a call again and how long to wait: exponential backoff
//! with jitter, the provider's `retry-after` honoured, a ceiling past
//! which waiting is pointless. Tests shorten every wait through
//! `AG_LLM_RETRY_BASE_MS` and `AG_LLM_RETRY_MAX_MS`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The retry policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub retries: u32,
    /// The first backoff; each next one doubles.
    pub base: Duration,
    /// The longest single wait.
    pub max_delay: Duration,
    /// A provider asking for a longer wait than this is not retried: its
    /// error (with the wait it asked for) is reported instead.
    pub give_up_over: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 4,
            base: Duration::from_millis(1_000),
            max_delay: Duration::from_secs(60),
            give_up_over: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The default policy adjusted by `AG_LLM_RETRIES`, `AG_LLM_RETRY_BASE_MS`
    /// and `AG_LLM_RETRY_MAX_MS`.
    pub fn from_env() -> RetryPolicy {
        let mut p = RetryPolicy::default();
        let num = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        if let Some(n) = num("AG_LLM_RETRIES") {
            p.retries = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(ms) = num("AG_LLM_RETRY_BASE_MS") {
            p.base = Duration::from_millis(ms);
        }
        if let Some(ms) = num("AG_LLM_RETRY_MAX_MS") {
            p.max_delay = Duration::from_millis(ms);
        }
        p
    }

    /// The wait before retry number `attempt` (1-based), or `None` when
    /// the provider asked for more than `give_up_over`.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if let Some(ra) = retry_after {
            if ra > self.give_up_over {
                return None;
            }
            return Some(ra.min(self.max_delay));
        }
        let exp = self
            .base
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        // Up to a quarter more, so that many clients do not retry in step.
        let jitter = exp.mul_f64(clock_fraction() * 0.25);
        Some((exp + jitter).min(self.max_delay))
    }
}

/// A number in [0, 1) from the clock: jitter needs no better randomness.
fn clock_fraction() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    f64::from(nanos % 1_000_000) / 1_000_000.0
}

/// Parses `retry-after` (seconds or an HTTP date) and `retry-after-ms`.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let v = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(v)
        .ok()?;
    let secs = when.as_second() - jiff::Timestamp::now().as_second();
    Some(Duration::from_secs(u64::try_from(secs).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_honours_retry_after() {
        let p = RetryPolicy {
            retries: 5,
            base: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            give_up_over: Duration::from_secs(10),
        };
        let d1 = p.delay(1, None).unwrap();
        let d3 = p.delay(3, None).unwrap();
        assert!(d1 >= Duration::from_millis(100) && d1 <= Duration::from_millis(125));
        assert!(d3 >= Duration::from_millis(400) && d3 <= Duration::from_millis(500));
        assert_eq!(p.delay(9, None), Some(Duration::from_secs(1)));
        assert_eq!(
            p.delay(1, Some(Duration::from_millis(300))),
            Some(Duration::from_millis(300))
        );
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(5))),
            Some(Duration::from_secs(1))
        );
        assert_eq!(p.delay(1, Some(Duration::from_secs(60))), None);
    }

    #[test]
    fn parses_retry_after_headers() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
    }
}
