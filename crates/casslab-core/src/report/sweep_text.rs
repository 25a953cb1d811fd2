//! An experiment with `rates:` on the terminal: each rate's comparison of the variants, then
//! the SLA table (each variant at each rate: achieved rate, the SLA's figure with its interval,
//! whether it meets the SLA) and each variant's highest rate that met it.

use super::comparison;
use super::table::TextTable;
use crate::judge::sweep::{SlaTable, SlaVerdict, Sweep};

fn word(v: SlaVerdict) -> &'static str {
    match v {
        SlaVerdict::Meets => "yes",
        SlaVerdict::Maybe => "maybe (the interval reaches past it)",
        SlaVerdict::No => "no",
    }
}

/// The sweep as the terminal shows it.
pub fn text(s: &Sweep) -> String {
    let mut out = String::new();
    for (rate, study) in &s.per_rate {
        out.push_str(&format!("\nat {rate:.0} ops/s:\n"));
        out.push_str(&comparison::text(study));
    }
    match &s.sla {
        None => {}
        Some(SlaTable::NotJudgeable { sla }) => out.push_str(&format!("\nsla: {sla}: only a latency percentile or the mean can be judged with intervals\n")),
        Some(SlaTable::Judged { sla, metric, gate, confidence, rows, best }) => {
            let mut t = TextTable::new(["variant", "rate/s", "achieved/s", &format!("{} ms [interval]", metric.label()), "meets"]).indent(2).right([1, 2]);
            for r in rows {
                let cell = r.figure.map_or("—".into(), |e| format!("{} [{}, {}]", gate.number(e.point), gate.number(e.lo), gate.number(e.hi)));
                t.row([r.variant.clone(), format!("{:.0}", r.rate_per_s), format!("{:.0}", r.achieved_per_s), cell, word(r.verdict).to_string()]);
            }
            let mut answer = String::new();
            for (base, b) in best {
                answer.push_str(&match b {
                    Some((r, SlaVerdict::Meets)) => format!("  {base}: {r:.0} ops/s\n"),
                    Some((r, _)) => format!("  {base}: {r:.0} ops/s, by the estimate only (its interval reaches past the SLA)\n"),
                    None => format!("  {base}: no rate tried met it\n"),
                });
            }
            out.push_str(&format!(
                "\nSLA {sla} ({:.0}% intervals; a rate meets it when the whole interval does and the rate was kept):\n{t}highest rate meeting it (among the rates tried):\n{answer}",
                confidence * 100.0
            ));
        }
    }
    out
}
