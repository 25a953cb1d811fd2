//! The run session's side of verification: the workload as the run's `--verify` or
//! `--no-verify` says, the run's first violations saved as they arrive (on the run's time
//! axis), the records of earlier runs handed to the engine when it asks for them, and this
//! run's write records saved at its end for the next run on the same data set.

use crate::cql::Consistency;
use crate::engine::RunClock;
use crate::stats::IntervalSample;
use crate::store::{RunId, SavedViolation, Store, StoreError};
use crate::verify::{RunVerify, Verifier, VerifyRequest, RUN_SAMPLES};
use crate::workload::{OpBody, Workload};

/// `w` with every operation verified or not, when the run says (`on`).
pub fn workload_for_run(mut w: Workload, on: Option<bool>) -> Workload {
    if let Some(on) = on {
        for op in &mut w.operations {
            op.verify = Some(on);
        }
        w.verify = Some(on);
    }
    w
}

/// `w` with every CQL statement at the run's consistency levels, when it sets them
/// (`--consistency`, `--serial-consistency`); Redis operations have none.
pub fn with_consistency(mut w: Workload, consistency: Option<Consistency>, serial: Option<Consistency>) -> Workload {
    for op in &mut w.operations {
        if let OpBody::Cql(c) = &mut op.body {
            if let Some(cl) = consistency {
                c.consistency = cl;
            }
            if serial.is_some() {
                c.serial_consistency = serial;
            }
        }
    }
    w
}

/// The first violations of a run, saved as they arrive.
#[derive(Debug, Default)]
pub(super) struct Violations {
    saved: usize,
}

impl Violations {
    /// Saves the violations `sample` holds, up to the run's [`RUN_SAMPLES`].
    pub(super) fn add(&mut self, results: &Store, run: RunId, clock: &RunClock, sample: &IntervalSample) -> Result<(), StoreError> {
        let room = RUN_SAMPLES.saturating_sub(self.saved);
        let found: Vec<SavedViolation> = sample
            .ops
            .iter()
            .filter_map(|(_, s)| s.verify.as_deref())
            .flat_map(|v| v.samples.iter())
            .take(room)
            .map(|v| SavedViolation::of(v, v.at_unix_ms.saturating_sub(clock.t0_unix_ms).max(0) as u64))
            .collect();
        self.saved += found.len();
        results.add_violations(run, &found)
    }
}

/// Answers what the engine asks of the store.
pub(super) fn answer(results: &Store, request: VerifyRequest) {
    match request {
        VerifyRequest::Records { token, tables, reply } => {
            let found = tables.into_iter().filter_map(|t| results.record(&token, &t).ok().flatten().map(|bytes| (t, bytes))).collect();
            let _ = reply.send(found);
        }
    }
}

/// Saves the write records of the run's verified tables.
pub(super) fn save_records(results: &Store, run: RunId, verify: &RunVerify, verifier: Option<&Verifier>) -> Result<(), StoreError> {
    for (table, bytes) in verifier.map(Verifier::saved_records).unwrap_or_default() {
        results.save_record(run, &verify.token, &table, &bytes)?;
    }
    Ok(())
}
