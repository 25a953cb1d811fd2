//! The charts of the HTML report, built from a [`RunView`]: throughput over time (per operation
//! and total, the warm-up shaded, the target rate drawn under a fixed rate), p50/p99/p99.9 over
//! time per operation, errors per second by kind, and the latency percentile spectrum on a
//! "1 in N" axis (intended and service time), plus the spectra of several runs overlaid.
//! Latencies are shown in milliseconds. Warm-up and the run's events are marked on the time
//! axis. Drawing itself is `uplot_chart`'s (and the page's script's) job.

use super::run_view::{IntervalView, LoadShape, OpSpectrum, RunView, SpectrumPoint};
use super::uplot_chart::{LineChart, Mark, MarkKind, Series, XAxis, YAxis};
use crate::events::EventStatus;
use crate::stats::{ErrorKind, LatencySummary, Phase};

/// Colors of operations (and of runs when several are compared), in order.
pub const PALETTE: [&str; 8] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f"];
const TOTAL_COLOR: &str = "#2b2b2b";
const TARGET_COLOR: &str = "#8a8a8a";
/// p50, p99, p99.9.
const PERCENTILE_COLORS: [&str; 3] = ["#4e79a7", "#f28e2b", "#e15759"];

const TIME_LABEL: &str = "time since the run started (s)";
const CLOCK_LABEL: &str = "time of day (UTC)";
const PERCENTILE_LABEL: &str = "percentile (log scale of 1 in N)";

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// The x axis of a timeline (seconds since the start, or the wall clock), its warm-up mark
/// (if any) and the run's events as marked spans.
fn time_axis(run: &RunView, ivs: &[&IntervalView]) -> (XAxis, Vec<Mark>) {
    let start = ivs.first().map_or(0.0, |iv| iv.start_ms as f64 / 1000.0);
    let end = ivs.last().map_or(1.0, |iv| iv.end_ms as f64 / 1000.0);
    let warm: Vec<&&IntervalView> = ivs.iter().filter(|iv| iv.phase == Phase::Warmup).collect();
    let mut marks = match (warm.first(), warm.last()) {
        (Some(a), Some(b)) => {
            vec![Mark { kind: MarkKind::Warmup, from: a.start_ms as f64 / 1000.0, to: b.end_ms as f64 / 1000.0, label: "warm-up (not measured)".into() }]
        }
        _ => Vec::new(),
    };
    marks.extend(run.events.iter().filter(|e| e.status != EventStatus::Skipped).map(|e| Mark {
        kind: MarkKind::Event,
        from: e.start_ms as f64 / 1000.0,
        to: e.end_ms as f64 / 1000.0,
        label: e.label(),
    }));
    (time_axis_of(run, start, end), marks)
}

/// A time axis from `start_s` to `end_s` as the run's report shows time.
pub fn time_axis_of(run: &RunView, start_s: f64, end_s: f64) -> XAxis {
    match run.clock_origin_ms() {
        Some(t0) => XAxis::time(CLOCK_LABEL, start_s, end_s, Some(t0)),
        None => XAxis::time(TIME_LABEL, start_s, end_s, None),
    }
}

/// "measured run" or "load phase", for chart titles.
fn phase_name(phase: Phase) -> &'static str {
    if phase == Phase::Load {
        "load phase"
    } else {
        "measured run"
    }
}

/// A latency axis in ms: log when the values span more than 20×, else linear from 0.
pub(super) fn latency_axis(label: &str, values: impl Iterator<Item = f64>) -> YAxis {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.filter(|v| *v > 0.0 && v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi > 0.0 && hi / lo > 20.0 {
        YAxis { label: format!("{label}, log scale"), log: true }
    } else {
        YAxis::linear(label)
    }
}

fn series_y_values(series: &[Series]) -> impl Iterator<Item = f64> + '_ {
    series.iter().flat_map(|s| s.points.iter().map(|p| p.1))
}

