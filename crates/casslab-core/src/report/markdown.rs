//! The Markdown report, to paste into a pull request: per run a header line, tables per
//! operation (latency from intended start, and service time under a fixed rate), the events
//! with their impact, the server side (per-node figures and the suspects) and the slowest
//! traced requests as the terminal shows them (in `text` blocks), the key config, notes and the
//! full config folded in a `<details>`; for several runs, an overview table and the config
//! keys that differ. GitHub-flavoured tables; no charts.

use super::config_table::config_rows;
use super::format_trait::Format;
use super::run_view::{grouped, Report, RunView};
use super::text::{latency_cells, ms, utc};
use crate::stats::{LatencySummary, OpSummary, Phase};
use crate::store::PhaseSummary;
use std::fmt::Write;

/// Renders a [`Report`] as GitHub-flavoured Markdown.
pub struct MarkdownReport;

impl Format<Report> for MarkdownReport {
    fn name(&self) -> &'static str {
        "md"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["markdown"]
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["md", "markdown"]
    }
    fn render(&self, report: &Report) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "## casslab: {}\n", cell(&report.title));
        if report.runs.len() > 1 {
            overview(&mut s, report);
        }
        for run in &report.runs {
            run_section(&mut s, run, report.runs.len() > 1);
        }
        s
    }
}

/// Text safe inside a table cell (and harmless elsewhere).
fn cell(v: &str) -> String {
    v.replace('|', "\\|").replace('\n', " ")
}

const HEADER: &str = "| op | count | ops/s | mean | p50 | p95 | p99 | p99.9 | max | errors |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

fn overview(s: &mut String, report: &Report) {
    let _ = writeln!(s, "| run | workload | status | mode | ops/s | p50 ms | p99 ms | p99.9 ms | errors |\n|---|---|---|---|---:|---:|---:|---:|---:|");
    for r in &report.runs {
        let figures = match r.main_phase() {
            Some(p) => {
                let l = &p.total.latency;
                format!(
                    "{:.0} | {} | {} | {} | {}",
                    p.total.ops_per_s,
                    ms(l.p50_ns as f64),
                    ms(l.p99_ns as f64),
                    ms(l.p999_ns as f64),
                    grouped(p.total.error_count())
                )
            }
            None => "– | – | – | – | –".into(),
        };
        let _ = writeln!(s, "| {} | {} | {} | {} | {figures} |", r.label, cell(&r.record.workload), r.record.status.as_str(), cell(&r.load_shape().describe()));
    }
    if !report.config_differences.is_empty() {
        let _ = write!(s, "\n**Config differences**\n\n| key |");
        for r in &report.runs {
            let _ = write!(s, " {} |", r.label);
        }
        let _ = write!(s, "\n|---|{}\n", "---|".repeat(report.runs.len()));
        for d in &report.config_differences {
            let _ = write!(s, "| `{}` |", d.key);
            for v in &d.values {
                let _ = write!(s, " {} |", if *v != d.values[0] { format!("**{}**", cell(v)) } else { cell(v) });
            }
            s.push('\n');
        }
    }
    s.push('\n');
}

fn table(s: &mut String, p: &PhaseSummary, service: bool) {
    let _ = writeln!(s, "{HEADER}");
    let mut rows: Vec<(&OpSummary, bool)> = p.ops.iter().map(|o| (o, false)).collect();
    if p.ops.len() > 1 {
        rows.push((&p.total, true));
    }
    for (o, bold) in rows {
        let l: &LatencySummary = if service { &o.service } else { &o.latency };
        let name = if bold { format!("**{}**", cell(&o.op)) } else { cell(&o.op) };
        let _ = writeln!(s, "| {name} | {} | {:.0} | {} | {} |", grouped(o.ok), o.ops_per_s, latency_cells(l).join(" | "), grouped(o.error_count()));
    }
    s.push('\n');
}

/// A terminal section under a bold title, as a `text` block (nothing when it is empty).
fn block(s: &mut String, title: &str, text: &str) {
    let text = text.trim_matches('\n');
    if text.trim().is_empty() {
        return;
    }
    let _ = writeln!(s, "**{title}**\n\n```text\n{}\n```\n", text.replace("```", "` ` `"));
}

