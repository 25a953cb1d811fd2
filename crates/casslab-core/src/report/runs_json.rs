//! The list of saved runs as JSON (`casslab runs --format json`): per run its id, workload,
//! status, times, tags, load shape and the total of its measured phase (the run, else the
//! load). For everything about one run, `json.rs` (the export) is the format.

use super::csv::main_phase;
use crate::store::RunRecord;
use serde_json::{json, Value};

/// The list of runs as pretty-printed JSON, with a final line break.
pub struct RunsJson;

impl super::format_trait::Format<[RunRecord]> for RunsJson {
    fn name(&self) -> &'static str {
        "json"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["json"]
    }
    fn render(&self, runs: &[RunRecord]) -> String {
        format!("{}\n", serde_json::to_string_pretty(&runs_json(runs)).expect("a JSON value always serializes"))
    }
}

/// The runs, in the order given.
pub fn runs_json(runs: &[RunRecord]) -> Value {
    Value::Array(
        runs.iter()
            .map(|r| {
                let main = main_phase(r);
                json!({
                    "id": r.id,
                    "workload": r.workload,
                    "status": r.status,
                    "started_at_ms": r.started_at_ms,
                    "ended_at_ms": r.ended_at_ms,
                    "tags": r.tags,
                    "rate_per_s": r.config.fixed_rate_per_s(),
                    "rate": r.config.rate.as_ref().map(|_| r.config.rate_text()),
                    "concurrency": r.config.concurrency,
                    "phase": main.map(|(p, _)| p),
                    "total": main.map(|(_, t)| t),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::run_view::fixtures::view;

    #[test]
    fn each_run_has_its_measured_total() {
        let v = runs_json(&[view(4, None).record]);
        assert_eq!((v[0]["id"].as_i64(), v[0]["status"].as_str(), v[0]["phase"].as_str()), (Some(4), Some("completed"), Some("run")));
        assert_eq!(v[0]["total"]["ops_per_s"], 500.0);
        assert!(v[0]["rate_per_s"].is_null());
    }
}
