//! An experiment's plan on the terminal: per judged figure, its spread per block in the pilot,
//! the blocks and minutes it needs for the precision asked for, and the precision it reaches
//! within the budget; then what the experiment as a whole needs.

use super::table::TextTable;
use crate::analysis::approx_duration;
use crate::judge::plan::Plan;

pub fn text(p: &Plan) -> String {
    let t = &p.target;
    let mut table =
        TextTable::new(["judged figure", "spread per block", "blocks for the precision", "minutes", "within the budget"]).indent(2).right([1, 2, 3]);
    for r in &p.rows {
        let (blocks, minutes) = match r.blocks {
            Some(n) => (n.to_string(), format!("{:.0}", n as f64 * p.block_s / 60.0)),
            None => ("out of reach".into(), "—".into()),
        };
        let at = r.at_budget.map_or("—".into(), |a| if a.is_finite() && a < 100.0 { format!("±{:.1}%", a * 100.0) } else { "unbounded".into() });
        table.row([r.figure.clone(), format!("{:.1}%", r.sd_ln * 100.0), blocks, minutes, at]);
    }
    let verdict = match p.blocks() {
        Some(n) => format!(
            "the experiment needs about {n} blocks (≈ {}) for ±{}% on every judged figure, within its budget of {}",
            approx_duration(n as f64 * p.block_s),
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
    format!(
        "\nplan (from a pilot of {} blocks, {:.0} s a block; {} spending, first look after {} blocks):\n{table}{verdict}\n",
        p.pilot_blocks,
        p.block_s,
        t.spending.name(),
        t.first_look
    )
}
