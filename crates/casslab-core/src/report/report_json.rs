//! The machine-readable report (`casslab report --format json`): per run its meta data, load
//! shape, config, per-phase summaries per operation, the per-interval series, the latency
//! percentile spectra, the server-side series, the events with their impact, the suspects and
//! the traced requests; for several runs, the config keys that differ. Unlike `json.rs` (the
//! lossless export of one run, histograms included) it holds only figures. Its shape is
//! described by `docs/run-report.schema.json`, which a test checks the output against.
//!
//! Every latency is in nanoseconds; `start_ms`/`end_ms` count from the run's start. A run's
//! `mode` is `{"kind": "fixed_rate", "target_rate_per_s": …}` or
//! `{"kind": "max_throughput", "concurrency": …}`.

use super::format_trait::Format;
use super::run_view::{IntervalView, LoadShape, Report, RunView, SpectrumPoint};
use super::server_view;
use crate::server::suspects;
use crate::server::ServerSample;
use serde::Serialize;
use serde_json::{json, Value};

pub const FORMAT: &str = "casslab-report";
pub const FORMAT_VERSION: u32 = 1;

/// Renders a [`Report`] as pretty-printed JSON.
pub struct JsonReport;

impl Format<Report> for JsonReport {
    fn name(&self) -> &'static str {
        "json"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["json"]
    }
    fn render(&self, report: &Report) -> String {
        let mut s = serde_json::to_string_pretty(&ReportJson::of(report)).expect("the report always serializes");
        s.push('\n');
        s
    }
}

/// The whole report. Each run's server samples (a long run has hundreds of thousands) are
/// written straight from the run rather than copied into a JSON value first.
#[derive(Serialize)]
struct ReportJson<'a> {
    #[serde(flatten)]
    head: Value,
    runs: Vec<RunJson<'a>>,
}

#[derive(Serialize)]
struct RunJson<'a> {
    #[serde(flatten)]
    figures: Value,
    server_samples: &'a [ServerSample],
}

impl ReportJson<'_> {
    fn of(report: &Report) -> ReportJson<'_> {
        ReportJson {
            head: json!({
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "casslab_version": env!("CARGO_PKG_VERSION"),
                "title": report.title,
                "config_differences": report.config_differences,
            }),
            runs: report.runs.iter().map(|run| RunJson { figures: run_json(run), server_samples: &run.server }).collect(),
        }
    }
}

/// A run's figures, all but its server samples.
fn run_json(run: &RunView) -> Value {
    let r = &run.record;
    let mode = match run.load_shape() {
        LoadShape::FixedRate { target_per_s } => json!({ "kind": "fixed_rate", "target_rate_per_s": target_per_s }),
        LoadShape::MaxThroughput { concurrency } => json!({ "kind": "max_throughput", "concurrency": concurrency }),
        LoadShape::RateSchedule { peak_per_s } => json!({ "kind": "rate_schedule", "peak_rate_per_s": peak_per_s, "schedule": run.record.config.rate_text() }),
        LoadShape::InFlightSchedule { peak } => {
            json!({ "kind": "in_flight_schedule", "concurrency": peak, "schedule": run.record.config.concurrency_shape.as_ref().map(|s| s.to_string()) })
        }
    };
    json!({
        "id": r.id,
        "label": run.label,
        "workload": r.workload,
        "status": r.status,
        "started_at_ms": r.started_at_ms,
        "ended_at_ms": r.ended_at_ms,
        "tags": r.tags,
        "mode": mode,
        "env": r.env,
        "config": r.config,
        "notes": run.notes,
        "validity": run.validity,
        "phases": run.phases,
        "intervals": run.intervals.iter().map(interval_json).collect::<Vec<_>>(),
        "spectra": run.spectra.iter().map(|s| json!({
            "phase": s.phase,
            "op": s.op,
            "intended": points(&s.intended),
            "service": points(&s.service),
        })).collect::<Vec<_>>(),
        "events": run.events.iter().enumerate().map(|(i, e)| json!({ "record": e, "impact": run.event_impacts.get(i).cloned().flatten() })).collect::<Vec<_>>(),
        "suspects": server_view::suspects_of(run).iter().map(suspects::to_json).collect::<Vec<_>>(),
        "traces": run.traces,
        "violations": run.violations,
        "profiles": super::flame::json_value(run),
    })
}

fn interval_json(iv: &IntervalView) -> Value {
    json!({
        "index": iv.index,
        "phase": iv.phase,
        "start_ms": iv.start_ms,
        "end_ms": iv.end_ms,
        "backlog": iv.backlog,
        "total_ops_per_s": iv.total_ops_per_s(),
        "ops": iv.ops,
    })
}

fn points(ps: &[SpectrumPoint]) -> Vec<Value> {
    ps.iter().map(|p| json!({ "percentile": p.percentile, "one_in": p.one_in, "latency_ns": p.latency_ns })).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::run_view::fixtures::view;

    #[test]
    fn the_report_holds_meta_summaries_series_and_spectra() {
        let v: Value = serde_json::from_str(&JsonReport.render(&Report::new(vec![view(5, Some(600.0)), view(6, None)]))).unwrap();
        assert_eq!((v["format"].as_str(), v["format_version"].as_u64()), (Some("casslab-report"), Some(1)));
        let run = &v["runs"][0];
        assert_eq!((run["id"].as_i64(), run["status"].as_str()), (Some(5), Some("completed")));
        assert_eq!(run["mode"], json!({ "kind": "fixed_rate", "target_rate_per_s": 600.0 }));
        assert_eq!(v["runs"][1]["mode"], json!({ "kind": "max_throughput", "concurrency": 128 }));
        assert_eq!(run["env"]["cassandra_version"], "5.0.6");
        assert_eq!(run["config"]["params"]["rows"], "1000");
        let phases = run["phases"].as_array().unwrap();
        assert_eq!(phases.iter().map(|p| p["phase"].as_str().unwrap()).collect::<Vec<_>>(), ["load", "run"]);
        assert_eq!(phases[1]["ops"][0]["op"], "read");
        assert_eq!(phases[1]["total"]["ops_per_s"], 500.0);
        let ivs = run["intervals"].as_array().unwrap();
        assert_eq!(ivs.len(), 13);
        assert_eq!((ivs[3]["phase"].as_str(), ivs[3]["total_ops_per_s"].as_f64()), (Some("warmup"), Some(250.0)));
        assert!(ivs[5]["ops"][0]["latency"]["p99_ns"].as_u64().unwrap() > 0);
        let spectra = run["spectra"].as_array().unwrap();
        assert_eq!(spectra.len(), 3);
        assert_eq!(spectra[1]["intended"][0]["percentile"], 0.0);
        assert_eq!(v["config_differences"][0]["key"], "rate");
        for k in ["server_samples", "events", "suspects", "traces"] {
            assert!(run[k].is_array(), "{k}: {}", run[k]);
        }
    }
}
