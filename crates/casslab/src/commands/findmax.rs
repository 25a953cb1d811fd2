//! `casslab run … --find-max 'p99 < 10ms'`: the highest fixed rate that still meets a
//! latency SLA. A probe at maximum throughput gives the ceiling; then a binary search of fixed
//! rates between the last rate that met the SLA and the first that did not, each step an
//! ordinary saved run (tagged `find_max=…`, `step=N`). Latency is judged from the intended
//! start, so a step whose rate could not be kept fails on its queueing, as it should.

use super::run;
use anyhow::{bail, Context, Result};
use casslab_core::analysis::{Gate, GateMetric, Metric};
use casslab_core::config::{Credentials, LoadMode, RunConfig};
use casslab_core::report::text::ms;
use casslab_core::stats::{OpSummary, Phase};
use casslab_core::store::{RunId, RunStatus, Store};
use casslab_core::workload::Workload;

/// Parses an SLA: `p99 < 10ms` (all operations together) or `read.p99 < 10ms`.
pub fn parse_sla(text: &str) -> Result<Gate> {
    let lhs_end = text.find(['<', '>']).unwrap_or(text.len());
    let full = if text[..lhs_end].contains('.') { text.to_string() } else { format!("total.{}", text.trim()) };
    let gate: Gate = full.parse().map_err(|e| anyhow::anyhow!("--find-max {text}: {e}"))?;
    if matches!(gate.metric, GateMetric::Stat(Metric::OpsPerS)) {
        bail!("--find-max {text}: the SLA must be about latency or errors (throughput is what is searched)");
    }
    Ok(gate)
}

/// The SLA's figure in a finished run's measured phase (NaN when it has none).
fn observed(gate: &Gate, store: &Store, id: RunId) -> Result<(f64, f64, f64)> {
    let r = store.run(id)?;
    let Some(p) = r.summary.as_ref().and_then(|s| s.phases.iter().find(|p| p.phase == Phase::Run)) else {
        return Ok((f64::NAN, 0.0, f64::NAN));
    };
    let op: &OpSummary = if gate.op == "total" {
        &p.total
    } else {
        p.ops.iter().find(|o| o.op == gate.op).with_context(|| format!("--find-max: the run has no operation \"{}\"", gate.op))?
    };
    let l = &op.latency;
    let v = match gate.metric {
        GateMetric::Stat(Metric::Mean) => l.mean_ns,
        GateMetric::Stat(Metric::P50) => l.p50_ns as f64,
        GateMetric::Stat(Metric::P95) => l.p95_ns as f64,
        GateMetric::Stat(Metric::P99) => l.p99_ns as f64,
        GateMetric::Stat(Metric::P999) => l.p999_ns as f64,
        GateMetric::Max => l.max_ns as f64,
        GateMetric::Errors => op.error_count() as f64,
        GateMetric::Stat(Metric::OpsPerS) => f64::NAN,
    };
    let v = if l.count == 0 && gate.metric != GateMetric::Errors { f64::NAN } else { v };
    Ok((v, p.total.ops_per_s, p.total.latency.p99_ns as f64))
}

/// One step of the search.
struct Step {
    target: Option<f64>,
    run: RunId,
    achieved: f64,
    value: f64,
    p99_ns: f64,
    met: bool,
}

pub fn find_max(sla_text: &str, max_steps: usize, cfg: &RunConfig, w: &Workload, creds: &Credentials, store: &Store, tags: &[String]) -> Result<i32> {
    let sla = parse_sla(sla_text)?;
    let search_id = format!("{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0));
    let mut steps: Vec<Step> = Vec::new();
    let step = |target: Option<f64>, n: usize, load: LoadMode| -> Result<Option<Step>> {
        let mut c = cfg.clone();
        c.rate_per_s = target;
        c.load = load;
        let mut t = tags.to_vec();
        t.push(format!("find_max={search_id}"));
        t.push(format!("step={n}"));
        match target {
            Some(r) => eprintln!("\n== step {n}: fixed rate {r:.0}/s"),
            None => eprintln!("\n== step {n}: probe at maximum throughput"),
        }
        let Some((id, status)) = run::execute(&c, w, creds, store, &t)? else { bail!("the run did not start") };
        if status == RunStatus::Interrupted {
            return Ok(None);
        }
        let (value, achieved, p99_ns) = observed(&sla, store, id)?;
        // a rate that was not kept does not count as met, whatever its latency
        let kept = target.is_none_or(|r| achieved >= 0.95 * r);
        let met = !value.is_nan() && sla.fails(value) && kept;
        eprintln!("step {n}: {achieved:.0} ops/s, {} = {} → SLA {}", sla.metric.noun(), sla.format_value(value), if met { "met" } else { "not met" });
        Ok(Some(Step { target, run: id, achieved, value, p99_ns, met }))
    };

    let Some(probe) = step(None, 0, cfg.load)? else { return finish(&sla, &steps, 130) };
    let ceiling = probe.achieved;
    let probe_met = probe.met;
    steps.push(probe);
    if !probe_met && ceiling > 0.0 {
        let (mut lo, mut hi) = (0.0_f64, ceiling);
        for n in 1..=max_steps {
            let r = ((lo + hi) / 2.0).max(1.0);
            let Some(s) = step(Some(r), n, LoadMode::Skip)? else { return finish(&sla, &steps, 130) };
            if s.met {
                lo = r;
            } else {
                hi = r;
            }
            steps.push(s);
            if (hi - lo) / ceiling < 0.05 {
                break;
            }
        }
    }
    finish(&sla, &steps, 0)
}

fn finish(sla: &Gate, steps: &[Step], code: i32) -> Result<i32> {
    println!("\nfind-max: {}", sla.text.trim_start_matches("total."));
    println!("  {:>4} {:>12} {:>12} {:>12} {:>10} {:>6} {:>5}", "step", "target/s", "achieved/s", sla.metric.noun(), "p99 ms", "met", "run");
    for (i, s) in steps.iter().enumerate() {
        println!(
            "  {:>4} {:>12} {:>12.0} {:>12} {:>10} {:>6} {:>5}",
            i,
            s.target.map(|r| format!("{r:.0}")).unwrap_or_else(|| "max".into()),
            s.achieved,
            if sla.metric.is_latency() { ms(s.value) } else { format!("{:.0}", s.value) },
            ms(s.p99_ns),
            if s.met { "yes" } else { "no" },
            s.run
        );
    }
    match steps.iter().filter(|s| s.met).max_by(|a, b| a.achieved.total_cmp(&b.achieved)) {
        Some(best) if best.target.is_none() => println!("the SLA holds even at maximum throughput: {:.0} ops/s (run {})", best.achieved, best.run),
        Some(best) => println!("highest rate meeting the SLA: {:.0} ops/s (run {})", best.target.unwrap_or(best.achieved), best.run),
        None => println!("no rate tried met the SLA"),
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slas_default_to_all_operations() {
        let g = parse_sla("p99 < 10ms").unwrap();
        assert_eq!(g.op, "total");
        assert!(g.fails(9e6) && !g.fails(11e6), "met below 10 ms only");
        assert_eq!(parse_sla("read.p999 <= 2s").unwrap().op, "read");
        assert!(parse_sla("ops_s > 5").is_err());
        assert!(parse_sla("p99 < 10").is_err(), "a latency needs a unit");
    }
}
