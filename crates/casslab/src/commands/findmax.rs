//! `casslab run … --find-max 'p99 < 10ms'`: prints the library's search
//! (`casslab_core::session::findmax`) — every step and the answer.

use crate::out;
use anyhow::Result;
use casslab_core::report::table::TextTable;
use casslab_core::report::text::ms;
use casslab_core::analysis::{GateMetric, Metric};
use casslab_core::session::findmax::Search;

pub fn print(search: &Search) -> Result<()> {
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
    out::print(&format!("\nfind-max: {}\n{t}{answer}\n", sla.text.trim_start_matches("total.")))
}
