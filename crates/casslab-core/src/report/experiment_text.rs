//! An experiment on the terminal: the line that announces it, the runs it made per variant
//! and their order, and its verdicts (each rate's comparison and the SLA table with `rates:`,
//! else the comparison of the variants), the servers' side last.

use super::table::TextTable;
use super::{comparison, judgement, sweep_text};
use crate::experiment::RunOrder;
use crate::judge::verdict::ExperimentVerdict;

/// "experiment gc (gc-20261125-101010): 2 variants × 3 repetitions, counterbalanced order,
/// after settling and an unmeasured round; baseline: g1" (`design`: "3 repetitions", or how a
/// sequential experiment runs; `together`: the variants run at the same time, in no order).
pub fn header(name: &str, experiment_id: &str, variants: usize, design: &str, run_order: &RunOrder, together: bool, baseline: &str) -> String {
    let (order, times) = if together { (String::new(), "at the same time,") } else { (format!("{} order, ", run_order.order.as_str()), "×") };
    format!("experiment {name} ({experiment_id}): {variants} variants {times} {design}, {order}{}; baseline: {baseline}", run_order.before())
}

/// The runs per variant, the unmeasured round, the loads and the measured order.
pub fn runs(v: &ExperimentVerdict) -> String {
    let ids = |ids: &[i64]| ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
    let mut list = TextTable::headless().indent(2);
    for (name, runs) in &v.runs.variants {
        list.row([name.clone(), ids(runs)]);
    }
    if !v.runs.unmeasured.is_empty() {
        list.row(["(unmeasured round)".to_string(), ids(&v.runs.unmeasured)]);
    }
    if !v.runs.loads.is_empty() {
        list.row(["(loads before settling)".to_string(), ids(&v.runs.loads)]);
    }
    let stop = v.stop_line().map(|l| format!("  {l}\n")).unwrap_or_default();
    format!("\nexperiment {} — runs per variant:\n{list}  {}\n{stop}", v.name, v.order_line())
}

/// The verdicts: rate by rate with `rates:`, else the comparison; then the servers' side.
pub fn verdicts(v: &ExperimentVerdict) -> String {
    let mut out = String::new();
    if let Some(s) = &v.sweep {
        out.push_str(&sweep_text::text(s));
    }
    if let Some(s) = &v.judgement.study {
        if v.sweep.is_none() {
            out.push_str(&comparison::text(s));
        }
        if let Some(server) = &v.judgement.server {
            out.push_str(&judgement::server_side(server, s.plan.opts.confidence).0);
        }
    }
    out
}