fn run_section(s: &mut String, run: &RunView, several: bool) {
    let r = &run.record;
    if several {
        let _ = writeln!(s, "### {} · {}\n", run.label, cell(&r.workload));
    }
    let _ = writeln!(
        s,
        "{} · {} · {} node(s) · started {} UTC · {}\n",
        r.status.as_str(),
        crate::config::server_label(r.env.cassandra_version.as_deref()),
        r.env.node_count,
        utc(r.started_at_ms),
        run.load_shape().describe()
    );
    if let Some(v) = &run.validity {
        let reasons: Vec<String> = v.reasons.iter().map(|r| format!("{}: {}", r.verdict.as_str(), cell(&r.message))).collect();
        let why = if reasons.is_empty() { String::new() } else { format!(" — {}", reasons.join("; ")) };
        let _ = writeln!(s, "**Validity: {}**{why}\n\n{}\n", v.verdict.as_str(), cell(&v.figures.line()));
    }
    for phase in [Phase::Run, Phase::Load] {
        let Some(p) = run.phase(phase) else { continue };
        let name = if phase == Phase::Run { "Measured run" } else { "Load phase" };
        let mut line = format!("**{name}**: {:.1} s, {:.0} ops/s", p.duration_s, p.total.ops_per_s);
        if let Some(t) = p.target_rate_per_s {
            let _ = write!(line, " (target {t:.0} ops/s)");
        }
        let fixed = p.target_rate_per_s.is_some();
        let _ = writeln!(s, "{line} — latency{} in ms:\n", if fixed { " from intended start" } else { "" });
        table(s, p, false);
        if fixed {
            let _ = writeln!(s, "Service time (from the actual send), ms:\n");
            table(s, p, true);
        }
        if let Some(reads) = super::text::reads_line(p) {
            let _ = writeln!(s, "{}\n", cell(&reads));
        }
        if let Some(data) = super::data::data_line(p, &super::data::levels_of(r)) {
            let _ = writeln!(s, "**{}**\n", cell(&data));
        }
        if let Some(recall) = super::recall_text::phase_line(p) {
            let _ = writeln!(s, "{}\n", cell(&recall));
        }
        if !p.total.errors.is_empty() {
            let parts: Vec<String> = p.total.errors.iter().map(|(k, v)| format!("{} {}", k.as_str(), grouped(*v))).collect();
            let _ = writeln!(s, "Errors by kind: {}\n", parts.join(", "));
        }
    }
    let events: Vec<_> = run.events.iter().cloned().zip(run.event_impacts.iter().cloned().chain(std::iter::repeat(None))).collect();
    block(s, "First violations", super::data::violations_table(&run.violations).trim_start_matches('\n'));
    block(s, "Events", &super::text::events_table(&events));
    block(s, "Server side", &super::server_view::text_section_of(run));
    block(s, "Slowest traced requests", &super::server_view::traces_text(&run.traces));
    let profiles = super::flame::markdown_section(run);
    if !profiles.is_empty() {
        let _ = writeln!(s, "**Where the servers spent their time** (the measured phase)\n{profiles}");
    }
    let c = &r.config;
    let mut key = vec![format!("workload `{}`", c.workload), format!("concurrency {}", c.concurrency)];
    if c.rate.is_some() {
        key.push(format!("rate {}", c.rate_text()));
    }
    if let Some(d) = c.duration_s {
        key.push(format!("duration {d}s"));
    }
    if let Some(w) = c.warmup_s {
        key.push(format!("warm-up {w}s"));
    }
    key.push(format!("seed {}", c.seed));
    key.extend(c.params.iter().map(|(k, v)| format!("`{k}={}`", v.replace('`', "'"))));
    let _ = writeln!(s, "Config: {}\n", key.join(", "));
    for n in &run.notes {
        let _ = writeln!(s, "> **Note:** {}\n", n.replace('\n', " "));
    }
    let _ = writeln!(s, "<details><summary>Full config of {}</summary>\n\n| key | value |\n|---|---|", run.label);
    for (k, v) in config_rows(r) {
        let _ = writeln!(s, "| `{k}` | {} |", cell(&v));
    }
    let _ = writeln!(s, "\n</details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::run_view::fixtures::view;

    #[test]
    fn one_run_has_tables_config_and_notes() {
        let md = MarkdownReport.render(&Report::new(vec![view(3, Some(600.0))]));
        assert!(md.starts_with("## casslab: run 3 · kv\n"));
        assert!(md.contains("completed · Cassandra 5.0.6 · 1 node(s) · started 2026-11-18 11:06:40 UTC · fixed rate 600 ops/s"));
        assert!(md.contains("**Measured run**: 8.0 s, 500 ops/s (target 600 ops/s) — latency from intended start in ms:"), "{md}");
        assert_eq!(md.matches(HEADER).count(), 3, "intended and service for the run, one for the load");
        assert!(md.contains("| read | 3,200 | 400 |"), "{md}");
        assert!(md.contains("| **total** | 4,000 | 500 |"), "{md}");
        assert!(md.contains("Errors by kind: timeout 3"));
        assert!(md.contains("Config: workload `kv`, concurrency 128, rate 600/s, seed 42, `rows=1000`"));
        assert!(md.contains("> **Note:** target rate 600/s not kept"));
        assert!(md.contains("| `params.rows` | 1000 |"));
        assert!(!md.contains("Config differences"));
    }

    #[test]
    fn events_server_side_suspects_and_traces_are_in_the_report() {
        use crate::events::{EventRecord, EventStatus};
        use crate::server::traces::{Trace, TraceEvent};
        use crate::server::{metric, ServerSample};
        let mut run = view(3, Some(600.0));
        run.events = vec![EventRecord {
            seq: 0,
            spec: "4s flush".into(),
            action: "flush".into(),
            target: None,
            start_ms: 4_000,
            end_ms: 4_300,
            status: EventStatus::Ok,
            exit_code: None,
            output_tail: String::new(),
        }];
        run.event_impacts = vec![Some(crate::store::EventImpact {
            baseline_from_ms: Some(0),
            baseline_to_ms: Some(4_000),
            baseline_ops_per_s: Some(500.0),
            during_ops_per_s: Some(250.0),
            after_ops_per_s: Some(500.0),
            p99: vec![],
            errors: [(crate::stats::ErrorKind::Timeout, 3)].into(),
            recovery_ms: Some(2_000),
        })];
        run.server = vec![ServerSample { node: "127.0.0.1".into(), metric: metric::CPU_PCT.into(), at_ms: 6_000, value: 150.0 }];
        run.traces = vec![Trace {
            session_id: "s1".into(),
            at_ms: 7_000,
            duration_us: 12_345,
            coordinator: "127.0.0.1".into(),
            query: "SELECT v FROM kv WHERE k = ?".into(),
            events: vec![TraceEvent {
                elapsed_us: 100,
                source: "127.0.0.1".into(),
                thread: "ReadStage-1".into(),
                activity: "Merged data from memtables and 2 sstables".into(),
            }],
        }];
        let md = MarkdownReport.render(&Report::new(vec![run]));
        assert!(md.contains("**Events**\n\n```text\n"), "{md}");
        assert!(md.contains("4.0s  4s flush") && md.contains("-50%") && md.contains("timeout 3") && md.contains("after 2.0 s"), "{md}");
        assert!(md.contains("**Server side**") && md.contains("CPU avg 150% max 150% of a core"), "{md}");
        assert!(md.contains("suspects (intervals whose p99 exceeds 3×"), "{md}");
        assert!(md.contains("**Slowest traced requests**") && md.contains("Merged data from memtables and 2 sstables"), "{md}");
        // and nothing of it for a run without them
        let plain = MarkdownReport.render(&Report::new(vec![view(3, Some(600.0))]));
        assert!(!plain.contains("**Events**") && !plain.contains("**Server side**") && !plain.contains("traced"), "{plain}");
    }

    #[test]
    fn several_runs_get_an_overview_and_bold_differences() {
        let md = MarkdownReport.render(&Report::new(vec![view(1, None), view(2, Some(600.0))]));
        assert!(md.contains("| run 1 | kv | completed | max throughput, 128 in flight |"), "{md}");
        assert!(md.contains("| `rate` | max | **600/s** |"), "{md}");
        assert!(md.contains("### run 2 · kv"));
        assert!(!md.contains("Service time") || md.matches("Service time").count() == 1);
    }
}
