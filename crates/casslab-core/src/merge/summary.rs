//! The merged run's summary and its per-loader breakdown: each loader's throughput, p99,
//! errors, CPU, how far it fell behind its share of the rate and when it started, and which
//! loaders were saturated or fell behind (one slow loader silently lowers the offered load).

use super::Shard;
use crate::server::{metric, CLIENT};
use crate::stats::{OpStats, Phase};
use crate::store::{LoaderSummary, PackedInterval, PhaseSummary, RunSummary};

/// The run phase of a shard's summary.
fn run_phase(sh: &Shard) -> Option<&PhaseSummary> {
    sh.data.record.summary.as_ref().and_then(|s| s.phases.iter().find(|p| p.phase == Phase::Run))
}

pub(super) fn loader_summaries(shards: &[Shard], merged_t0: i64) -> Vec<LoaderSummary> {
    let run_starts: Vec<Option<i64>> = shards
        .iter()
        .map(|sh| {
            let t0 = sh.data.record.env.clock_t0_unix_ms.unwrap_or(merged_t0);
            sh.rows.iter().find(|i| i.phase != Phase::Load).map(|i| t0 + i.start_ms as i64)
        })
        .collect();
    let earliest = run_starts.iter().flatten().min().copied().unwrap_or(merged_t0);
    shards
        .iter()
        .zip(&run_starts)
        .map(|(sh, start)| {
            let r = &sh.data.record;
            let p = run_phase(sh);
            let target = r.config.shard_rate_per_s();
            let run_rows: Vec<&PackedInterval> = sh.rows.iter().filter(|i| i.phase != Phase::Load).collect();
            let max_backlog = run_rows.iter().map(|i| i.backlog).max().unwrap_or(0);
            let (from, to) = (run_rows.first().map_or(0, |i| i.start_ms), run_rows.last().map_or(u64::MAX, |i| i.end_ms));
            let cpu: Vec<f64> = sh
                .data
                .server_samples
                .iter()
                .filter(|s| s.node == CLIENT && s.metric == metric::CPU_PCT && s.at_ms > from && s.at_ms <= to)
                .map(|s| s.value)
                .collect();
            let client_cpu_pct = (!cpu.is_empty()).then(|| cpu.iter().sum::<f64>() / cpu.len() as f64);
            let ops_per_s = p.map_or(0.0, |p| p.total.ops_per_s);
            let saturated = client_cpu_pct.is_some_and(|c| c >= 90.0 * r.env.client_cores.max(1) as f64);
            let behind = target.is_some_and(|t| ops_per_s < 0.95 * t || max_backlog as f64 > (0.05 * t).max(10.0));
            LoaderSummary {
                shard: r.config.shard.as_ref().map_or(0, |s| s.index),
                source: sh.source.clone(),
                host: r.env.hostname.clone(),
                ops_per_s,
                p99_ns: p.map_or(0, |p| p.total.latency.p99_ns),
                errors: p.map_or(0, |p| p.total.error_count()),
                target_per_s: target,
                client_cpu_pct,
                client_cores: r.env.client_cores,
                max_backlog,
                max_lag_ms: target.filter(|t| *t > 0.0).map(|t| max_backlog as f64 / t * 1000.0),
                start_skew_ms: start.map_or(0, |s| s - earliest),
                clock_offset_ms: r.summary.as_ref().and_then(|s| s.clock_offset_ms),
                saturated,
                behind,
            }
        })
        .collect()
}

pub(super) fn summary(shards: &[Shard], load_span_ms: (u64, u64), histograms: &[(Phase, String, OpStats)], loaders: &[LoaderSummary]) -> RunSummary {
    let cfg0 = &shards[0].data.record.config;
    let mut notes = vec![format!(
        "merged from {} loaders, the shards of run \"{}\": every interval's histograms added up",
        shards.len(),
        cfg0.shard.as_ref().map_or("", |s| s.run_id.as_str())
    )];
    let mut phases = Vec::new();
    for phase in [Phase::Load, Phase::Run] {
        let ops: Vec<(String, OpStats)> = histograms.iter().filter(|(p, _, _)| *p == phase).map(|(_, op, st)| (op.clone(), st.clone())).collect();
        if ops.is_empty() {
            continue;
        }
        let duration_s = match phase {
            // the loaders loaded their slices side by side: from the first start to the last end
            Phase::Load => load_span_ms.1.saturating_sub(load_span_ms.0) as f64 / 1000.0,
            _ => shards.iter().filter_map(run_phase).map(|p| p.duration_s).fold(0.0, f64::max),
        };
        let target = if phase == Phase::Run { cfg0.fixed_rate_per_s() } else { None };
        phases.push(PhaseSummary::of(phase, duration_s, &ops, target, &mut notes));
    }
    for l in loaders {
        if l.saturated {
            notes.push(format!(
                "loader {} ({}) was saturated: its client used {:.0}% of {} cores, so it may have offered less load than asked",
                l.shard,
                l.host.as_deref().unwrap_or("?"),
                l.client_cpu_pct.unwrap_or(0.0),
                l.client_cores
            ));
        }
        if l.behind {
            notes.push(format!(
                "loader {} ({}) fell behind its share of the rate: {:.0}/s of {:.0}/s, up to {} operations late",
                l.shard,
                l.host.as_deref().unwrap_or("?"),
                l.ops_per_s,
                l.target_per_s.unwrap_or(0.0),
                l.max_backlog
            ));
        }
    }
    for sh in shards {
        for n in sh.data.record.summary.iter().flat_map(|s| &s.notes) {
            notes.push(format!("shard {}: {n}", sh.data.record.config.shard.as_ref().map_or(0, |s| s.index)));
        }
    }
    // the loaders' operations never started, added up; the oldest of any loader's
    let never = shards.iter().filter_map(|sh| sh.data.record.summary.as_ref().and_then(|s| s.never_started));
    let never_started = never.reduce(|a, b| crate::stats::NeverStarted {
        count: a.count + b.count,
        late: a.late + b.late,
        oldest_lag_ms: a.oldest_lag_ms.max(b.oldest_lag_ms),
    });
    // a count's slices, added up
    let counts = shards.iter().filter_map(|sh| sh.data.record.summary.as_ref().and_then(|s| s.count));
    let count = counts.reduce(|a, b| crate::stats::CountReached { asked: a.asked + b.asked, completed: a.completed + b.completed });
    RunSummary { phases, notes, loaders: loaders.to_vec(), never_started, count, ..RunSummary::default() }
}
