//! The server side of a saved run in the reports: a per-node summary and the suspects list for
//! the terminal, and for the HTML page charts of server series on the same time axis as the
//! client's p99 (the client's p99 beside Cassandra's own coordinator and local p99, GC pause
//! time, pending tasks, compactions, tombstones per read above the histogram's floor of 1, CPU)
//! with the suspects under them (and shaded on the p99 chart). The analysis itself is `server::suspects`.

use super::html_charts::{color, latency_axis, time_axis_of};
use super::run_view::RunView;
use super::svg_chart::esc;
use super::table::TextTable;
use super::uplot_chart::{LineChart, Mark, MarkKind, Series, XAxis, YAxis};
use crate::server::latency::{self, LatencySource};
use crate::server::series::{per_interval, IntervalSeries};
use crate::server::suspects::{self, ClientInterval, SPIKE_FACTOR};
use crate::server::traces::{self, Trace};
use crate::server::{gc_pauses, metric, ServerSample, CLIENT};
use crate::stats::Phase;
use crate::store::IntervalFigures;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Cassandra's tombstones-per-read histogram has no bucket under 1: a p99 of 1 can mean none.
pub const TOMBSTONE_FLOOR: f64 = 1.0;

/// One row's client p99, unless it is warm-up or completed nothing.
pub fn client_interval(iv: &IntervalFigures) -> Option<ClientInterval> {
    let p99 = (iv.summary.latency.count > 0).then_some(iv.summary.latency.p99_ns);
    client_point(iv.phase, iv.op(), iv.start_ms, iv.end_ms, p99)
}

/// One measured or load interval's client p99 (`None`: the operation completed none).
fn client_point(phase: Phase, op: &str, start_ms: u64, end_ms: u64, p99_ns: Option<u64>) -> Option<ClientInterval> {
    (phase != Phase::Warmup).then_some(())?;
    Some(ClientInterval { op: op.to_string(), start_ms, end_ms, p99_ns: p99_ns? })
}

/// What the terminal's server section needs of a run's intervals, gathered one saved row at a time
/// ([`crate::store::Store::for_each_interval_figures`]).
#[derive(Debug, Default)]
pub struct ClientSeries {
    points: Vec<ClientInterval>,
    run_ms: u64,
}

impl ClientSeries {
    pub fn add(&mut self, iv: &IntervalFigures) {
        self.run_ms = self.run_ms.max(iv.end_ms);
        self.points.extend(client_interval(iv));
    }

    /// The terminal section: per-node lines and the suspects. Empty when nothing was collected.
    pub fn text_section(&self, samples: &[ServerSample]) -> String {
        text_of(&self.points, samples, self.run_ms)
    }
}

fn client_intervals_of(run: &RunView) -> Vec<ClientInterval> {
    run.intervals
        .iter()
        .filter(|iv| iv.phase != Phase::Warmup)
        .flat_map(|iv| {
            iv.ops.iter().filter(|o| o.latency.count > 0).map(|o| ClientInterval {
                op: o.op.clone(),
                start_ms: iv.start_ms,
                end_ms: iv.end_ms,
                p99_ns: o.latency.p99_ns,
            })
        })
        .collect()
}

fn stats(v: &[f64]) -> Option<(f64, f64)> {
    (!v.is_empty()).then(|| (v.iter().sum::<f64>() / v.len() as f64, v.iter().cloned().fold(f64::MIN, f64::max)))
}

