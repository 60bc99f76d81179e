//! The restart policy for children March keeps alive (runners, language servers): how long
//! to wait before each restart and when to give up. Pure: callers say how long a child was up.

use std::time::Duration;

/// When and how often to restart a crashed child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Consecutive restarts tried before giving up.
    pub max_attempts: u32,
    /// Wait before the first restart; doubled for each further consecutive one.
    pub initial_backoff: Duration,
    /// Upper bound of the wait.
    pub max_backoff: Duration,
    /// A child that stayed up this long was healthy: its crash starts the count afresh.
    pub healthy_after: Duration,
}

impl Default for RestartPolicy {
    /// A runner's: five quick tries, 250 ms doubling to 10 s; 30 s up counts as healthy.
    fn default() -> Self {
        RestartPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(10),
            healthy_after: Duration::from_secs(30),
        }
    }
}

impl RestartPolicy {
    /// A language server's: two restarts (1 s, then 2 s); the third crash within five minutes
    /// of running disables it, since a server that keeps dying only costs CPU and noise.
    pub const LANGUAGE_SERVER: RestartPolicy = RestartPolicy {
        max_attempts: 2,
        initial_backoff: Duration::from_secs(1),
        max_backoff: Duration::from_secs(2),
        healthy_after: Duration::from_secs(300),
    };

    /// The wait before consecutive restart number `attempt` (1-based).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.initial_backoff
            .saturating_mul(1u32 << doublings)
            .min(self.max_backoff)
    }
}

/// What follows a runner's end, by the policy and the crashes before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartDecision {
    /// Start it again after this wait; `attempt` is the consecutive restart it will be.
    RestartAfter {
        /// The wait.
        wait: Duration,
        /// Which consecutive restart (1 for the first after a healthy run).
        attempt: u32,
    },
    /// It kept crashing: stop trying. `attempts` restarts were tried in a row.
    GiveUp {
        /// Restarts tried in a row.
        attempts: u32,
    },
}

/// Counts consecutive crashes and decides what follows each, from the policy and how long
/// the child had been up: a pure state machine, so its timing is tested with a fake clock.
#[derive(Debug, Clone)]
pub struct RestartCounter {
    policy: RestartPolicy,
    attempts: u32,
}

impl RestartCounter {
    /// A counter with no crash yet.
    pub fn new(policy: RestartPolicy) -> Self {
        RestartCounter {
            policy,
            attempts: 0,
        }
    }

    /// The child ended after running for `up_for`: a run at least `healthy_after` long
    /// starts the count afresh.
    pub fn crashed(&mut self, up_for: Duration) -> RestartDecision {
        if up_for >= self.policy.healthy_after {
            self.attempts = 0;
        }
        self.next()
    }

    /// A restart failed before the child was up (spawn or initialize failed).
    pub fn start_failed(&mut self) -> RestartDecision {
        self.next()
    }

    fn next(&mut self) -> RestartDecision {
        if self.attempts >= self.policy.max_attempts {
            return RestartDecision::GiveUp {
                attempts: self.attempts,
            };
        }
        self.attempts += 1;
        RestartDecision::RestartAfter {
            wait: self.policy.backoff(self.attempts),
            attempt: self.attempts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RestartPolicy {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            ..RestartPolicy::default()
        };
        let waits: Vec<_> = (1..=6).map(|n| policy.backoff(n).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(policy.backoff(u32::MAX), Duration::from_secs(1));
    }

    /// A clock the test moves by hand: the counter only ever sees how long a child was up.
    struct FakeClock {
        now: std::time::Instant,
    }

    impl FakeClock {
        fn advance(&mut self, by: Duration) -> std::time::Instant {
            self.now += by;
            self.now
        }
    }

    #[test]
    fn restart_policy_with_a_fake_clock() {
        let policy = RestartPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(10),
            healthy_after: Duration::from_secs(30),
        };
        let mut clock = FakeClock {
            now: std::time::Instant::now(),
        };
        let mut counter = RestartCounter::new(policy);
        let restart = |wait_ms, attempt| RestartDecision::RestartAfter {
            wait: Duration::from_millis(wait_ms),
            attempt,
        };
        // Crashes in quick succession back off, doubling.
        let up = clock.now;
        let crashed_at = clock.advance(Duration::from_secs(1));
        assert_eq!(counter.crashed(crashed_at - up), restart(250, 1));
        let up = clock.advance(Duration::from_millis(250));
        let crashed_at = clock.advance(Duration::from_secs(2));
        assert_eq!(counter.crashed(crashed_at - up), restart(500, 2));
        // A restart that cannot even start counts too.
        assert_eq!(counter.start_failed(), restart(1000, 3));
        // One more crash within the healthy time: given up, after three tries in a row.
        let up = clock.advance(Duration::from_secs(1));
        let crashed_at = clock.advance(Duration::from_secs(29));
        assert_eq!(
            counter.crashed(crashed_at - up),
            RestartDecision::GiveUp { attempts: 3 }
        );

        // A runner that stayed up for the healthy time starts the count afresh.
        let mut counter = RestartCounter::new(RestartPolicy {
            max_attempts: 3,
            ..RestartPolicy::default()
        });
        for attempt in 1..=3 {
            let up = clock.now;
            let at = clock.advance(Duration::from_secs(5));
            assert!(matches!(
                counter.crashed(at - up),
                RestartDecision::RestartAfter { attempt: a, .. } if a == attempt
            ));
        }
        let up = clock.now;
        let at = clock.advance(Duration::from_secs(30));
        assert_eq!(counter.crashed(at - up), restart(250, 1));
    }
}
