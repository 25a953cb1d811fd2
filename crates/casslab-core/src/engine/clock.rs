//! The run's one clock: the instant a run started, and the same moment on the wall clock.
//! Intervals, server samples, events and traces are all placed on its time axis
//! (milliseconds since the start), so they line up without conversions.

use tokio::time::Instant;

/// When a run started, monotonic and on the wall clock.
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    pub t0: Instant,
    /// `t0` on the wall clock, in milliseconds since the Unix epoch.
    pub t0_unix_ms: i64,
}

impl RunClock {
    /// A clock starting now.
    pub fn start() -> RunClock {
        RunClock { t0: Instant::now(), t0_unix_ms: unix_now_ms() }
    }

    /// Milliseconds since the start.
    pub fn now_ms(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }

    /// The instant `ms` milliseconds after the start.
    pub fn at(&self, ms: u64) -> Instant {
        self.t0 + std::time::Duration::from_millis(ms)
    }

    /// The wall-clock time (Unix milliseconds) of `ms` on this clock's axis.
    pub fn unix_ms(&self, ms: u64) -> i64 {
        self.t0_unix_ms + ms as i64
    }
}

pub use crate::units::unix_now_ms;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_axis_counts_from_the_start() {
        let c = RunClock::start();
        assert!(c.now_ms() < 1_000);
        assert_eq!(c.at(250) - c.t0, std::time::Duration::from_millis(250));
        assert_eq!(c.unix_ms(1_500), c.t0_unix_ms + 1_500);
        assert!((unix_now_ms() - c.t0_unix_ms).abs() < 1_000);
    }
}
