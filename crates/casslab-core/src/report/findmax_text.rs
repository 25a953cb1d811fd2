//! Searches for the highest fixed rate meeting an SLA, on the terminal: one search's steps
//! and its answer (`run --find-max`), and an experiment's searches per variant (`experiment
//! --find-max`: each repetition's answer, their mean with a t interval, the change against the
//! baseline).

use super::table::TextTable;
use super::text::ms;
use crate::analysis::server_figures::spread;
use crate::analysis::{GateMetric, Metric};
use crate::judge::search::{FoundMax, Search};

/// Every step of a search and its answer.
pub fn search_text(search: &Search) -> String {
    let sla = &search.sla;
    let mut t = TextTable::new(["step", "target/s", "achieved/s", sla.metric.noun(), "p99 ms", "met", "run"]).indent(2).right(0..7);
    for (i, s) in search.steps.iter().enumerate() {
        t.row([
            i.to_string(),
            s.target_per_s.map(|r| format!("{r:.0}")).unwrap_or_else(|| "max".into()),
            format!("{:.0}", s.achieved_per_s),
            sla.number(s.value),
            if sla.op == "total" && sla.metric == GateMetric::Stat(Metric::P99) { sla.number(s.p99_ns) } else { ms(s.p99_ns) },
            (if s.met { "yes" } else { "no" }).to_string(),
            s.run.to_string(),
        ]);
    }
    let answer = match search.best() {
        Some(best) if best.target_per_s.is_none() => format!("the SLA holds even at maximum throughput: {:.0} ops/s (run {})", best.achieved_per_s, best.run),
        Some(best) => format!("highest rate meeting the SLA: {:.0} ops/s (run {})", best.target_per_s.unwrap_or(best.achieved_per_s), best.run),
        None => "no rate tried met the SLA".to_string(),
    };
    let ramp = match &search.ramp {
        Some(r) => format!(
            "  ramp (run {}): {:.0}/s to {:.0}/s, the SLA stopped holding between {:.0}/s and {:.0}/s, where the steps bisected\n",
            r.run, r.from_per_s, r.to_per_s, r.lo_per_s, r.hi_per_s
        ),
        None => String::new(),
    };
    format!("\nfind-max: {}\n{t}{ramp}{answer}\n", sla.text.trim_start_matches("total."))
}

/// The highest rate meeting the SLA per variant: each repetition's, and their mean with a t
/// interval at `confidence` (a repetition that met it at no rate counts as 0 ops/s).
pub fn found_max_text(found: &FoundMax, sla: &str, confidence: f64) -> String {
    let mut t =
        TextTable::new(["variant", "per repetition (ops/s)", &format!("mean [{:.0}% t interval]", confidence * 100.0), "vs baseline", "runs"]).indent(2);
    let means: Vec<Option<f64>> =
        found.variants.iter().map(|(_, reps)| spread(&reps.iter().map(|(b, _)| b.unwrap_or(0.0)).collect::<Vec<_>>(), confidence).map(|s| s.mean)).collect();
    for (i, (name, reps)) in found.variants.iter().enumerate() {
        let values: Vec<f64> = reps.iter().map(|(b, _)| b.unwrap_or(0.0)).collect();
        let each = reps.iter().map(|(b, _)| b.map_or("none".to_string(), |v| format!("{v:.0}"))).collect::<Vec<_>>().join(" ");
        let cell = match spread(&values, confidence) {
            Some(s) if s.runs > 1 => format!("{:.0} [{:.0}, {:.0}]", s.mean, s.lo.max(0.0), s.hi),
            Some(s) => format!("{:.0}", s.mean),
            None => "—".into(),
        };
        let vs = match (means[0], means[i]) {
            (Some(b), Some(m)) if i > 0 && b > 0.0 => format!("{:+.1}%", (m / b - 1.0) * 100.0),
            _ => String::new(),
        };
        let runs = reps.iter().flat_map(|(_, r)| r.iter().map(|id| id.to_string())).collect::<Vec<_>>().join(" ");
        t.row([name.clone(), each, cell, vs, runs]);
    }
    format!("\nhighest throughput meeting {sla}, per variant (each repetition a search: a probe at maximum throughput, then fixed rates):\n{t}")
}
