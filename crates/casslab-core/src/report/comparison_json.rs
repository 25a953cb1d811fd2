//! A comparison of saved runs as data (`casslab compare --format json|csv`): one row per side,
//! operation and figure, with its interval and, for every side but the baseline, the change
//! against the baseline with its interval and the outcome. The JSON ([`ComparisonJson`]) wraps
//! the rows with the method, the sides and the verdicts in words (and the verified reads and
//! recall when the runs have them); `report::csv` writes the rows as CSV. It only
//! reshapes a [`Study`]; `report::comparison` is the same study for people.

use super::comparison;
use crate::analysis::study::Study;
use crate::analysis::{Metric, Outcome};
use serde::Serialize;
use serde_json::{json, Value};

pub const FORMAT: &str = "casslab-comparison";
pub const FORMAT_VERSION: u32 = 1;

/// One figure of one side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureRow {
    pub side: String,
    /// `ops_per_s`, or a latency in nanoseconds: `mean_ns`, `p50_ns`, … `p999_ns`,
    /// `p99_typical_ns`.
    pub metric: &'static str,
    pub op: String,
    pub value: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Relative change against the baseline (0.1 = 10% higher) and its interval; `None` on
    /// the baseline and where there is none.
    pub change: Option<f64>,
    pub change_lo: Option<f64>,
    pub change_hi: Option<f64>,
    /// `higher`, `lower`, `equivalent`, `no_difference`, `too_short`, `undefined`,
    /// `not_judged`; `None` on the baseline and for figures left out.
    pub outcome: Option<&'static str>,
    /// The confidence of the change's interval taken alone (above the stated confidence when
    /// several figures are judged together, or at a sequential look).
    pub change_level: Option<f64>,
    /// Whether the figure is judged (else shown with an interval of its own: exploratory).
    pub judged: Option<bool>,
    /// The smallest change detected 80% of the time at this precision, upwards (relative,
    /// e.g. 0.98) and downwards (the same factor: −0.49).
    pub detectable_change: Option<f64>,
    pub detectable_change_down: Option<f64>,
    /// The equivalence margin asked for (relative), when one was, and the interval two
    /// one-sided tests judge equivalence by (at twice the error rate).
    pub equivalence_margin: Option<f64>,
    pub equivalence_lo: Option<f64>,
    pub equivalence_hi: Option<f64>,
    /// With blocks in both orders: what running second in a block does to the figure
    /// (relative), with its interval at the stated confidence.
    pub order_effect: Option<f64>,
    pub order_effect_lo: Option<f64>,
    pub order_effect_hi: Option<f64>,
    /// Blocks compared in pairs, when blocks are the unit.
    pub blocks: Option<usize>,
}

/// The machine name of a figure.
pub fn metric_key(m: Metric) -> &'static str {
    match m {
        Metric::OpsPerS => "ops_per_s",
        Metric::Mean => "mean_ns",
        Metric::P50 => "p50_ns",
        Metric::P95 => "p95_ns",
        Metric::P99 => "p99_ns",
        Metric::P999 => "p999_ns",
        Metric::P99Typical => "p99_typical_ns",
    }
}

