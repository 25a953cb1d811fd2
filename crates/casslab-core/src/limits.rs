//! The limits casslab puts on what a user gives it, in one place, each with the reason and the
//! way around it: requests in flight, the levels and spikes of a schedule, durations, the
//! budget of an experiment, the sizes of what the readers of user files accept (lines of a
//! capture, names in a shard export). The flags and the files check against the same
//! constants through the same functions, so a value gets the same answer in both; the
//! reference (docs/reference/workloads.md, "Limits") states them. Plain data and checks: the
//! callers add where the value was written (the flag, or file:line).

/// Requests in flight at most (`--concurrency`, `run.concurrency`, an experiment's
/// `concurrency:`): every one holds a request's buffers and a slot of the driver's streams.
pub const MAX_CONCURRENCY: usize = 100_000;

/// Levels a schedule may have at most (`steps A..B by S`, stages, levels of a list): each is a
/// piece of the compiled schedule.
pub const MAX_SCHEDULE_LEVELS: usize = 10_000;

/// Spikes a run may lay at most (`spike x5 for 1s every 10s` over the run's length).
pub const MAX_SPIKES: usize = 10_000;

/// The longest duration casslab reads (a run, a warm-up, a stage, an event's time): a year.
pub const MAX_DURATION_S: f64 = 366.0 * 86_400.0;

/// The longest budget of an experiment: a week.
pub const MAX_BUDGET_S: f64 = 7.0 * 86_400.0;

/// Blocks (repetitions) an experiment may ask for at most.
pub const MAX_REPETITIONS: u64 = 1000;

/// The longest line (one record) a capture, a folded-stacks file or an export may hold, in
/// bytes.
pub const MAX_RECORD_BYTES: usize = 1 << 20;

/// The longest operation name (in a shard export, a capture), in bytes.
pub const MAX_NAME_BYTES: usize = 256;

/// A value beyond a limit, or one that is no value of its kind: what is wrong, the limit, and
/// what to write instead, as one sentence (the caller says where it was written).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{0}")]
pub struct LimitError(pub String);

fn refuse(message: String) -> LimitError {
    LimitError(message)
}

/// Requests in flight: at least 1, at most [`MAX_CONCURRENCY`].
pub fn concurrency(n: f64) -> Result<usize, LimitError> {
    if n.is_nan() || n < 1.0 {
        return Err(refuse(format!("{} requests in flight: give at least 1", show(n))));
    }
    if n.fract() != 0.0 {
        return Err(refuse(format!("{} requests in flight: give a whole number", show(n))));
    }
    if n > MAX_CONCURRENCY as f64 {
        return Err(refuse(format!(
            "{} requests in flight is more than casslab keeps in flight ({MAX_CONCURRENCY}); give at most {MAX_CONCURRENCY}, or run several loaders (`--shard 0/N`)",
            show(n)
        )));
    }
    Ok(n.round() as usize)
}

/// A number as written, without a trailing `.0` (`99999999999`, not `99999999999.0`).
fn show(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e18 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// An experiment's number of blocks: 1 to [`MAX_REPETITIONS`].
pub fn repetitions(n: i128) -> Result<u32, LimitError> {
    match u64::try_from(n) {
        Ok(n) if (1..=MAX_REPETITIONS).contains(&n) => Ok(n as u32),
        _ => Err(refuse(format!("{n} blocks: give a whole number from 1 to {MAX_REPETITIONS}"))),
    }
}

/// An experiment's budget in seconds: above 0, at most [`MAX_BUDGET_S`].
pub fn budget_s(s: f64) -> Result<f64, LimitError> {
    if s.is_nan() || s <= 0.0 {
        return Err(refuse("a budget of 0 runs nothing: give the most the experiment may take, e.g. 20m".into()));
    }
    if s > MAX_BUDGET_S {
        return Err(refuse(format!("a budget of {:.0} h is more than a week ({} h); give at most 168h", s / 3600.0, MAX_BUDGET_S / 3600.0)));
    }
    Ok(s)
}

/// A margin or precision of a change, as a fraction: above 0 and below 1 (a change of −100 %
/// or more is no ratio of two latencies).
pub fn change_fraction(what: &str, f: f64) -> Result<f64, LimitError> {
    if f > 0.0 && f < 1.0 {
        return Ok(f);
    }
    Err(refuse(format!("{what} of {}%: give a percentage above 0 and below 100, e.g. 5%", show(f * 100.0))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_within_the_limits_pass_and_others_say_the_limit_and_the_fix() {
        assert_eq!(concurrency(128.0), Ok(128));
        assert!(concurrency(0.0).unwrap_err().0.contains("at least 1"));
        assert!(concurrency(f64::NAN).is_err());
        let big = concurrency(99_999_999_999.0).unwrap_err().0;
        assert!(big.contains("99999999999") && big.contains("at most 100000") && big.contains("--shard"), "{big}");
        assert_eq!(repetitions(3), Ok(3));
        assert!(repetitions(0).unwrap_err().0.contains("from 1 to 1000"));
        assert!(repetitions(-5).is_err() && repetitions(1001).is_err());
        assert_eq!(budget_s(1200.0), Ok(1200.0));
        assert!(budget_s(0.0).unwrap_err().0.contains("runs nothing"));
        assert!(budget_s(3.6e9).unwrap_err().0.contains("at most 168h"));
        assert_eq!(change_fraction("equivalence", 0.05), Ok(0.05));
        let e = change_fraction("equivalence", 2.0).unwrap_err().0;
        assert!(e.contains("200%") && e.contains("below 100"), "{e}");
        assert!(change_fraction("precision", -0.05).is_err());
    }
}
