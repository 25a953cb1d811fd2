//! `casslab experiment` with `rates:`: every variant ran at each fixed rate, so the variants
//! are compared rate by rate (each rate's variants side by side, the first variant the
//! baseline, as `compare` does), and with an `sla:` each variant gets the highest rate that
//! met it, judged on the figure's interval: a rate "meets" the SLA when the whole interval
//! does, "maybe" when only the estimate does, and it must also have been kept (achieved
//! throughput within 5% of the target).

use super::compare;
use crate::cli::AnalysisArgs;
use crate::out;
use anyhow::Result;
use casslab_core::analysis::study::{study, Group, Study};
use casslab_core::analysis::{Gate, GateMetric, Metric, OpRef};
use casslab_core::report::comparison;
use casslab_core::experiment::Experiment;
use casslab_core::report::table::TextTable;
use casslab_core::session::findmax::parse_sla;
use casslab_core::store::Store;

/// How a variant at one rate stands against the SLA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The whole interval meets it, and the rate was kept.
    Meets,
    /// The estimate meets it but the interval reaches past it.
    Maybe,
    No,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Meets => "yes",
            Verdict::Maybe => "maybe (the interval reaches past it)",
            Verdict::No => "no",
        }
    }
}

/// Judges an estimate (point, lo, hi) of the SLA's figure at `rate`, given the throughput achieved.
fn judge(sla: &Gate, point: f64, lo: f64, hi: f64, achieved_per_s: f64, rate: f64) -> Verdict {
    // `fails` is true when the condition (`p99 < 5ms`) holds
    let holds = |v: f64| sla.fails(v);
    if achieved_per_s < 0.95 * rate || !holds(point) {
        Verdict::No
    } else if holds(lo) && holds(hi) {
        Verdict::Meets
    } else {
        Verdict::Maybe
    }
}

/// Compares the variants rate by rate, then prints the SLA table. `groups` are the runs per
/// variant, in the experiment's order (rates outermost).
pub fn print(store: &Store, exp: &Experiment, groups: &[Group], window_s: f64, args: &AnalysisArgs) -> Result<()> {
    let mut bases: Vec<&str> = Vec::new();
    for v in &exp.variants {
        if !bases.contains(&v.base.as_str()) {
            bases.push(&v.base);
        }
    }
    let mut per_rate: Vec<(f64, Study)> = Vec::new();
    for &rate in &exp.rates {
        let of_rate: Vec<Group> = groups.iter().filter(|g| g.label.rsplit_once('@').is_some_and(|(_, r)| r.parse::<f64>().ok() == Some(rate))).cloned().collect();
        if of_rate.len() < 2 {
            continue;
        }
        out::print(&format!("\nat {rate:.0} ops/s:\n"))?;
        let s = study(store, &of_rate, compare::plan(args, window_s)?)?;
        out::print(&comparison::text(&s))?;
        per_rate.push((rate, s));
    }
    let Some(text) = &exp.sla else { return Ok(()) };
    let sla = parse_sla(text)?;
    let GateMetric::Stat(metric) = sla.metric else {
        out::print(&format!("\nsla: {text}: only a latency percentile or the mean can be judged with intervals\n"))?;
        return Ok(());
    };
    let mut t = TextTable::new(["variant", "rate/s", "achieved/s", &format!("{} ms [interval]", metric.label()), "meets"]).indent(2).right([1, 2]);
    let mut best: Vec<(String, Option<(f64, Verdict)>)> = bases.iter().map(|b| (b.to_string(), None)).collect();
    for (rate, a) in &per_rate {
        let Some(oi) = a.ops.iter().position(|o| match (&sla.op[..], o) {
            ("total", OpRef::Total) => true,
            (name, OpRef::Op(n)) => n == name,
            _ => false,
        }) else {
            continue;
        };
        for side in &a.sides {
            let base = side.label.rsplit_once('@').map_or(side.label.as_str(), |(b, _)| b);
            let fig = side.figures[oi].as_ref();
            let est = fig.and_then(|f| f.estimate(metric));
            let achieved = fig.and_then(|f| f.estimate(Metric::OpsPerS)).map_or(0.0, |e| e.point);
            let (cell, verdict) = match est {
                Some(e) => (format!("{} [{}, {}]", sla.number(e.point), sla.number(e.lo), sla.number(e.hi)), judge(&sla, e.point, e.lo, e.hi, achieved, *rate)),
                None => ("—".into(), Verdict::No),
            };
            t.row([base.to_string(), format!("{rate:.0}"), format!("{achieved:.0}"), cell, verdict.word().to_string()]);
            if let Some(b) = best.iter_mut().find(|(n, _)| n == base) {
                if verdict != Verdict::No && b.1.is_none_or(|(r, _)| *rate > r) {
                    b.1 = Some((*rate, verdict));
                }
            }
        }
    }
    let mut answer = String::new();
    for (base, b) in &best {
        answer.push_str(&match b {
            Some((r, Verdict::Meets)) => format!("  {base}: {r:.0} ops/s\n"),
            Some((r, _)) => format!("  {base}: {r:.0} ops/s, by the estimate only (its interval reaches past the SLA)\n"),
            None => format!("  {base}: no rate tried met it\n"),
        });
    }
    let conf = per_rate.first().map_or(0.95, |(_, a)| a.plan.opts.confidence);
    out::print(&format!(
        "\nSLA {text} ({:.0}% intervals; a rate meets it when the whole interval does and the rate was kept):\n{t}highest rate meeting it (among the rates tried):\n{answer}",
        conf * 100.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_meets_the_sla_only_with_its_whole_interval_and_when_kept() {
        let sla = parse_sla("p99 < 5ms").unwrap();
        assert_eq!(judge(&sla, 3e6, 2e6, 4e6, 1000.0, 1000.0), Verdict::Meets);
        assert_eq!(judge(&sla, 4e6, 3e6, 6e6, 1000.0, 1000.0), Verdict::Maybe);
        assert_eq!(judge(&sla, 6e6, 4e6, 7e6, 1000.0, 1000.0), Verdict::No);
        assert_eq!(judge(&sla, 3e6, 2e6, 4e6, 800.0, 1000.0), Verdict::No, "a rate not kept");
    }
}
