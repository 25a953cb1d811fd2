//! The HTML page of an experiment (`casslab experiment FILE -o page.html`): one
//! self-contained page (inline CSS and SVG, no script, nothing fetched) with the experiment's
//! name and description, the runs of each variant, how the figures were computed and what to
//! beware of (the order the runs went in, settling, repetitions that disagree with their
//! variant, saturated runs, figures left out), per operation a bar chart of throughput and one
//! of latency percentiles (one bar per variant, the interval as a whisker, the baseline
//! outlined), each variant's p99 per interval on one time axis, and the verdicts in words. It
//! takes figures already computed by the comparison; only `with_profiles` and
//! `with_timelines` read the store (profiles, intervals), and nothing here decides where the
//! page goes.

use super::html_charts::color;
use super::svg_chart::{esc, Bar, BarChart, BarSeries};
use crate::analysis::study::Study;
use crate::analysis::{Estimate, Metric};
use std::fmt::Write;

/// A variant and the ids of its runs; the first variant is the baseline.
#[derive(Debug, Clone)]
pub struct VariantRuns {
    pub name: String,
    pub runs: Vec<String>,
}

/// One operation: per metric, one estimate per variant (`None` where it has none).
#[derive(Debug, Clone)]
pub struct OpFigures {
    pub name: String,
    pub metrics: Vec<(Metric, Vec<Option<Estimate>>)>,
}

/// Everything the page shows.
#[derive(Debug, Clone)]
pub struct ExperimentPage {
    pub name: String,
    pub description: String,
    pub experiment_id: String,
    /// How the figures were computed, in one line (windows, resamples, confidence).
    pub method: String,
    pub variants: Vec<VariantRuns>,
    pub ops: Vec<OpFigures>,
    /// How it was run and computed, and what to beware of, one sentence each.
    pub notes: Vec<String>,
    /// Per compared variant: ("B against A", verdict sentences).
    pub verdicts: Vec<(String, Vec<String>)>,
    /// Where the servers' time moved from the baseline to each variant, when the runs were
    /// profiled: `flame::diff_html` of each ([`ExperimentPage::with_profiles`]).
    pub profiles_html: String,
    /// Per operation, each variant's p99 per interval on one time axis
    /// ([`ExperimentPage::with_timelines`]), in the order of `ops`.
    pub timelines: Vec<(String, super::timeline_svg::TimelineChart)>,
}

/// The metrics of the throughput chart and of the latency chart.
const GROUPS: [(&str, &str, &[Metric]); 2] = [("throughput", "ops/s", &[Metric::OpsPerS]), ("latency", "ms", &[Metric::P50, Metric::P99])];

impl ExperimentPage {
    /// The page of an experiment's study: its sides are the variants, in the file's order.
    pub fn of_study(name: &str, description: &str, experiment_id: &str, a: &Study) -> ExperimentPage {
        let o = &a.plan.opts;
        let method = format!(
            "windows of {} s, {} resamples, {}% intervals; {}; baseline: {}",
            o.window_s,
            o.resamples,
            o.confidence * 100.0,
            super::comparison::latency_kind(a.plan.kind),
            a.sides[0].label
        );
        let variants = a.sides.iter().map(|s| VariantRuns { name: s.label.clone(), runs: s.runs.iter().map(|i| format!("run {i}")).collect() }).collect();
        let ops = a
            .ops
            .iter()
            .enumerate()
            .map(|(oi, op)| OpFigures {
                name: op.name().to_string(),
                metrics: Metric::ALL.iter().map(|&m| (m, a.sides.iter().map(|s| s.figures[oi].as_ref().and_then(|f| f.estimate(m))).collect())).collect(),
            })
            .collect();
        let mut notes = super::comparison::method_lines(a);
        notes.extend(a.disagreements.iter().map(|d| super::comparison::disagreement(a, d)));
        notes.extend(super::comparison::warnings(a).into_iter().map(|w| format!("warning: {w}")));
        ExperimentPage {
            name: name.to_string(),
            description: description.to_string(),
            experiment_id: experiment_id.to_string(),
            method,
            variants,
            ops,
            notes,
            verdicts: super::comparison::verdict_lines(a),
            profiles_html: String::new(),
            timelines: Vec::new(),
        }
    }

