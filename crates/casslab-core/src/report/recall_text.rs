//! The recall of vector searches in words, for every format that shows a run or a comparison:
//! a phase's line (`recall@10: search 0.962 [0.951, 0.971] over 1,234 of 6,000 searches
//! judged; …`, with what the brute force cost), the series of recall per interval of a run's
//! measured phase, and the table of a comparison's recall with each side's change in points.
//! The arithmetic is `recall` (counts) and `analysis::recall` (intervals, changes).

use super::run_view::grouped;
use super::table::TextTable;
use crate::analysis::normal_quantile;
use crate::analysis::recall::{wilson, RecallComparison};
use crate::recall::RecallCounts;
use crate::stats::{is_sub_op, Phase};
use crate::store::{PhaseSummary, RunId, Store, StoreError};
use std::fmt::Write;

/// Intervals' recall per line of the series.
const PER_LINE: usize = 20;

/// Confidence of the interval a run's own recall is shown with.
const CONFIDENCE: f64 = 0.95;

/// `0.962 [0.951, 0.971]`: a recall with its 95 % Wilson interval over its judged searches.
pub fn recall_with_interval(c: &RecallCounts) -> Option<String> {
    let r = c.recall()?;
    let (lo, hi) = wilson(r, c.judged as f64, normal_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0));
    Some(format!("{r:.3} [{lo:.3}, {hi:.3}]"))
}

/// One operation's searches: its recall, how many were judged, and the judge's cost.
pub fn op_words(op: &str, c: &RecallCounts) -> String {
    let searches = c.judged + c.skipped;
    match recall_with_interval(c) {
        Some(r) => {
            let cost = c.cost_ms_per_search().map(|ms| format!(", {ms:.2} ms of CPU a search, {:.1} s in all", c.cost_ns as f64 / 1e9)).unwrap_or_default();
            format!(
                "{op} {r} over {} of {} searches judged (the exact {} nearest of {} vectors by brute force{cost})",
                grouped(c.judged),
                grouped(searches),
                c.k,
                grouped(c.corpus)
            )
        }
        None => format!("{op}: none of {} searches judged", grouped(searches)),
    }
}

/// The phase's `recall@k:` line, when an operation of it searched vectors.
pub fn phase_line(p: &PhaseSummary) -> Option<String> {
    let ops: Vec<(&str, &RecallCounts)> = p.ops.iter().filter_map(|o| o.recall.as_ref().filter(|c| !c.is_empty()).map(|c| (o.op.as_str(), c))).collect();
    let k = ops.iter().map(|(_, c)| c.k).max()?;
    let parts: Vec<String> = ops.iter().map(|(op, c)| op_words(op, c)).collect();
    Some(format!("recall@{k} (95% Wilson intervals): {}", parts.join("; ")))
}

/// The recall of each searching operation interval by interval over the run's measured phase
/// (`-` where no search was judged), 20 to a line, or nothing when the run searched no vectors.
pub fn intervals_text(store: &Store, run: RunId) -> Result<String, StoreError> {
    let mut series: Vec<(String, u32, Vec<Option<f64>>)> = Vec::new();
    let mut rows = Vec::new();
    store.for_each_interval_figures(run, |iv| {
        rows.push(iv);
        Ok(())
    })?;
    let phase = if rows.iter().any(|r| r.phase == Phase::Run) { Phase::Run } else { Phase::Load };
    let indexes: Vec<u32> = {
        let mut v: Vec<u32> = rows.iter().filter(|r| r.phase == phase).map(|r| r.index).collect();
        v.dedup();
        v
    };
    for r in rows.iter().filter(|r| r.phase == phase && !is_sub_op(&r.summary.op)) {
        let Some(c) = r.summary.recall.filter(|c| !c.is_empty()) else { continue };
        let at = indexes.iter().position(|i| *i == r.index).unwrap_or(0);
        let i = match series.iter().position(|(op, ..)| *op == r.summary.op) {
            Some(i) => i,
            None => {
                series.push((r.summary.op.clone(), c.k, vec![None; indexes.len()]));
                series.len() - 1
            }
        };
        series[i].1 = series[i].1.max(c.k);
        series[i].2[at] = c.recall();
    }
    let mut out = String::new();
    for (op, k, values) in series {
        let shown: Vec<String> = values.iter().map(|v| v.map_or("-".to_string(), |r| format!("{r:.2}"))).collect();
        let _ = writeln!(out, "recall@{k} of {op} per interval of the {} phase:", phase.as_str());
        for line in shown.chunks(PER_LINE) {
            let _ = writeln!(out, "  {}", line.join(" "));
        }
    }
    Ok(out)
}