/// Operations per second per interval, per operation and in total.
pub fn throughput(run: &RunView, phase: Phase, id: &str) -> LineChart {
    let ivs = run.chart_timeline(phase);
    let (x, marks) = time_axis(run, &ivs);
    let ops = run.op_names(phase);
    let mut series: Vec<Series> = ops
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let pts = ivs.iter().map(|iv| (iv.mid_s(), iv.ops.iter().find(|o| &o.op == op).map_or(0.0, |o| o.ops_per_s))).collect();
            Series::new(op.clone(), color(i), pts)
        })
        .collect();
    if ops.len() > 1 {
        series.push(Series::new("total", TOTAL_COLOR, ivs.iter().map(|iv| (iv.mid_s(), iv.total_ops_per_s())).collect()).bold());
    }
    if let (Phase::Run, LoadShape::FixedRate { target_per_s }) = (phase, run.load_shape()) {
        let XAxis::Time { from, to, .. } = x else { unreachable!("a timeline's axis is a time axis") };
        let at = std::iter::once(from).chain(ivs.iter().map(|iv| iv.mid_s())).chain(std::iter::once(to));
        series.push(Series::new(format!("target {target_per_s:.0} ops/s"), TARGET_COLOR, at.map(|t| (t, target_per_s)).collect()).dashed());
    }
    if let (Phase::Run, LoadShape::RateSchedule { .. }) = (phase, run.load_shape()) {
        let offered =
            ivs.iter().filter_map(|iv| run.loads.iter().find(|l| l.index == iv.index).and_then(|l| l.offered_per_s).map(|o| (iv.mid_s(), o))).collect();
        series.push(Series::new("offered (schedule)", TARGET_COLOR, offered).dashed());
    }
    LineChart {
        id: id.to_string(),
        title: format!("{} · {} · throughput per interval", run.label, phase_name(phase)),
        y: YAxis::linear("operations per second"),
        x,
        series,
        marks,
    }
}

/// p50, p99 and p99.9 of one operation per interval (intended start), and under a fixed rate
/// the service time's p99 dashed beside them.
pub fn latency_over_time(run: &RunView, phase: Phase, op: &str, id: &str) -> LineChart {
    let ivs = run.chart_timeline(phase);
    let (x, marks) = time_axis(run, &ivs);
    let pick = |f: fn(&LatencySummary) -> u64, service: bool| -> Vec<(f64, f64)> {
        ivs.iter()
            .map(|iv| {
                let y = iv.ops.iter().find(|o| o.op == op).map(|o| if service { &o.service } else { &o.latency });
                (iv.mid_s(), y.filter(|l| l.count > 0).map_or(f64::NAN, |l| ms(f(l) as f64)))
            })
            .collect()
    };
    let mut series = vec![
        Series::new("p50", PERCENTILE_COLORS[0], pick(|l| l.p50_ns, false)),
        Series::new("p99", PERCENTILE_COLORS[1], pick(|l| l.p99_ns, false)),
        Series::new("p99.9", PERCENTILE_COLORS[2], pick(|l| l.p999_ns, false)),
    ];
    let fixed = run.load_shape().open_loop() && phase == Phase::Run;
    if fixed {
        series.push(Series::new("p99 service time", PERCENTILE_COLORS[1], pick(|l| l.p99_ns, true)).dashed());
    }
    let what = if fixed { "latency from intended start" } else { "latency" };
    LineChart {
        id: id.to_string(),
        title: format!("{} · {} · {op} · {what} per interval", run.label, phase_name(phase)),
        y: latency_axis("latency (ms)", series_y_values(&series)),
        x,
        series,
        marks,
    }
}

/// Failed operations per second by kind, all operations together; `None` when none failed.
pub fn errors_over_time(run: &RunView, phase: Phase, id: &str) -> Option<LineChart> {
    let ivs = run.chart_timeline(phase);
    let per_iv: Vec<_> = ivs.iter().map(|iv| iv.errors()).collect();
    let kinds: Vec<ErrorKind> = ErrorKind::ALL.into_iter().filter(|k| per_iv.iter().any(|e| e.get(k).is_some_and(|n| *n > 0))).collect();
    if kinds.is_empty() {
        return None;
    }
    let (x, marks) = time_axis(run, &ivs);
    let series: Vec<Series> = kinds
        .iter()
        .map(|k| {
            let pts = ivs
                .iter()
                .zip(&per_iv)
                .map(|(iv, e)| {
                    let d = (iv.end_ms.saturating_sub(iv.start_ms)) as f64 / 1000.0;
                    (iv.mid_s(), if d > 0.0 { *e.get(k).unwrap_or(&0) as f64 / d } else { 0.0 })
                })
                .collect();
            Series::new(k.as_str(), error_color(*k), pts)
        })
        .collect();
    Some(LineChart {
        id: id.to_string(),
        title: format!("{} · {} · errors per second by kind", run.label, phase_name(phase)),
        y: YAxis::linear("errors per second"),
        x,
        series,
        marks,
    })
}

