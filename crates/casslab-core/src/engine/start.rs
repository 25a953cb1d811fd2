//! The common start of a run spread over several loaders. Every loader of a sharded run
//! starts its run phase at the same wall-clock time and cuts its intervals on the same
//! wall-clock boundaries, so that their intervals can be added up exactly. The time is either
//! given (`--start-at`) or agreed through the cluster under test: each shard registers with a
//! lightweight transaction, waits until all have, and the first to see them all proposes a
//! start a moment later, which the others read (a barrier with a timeout that names the shards
//! that never came). Registering also measures this loader's clock against the server's.

use super::clock::{unix_now_ms, RunClock};
use super::setup_error::StartError;
use super::target::Target;
use super::EngineError;
use crate::config::ShardConfig;
use std::time::Duration;
use tokio::time::Instant;

/// How long after everyone arrived the run phase starts (time to read the agreed start).
const START_MARGIN_MS: i64 = 2_000;
/// How often a waiting shard looks for the others.
const POLL: Duration = Duration::from_millis(250);

/// When the run phase starts, and what the barrier measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommonStart {
    pub at_unix_ms: i64,
    /// This loader's clock minus the server's, when a barrier measured it.
    pub clock_offset_ms: Option<f64>,
}

impl CommonStart {
    /// The start as an instant of this process.
    pub fn instant(&self, clock: &RunClock) -> Instant {
        let axis_ms = self.at_unix_ms - clock.t0_unix_ms;
        if axis_ms >= 0 {
            clock.at(axis_ms as u64)
        } else {
            clock.t0.checked_sub(Duration::from_millis(axis_ms.unsigned_abs())).unwrap_or(clock.t0)
        }
    }
}

/// A start given on the command line: refused when it has passed by more than `grace_ms`.
pub fn at(unix_ms: i64, grace_ms: i64) -> Result<CommonStart, StartError> {
    let late_ms = unix_now_ms() - unix_ms;
    if late_ms > grace_ms {
        return Err(StartError::Passed { late_ms });
    }
    Ok(CommonStart { at_unix_ms: unix_ms, clock_offset_ms: None })
}

fn key(run_id: &str, what: &str) -> String {
    format!("shards:{run_id}:{what}")
}

/// The barrier: registers this shard, waits for all, and returns the agreed start.
pub async fn barrier<T: Target>(target: &T, shard: &ShardConfig, interval_ms: u64) -> Result<CommonStart, EngineError> {
    let ttl_s = u32::try_from(shard.barrier_timeout_ms / 1000 + 600).unwrap_or(u32::MAX);
    let run_id = &shard.run_id;
    let before = unix_now_ms();
    let mine = target.claim(&key(run_id, &shard.index.to_string()), &before.to_string(), ttl_s).await?;
    let after = unix_now_ms();
    if !mine.ours {
        return Err(StartError::Duplicate { run_id: run_id.clone(), index: shard.index, ttl_s }.into());
    }
    let clock_offset_ms = mine.written_at_unix_us.map(|us| (before + after) as f64 / 2.0 - us as f64 / 1000.0);

    let keys: Vec<String> = (0..shard.count).map(|i| key(run_id, &i.to_string())).collect();
    let waiting_since = std::time::Instant::now();
    loop {
        let present = target.claims(&keys).await?;
        if present.len() >= keys.len() {
            break;
        }
        if waiting_since.elapsed() > Duration::from_millis(shard.barrier_timeout_ms) {
            let (arrived, missing): (Vec<u32>, Vec<u32>) = (0..shard.count).partition(|i| present.iter().any(|(k, _)| *k == keys[*i as usize]));
            let names = |v: &[u32]| if v.is_empty() { "none".to_string() } else { v.iter().map(|i| format!("shard {i}")).collect::<Vec<_>>().join(", ") };
            return Err(StartError::Missing {
                run_id: run_id.clone(),
                waited_s: waiting_since.elapsed().as_secs_f64(),
                missing: names(&missing),
                arrived: names(&arrived),
            }
            .into());
        }
        tokio::time::sleep(POLL).await;
    }

    // the first to see everyone proposes a start on an interval boundary; everyone reads it
    let iv = interval_ms.max(1) as i64;
    let proposal = (unix_now_ms() + START_MARGIN_MS).div_euclid(iv) * iv + iv;
    let start = target.claim(&key(run_id, "start"), &proposal.to_string(), ttl_s).await?;
    let at_unix_ms: i64 = start.value.parse().unwrap_or(proposal);
    let late_ms = unix_now_ms() - at_unix_ms;
    if late_ms > iv {
        return Err(StartError::Stale { run_id: run_id.clone(), late_ms }.into());
    }
    Ok(CommonStart { at_unix_ms, clock_offset_ms })
}

/// The first tick of a phase that started at `start` when its intervals are cut on wall-clock
/// multiples of `interval`: the next boundary after `start` (the first interval is short).
pub fn aligned_first_tick(clock: &RunClock, start: Instant, interval: Duration) -> Instant {
    let iv = interval.as_millis().max(1) as i64;
    let start_unix = clock.t0_unix_ms + start.saturating_duration_since(clock.t0).as_millis() as i64;
    let next = (start_unix.div_euclid(iv) + 1) * iv;
    start + Duration::from_millis((next - start_unix) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_fall_on_wall_clock_boundaries() {
        let clock = RunClock { t0: Instant::now(), t0_unix_ms: 1_700_000_000_250 };
        // a phase starting 1.5 s into the run: 1_700_000_001_750 on the wall clock
        let start = clock.at(1_500);
        let first = aligned_first_tick(&clock, start, Duration::from_secs(1));
        assert_eq!(first - start, Duration::from_millis(250));
        // a start on a boundary waits a whole interval
        let on = clock.at(750);
        assert_eq!(aligned_first_tick(&clock, on, Duration::from_secs(1)) - on, Duration::from_secs(1));
    }

    #[test]
    fn a_start_in_the_past_is_refused_and_instants_follow_the_wall_clock() {
        assert!(matches!(at(unix_now_ms() - 60_000, 1_000), Err(StartError::Passed { .. })));
        let s = at(unix_now_ms() + 5_000, 1_000).unwrap();
        let clock = RunClock::start();
        let until = s.instant(&clock).saturating_duration_since(Instant::now());
        assert!(until > Duration::from_millis(4_000) && until <= Duration::from_millis(5_100), "{until:?}");
    }
}
