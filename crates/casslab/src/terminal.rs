//! The terminal view of a run session: an [`Observer`] that renders what the session reports
//! on stderr — connection, phases, the progress line, warnings and notes, events as they are
//! carried out, find-max steps and experiment runs. With `summaries` it also prints each
//! finished run's summary on stdout (experiments, whose runs follow each other). It only reads
//! what the session sends; results are printed by the commands.

use crate::progress::Progress;
use casslab_core::notice::Severity;
use casslab_core::session::{Observer, SessionEvent};
use casslab_core::stats::Phase;
use casslab_core::store::Store;
use std::sync::{Arc, Mutex};

pub struct Terminal {
    progress: Mutex<Progress>,
    /// Print each finished run's summary (read back from this store).
    summaries: Option<Arc<Store>>,
}

impl Terminal {
    pub fn new() -> Terminal {
        Terminal { progress: Mutex::new(Progress::new()), summaries: None }
    }

    /// Also prints the summary of every run as it is saved.
    pub fn with_summaries(store: Arc<Store>) -> Terminal {
        Terminal { summaries: Some(store), ..Terminal::new() }
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Prints a line on stderr, after ending the progress line.
    fn say(&self, line: &str) {
        self.progress().clear();
        eprintln!("{line}");
    }
}

fn fmt_s(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

impl Observer for Terminal {
    fn on(&self, event: &SessionEvent<'_>) {
        // --quiet: warnings, and the summaries that are results, only
        let warning = matches!(event, SessionEvent::Notice(n) if n.severity() == Severity::Warning);
        if crate::out::quiet() && !warning && !matches!(event, SessionEvent::RunFinished { .. }) {
            return;
        }
        match event {
            SessionEvent::Connected { hosts, info } => self.say(&format!(
                "connected to {} ({} node{}, {})",
                hosts.join(","),
                info.node_count,
                if info.node_count == 1 { "" } else { "s" },
                casslab_core::config::server_label(info.server_version.as_deref())
            )),
            SessionEvent::Notice(n) => match n.severity() {
                Severity::Info => self.say(&n.to_string()),
                Severity::Note => self.say(&format!("note: {n}")),
                Severity::Warning => self.say(&format!("warning: {n}")),
            },
            SessionEvent::PhaseStarted { phase, count, warmup_s, duration_s, rate_per_s, concurrency, schedule } => {
                self.progress().phase(*phase, *count, warmup_s + duration_s.unwrap_or(0.0));
                let measured = match count {
                    Some(n) => format!("{n} operations"),
                    None => format!("{:.0}s measured", duration_s.unwrap_or(0.0)),
                };
                let what = match (phase, count) {
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
                };
                eprintln!("{what}");
            }
            SessionEvent::Interval(s) => self.progress().interval(s),
            SessionEvent::RunStarted { .. } => {}
            SessionEvent::PhaseFinished { .. } => self.progress().clear(),
            SessionEvent::EventStarted { spec } => self.say(&format!("event {}: {} ...", when(spec), spec.label())),
            SessionEvent::EventFinished { spec, record } => {
                self.say(&format!("event {}: {} {} after {:.1} s", when(spec), spec.label(), record.status.as_str(), record.duration_ms() as f64 / 1000.0))
            }
            SessionEvent::RunFinished { run, .. } => {
                self.progress().clear();
                if let Some(store) = &self.summaries {
                    if let Ok(r) = store.run(*run) {
                        if let Some(s) = &r.summary {
                            let _ = crate::out::print(&casslab_core::report::text::run_summary(&r, s));
                        }
                    }
                }
            }
            SessionEvent::SearchStep { step, rate_per_s } => match rate_per_s {
                Some(r) => self.say(&format!("\n== step {step}: fixed rate {r:.0}/s")),
                None => self.say(&format!("\n== step {step}: probe at maximum throughput")),
            },
            SessionEvent::SearchRamp { from_per_s, to_per_s, bracket: None } => {
                self.say(&format!("\n== ramp: the rate from {from_per_s:.0}/s to {to_per_s:.0}/s, judged level by level"))
            }
            SessionEvent::SearchRamp { bracket: Some((lo, hi)), .. } => self.say(&format!("ramp: the SLA stopped holding between {lo:.0}/s and {hi:.0}/s")),
            SessionEvent::SearchJudged { step, achieved_per_s, figure, met } => {
                self.say(&format!("step {step}: {achieved_per_s:.0} ops/s, {figure} → SLA {}", if *met { "met" } else { "not met" }))
            }
            SessionEvent::ServerApplied { workload, applied } => self.say(&format!(
                "the local cluster now runs the server of {workload}: restarted in {:.1} s{}",
                applied.took_ms as f64 / 1000.0,
                if applied.wiped { ", its data wiped (the storage changed)" } else { "" }
            )),
            SessionEvent::VariantRun { variant, step } => self.say(&format!("\n== {variant} · {step}")),
        }
    }
}

/// When an event fires, as its spec says: `setup`, or its time since the run phase began.
fn when(spec: &casslab_core::events::EventSpec) -> String {
    if spec.setup {
        "setup".to_string()
    } else {
        fmt_s(spec.at_ms)
    }
}