/// Data streamed per node while streams run (a node joining, leaving or being replaced), from
/// the nodes' `system_views.streaming`, with the run's events; `None` when nothing streamed.
pub fn streaming_over_time(run: &RunView, phase: Phase, id: &str) -> Option<LineChart> {
    use crate::server::metric;
    let ivs = run.chart_timeline(phase);
    let (from_ms, to_ms) = (ivs.first()?.start_ms, ivs.last()?.end_ms);
    let mut nodes: Vec<&str> = run.server.iter().filter(|s| s.metric == metric::STREAMS).map(|s| s.node.as_str()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    if nodes.is_empty() {
        return None;
    }
    let (x, marks) = time_axis(run, &ivs);
    let series: Vec<Series> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            // at each poll: MiB sent plus received by the node's running streams (0 when none ran)
            let mut at: std::collections::BTreeMap<u64, f64> = std::collections::BTreeMap::new();
            for s in run.server.iter().filter(|s| s.node == *node && (from_ms..=to_ms).contains(&s.at_ms)) {
                if s.metric == metric::STREAM_SENT_MIB || s.metric == metric::STREAM_RECEIVED_MIB {
                    *at.entry(s.at_ms).or_default() += s.value;
                }
            }
            let polls: Vec<u64> = run.server.iter().filter(|s| s.node == *node && s.metric == metric::PENDING_TASKS).map(|s| s.at_ms).collect();
            let mut pts: Vec<(f64, f64)> =
                polls.iter().filter(|t| (from_ms..=to_ms).contains(*t)).map(|t| (*t as f64 / 1000.0, at.get(t).copied().unwrap_or(0.0))).collect();
            pts.extend(at.iter().filter(|(t, _)| !polls.contains(t)).map(|(t, v)| (*t as f64 / 1000.0, *v)));
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series::new(node.to_string(), color(i), pts)
        })
        .collect();
    Some(LineChart {
        id: id.to_string(),
        title: format!("{} · {} · data streamed by running streams, per node (system_views.streaming)", run.label, phase_name(phase)),
        y: YAxis::linear("MiB sent + received"),
        x,
        series,
        marks,
    })
}

/// The recall@k of each searching operation per interval (the share of the exact k nearest its
/// judged searches returned), with the run's events; `None` when nothing searched vectors.
pub fn recall_over_time(run: &RunView, phase: Phase, id: &str) -> Option<LineChart> {
    let ivs = run.chart_timeline(phase);
    let mut ops: Vec<&str> = ivs.iter().flat_map(|iv| iv.ops.iter().filter(|o| o.recall.is_some_and(|r| r.judged > 0)).map(|o| o.op.as_str())).collect();
    ops.sort_unstable();
    ops.dedup();
    if ops.is_empty() {
        return None;
    }
    let k = ivs.iter().flat_map(|iv| iv.ops.iter().filter_map(|o| o.recall.map(|r| r.k))).max().unwrap_or(0);
    let (x, marks) = time_axis(run, &ivs);
    let series: Vec<Series> = ops
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let pts = ivs
                .iter()
                .filter_map(|iv| iv.ops.iter().find(|o| o.op == *op).and_then(|o| o.recall).and_then(|r| r.recall()).map(|r| (iv.mid_s(), r)))
                .collect();
            Series::new(op.to_string(), color(i), pts)
        })
        .collect();
    Some(LineChart {
        id: id.to_string(),
        title: format!("{} · {} · recall@{k} of the vector searches judged in each interval", run.label, phase_name(phase)),
        y: YAxis::linear("recall"),
        x,
        series,
        marks,
    })
}

fn error_color(k: ErrorKind) -> &'static str {
    match k {
        ErrorKind::Timeout => "#e15759",
        ErrorKind::Unavailable => "#b07aa1",
        ErrorKind::Overloaded => "#f28e2b",
        ErrorKind::Connection => "#9c755f",
        ErrorKind::Other => "#7f7f7f",
    }
}

fn spectrum_points(points: &[SpectrumPoint]) -> Vec<(f64, f64)> {
    points.iter().map(|p| (p.one_in, ms(p.latency_ns as f64))).collect()
}

fn spectrum_chart(id: &str, title: String, series: Vec<Series>) -> LineChart {
    let max_one_in = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(10.0, f64::max);
    let y = latency_axis("latency (ms)", series_y_values(&series));
    LineChart { id: id.to_string(), title, x: XAxis::percentile(PERCENTILE_LABEL, max_one_in), y, series, marks: Vec::new() }
}

