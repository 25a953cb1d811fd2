//! Where the servers spent their time, in the reports: flame graphs drawn by `inferno` (SVG
//! with its own search, zoom and hover, each in a frame of its own so their scripts and ids do
//! not meet) of a run's profiles over its measured phase — the nodes merged, each node, and
//! the slices of its suspect intervals and events — and differential flame graphs of two runs
//! or variants per operation; the top frames for the Markdown report; folded stacks for the
//! JSON report. The model and its arithmetic are `profile`; this file only draws and words.

use super::run_view::RunView;
use super::svg_chart::esc;
use crate::profile::diff::ProfileDiff;
use crate::profile::share;
use crate::profile::top::{top_cassandra_frames, top_frames};
use crate::profile::{Profile, ProfileKind, Window};
use crate::stats::Phase;
use crate::store::{RunId, Store, StoreError};
use base64::Engine;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Slices (suspect intervals, events) drawn at most per run; the rest get their top frames.
const MAX_SLICE_GRAPHS: usize = 4;
/// Frames narrower than this share of the graph (%) are left out of the drawing.
const MIN_WIDTH_PCT: f64 = 0.1;

/// The measured phase of a run on its clock (its run-phase intervals); `None` without one.
pub fn measured_window(run: &RunView) -> Option<Window> {
    let run_iv = run.intervals.iter().filter(|i| i.phase == Phase::Run);
    let from = run_iv.clone().map(|i| i.start_ms).min()?;
    let to = run_iv.map(|i| i.end_ms).max()?;
    Some(Window { from_ms: from as i64, to_ms: to as i64 })
}

/// Whether a profile is casslab's own (the client), not a server's.
fn is_client(p: &Profile) -> bool {
    p.node == crate::profile::client::CLIENT_NODE
}

/// The run's server profiles with the nodes merged, one per kind, in kind order (the client's
/// own profile is never merged with them).
pub fn merged_by_kind(profiles: &[Profile]) -> Vec<Profile> {
    ProfileKind::ALL
        .iter()
        .filter_map(|k| {
            let of_kind: Vec<&Profile> = profiles.iter().filter(|p| p.kind == *k && !is_client(p)).collect();
            match of_kind.len() {
                0 => None,
                1 => Some(of_kind[0].clone()),
                _ => Profile::merged("all nodes", &of_kind),
            }
        })
        .collect()
}

/// A flame graph of folded stacks, as an SVG document; `None` when there is nothing to draw.
/// `samples` (the events behind the weights) goes into its subtitle, with a warning when the
/// graph is too thin to read.
pub fn svg(folded: &BTreeMap<String, u64>, title: &str, kind: ProfileKind, samples: u64) -> Option<String> {
    let lines: Vec<String> = folded.iter().filter(|(_, w)| **w > 0).map(|(s, w)| format!("{s} {w}")).collect();
    draw(&lines, title, kind, Some(&share::caption(samples, kind == ProfileKind::Cpu)))
}

/// A differential flame graph: the frames are the second side's, red where it spends more per
/// operation than the first, blue where less.
pub fn diff_svg(diff: &ProfileDiff, title: &str, kind: ProfileKind, subtitle: &str) -> Option<String> {
    let lines: Vec<String> = diff.lines.iter().map(|(s, b, a)| format!("{s} {b} {a}")).collect();
    draw(&lines, title, kind, Some(subtitle))
}

fn draw(lines: &[String], title: &str, kind: ProfileKind, subtitle: Option<&str>) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    let mut o = inferno::flamegraph::Options::default();
    o.title = title.to_string();
    o.subtitle = subtitle.map(str::to_string);
    o.count_name = kind.unit().to_string();
    o.colors = inferno::flamegraph::color::Palette::Multi(inferno::flamegraph::color::MultiPalette::Java);
    o.hash = true;
    o.deterministic = true;
    o.min_width = MIN_WIDTH_PCT;
    o.image_width = Some(1200);
    let mut out = Vec::with_capacity(64 * 1024);
    inferno::flamegraph::from_lines(&mut o, lines.iter().map(String::as_str), &mut out).ok()?;
    String::from_utf8(out).ok()
}