/// Per node: GC, CPU, memory, largest backlog and compactions seen; for the client its CPU,
/// memory and how long a poll took. (node, figures) pairs.
fn node_lines(samples: &[ServerSample], run_ms: u64) -> Vec<(String, String)> {
    let mut nodes: Vec<&str> = samples.iter().map(|s| s.node.as_str()).collect();
    nodes.sort();
    nodes.dedup();
    nodes.sort_by_key(|n| *n == CLIENT);
    let mut out = Vec::new();
    for node in nodes {
        let of = |m: &str| -> Vec<f64> { samples.iter().filter(|s| s.node == node && s.metric == m).map(|s| s.value).collect() };
        let mut parts = Vec::new();
        let pauses: Vec<(&str, f64)> = gc_pauses(samples).filter(|p| p.0 == node).map(|p| (p.1, p.3)).collect();
        if !pauses.is_empty() || !of(metric::GC_STW_PCT).is_empty() {
            let total: f64 = pauses.iter().map(|p| p.1).sum::<f64>() + 0.0; // an empty sum is -0.0
            let longest = pauses.iter().cloned().fold(("", 0.0), |a, b| if b.1 > a.1 { b } else { a });
            let share = if run_ms > 0 { total / run_ms as f64 * 100.0 } else { 0.0 };
            let mut gc = format!("GC {} pause{}, {total:.0} ms stopped ({share:.2}% of the time)", pauses.len(), if pauses.len() == 1 { "" } else { "s" });
            if !pauses.is_empty() {
                let _ = write!(gc, ", longest {:.0} ms ({})", longest.1, longest.0);
            }
            parts.push(gc);
        }
        if let Some((avg, max)) = stats(&of(metric::CPU_PCT)) {
            parts.push(format!("CPU avg {avg:.0}% max {max:.0}% of a core"));
        }
        if let Some((_, max)) = stats(&of(metric::RSS_MIB)) {
            parts.push(format!("RSS max {max:.0} MiB"));
        }
        if let Some((_, max)) = stats(&of(metric::PENDING_TASKS)) {
            parts.push(format!("pending tasks max {max:.0}"));
        }
        if let Some((_, max)) = stats(&of(metric::SSTABLE_TASKS)) {
            parts.push(format!("compactions max {max:.0}"));
        }
        parts.extend(crate::server::redis_info::describe_node(samples, node));
        if let Some((avg, max)) = stats(&of(metric::POLL_MS)) {
            parts.push(format!("server metrics poll avg {avg:.0} ms max {max:.0} ms"));
        }
        if !parts.is_empty() {
            out.push((node.to_string(), parts.join(" · ")));
        }
    }
    out
}

/// [`ClientSeries::text_section`] of a run as the reports see it (the Markdown report shows it as is).
pub fn text_section_of(run: &RunView) -> String {
    let run_ms = run.intervals.iter().map(|iv| iv.end_ms).max().unwrap_or(0);
    text_of(&client_intervals_of(run), &run.server, run_ms)
}

/// The suspects of a run as the reports see it.
pub fn suspects_of(run: &RunView) -> Vec<suspects::Suspect> {
    suspects::find(&client_intervals_of(run), &run.server, SPIKE_FACTOR)
}

fn text_of(points: &[ClientInterval], samples: &[ServerSample], run_ms: u64) -> String {
    if samples.is_empty() {
        return String::new();
    }
    let mut out = format!("\nserver side ({}):\n", source(samples));
    let mut nodes = TextTable::headless().indent(2);
    for (node, figures) in node_lines(samples, run_ms) {
        nodes.row([node, figures]);
    }
    let _ = write!(out, "{nodes}");
    let disk = crate::server::disk::describe(samples);
    if !disk.is_empty() {
        out.push_str("on disk at the end of the run (nodetool tablestats and tablehistograms):\n");
        for l in disk {
            let _ = writeln!(out, "  {l}");
        }
    }
    let found = suspects::find(points, samples, SPIKE_FACTOR);
    let _ = writeln!(out, "suspects (intervals whose p99 exceeds {SPIKE_FACTOR:.0}× the run's median interval p99):");
    if found.is_empty() {
        out.push_str("  none\n");
    }
    for s in &found {
        let _ = writeln!(out, "  {}", suspects::describe(s));
    }
    out
}

/// The HTML section of one run: server charts aligned with client p99, then the suspects.
pub fn html_section(s: &mut String, run: &RunView, pos: usize) {
    server_html(s, run, pos);
    traces_html(s, &run.traces);
}

/// The slowest traced requests, slowest first, one line each with its steps as text.
pub fn traces_text(traces: &[Trace]) -> String {
    if traces.is_empty() {
        return String::new();
    }
    let mut out = format!("slowest traced requests ({}; the coordinator's own time, from system_traces):\n", traces.len());
    for t in traces {
        let _ = write!(out, "  {}", traces::describe(t));
    }
    out
}

