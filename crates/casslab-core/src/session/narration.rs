//! What a session's events say to a person watching a run: one line of text for each event
//! worth a line (connection, phases, notices, events carried out, find-max steps, experiment
//! runs), none for the samples and ends a front end shows otherwise (progress, summaries).
//! [`ProgressLine`] is the line a phase's progress shows. Text only: the front end decides
//! where it goes.

use super::SessionEvent;
use crate::events::EventSpec;
use crate::notice::Severity;
use crate::stats::{IntervalSample, Phase};

/// The line `event` says, if it says one.
pub fn narration(event: &SessionEvent<'_>) -> Option<String> {
    Some(match event {
        SessionEvent::Connected { hosts, info } => format!(
            "connected to {} ({} node{}, {})",
            hosts.join(","),
            info.node_count,
            if info.node_count == 1 { "" } else { "s" },
            crate::config::server_label(info.server_version.as_deref())
        ),
        SessionEvent::Notice(n) => match n.severity() {
            Severity::Info => n.to_string(),
            Severity::Note => format!("note: {n}"),
            Severity::Warning => format!("warning: {n}"),
        },
        SessionEvent::PhaseStarted { phase, count, warmup_s, duration_s, rate_per_s, concurrency, schedule } => {
            let measured = match count {
                Some(n) => format!("{n} operations"),
                None => format!("{:.0}s measured", duration_s.unwrap_or(0.0)),
            };
            match (phase, count) {
                (Phase::Load, Some(n)) => format!("load phase: {n} operations"),
                _ => format!(
                    "run phase: {warmup_s:.0}s warm-up + {measured}, {}",
                    match (rate_per_s, schedule) {
                        (Some(_), Some(s)) => format!("rate schedule '{s}' (latency from intended start)"),
                        (Some(r), None) => format!("fixed rate {r:.0}/s (latency from intended start)"),
                        (None, Some(s)) => format!("max throughput, in flight '{s}' (up to {concurrency})"),
                        (None, None) => format!("max throughput, {concurrency} in flight"),
                    }
                ),
            }
        }
        SessionEvent::EventStarted { spec } => format!("event {}: {} ...", when(spec), spec.label()),
        SessionEvent::EventFinished { spec, record } => {
            format!("event {}: {} {} after {:.1} s", when(spec), spec.label(), record.status.as_str(), record.duration_ms() as f64 / 1000.0)
        }
        SessionEvent::SearchStep { step, rate_per_s: Some(r) } => format!("\n== step {step}: fixed rate {r:.0}/s"),
        SessionEvent::SearchStep { step, rate_per_s: None } => format!("\n== step {step}: probe at maximum throughput"),
        SessionEvent::SearchRamp { from_per_s, to_per_s, bracket: None } => {
            format!("\n== ramp: the rate from {from_per_s:.0}/s to {to_per_s:.0}/s, judged level by level")
        }
        SessionEvent::SearchRamp { bracket: Some((lo, hi)), .. } => format!("ramp: the SLA stopped holding between {lo:.0}/s and {hi:.0}/s"),
        SessionEvent::SearchJudged { step, achieved_per_s, figure, met } => {
            format!("step {step}: {achieved_per_s:.0} ops/s, {figure} → SLA {}", if *met { "met" } else { "not met" })
        }
        SessionEvent::ServerApplied { workload, applied } => format!(
            "the local cluster now runs the server of {workload}: restarted in {:.1} s{}",
            applied.took_ms as f64 / 1000.0,
            if applied.wiped { ", its data wiped (the storage changed)" } else { "" }
        ),
        SessionEvent::VariantRun { variant, step } => format!("\n== {variant} · {step}"),
        SessionEvent::Interval(_) | SessionEvent::RunStarted { .. } | SessionEvent::PhaseFinished { .. } | SessionEvent::RunFinished { .. } => return None,
    })
}

/// When an event fires, as its spec says: `setup`, or its time since the run phase began.
fn when(spec: &EventSpec) -> String {
    if spec.setup {
        "setup".to_string()
    } else {
        format!("{:.1}s", spec.at_ms as f64 / 1000.0)
    }
}

/// The progress of one phase, a line per interval sample: how far it is (operations of a
/// counted phase, else seconds of its planned time), its rate, p99 from the intended start,
/// errors, the recall of vector searches, and how far it runs behind its schedule.
#[derive(Debug, Default)]
pub struct ProgressLine {
    count: Option<u64>,
    done: u64,
    planned_s: f64,
    phase_start_ms: Option<u64>,
}

impl ProgressLine {
    /// A phase of `count` operations, or of `planned_s` seconds (warm-up included).
    pub fn new(count: Option<u64>, planned_s: f64) -> ProgressLine {
        ProgressLine { count, planned_s, ..ProgressLine::default() }
    }

    /// The line after sample `s`.
    pub fn line(&mut self, s: &IntervalSample) -> String {
        let start_ms = *self.phase_start_ms.get_or_insert(s.start_ms);
        let t = s.total();
        // a run phase's count comes after its warm-up
        if s.phase != Phase::Warmup {
            self.done += t.ok + t.error_count();
        }
        let elapsed_s = (s.end_ms - start_ms) as f64 / 1000.0;
        let ops_s = t.ok as f64 / s.duration_s().max(1e-3);
        let p99_ms = if t.intended.is_empty() { 0.0 } else { t.intended.value_at_quantile(0.99) as f64 / 1e6 };
        let where_ = match self.count {
            Some(n) => format!("{}/{} ({:.0}%)", self.done, n, 100.0 * self.done as f64 / n.max(1) as f64),
            None => format!("{:.0}s/{:.0}s", elapsed_s, self.planned_s),
        };
        let mut recall = crate::recall::RecallCounts::default();
        for (_, o) in &s.ops {
            if let Some(r) = &o.recall {
                recall.merge(r);
            }
        }
        let recall = recall.recall().map(|r| format!("  recall@{} {r:.3}", recall.k)).unwrap_or_default();
        format!(
            "{:<6} {where_}  {:>9.0} ops/s  p99 {:>8.2} ms  errors {}{recall}{}",
            s.phase.as_str(),
            ops_s,
            p99_ms,
            t.error_count(),
            if s.backlog > 0 { format!("  behind schedule {}", s.backlog) } else { String::new() }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_steps_say_their_rate_and_samples_say_nothing() {
        assert_eq!(narration(&SessionEvent::SearchStep { step: 2, rate_per_s: Some(1500.4) }).unwrap(), "\n== step 2: fixed rate 1500/s");
        assert_eq!(narration(&SessionEvent::SearchStep { step: 1, rate_per_s: None }).unwrap(), "\n== step 1: probe at maximum throughput");
        let judged = SessionEvent::SearchJudged { step: 3, achieved_per_s: 998.7, figure: "p99 4.1 ms", met: false };
        assert_eq!(narration(&judged).unwrap(), "step 3: 999 ops/s, p99 4.1 ms → SLA not met");
    }
}