    /// The page with each variant's p99 per measured interval of every operation, on one
    /// axis of wall-clock time: variants measured at the same time show side by side, in
    /// turns they take turns.
    pub fn with_timelines(mut self, store: &crate::store::Store, a: &Study) -> Result<ExperimentPage, crate::store::StoreError> {
        use super::timeline_svg::{Line, TimelineChart};
        use std::collections::BTreeMap;
        // per operation, per side: (wall-clock seconds at the interval's end, p99 in ms)
        let mut per_op: BTreeMap<String, Vec<Vec<(f64, f64)>>> = BTreeMap::new();
        let mut first_s = f64::INFINITY;
        for (si, side) in a.sides.iter().enumerate() {
            for run in &side.runs {
                let t0_ms = store.run(*run)?.env.clock_t0_unix_ms.unwrap_or(0) as f64;
                store.for_each_interval_figures(*run, |f| {
                    if f.phase == crate::stats::Phase::Run && f.summary.latency.count > 0 {
                        let t = (t0_ms + f.end_ms as f64) / 1000.0;
                        first_s = first_s.min(t);
                        let lines = per_op.entry(f.op().to_string()).or_insert_with(|| vec![Vec::new(); a.sides.len()]);
                        lines[si].push((t, f.summary.latency.p99_ns as f64 / 1e6));
                    }
                    Ok(())
                })?;
            }
        }
        for op in &self.ops {
            let Some(lines) = per_op.remove(&op.name) else { continue };
            let lines = lines
                .into_iter()
                .enumerate()
                .map(|(si, points)| Line {
                    name: a.sides[si].label.clone(),
                    color: color(si).to_string(),
                    points: points.into_iter().map(|(t, v)| (t - first_s, v)).collect(),
                })
                .collect();
            let chart = TimelineChart { title: format!("{} p99 per interval, every variant on one time axis (ms)", op.name), y_label: "ms".into(), lines };
            self.timelines.push((op.name.clone(), chart));
        }
        Ok(self)
    }

    /// The page with the differential flame graphs of each variant against the baseline, from
    /// the profiles saved with their runs (nothing when they were not profiled).
    pub fn with_profiles(mut self, store: &crate::store::Store, a: &Study) -> Result<ExperimentPage, crate::store::StoreError> {
        let mut sides = Vec::with_capacity(a.sides.len());
        for side in &a.sides {
            sides.push(super::flame::SideProfile::of_runs(store, &side.label, &side.runs)?);
        }
        if let Some(Some(base)) = sides.first() {
            for other in sides.iter().skip(1).flatten() {
                self.profiles_html.push_str(&super::flame::diff_html(base, other));
            }
        }
        Ok(self)
    }