fn outcome_key(o: &Outcome) -> &'static str {
    match o {
        Outcome::Higher => "higher",
        Outcome::Lower => "lower",
        Outcome::NoDifference { .. } => "no_difference",
        Outcome::Equivalent => "equivalent",
        Outcome::TooShort => "too_short",
        Outcome::Undefined => "undefined",
        Outcome::NotJudged => "not_judged",
    }
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Every side's figures, side by side, in the order of the terminal table.
pub fn rows(s: &Study) -> Vec<FigureRow> {
    let mut out = Vec::new();
    for (i, side) in s.sides.iter().enumerate() {
        for (o, op) in s.ops.iter().enumerate() {
            let Some(Some(fig)) = side.figures.get(o) else { continue };
            for m in Metric::ALL {
                let e = fig.estimate(m);
                let cmp = if i == 0 { None } else { s.comparisons.get(i - 1).and_then(|c| c.get(o)).and_then(|c| c.get(m.index())).cloned().flatten() };
                let change = cmp.as_ref().and_then(|c| c.change);
                out.push(FigureRow {
                    side: side.label.clone(),
                    metric: metric_key(m),
                    op: op.name().to_string(),
                    value: e.and_then(|e| finite(e.point)),
                    lo: e.filter(|e| e.has_interval()).and_then(|e| finite(e.lo)),
                    hi: e.filter(|e| e.has_interval()).and_then(|e| finite(e.hi)),
                    change: change.and_then(|c| finite(c.point)),
                    change_lo: change.and_then(|c| finite(c.lo)),
                    change_hi: change.and_then(|c| finite(c.hi)),
                    outcome: cmp.as_ref().map(|c| outcome_key(&c.outcome)),
                    change_level: cmp.as_ref().filter(|c| c.change.is_some()).map(|c| c.look.map_or(c.level(), |l| l.nominal)),
                    judged: cmp.as_ref().map(|c| !c.exploratory && c.outcome != Outcome::NotJudged),
                    detectable_change: cmp.as_ref().and_then(|c| c.mde).and_then(finite),
                    detectable_change_down: cmp.as_ref().and_then(|c| c.mde).and_then(finite).map(|m| 1.0 / (1.0 + m) - 1.0),
                    equivalence_margin: cmp.as_ref().and_then(|c| c.margin),
                    equivalence_lo: cmp.as_ref().and_then(|c| c.equivalence).and_then(|e| finite(e.lo)),
                    equivalence_hi: cmp.as_ref().and_then(|c| c.equivalence).and_then(|e| finite(e.hi)),
                    order_effect: cmp.as_ref().and_then(|c| c.order_effect).and_then(|e| finite(e.point)),
                    order_effect_lo: cmp.as_ref().and_then(|c| c.order_effect).and_then(|e| finite(e.lo)),
                    order_effect_hi: cmp.as_ref().and_then(|c| c.order_effect).and_then(|e| finite(e.hi)),
                    blocks: cmp.as_ref().and_then(|c| c.blocks),
                });
            }
        }
    }
    out
}

/// A comparison as pretty-printed JSON ([`comparison_json`]), with the verified reads
/// (`verified`) and the recall of vector searches (`recall`) when the runs have them.
pub struct ComparisonJson;

impl super::format_trait::Format<super::format_trait::ComparisonReport<'_>> for ComparisonJson {
    fn name(&self) -> &'static str {
        "json"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["json"]
    }
    fn render(&self, c: &super::format_trait::ComparisonReport<'_>) -> String {
        let mut v = comparison_json(c.study);
        if let Some(verified) = c.verified {
            v["verified"] = serde_json::to_value(verified).expect("verified reads serialize");
        }
        if let Some(recall) = c.recall {
            v["recall"] = serde_json::to_value(recall).expect("recall serializes");
        }
        format!("{}\n", serde_json::to_string_pretty(&v).expect("a JSON value always serializes"))
    }
}

/// The comparison as one JSON value.
pub fn comparison_json(s: &Study) -> Value {
    json!({
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "confidence": s.plan.opts.confidence,
        "family": s.plan.family.key(),
        "window_s": s.plan.opts.window_s,
        "latency": comparison::latency_kind(s.plan.kind),
        // how the runs were placed in time: "simultaneous" (the variants at the same time),
        // "blocks" (one after the other, paired by block) or "runs" (not in blocks)
        "design": match s.plan.blocks {
            Some(b) if b.simultaneous => "simultaneous",
            Some(_) => "blocks",
            None => "runs",
        },
        "method": comparison::method_lines(s),
        "sides": s.sides.iter().map(|side| json!({ "label": side.label, "runs": side.runs, "about": side.about })).collect::<Vec<_>>(),
        "figures": rows(s),
        "verdicts": comparison::verdict_lines(s).into_iter().map(|(pair, sentences)| json!({ "pair": pair, "sentences": sentences })).collect::<Vec<_>>(),
        "warnings": comparison::warnings(s),
    })
}