/// Each trace as a per-step timeline: a bar per step from the request's start to the step.
fn traces_html(s: &mut String, list: &[Trace]) {
    if list.is_empty() {
        return;
    }
    s.push_str(r#"<h4>Slowest traced requests <span class="sub">the coordinator's own time, step by step (system_traces)</span></h4>"#);
    for t in list {
        let total = t.events.iter().map(|e| e.elapsed_us).max().unwrap_or(0).max(t.duration_us).max(1) as f64;
        let _ = write!(
            s,
            r#"<details class="trace"><summary>{:.2} ms at {} on {} · {}</summary><table class="trace-steps"><tr><th>ms</th><th>+ms</th><th></th><th>node</th><th>step</th></tr>"#,
            t.duration_us as f64 / 1000.0,
            suspects::clock(t.at_ms),
            esc(&t.coordinator),
            esc(&t.query)
        );
        let mut prev = 0;
        for e in &t.events {
            let width = (e.elapsed_us.max(0) as f64 / total * 200.0).round();
            let _ = write!(
                s,
                r#"<tr><td>{:.3}</td><td>{:.3}</td><td><div style="width:{width}px;height:8px;background:#f28e2b"></div></td><td>{}</td><td>{}</td></tr>"#,
                e.elapsed_us as f64 / 1000.0,
                (e.elapsed_us - prev).max(0) as f64 / 1000.0,
                esc(&e.source),
                esc(&e.activity)
            );
            prev = e.elapsed_us;
        }
        s.push_str("</table></details>");
    }
}

fn server_html(s: &mut String, run: &RunView, pos: usize) {
    if run.server.is_empty() {
        return;
    }
    // partial intervals (the last few ms of a phase) would draw false drops
    let nominal = run.record.config.interval_ms;
    let ivs: Vec<_> = run.intervals.iter().filter(|iv| nominal == 0 || 2 * iv.end_ms.saturating_sub(iv.start_ms) >= nominal).collect();
    if ivs.is_empty() {
        return;
    }
    let bounds: Vec<(u64, u64)> = ivs.iter().map(|iv| (iv.start_ms, iv.end_ms)).collect();
    let mids: Vec<f64> = ivs.iter().map(|iv| iv.mid_s()).collect();
    let x = time_axis_of(run, ivs[0].start_ms as f64 / 1000.0, ivs[ivs.len() - 1].end_ms as f64 / 1000.0);
    let mut charts = Vec::new();
    let mut notes = Vec::new();

    // the client's p99 beside Cassandra's own: queueing in the client shows as the gap
    let mut p99: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for (iv, mid) in ivs.iter().zip(&mids) {
        for o in iv.ops.iter().filter(|o| o.latency.count > 0 && !crate::stats::is_sub_op(&o.op)) {
            p99.entry(o.op.as_str()).or_default().push((*mid, o.latency.p99_ns as f64 / 1e6));
        }
    }
    let mut series: Vec<Series> = p99.into_iter().enumerate().map(|(i, (op, pts))| Series::new(format!("client {op} p99"), color(i), pts).bold()).collect();
    let lat_source = LatencySource::of(&run.server, run.record.env.cassandra_version.as_deref());
    let mut below_resolution = false;
    let mut server_p99 = |what: IntervalSeries, name: &str, c: &str| -> Series {
        let pts = latency::per_interval_ms(&run.server, &bounds, what, lat_source)
            .into_iter()
            .zip(&mids)
            .map(|(v, m)| {
                // a figure the source cannot tell from zero is no point on the chart
                below_resolution |= v.is_some_and(|v| !lat_source.resolves(v));
                (*m, v.filter(|v| lat_source.resolves(*v)).unwrap_or(f64::NAN))
            })
            .collect();
        Series::new(format!("{name} ({})", lat_source.tag()), c, pts).dashed()
    };
    for se in [
        server_p99(IntervalSeries::CoordinatorReadP99, "Cassandra coordinator read p99", "#59a14f"),
        server_p99(IntervalSeries::CoordinatorWriteP99, "Cassandra coordinator write p99", "#b07aa1"),
        server_p99(IntervalSeries::LocalReadP99, "Cassandra local read p99", "#76b7b2"),
        server_p99(IntervalSeries::LocalWriteP99, "Cassandra local write p99", "#9c755f"),
    ] {
        if se.points.iter().any(|p| p.1.is_finite()) {
            series.push(se);
        }
    }
    if below_resolution {
        notes.push(format!(
            "Cassandra's own p99: intervals where it was {} ({}) are left out of the p99 chart: too small for this source to measure",
            lat_source.show(0.0),
            lat_source.label()
        ));
    } else {
        notes.push(format!("Cassandra's own p99 from {}", lat_source.label()));
    }
    let y = latency_axis("p99 latency (ms)", series.iter().flat_map(|se| se.points.iter().map(|p| p.1)));
    let found = suspects::find(&client_intervals_of(run), &run.server, SPIKE_FACTOR);
    let marks = found
        .iter()
        .map(|f| Mark { kind: MarkKind::Suspect, from: f.start_ms as f64 / 1000.0, to: f.end_ms as f64 / 1000.0, label: format!("suspect: {} p99", f.op) })
        .collect();
    charts.push(LineChart {
        id: format!("r{pos}-server-p99"),
        title: format!("p99 per interval: client against Cassandra's own (coordinator, local; {})", lat_source.tag()),
        x: x.clone(),
        y,
        series,
        marks,
    });

    let one = |what: IntervalSeries, name: &str, c: usize| -> Series {
        let pts = per_interval(&run.server, &bounds, what).into_iter().zip(&mids).map(|(v, m)| (*m, v.unwrap_or(f64::NAN))).collect();
        Series::new(name, color(c), pts)
    };
    charts.push(chart(
        format!("r{pos}-server-gc"),
        "GC pause time per interval (all nodes)",
        "stopped (ms)",
        &x,
        vec![one(IntervalSeries::GcPauseMs, "GC pauses", 3)],
    ));
    charts.push(chart(
        format!("r{pos}-server-tasks"),
        "pending thread-pool tasks and running compactions",
        "tasks",
        &x,
        vec![one(IntervalSeries::PendingTasks, "pending tasks", 1), one(IntervalSeries::Compactions, "compactions", 2)],
    ));
    let tomb = one(IntervalSeries::TombstonesP99, "tombstones per read, p99", 4);
    // Cassandra's histogram has no bucket under 1: a read that scanned none reads as 1
    if tomb.points.iter().any(|p| p.1 > TOMBSTONE_FLOOR) {
        charts.push(chart(
            format!("r{pos}-server-tombstones"),
            "tombstones per read (p99, workload tables; Cassandra's histogram shows 0 as 1)",
            "tombstones",
            &x,
            vec![tomb],
        ));
    } else if tomb.points.iter().any(|p| p.1.is_finite()) {
        notes.push("tombstones per read: none seen (Cassandra's histogram reports 1 at least, even for reads that scanned none)".to_string());
    }
    let redis_ops = per_interval_mean(&run.server, &bounds, crate::server::redis_info::names::OPS_PER_S);
    if redis_ops.iter().any(|v| v.is_some()) {
        let pts = |v: Vec<Option<f64>>| v.into_iter().zip(&mids).map(|(v, m)| (*m, v.unwrap_or(f64::NAN))).collect();
        charts.push(chart(
            format!("r{pos}-server-redis"),
            "Redis: commands per second (INFO)",
            "commands/s",
            &x,
            vec![Series::new("commands/s", color(0), pts(redis_ops))],
        ));
    }
    charts.push(chart(
        format!("r{pos}-server-cpu"),
        "CPU: busiest node and casslab itself",
        "% of one core",
        &x,
        vec![one(IntervalSeries::NodeCpuPct, "busiest node", 0), one(IntervalSeries::ClientCpuPct, "casslab", 5)],
    ));

    let _ = write!(s, r#"<h3>Server side <span class="sub">{}</span></h3>"#, source(&run.server));
    let run_ms = ivs.iter().map(|iv| iv.end_ms).max().unwrap_or(0);
    s.push_str(r#"<ul class="notes server-nodes">"#);
    for (node, figures) in node_lines(&run.server, run_ms) {
        let _ = write!(s, "<li>{} {}</li>", esc(&node), esc(&figures));
    }
    for l in crate::server::disk::describe(&run.server) {
        let _ = write!(s, "<li>on disk at the end: {}</li>", esc(&l));
    }
    for n in &notes {
        let _ = write!(s, "<li>{}</li>", esc(n));
    }
    s.push_str("</ul>");
    s.push_str(r#"<div class="charts">"#);
    for c in charts.iter().filter(|c| c.has_data()) {
        s.push_str(&c.to_html());
    }
    s.push_str("</div>");
    let _ = write!(s, r#"<h4>Suspects: intervals whose p99 exceeded {SPIKE_FACTOR:.0}× the run's median interval p99</h4><ul class="suspects">"#);
    if found.is_empty() {
        s.push_str("<li>none</li>");
    }
    for f in &found {
        let _ = write!(s, "<li>{}</li>", esc(&suspects::describe(f)));
    }
    s.push_str("</ul>");
}

/// Where the server samples come from, in words.
fn source(samples: &[ServerSample]) -> &'static str {
    if samples.iter().all(|s| s.node == "client") {
        "the client's /proc every interval; no server was polled"
    } else if samples.iter().any(|s| s.metric.starts_with("redis.")) {
        "Redis INFO every interval"
    } else if samples.iter().any(|s| s.metric.starts_with(crate::server::jolokia::PREFIX)) {
        "Cassandra's latency histograms through Jolokia (µs) and system_views every interval; GC log and /proc for nodes casslab started"
    } else {
        "system_views every interval; GC log and /proc for nodes casslab started"
    }
}

/// The mean of `metric` over the samples of each interval (all nodes), `None` where it has none.
fn per_interval_mean(samples: &[ServerSample], bounds: &[(u64, u64)], metric: &str) -> Vec<Option<f64>> {
    // sorted once, each interval's slice by binary search (a long run has thousands of each)
    let mut of: Vec<(u64, f64)> = samples.iter().filter(|s| s.metric == metric).map(|s| (s.at_ms, s.value)).collect();
    of.sort_by_key(|p| p.0);
    bounds
        .iter()
        .map(|&(a, b)| {
            let from = of.partition_point(|p| p.0 <= a);
            let v = &of[from..from + of[from..].partition_point(|p| p.0 <= b)];
            (!v.is_empty()).then(|| v.iter().map(|p| p.1).sum::<f64>() / v.len() as f64)
        })
        .collect()
}

fn chart(id: String, title: &str, y_label: &str, x: &XAxis, series: Vec<Series>) -> LineChart {
    LineChart { id, title: title.to_string(), x: x.clone(), y: YAxis::linear(y_label), series, marks: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(node: &str, metric: &str, value: f64) -> ServerSample {
        ServerSample { node: node.into(), metric: metric.into(), at_ms: 1000, value }
    }

    #[test]
    fn samples_of_the_client_alone_name_no_server_source() {
        let client = [sample("client", "cpu_pct", 3.0)];
        assert_eq!(source(&client), "the client's /proc every interval; no server was polled");
        let both = [sample("client", "cpu_pct", 3.0), sample("127.0.0.1", "thread_pools.pending", 0.0)];
        assert!(source(&both).starts_with("system_views"));
    }

    #[test]
    fn the_terminal_section_lines_up_nodes_of_any_name_length() {
        let samples = vec![
            sample("127.0.0.1", metric::CPU_PCT, 80.0),
            sample("node-with-a-long-host-name.example", metric::CPU_PCT, 40.0),
            sample(CLIENT, metric::CPU_PCT, 20.0),
        ];
        let text = ClientSeries::default().text_section(&samples);
        let rows: Vec<&str> = text.lines().filter(|l| l.contains("CPU avg")).collect();
        assert_eq!(rows.len(), 3, "{text}");
        let at: Vec<Option<usize>> = rows.iter().map(|r| r.find("CPU avg")).collect();
        assert!(at.iter().all(|a| *a == at[0]), "figures start in one column:\n{text}");
        assert!(rows[2].trim_start().starts_with(CLIENT), "the client comes last:\n{text}");
        assert!(ClientSeries::default().text_section(&[]).is_empty());
    }

    #[test]
    fn a_tombstones_p99_at_the_histograms_floor_is_not_drawn_as_tombstones() {
        let mut run = crate::report::run_view::fixtures::view(5, None);
        let at = |s: u64| s * 1000 + 500;
        let tomb = |v: f64| -> Vec<ServerSample> {
            (5..13).map(|s| ServerSample { node: "127.0.0.1".into(), metric: format!("{}kv", metric::TOMBSTONES_P99_PREFIX), at_ms: at(s), value: v }).collect()
        };
        run.server = tomb(1.0);
        let mut html = String::new();
        html_section(&mut html, &run, 0);
        assert!(!html.contains("r0-server-tombstones") && html.contains("tombstones per read: none seen"), "{html}");
        run.server = tomb(40.0);
        let mut html = String::new();
        html_section(&mut html, &run, 0);
        assert!(html.contains("r0-server-tombstones") && !html.contains("none seen"), "{html}");
    }

    #[test]
    fn an_interval_whose_p99_spiked_is_marked_on_the_p99_chart() {
        let mut run = crate::report::run_view::fixtures::view(5, None);
        run.server = (0..14).map(|s| ServerSample { node: "127.0.0.1".into(), metric: metric::CPU_PCT.into(), at_ms: s * 1000 + 500, value: 50.0 }).collect();
        // the read of the run's interval at 9 s: 40 ms instead of about 1 ms
        let iv = run.intervals.iter_mut().find(|iv| iv.start_ms == 9000).expect("the fixture has an interval at 9 s");
        iv.ops.iter_mut().find(|o| o.op == "read").expect("with a read").latency.p99_ns = 40_000_000;
        let mut html = String::new();
        html_section(&mut html, &run, 0);
        let p99 = html.split(r#"data-chart="r0-server-p99""#).nth(1).expect("the p99 chart").split("</figure>").next().unwrap();
        assert!(p99.contains(r#"{"kind":"suspect","from":9.0,"to":10.0,"label":"suspect: read p99"}"#), "{p99}");
        assert_eq!(p99.matches(r#""kind":"suspect""#).count(), 1, "{p99}");
    }
}