/// A flame graph in the page: a frame of its own holding the SVG, as tall as the drawing.
fn frame(s: &mut String, svg: &str, label: &str) {
    let height = svg.split("height=\"").nth(1).and_then(|h| h.split('"').next()).and_then(|h| h.parse::<f64>().ok()).unwrap_or(400.0);
    let data = base64::engine::general_purpose::STANDARD.encode(svg);
    let _ = write!(
        s,
        r#"<iframe class="flame" title="{}" style="width:100%;height:{}px;border:0" src="data:image/svg+xml;base64,{data}"></iframe>"#,
        esc(label),
        height.ceil() as u64 + 4
    );
}

/// The run's profiles section of the HTML report: per kind the nodes merged over the measured
/// phase (each node in its own fold), then the slices of the suspect intervals and events.
pub fn html_section(s: &mut String, run: &RunView, pos: usize) {
    if run.profiles.is_empty() {
        return;
    }
    let window = measured_window(run);
    let sources: std::collections::BTreeSet<&str> = run.profiles.iter().map(|p| p.source.as_str()).collect();
    let _ = write!(
        s,
        r#"<section class="profiles" id="run-{pos}-profiles"><h3>Where the servers spent their time</h3><p class="note">{} over the measured phase; hover a frame for its share, click to zoom, Ctrl-F to search. Source: {}.</p>"#,
        if window.is_some() { "Profiles" } else { "Profiles (the whole recording)" },
        esc(&sources.into_iter().collect::<Vec<_>>().join(", "))
    );
    let merged_kinds = merged_by_kind(&run.profiles);
    for merged in &merged_kinds {
        let folded = merged.folded(window);
        let samples = merged.sample_count(window);
        let title = format!("{} — {}", merged.kind.title(), merged.node);
        if let Some(merged_svg) = svg(&folded, &title, merged.kind, samples) {
            let _ = write!(
                s,
                r#"<div class="flame-kind" data-kind="{}"><h4>{} <span class="sub">{}</span></h4>"#,
                merged.kind.as_str(),
                esc(&title),
                esc(&share::caption(samples, merged.kind == ProfileKind::Cpu))
            );
            cassandra_line(s, &folded, merged.kind, samples);
            frame(s, &merged_svg, &title);
            let nodes: Vec<&Profile> = run.profiles.iter().filter(|p| p.kind == merged.kind && !is_client(p)).collect();
            if nodes.len() > 1 {
                for p in nodes {
                    let t = format!("{} — {}", p.kind.title(), p.node);
                    let n = p.sample_count(window);
                    if let Some(node_svg) = svg(&p.folded(window), &t, p.kind, n) {
                        let _ = write!(s, "<details><summary>{} — {}</summary>", esc(&t), esc(&share::caption(n, p.kind == ProfileKind::Cpu)));
                        frame(s, &node_svg, &t);
                        s.push_str("</details>");
                    }
                }
            }
            s.push_str("</div>");
        }
    }
    for client in run.profiles.iter().filter(|p| is_client(p)) {
        let title = format!("CPU — {} (where the load generator spent its time)", client.node);
        let n = client.sample_count(window);
        if let Some(client_svg) = svg(&client.folded(window), &title, client.kind, n) {
            let _ =
                write!(s, r#"<div class="flame-kind" data-kind="client"><h4>{} <span class="sub">{}</span></h4>"#, esc(&title), esc(&share::caption(n, true)));
            frame(s, &client_svg, &title);
            s.push_str("</div>");
        }
    }
    if let Some(cpu) = merged_kinds.iter().find(|p| p.kind == ProfileKind::Cpu && p.timed()) {
        slices_html(s, run, cpu);
    }
    s.push_str(SLICE_SCRIPT);
    s.push_str("</section>");
}

/// "Cassandra's own frames with the most samples: …" under a graph, each share with its 95 %
/// interval (from the `samples` behind the graph).
fn cassandra_line(s: &mut String, folded: &BTreeMap<String, u64>, kind: ProfileKind, samples: u64) {
    let total: u64 = folded.values().sum();
    let top = top_cassandra_frames(folded, 5);
    if total == 0 || top.is_empty() {
        return;
    }
    let names: Vec<String> =
        top.iter().map(|f| format!("{} {}", short(&f.frame), share::share(f.total_weight as f64, total as f64, samples).percent())).collect();
    let _ = write!(
        s,
        r#"<p class="note">Cassandra's frames with the most {} (total share, 95% interval from {samples} samples): {}</p>"#,
        kind.unit(),
        esc(&names.join(" · "))
    );
}

/// `org.apache.cassandra.db.ReadCommand.executeLocally` → `db.ReadCommand.executeLocally`.
fn short(frame: &str) -> &str {
    frame.strip_prefix("org.apache.cassandra.").unwrap_or(frame)
}

/// A window of the run worth its own profile: a suspect interval or an event.
struct Slice {
    label: String,
    window: Window,
}

fn slices(run: &RunView) -> Vec<Slice> {
    let mut out: Vec<Slice> = super::server_view::suspects_of(run)
        .into_iter()
        .map(|x| Slice {
            label: format!(
                "suspect {}–{} ({} p99 {:.1} ms)",
                crate::server::suspects::clock(x.start_ms),
                crate::server::suspects::clock(x.end_ms),
                x.op,
                x.p99_ms
            ),
            window: Window { from_ms: x.start_ms as i64, to_ms: x.end_ms as i64 },
        })
        .collect();
    for e in &run.events {
        let from_ms = e.start_ms as i64;
        let to_ms = (e.end_ms as i64).max(from_ms + 1000);
        out.push(Slice { label: format!("event {} at {}", e.spec, crate::server::suspects::clock(e.start_ms)), window: Window { from_ms, to_ms } });
    }
    out
}

/// Each slice's CPU profile (of `cpu`, the nodes merged): the first few drawn, every one with
/// its top frames.
fn slices_html(s: &mut String, run: &RunView, cpu: &Profile) {
    let list = slices(run);
    if list.is_empty() {
        return;
    }
    s.push_str(r#"<h4>Slices: what the nodes ran during each suspect interval and event</h4>"#);
    for (i, sl) in list.iter().enumerate() {
        let folded = cpu.folded(Some(sl.window));
        let total: u64 = folded.values().sum();
        let _ = write!(
            s,
            r#"<details class="slice" data-from-s="{:.3}" data-to-s="{:.3}"><summary>{} — {}</summary>"#,
            sl.window.from_ms as f64 / 1000.0,
            sl.window.to_ms as f64 / 1000.0,
            esc(&sl.label),
            esc(&share::caption(total, true).replacen("samples", "CPU samples", 1))
        );
        let top = top_frames(&folded, 8);
        if !top.is_empty() && total > 0 {
            s.push_str(r#"<table class="num"><thead><tr><th class="t">frame (innermost)</th><th>self % (95% interval)</th><th>total % (95% interval)</th></tr></thead><tbody>"#);
            for f in top {
                let _ = write!(
                    s,
                    r#"<tr><td class="t">{}</td><td>{}</td><td>{}</td></tr>"#,
                    esc(&f.frame),
                    share::share(f.self_weight as f64, total as f64, total).percent(),
                    share::share(f.total_weight as f64, total as f64, total).percent()
                );
            }
            s.push_str("</tbody></table>");
        }
        if i < MAX_SLICE_GRAPHS {
            if let Some(svg) = svg(&folded, &format!("CPU — {}", sl.label), ProfileKind::Cpu, total) {
                frame(s, &svg, &sl.label);
            }
        }
        s.push_str("</details>");
    }
}

/// Opens the slices a chart's zoom (`casslab:window`, seconds on the run's clock) overlaps.
const SLICE_SCRIPT: &str = r#"<script>document.addEventListener('casslab:window',function(e){var d=e.detail||{};document.querySelectorAll('details.slice').forEach(function(x){var f=+x.dataset.fromS,t=+x.dataset.toS;x.open=d.from_s!=null&&f<d.to_s&&t>d.from_s;});});</script>"#;

/// The top frames of each kind (the nodes merged, the measured phase), for the Markdown report.
pub fn markdown_section(run: &RunView) -> String {
    let window = measured_window(run);
    let mut s = String::new();
    let clients = run.profiles.iter().filter(|p| is_client(p)).cloned();
    for merged in merged_by_kind(&run.profiles).into_iter().chain(clients) {
        let folded = merged.folded(window);
        let total: u64 = folded.values().sum();
        if total == 0 {
            continue;
        }
        let samples = merged.sample_count(window);
        let _ = writeln!(
            s,
            "\n**{} ({}, {} {}; {})** — top frames by self weight, with 95% intervals:\n",
            merged.kind.title(),
            merged.node,
            total,
            merged.kind.unit(),
            share::caption(samples, merged.kind == ProfileKind::Cpu)
        );
        s.push_str("| frame | self % | total % |\n|---|--:|--:|\n");
        for f in top_frames(&folded, 10) {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} |",
                f.frame.replace('|', "\\|"),
                share::share(f.self_weight as f64, total as f64, samples).percent(),
                share::share(f.total_weight as f64, total as f64, samples).percent()
            );
        }
    }
    s
}

/// The run's profiles over its measured phase as folded stacks, per node and merged, for the
/// JSON report.
pub fn json_value(run: &RunView) -> serde_json::Value {
    let window = measured_window(run);
    let mut all: Vec<&Profile> = run.profiles.iter().collect();
    let merged = merged_by_kind(&run.profiles);
    if run.profiles.iter().filter(|p| !is_client(p)).map(|p| &p.node).collect::<std::collections::BTreeSet<_>>().len() > 1 {
        all.extend(merged.iter());
    }
    serde_json::Value::Array(
        all.into_iter()
            .map(|p| {
                serde_json::json!({
                    "node": p.node, "kind": p.kind.as_str(), "unit": p.kind.unit(), "source": p.source,
                    "window_ms": window.map(|w| [w.from_ms, w.to_ms]), "samples": p.sample_count(window),
                    "folded": p.folded(window),
                })
            })
            .collect(),
    )
}

/// A saved run's measured phase on its clock and the operations completed in it.
pub fn measured_of(store: &Store, run: RunId) -> Result<(Option<Window>, u64), StoreError> {
    let (mut from, mut to, mut ops) = (u64::MAX, 0u64, 0u64);
    store.for_each_interval_figures(run, |f| {
        if f.phase == Phase::Run {
            (from, to, ops) = (from.min(f.start_ms), to.max(f.end_ms), ops + f.summary.ok);
        }
        Ok(())
    })?;
    Ok(((from < to).then_some(Window { from_ms: from as i64, to_ms: to as i64 }), ops))
}

/// One side of a difference: the profiles of its runs over their measured phases, the nodes
/// and runs merged per kind, and the operations they completed.
#[derive(Debug, Clone, Default)]
pub struct SideProfile {
    pub label: String,
    pub folded: BTreeMap<ProfileKind, BTreeMap<String, u64>>,
    /// The samples behind each kind's weights.
    pub samples: BTreeMap<ProfileKind, u64>,
    pub ops: f64,
}

impl SideProfile {
    /// The side of `runs` as saved; `None` when none of them was profiled.
    pub fn of_runs(store: &Store, label: &str, runs: &[RunId]) -> Result<Option<SideProfile>, StoreError> {
        let mut side = SideProfile { label: label.to_string(), ..Default::default() };
        for &run in runs {
            let profiles = store.profiles(run)?;
            if profiles.is_empty() {
                continue;
            }
            let (window, ops) = measured_of(store, run)?;
            side.ops += ops as f64;
            for p in profiles.iter().filter(|p| !is_client(p)) {
                *side.samples.entry(p.kind).or_default() += p.sample_count(window);
                let into = side.folded.entry(p.kind).or_default();
                for (stack, w) in p.folded(window) {
                    *into.entry(stack).or_default() += w;
                }
            }
        }
        Ok((!side.folded.is_empty()).then_some(side))
    }
}

/// The differential flame graphs of `after` against `before` (per kind both have), with the
/// frames that grew and shrank per operation beyond their 95 % intervals (a frame whose interval
/// holds no change is neither), each side's sample count, and a warning when a side is too thin
/// to read; empty when they share no kind.
pub fn diff_html(before: &SideProfile, after: &SideProfile) -> String {
    let mut s = String::new();
    for (kind, b) in &before.folded {
        let Some(a) = after.folded.get(kind) else { continue };
        let Some(d) = ProfileDiff::per_op(b, before.ops, a, after.ops) else { continue };
        let (nb, na) = (before.samples.get(kind).copied().unwrap_or(0), after.samples.get(kind).copied().unwrap_or(0));
        let thin = share::is_thin(nb) || share::is_thin(na);
        let title = format!("{}: {} against {}, per operation", kind.title(), after.label, before.label);
        let subtitle = if thin {
            format!("{nb} against {na} samples: too thin to read (fewer than {} a side); colours are not findings", share::MIN_SAMPLES)
        } else {
            format!("{nb} against {na} samples; red: more per operation, blue: less; only the frames named above the graph changed beyond their 95% intervals")
        };
        let Some(svg) = diff_svg(&d, &title, *kind, &subtitle) else { continue };
        let (tb, ta) = d.totals_per_op();
        let _ = write!(
            s,
            r#"<div class="flame-diff" data-kind="{}"><h3>{}</h3><p class="note">{} per operation: {} {:.3}, {} {:.3} ({:+.1}%); {}.</p>"#,
            kind.as_str(),
            esc(&title),
            kind.unit(),
            esc(&before.label),
            tb,
            esc(&after.label),
            ta,
            if tb > 0.0 { 100.0 * (ta - tb) / tb } else { 0.0 },
            esc(&subtitle)
        );
        let (grew, shrank) = found_changes(&d, nb, na, 5);
        for (what, list) in [("grew", grew), ("shrank", shrank)] {
            let items: Vec<String> = list.iter().map(|(f, c)| format!("{} {}", short(f), c.percent())).collect();
            let text = if items.is_empty() { "none beyond its 95% interval".to_string() } else { items.join(" · ") };
            let _ =
                write!(s, r#"<p class="note">{what} (change per operation as a share of {}'s total, 95% interval): {}</p>"#, esc(&before.label), esc(&text));
        }
        frame(&mut s, &svg, &title);
        s.push_str("</div>");
    }
    if s.is_empty() {
        return s;
    }
    format!(r#"<section class="card profiles"><h2>Where the time moved</h2>{s}</section>"#)
}

/// A frame and its change per operation.
pub type FoundChange = (String, share::Change);

/// The frames whose change per operation is found (its 95 % interval excludes none): the `n`
/// that grew most and the `n` that shrank most, with their changes.
pub fn found_changes(d: &ProfileDiff, n_before: u64, n_after: u64, n: usize) -> (Vec<FoundChange>, Vec<FoundChange>) {
    let (tb, ta) = d.totals_per_op();
    let (grew, shrank) = d.changes(usize::MAX);
    let judged = |list: Vec<crate::profile::diff::FrameChange>| -> Vec<FoundChange> {
        list.into_iter()
            .map(|c| {
                let (pb, pa) = (if tb > 0.0 { c.before_per_op / tb } else { 0.0 }, if ta > 0.0 { c.after_per_op / ta } else { 0.0 });
                let change = share::change(pb, n_before, tb, pa, n_after, ta);
                (c.frame, change)
            })
            .filter(|(_, c)| c.is_found())
            .take(n)
            .collect()
    };
    (judged(grew), judged(shrank))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ProfileBuilder;

    fn folded(lines: &[(&str, u64)]) -> BTreeMap<String, u64> {
        lines.iter().map(|(s, w)| (s.to_string(), *w)).collect()
    }

    #[test]
    fn flame_graphs_are_inferno_svgs_with_their_frames_and_search() {
        let f = folded(&[
            ("io.netty.Loop.run;org.apache.cassandra.transport.Dispatcher.processRequest;org.apache.cassandra.db.ReadCommand.executeLocally", 30),
            ("io.netty.Loop.run;java.lang.Thread.sleep", 10),
        ]);
        let svg = svg(&f, "CPU — n1", ProfileKind::Cpu, 40).unwrap();
        assert!(svg.contains("<svg") && svg.contains("org.apache.cassandra.db.ReadCommand.executeLocally"), "frames named");
        assert!(svg.contains("search"), "inferno's search is in the drawing");
        assert!(svg.contains("40 samples: too thin to read"), "a thin graph says so in its drawing");
        assert!(super::svg(&BTreeMap::new(), "x", ProfileKind::Cpu, 0).is_none());
        let mut page = String::new();
        frame(&mut page, &svg, "CPU");
        assert!(page.starts_with("<iframe class=\"flame\"") && page.contains("data:image/svg+xml;base64,"));
        let b64 = page.split("base64,").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(b64).unwrap(), svg.as_bytes());
    }

    #[test]
    fn a_difference_names_only_what_changed_beyond_its_interval() {
        let side = |label: &str, read: u64, gc: u64, ops: f64| SideProfile {
            label: label.into(),
            folded: [(ProfileKind::Cpu, folded(&[("main;read", read), ("main;gc", gc)]))].into(),
            samples: [(ProfileKind::Cpu, read + gc)].into(),
            ops,
        };
        // gc per operation tripled, from 5,000 samples a side: found
        let html = diff_html(&side("G1", 5000, 5000, 1000.0), &side("ZGC", 5000, 15000, 1000.0));
        assert!(html.contains("CPU: ZGC against G1, per operation"), "{html}");
        assert!(html.contains("grew (change per operation") && html.contains("gc +100.0% ("), "{html}");
        assert!(html.contains("(+100.0%)") && html.contains("10000 against 20000 samples"), "the total per operation doubled: {html}");
        // the same change from 60 samples a side: too thin, and nothing named
        let html = diff_html(&side("G1", 20, 10, 1000.0), &side("ZGC", 20, 12, 1000.0));
        assert!(html.contains("30 against 32 samples: too thin to read") && html.contains("none beyond its 95% interval"), "{html}");
        assert!(!html.contains("gc +"), "{html}");
        let none = SideProfile { label: "x".into(), folded: [(ProfileKind::Alloc, folded(&[("a", 1)]))].into(), samples: BTreeMap::new(), ops: 1.0 };
        assert!(diff_html(&side("G1", 1, 1, 1.0), &none).is_empty(), "no kind in common");
    }

    #[test]
    fn the_measured_window_cuts_and_nodes_merge_in_the_markdown_and_json() {
        let mut a = ProfileBuilder::new("n1", ProfileKind::Cpu, "test");
        a.add(&["main", "warm"], Some(500), 50);
        a.add(&["main", "org.apache.cassandra.db.Read"], Some(1500), 30);
        let mut b = ProfileBuilder::new("n2", ProfileKind::Cpu, "test");
        b.add(&["main", "org.apache.cassandra.db.Read"], Some(1700), 10);
        let profiles = vec![a.finish(), b.finish()];
        let merged = merged_by_kind(&profiles);
        assert_eq!((merged.len(), merged[0].node.as_str(), merged[0].total(None)), (1, "all nodes", 90));
        let w = Window { from_ms: 1000, to_ms: 2000 };
        assert_eq!(merged[0].folded(Some(w)).values().sum::<u64>(), 40, "warm-up left out");
    }
}