/// The whole phase's latency by percentile, per operation: intended start solid, and under a
/// fixed rate the service time dashed. `None` when the phase has no histograms.
pub fn spectrum(run: &RunView, phase: Phase, id: &str) -> Option<LineChart> {
    let spectra: Vec<&OpSpectrum> = run.spectra(phase).filter(|s| !s.intended.is_empty()).collect();
    if spectra.is_empty() {
        return None;
    }
    let fixed = run.load_shape().open_loop() && phase == Phase::Run;
    let names = run.op_names(phase);
    let mut series = Vec::new();
    for (i, s) in spectra.iter().enumerate() {
        let c = color(names.iter().position(|n| *n == s.op).unwrap_or(i));
        let suffix = if fixed { " (from intended start)" } else { "" };
        series.push(Series::new(format!("{}{suffix}", s.op), c, spectrum_points(&s.intended)));
        if fixed {
            series.push(Series::new(format!("{} (service time)", s.op), c, spectrum_points(&s.service)).dashed());
        }
    }
    // one line has no legend: the title names its operation
    let only = if series.len() == 1 { format!("{} · ", spectra[0].op) } else { String::new() };
    Some(spectrum_chart(id, format!("{} · {} · {only}latency by percentile", run.label, phase_name(phase)), series))
}

/// One operation's run-phase spectrum (from intended start) in each run that has it.
pub fn compare_spectra(runs: &[RunView], op: &str, id: &str) -> Option<LineChart> {
    let series: Vec<Series> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let phase = r.main_phase()?.phase;
            let s = r.spectra(phase).find(|s| s.op == op && !s.intended.is_empty())?;
            Some(Series::new(r.label.clone(), color(i), spectrum_points(&s.intended)))
        })
        .collect();
    (series.len() > 1).then(|| spectrum_chart(id, format!("{op} · latency by percentile, runs compared"), series))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_axis_goes_log_only_for_wide_ranges() {
        assert_eq!(latency_axis("ms", [1.0, 4.0, 9.0].into_iter()), YAxis::linear("ms"));
        let wide = latency_axis("ms", [0.2, 4.0, 90.0, f64::NAN].into_iter());
        assert_eq!((wide.label.as_str(), wide.log), ("ms, log scale", true));
        assert_eq!(latency_axis("ms", std::iter::empty()), YAxis::linear("ms"));
        assert_eq!(latency_axis("ms", [0.0, 0.5].into_iter()), YAxis::linear("ms"), "zeros do not make an axis log");
    }

    #[test]
    fn time_charts_mark_the_warm_up_and_the_events_and_draw_the_target() {
        use crate::events::EventRecord;
        let mut run = crate::report::run_view::fixtures::view(3, Some(600.0));
        let event = |seq: u32, action: &str, at_ms: u64, status: EventStatus| EventRecord {
            seq,
            spec: format!("{} {action} node2", at_ms / 1000),
            action: action.into(),
            target: Some("node2".into()),
            start_ms: at_ms,
            end_ms: at_ms + 300,
            status,
            exit_code: None,
            output_tail: String::new(),
        };
        run.events = vec![event(0, "kill", 7_000, EventStatus::Ok), event(1, "start", 9_000, EventStatus::Skipped)];
        let c = throughput(&run, Phase::Run, "t");
        let XAxis::Time { from, to, t0_ms, .. } = c.x.clone() else { panic!("{:?}", c.x) };
        assert_eq!((from, to, t0_ms), (3.0, 13.0, None), "the axis ends where the intervals do");
        let marks: Vec<(MarkKind, f64, f64, &str)> = c.marks.iter().map(|m| (m.kind, m.from, m.to, m.label.as_str())).collect();
        assert_eq!(marks, [(MarkKind::Warmup, 3.0, 5.0, "warm-up (not measured)"), (MarkKind::Event, 7.0, 7.3, "kill node2")], "a skipped event is not drawn");
        let target = c.series.iter().find(|s| s.name == "target 600 ops/s").expect("the target line");
        assert!(target.dashed && target.points.first() == Some(&(3.0, 600.0)) && target.points.last() == Some(&(13.0, 600.0)), "{target:?}");
        assert_eq!(latency_over_time(&run, Phase::Run, "read", "l").marks.len(), 2, "latency charts carry the same marks");
    }
}
