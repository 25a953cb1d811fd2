//! The common start of runs made at the same time in one process: the variants of an
//! experiment measured side by side. Each run arrives at the gate when its load is done and
//! its run phase is about to begin; once all have arrived (or one has given up), the gate
//! names one start a moment later, and every run starts its run phase there, offset by its
//! own share of one operation's spacing, so that their operations interleave (a b a b …)
//! rather than coincide, and their intervals cover the same seconds. It is the in-process
//! counterpart of the shards' barrier in `start.rs`, which agrees through the cluster.

use super::clock::unix_now_ms;
use super::setup_error::GateError;
use super::start::CommonStart;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// How long after the last run arrived the run phases start: time for every waiting task to
/// wake and set up its workers.
const START_MARGIN_MS: i64 = 250;

/// The gate's state: who has arrived, and the start once known.
#[derive(Debug, Clone, PartialEq)]
enum GateState {
    Waiting {
        arrived: usize,
    },
    Open {
        at_unix_ms: i64,
    },
    /// A run gave up (a setup failure) before every run arrived: the others must not wait.
    Abandoned {
        by: String,
    },
}

/// A gate that `participants` runs pass together.
#[derive(Debug)]
pub struct StartGate {
    participants: usize,
    state: Mutex<watch::Sender<GateState>>,
    /// Longest wait for the others, after which the waiting run fails.
    timeout: Duration,
}

impl StartGate {
    pub fn new(participants: usize, timeout: Duration) -> Arc<StartGate> {
        let (tx, _) = watch::channel(GateState::Waiting { arrived: 0 });
        Arc::new(StartGate { participants: participants.max(1), state: Mutex::new(tx), timeout })
    }

    fn sender(&self) -> std::sync::MutexGuard<'_, watch::Sender<GateState>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Arrives and waits for the others: the common start, on the wall clock.
    pub async fn arrive(&self) -> Result<i64, GateError> {
        let mut rx = {
            let tx = self.sender();
            let next = match *tx.borrow() {
                GateState::Waiting { arrived } if arrived + 1 >= self.participants => GateState::Open { at_unix_ms: unix_now_ms() + START_MARGIN_MS },
                GateState::Waiting { arrived } => GateState::Waiting { arrived: arrived + 1 },
                ref other => other.clone(),
            };
            tx.send_replace(next);
            tx.subscribe()
        };
        let waited = tokio::time::timeout(self.timeout, rx.wait_for(|s| !matches!(s, GateState::Waiting { .. }))).await.map(|r| r.map(|s| s.clone()));
        let state = match waited {
            Ok(Ok(s)) => s,
            Ok(Err(_)) => GateState::Abandoned { by: "another variant".into() },
            Err(_) => {
                let arrived = match *rx.borrow() {
                    GateState::Waiting { arrived } => arrived,
                    _ => self.participants,
                };
                return Err(GateError::Timeout { waited_s: self.timeout.as_secs_f64(), arrived, participants: self.participants });
            }
        };
        match state {
            GateState::Open { at_unix_ms } => Ok(at_unix_ms),
            GateState::Abandoned { by } => Err(GateError::Abandoned { by }),
            // `wait_for` returned a state that is not waiting: never this one
            GateState::Waiting { arrived } => Err(GateError::Timeout { waited_s: 0.0, arrived, participants: self.participants }),
        }
    }

    /// A run that will never arrive (it failed) lets the others go: they fail at once rather
    /// than wait out the timeout. Does nothing once the gate is open.
    pub fn abandon(&self, by: &str) {
        let tx = self.sender();
        if matches!(*tx.borrow(), GateState::Waiting { .. }) {
            tx.send_replace(GateState::Abandoned { by: by.to_string() });
        }
    }
}

/// One run's place at a gate: the gate, and how long after the common start its run phase
/// begins (its share of one operation's spacing, so the runs' operations interleave).
#[derive(Debug, Clone)]
pub struct StartSlot {
    pub gate: Arc<StartGate>,
    pub offset: Duration,
}

impl StartSlot {
    /// Waits at the gate; the start of this run's phase.
    pub async fn start(&self) -> Result<CommonStart, GateError> {
        let at = self.gate.arrive().await?;
        Ok(CommonStart { at_unix_ms: at + self.offset.as_millis() as i64, clock_offset_ms: None })
    }

    /// The slots of `participants` runs that share one stream of `rate_per_s` operations a
    /// second between them (each run's own rate is its share of it): run `i` starts `i` /
    /// `rate_per_s` seconds after the first, rounded to the millisecond.
    pub fn interleaved(participants: usize, rate_per_s: Option<f64>, timeout: Duration) -> Vec<StartSlot> {
        let gate = StartGate::new(participants, timeout);
        let spacing_s = rate_per_s.filter(|r| *r > 0.0).map_or(0.0, |r| 1.0 / r);
        (0..participants).map(|i| StartSlot { gate: gate.clone(), offset: Duration::from_secs_f64((spacing_s * i as f64).min(1.0)) }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_run_gets_the_same_start_once_all_have_arrived() {
        let slots = StartSlot::interleaved(3, Some(1000.0), Duration::from_secs(5));
        assert_eq!(slots.iter().map(|s| s.offset.as_micros()).collect::<Vec<_>>(), [0, 1000, 2000]);
        let before = unix_now_ms();
        let starts = futures::future::join_all(slots.iter().map(|s| s.start())).await;
        let at: Vec<i64> = starts.into_iter().map(|s| s.unwrap().at_unix_ms).collect();
        assert_eq!(at[1] - at[0], 1);
        assert_eq!(at[2] - at[0], 2);
        assert!(at[0] >= before + START_MARGIN_MS, "the start is a moment after the last arrival");
    }

    #[tokio::test]
    async fn a_run_that_fails_lets_the_others_go() {
        let slots = StartSlot::interleaved(2, None, Duration::from_secs(60));
        let waiting = tokio::spawn({
            let s = slots[0].clone();
            async move { s.start().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        slots[1].gate.abandon("b");
        assert_eq!(waiting.await.unwrap(), Err(GateError::Abandoned { by: "b".into() }));
    }

    #[tokio::test]
    async fn a_run_alone_waits_no_longer_than_its_timeout() {
        let slots = StartSlot::interleaved(2, None, Duration::from_millis(50));
        match slots[0].start().await {
            Err(GateError::Timeout { arrived: 1, participants: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
    }
}