/// A comparison's recall: each side's with its interval, and its change against the first
/// side's in points, judged as one family.
pub fn comparison_text(c: &RecallComparison) -> String {
    let mut t = TextTable::new(["side", "op", "judged", "recall", "interval", "change (points)", "interval", "verdict"]).indent(2).right([2, 3, 5]);
    for (s, ch) in &c.rows {
        let (change, interval, verdict) = match ch {
            Some(x) => (
                format!("{:+.1}", 100.0 * x.diff),
                format!("{:+.1} … {:+.1}", 100.0 * x.low, 100.0 * x.high),
                if x.significant {
                    if x.diff < 0.0 {
                        "lower"
                    } else {
                        "higher"
                    }
                } else {
                    "no difference detected"
                }
                .to_string(),
            ),
            None => ("baseline".into(), String::new(), String::new()),
        };
        t.row([
            s.side.clone(),
            s.op.clone(),
            grouped(s.counts.judged),
            format!("{:.3}", s.recall),
            format!("{:.3} … {:.3}", s.low, s.high),
            change,
            interval,
            verdict,
        ]);
    }
    let k = c.rows.iter().map(|(s, _)| s.counts.k).max().unwrap_or(0);
    format!(
        "\nrecall@{k} of the vector searches, judged ({:.0}% intervals over windows or runs, never narrower than Wilson's over the judged searches; changes in percentage points at {:.1}% each, one family):\n{t}",
        100.0 * c.confidence,
        100.0 * c.each_confidence
    )
}

/// A comparison's recall as one line per side against the baseline (for the page's notes):
/// `lookup vs sai, search: recall@10 0.912 against 0.951, recall lower by 3.9 points (…)`.
pub fn verdict_lines(c: &RecallComparison) -> Vec<String> {
    let base = |op: &str| c.rows.iter().find(|(s, ch)| ch.is_none() && s.op == op).map(|(s, _)| s);
    c.rows
        .iter()
        .filter_map(|(s, ch)| {
            let (ch, b) = (ch.as_ref()?, base(&s.op)?);
            Some(format!(
                "{} vs {}, {}: recall@{} {:.3} against {:.3}, {} (judged at {:.1}%)",
                s.side,
                b.side,
                s.op,
                s.counts.k,
                s.recall,
                b.recall,
                ch.words(),
                100.0 * c.each_confidence
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_says_its_recall_and_what_the_judge_cost() {
        let c = RecallCounts { k: 10, judged: 1_234, hits: 11_871, possible: 12_340, skipped: 4_766, cost_ns: 1_480_000_000, corpus: 20_000 };
        let words = op_words("search", &c);
        assert!(words.starts_with("search 0.962 ["), "{words}");
        assert!(words.contains("over 1,234 of 6,000 searches judged"), "{words}");
        assert!(words.contains("the exact 10 nearest of 20,000 vectors by brute force, 1.20 ms of CPU a search, 1.5 s in all"), "{words}");
        let none = RecallCounts { k: 10, skipped: 3, ..RecallCounts::default() };
        assert_eq!(op_words("search", &none), "search: none of 3 searches judged");
    }
}
