//! An experiment's plan on the terminal: per judged figure, its spread per block in the pilot
//! (with the range the true spread lies in, so few blocks tell it only roughly), the blocks
//! and minutes it needs for the precision asked for (with the range that spread's range
//! implies), and the precision it reaches within the budget, both ways; then what the
//! experiment as a whole needs.

use super::table::TextTable;
use crate::analysis::{approx_duration, both_ways};
use crate::judge::plan::{Plan, PRIOR_FACTOR};

pub fn text(p: &Plan) -> String {
    let t = &p.target;
    let mut table = TextTable::new(["judged figure", "spread per block (95% range)", "blocks for the precision (range)", "minutes", "within the budget"])
        .indent(2)
        .right([1, 2, 3]);
    let blocks_text = |b: Option<usize>| b.map_or("out of reach".to_string(), |n| n.to_string());
    for r in &p.rows {
        let (blocks, minutes) = match r.blocks {
            Some(n) => (n.to_string(), format!("{:.0}", n as f64 * p.block_s / 60.0)),
            None => ("out of reach".into(), "—".into()),
        };
        let range = match r.blocks_range {
            (lo, hi) if lo.is_some() || hi.is_some() => format!("{blocks} ({}–{})", blocks_text(lo), blocks_text(hi)),
            _ => blocks,
        };
        let spread = match r.sd_range {
            Some((lo, hi)) => format!("{:.1}% ({:.1}–{:.1}%)", r.sd_ln * 100.0, lo * 100.0, hi * 100.0),
            None => format!("{:.1}%", r.sd_ln * 100.0),
        };
        let at = r.at_budget.map(|h| h.exp() - 1.0).map_or("—".into(), |a| if a.is_finite() && a < 100.0 { both_ways(a) } else { "unbounded".into() });
        table.row([r.figure.clone(), spread, range, minutes, at]);
    }
    let verdict = match p.blocks() {
        Some(n) => format!(
            "the experiment needs about {n} blocks (≈ {}) for ±{}% on every judged figure, within its budget of {}",
            approx_duration(p.setup_s + n as f64 * p.block_s),
            t.precision * 100.0,
            approx_duration(t.budget_s)
        ),
        None => format!(
            "some judged figures cannot reach ±{}% within the budget of {} ({} blocks): judge fewer figures (--judge), raise --budget or --precision, or use longer runs",
            t.precision * 100.0,
            approx_duration(t.budget_s),
            p.max_blocks
        ),
    };
    let df = p.rows.iter().map(|r| r.df).fold(f64::INFINITY, f64::min);
    let rough = if df.is_finite() && df < 10.0 {
        format!(
            "the spreads come from {} blocks ({df:.0} degrees of freedom), so the blocks needed are known only within the ranges shown (95%); a plan from a longer execution of the experiment (`--plan` reads the last one in the store) narrows them\n",
            p.pilot_blocks
        )
    } else {
        String::new()
    };
    let setup = if p.setup_s >= 1.0 { format!(" after {} of loading, settling and the unmeasured round", approx_duration(p.setup_s)) } else { String::new() };
    if p.pilot_blocks == 0 {
        return format!(
            "\nplan (nothing run: no execution of this experiment to learn from, so each spread per block is assumed as measured with one local node on an idle 2-core machine, and may be {}× smaller or larger on yours; about {:.0} s a block, loads not counted; {} blocks fit the budget{setup}; {} spending, first look after {} blocks):\n{table}{verdict}\nthe ranges are the blocks needed were a spread {}× smaller or larger; `--plan --pilot` measures the spreads in a pilot of a few blocks, and `--plan` after an execution reads them from it\n",
            PRIOR_FACTOR,
            p.block_s,
            p.max_blocks,
            t.spending.name(),
            t.first_look,
            PRIOR_FACTOR
        );
    }
    format!(
        "\nplan (from {} measured blocks, {:.0} s a block; {} blocks fit the budget{setup}; {} spending, first look after {} blocks):\n{table}{verdict}\n{rough}",
        p.pilot_blocks,
        p.block_s,
        p.max_blocks,
        t.spending.name(),
        t.first_look
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sequential::Spending;
    use crate::judge::plan::{PlanRow, SequentialPlan};

    #[test]
    fn a_plan_gives_ranges_and_the_precision_both_ways() {
        let target = SequentialPlan { precision: 0.05, budget_s: 1200.0, spending: Spending::OBrienFleming, first_look: 4 };
        let row = PlanRow {
            figure: "b: read p99".into(),
            sd_ln: 0.10,
            df: 3.0,
            sd_range: Some((0.0567, 0.373)),
            blocks: Some(18),
            blocks_range: (Some(7), None),
            at_budget: Some(1.98f64.ln()),
        };
        let p = Plan { target, pilot_blocks: 4, block_s: 30.0, setup_s: 120.0, max_blocks: 36, rows: vec![row] };
        let text = text(&p);
        assert!(text.contains("36 blocks fit the budget after 2 min of loading, settling and the unmeasured round"), "{text}");
        assert!(text.contains("10.0% (5.7–37.3%)"), "{text}");
        assert!(text.contains("18 (7–out of reach)"), "{text}");
        // +98% upwards is -49% downwards, not ±98%
        assert!(text.contains("-49%/+98%"), "{text}");
        assert!(text.contains("the spreads come from 4 blocks (3 degrees of freedom)"), "{text}");
        assert!(text.contains("about 18 blocks (≈ 11 min)"), "{text}");
    }

    #[test]
    fn a_plan_from_assumed_spreads_says_nothing_ran_and_how_far_they_may_be_off() {
        use crate::analysis::Metric;
        use crate::judge::plan::{plan_from_prior, PriorBlocks};
        let target = SequentialPlan { precision: 0.10, budget_s: 1200.0, spending: Spending::OBrienFleming, first_look: 4 };
        let p = plan_from_prior(&[("b: read p50".into(), Metric::P50)], PriorBlocks { block_s: 15.0, setup_s: 15.0, simultaneous: true }, 1, 0.95, target);
        let text = text(&p);
        assert!(text.contains("nothing run") && text.contains("3× smaller or larger") && text.contains("--plan --pilot"), "{text}");
        assert!(text.contains("1.5% (0.5–4.5%)"), "the assumed spread and its range: {text}");
    }
}