    /// The page as one HTML document.
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(32 * 1024);
        // a comparison of plain runs (`compare -o`) has no experiment id
        let (kind, id) = match self.experiment_id.as_str() {
            "" => ("comparison", "the runs compared"),
            id => ("experiment", id),
        };
        super::html::page_head(&mut s, &format!("{kind} {}", self.name), EXTRA_CSS);
        let _ = write!(
            s,
            r#"<header class="top"><div class="brand">casslab {kind}</div><h1>{}</h1></header><main><section class="card"><h2>{}</h2>"#,
            esc(&self.name),
            esc(id)
        );
        if !self.description.trim().is_empty() {
            let _ = write!(s, r#"<p class="description">{}</p>"#, esc(self.description.trim()));
        }
        let _ = write!(s, r#"<p class="method">{}</p><table class="runs"><thead><tr><th>variant</th><th>runs</th></tr></thead><tbody>"#, esc(&self.method));
        for (i, v) in self.variants.iter().enumerate() {
            let _ = write!(
                s,
                r#"<tr><td><span class="swatch" style="background:{}"></span>{}{}</td><td>{}</td></tr>"#,
                color(i),
                esc(&v.name),
                if i == 0 { " <em>(baseline)</em>" } else { "" },
                esc(&v.runs.join(", "))
            );
        }
        s.push_str("</tbody></table>");
        if !self.notes.is_empty() {
            s.push_str(r#"<ul class="notes">"#);
            for n in &self.notes {
                let class = if n.starts_with("warning: ") || n.contains(" disagrees with ") { r#" class="warn""# } else { "" };
                let _ = write!(s, "<li{class}>{}</li>", esc(n));
            }
            s.push_str("</ul>");
        }
        s.push_str("</section>");
        for (oi, op) in self.ops.iter().enumerate() {
            let _ = write!(s, r#"<section class="card"><h2>{}</h2><div class="charts">"#, esc(&op.name));
            for (key, unit, metrics) in GROUPS {
                let chosen: Vec<&(Metric, Vec<Option<Estimate>>)> = metrics.iter().filter_map(|m| op.metrics.iter().find(|(x, _)| x == m)).collect();
                if chosen.is_empty() {
                    continue;
                }
                let series = self
                    .variants
                    .iter()
                    .enumerate()
                    .map(|(vi, v)| BarSeries {
                        name: v.name.clone(),
                        color: color(vi).to_string(),
                        baseline: vi == 0,
                        bars: chosen
                            .iter()
                            .map(|(_, per_variant)| {
                                per_variant.get(vi).copied().flatten().map(|e| {
                                    let scale = if unit == "ms" { 1e-6 } else { 1.0 };
                                    Bar { value: e.point * scale, lo: e.lo * scale, hi: e.hi * scale }
                                })
                            })
                            .collect(),
                    })
                    .collect();
                let chart = BarChart {
                    id: format!("op{oi}-{key}"),
                    title: format!("{} {key} ({unit})", op.name),
                    y_label: unit.to_string(),
                    groups: chosen.iter().map(|(m, _)| m.label().to_string()).collect(),
                    series,
                };
                s.push_str(&chart.to_html());
            }
            if let Some((_, t)) = self.timelines.iter().find(|(name, _)| *name == op.name) {
                s.push_str(&t.to_html());
            }
            s.push_str("</div></section>");
        }
        if !self.verdicts.is_empty() {
            s.push_str(r#"<section class="card verdicts"><h2>Verdicts</h2>"#);
            for (heading, lines) in &self.verdicts {
                let _ = write!(s, "<h3>{}</h3><ul>", esc(heading));
                for l in lines {
                    let _ = write!(s, "<li>{}</li>", esc(l));
                }
                s.push_str("</ul>");
            }
            s.push_str("</section>");
        }
        s.push_str(&self.profiles_html);
        let _ = write!(
            s,
            r#"</main><footer>Generated by casslab {}. Bars are point estimates; whiskers are their confidence intervals (with several repetitions, over the repetitions: see the method above). The baseline is outlined.</footer></body></html>"#,
            env!("CARGO_PKG_VERSION")
        );
        s.push('\n');
        s
    }
}

const EXTRA_CSS: &str = r#"
figure.chart .legend svg{display:inline-block;width:auto}
svg rect.bar{shape-rendering:crispEdges}
svg path.whisker{stroke:#1f2328;stroke-width:1.4;fill:none}
svg text.value{font-size:10.5px;fill:#444c56}
p.description{margin:0 0 8px}
p.method{margin:0 0 10px;color:var(--muted);font-size:13px}
table.runs{border-collapse:collapse;font-size:13px}
table.runs td,table.runs th{padding:3px 14px 3px 0;text-align:left;border-bottom:1px solid var(--line)}
.verdicts ul{margin:4px 0 10px;padding-left:20px}
.verdicts h3{border-top:none;padding-top:0;margin-top:10px}
ul.notes{margin:10px 0 0;padding-left:20px;font-size:13px;color:var(--muted)}
ul.notes li.warn{color:#9a6700}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_has_a_chart_per_group_and_the_verdicts() {
        let e = |v: f64| Some(Estimate { point: v, lo: v * 0.9, hi: v * 1.1 });
        let page = ExperimentPage {
            name: "cs".into(),
            description: "compaction <strategies>".into(),
            experiment_id: "cs-1".into(),
            method: "windows of 1 s".into(),
            variants: vec![VariantRuns { name: "a".into(), runs: vec!["1".into(), "3".into()] }, VariantRuns { name: "b".into(), runs: vec!["2".into()] }],
            ops: vec![OpFigures {
                name: "read".into(),
                metrics: vec![(Metric::OpsPerS, vec![e(100.0), e(120.0)]), (Metric::P50, vec![e(1e6), e(2e6)]), (Metric::P99, vec![e(5e6), e(6e6)])],
            }],
            notes: vec!["method: repetitions".into(), "run 1 (a, repetition 1) disagrees with the other repetitions of a: read p50".into()],
            verdicts: vec![("b against a".into(), vec!["read p50 is higher".into()])],
            profiles_html: String::new(),
            timelines: Vec::new(),
        };
        let html = page.render();
        assert!(html.contains("<title>casslab · experiment cs</title>") && html.contains("casslab experiment</div>") && html.contains("<h2>cs-1</h2>"));
        assert_eq!(html.matches("<figure class=\"chart bars\"").count(), 2);
        assert_eq!(html.matches("<rect class=\"bar\"").count(), 2 + 4);
        assert!(html.contains("compaction &lt;strategies&gt;") && html.contains("<li>read p50 is higher</li>") && html.contains("1, 3"));
        assert!(!html.contains("<script"));
        assert!(html.contains(r#"<li class="warn">run 1 (a, repetition 1) disagrees"#) && html.contains("<li>method: repetitions</li>"));
        // plain runs compared (`compare -o`) are no experiment
        let runs = ExperimentPage { name: "runs 12, 15".into(), experiment_id: String::new(), ..page }.render();
        assert!(
            runs.contains("<title>casslab · comparison runs 12, 15</title>") && runs.contains("casslab comparison</div>") && !runs.contains("experiment"),
            "{runs}"
        );
    }
}
