//! What an experiment concluded: the runs it made (per variant, the unmeasured round, the
//! loads before settling, the measured order), what settling found, the warning about an
//! undeclared load point, and the [`Judgement`] of its variants (with `rates:`, the [`Sweep`]
//! too). `session::experiment` makes it; `report::experiment_text` words it.

use super::sweep::Sweep;
use super::Judgement;
use crate::experiment::RunOrder;
use crate::store::RunId;

/// The runs an experiment made.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentRuns {
    /// Measured runs per variant in the file's order (the first is the baseline).
    pub variants: Vec<(String, Vec<RunId>)>,
    /// The unmeasured round, and the loads made before settling.
    pub unmeasured: Vec<RunId>,
    pub loads: Vec<RunId>,
    /// The measured runs in the order they ran: (variant, repetition).
    pub order: Vec<(String, u32)>,
    /// The order settings used (a shuffle's seed filled in).
    pub run_order: RunOrder,
    /// What settling found, for the record.
    pub notes: Vec<String>,
    /// The user stopped it; the runs so far are saved.
    pub interrupted: bool,
}

/// An experiment from its runs to its verdicts.
#[derive(Debug, Clone)]
pub struct ExperimentVerdict {
    pub name: String,
    pub description: String,
    pub experiment_id: String,
    pub runs: ExperimentRuns,
    /// The experiment declares no load point (in words), when so.
    pub load_point: Option<String>,
    pub judgement: Judgement,
    pub sweep: Option<Sweep>,
}

impl ExperimentVerdict {
    /// "order (counterbalanced, seed 7): a b b a".
    pub fn order_line(&self) -> String {
        let ro = &self.runs.run_order;
        let seed = ro.seed.map(|s| format!(", seed {s}")).unwrap_or_default();
        format!("order ({}{seed}): {}", ro.order.as_str(), self.runs.order.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>().join(" "))
    }

    /// The notes of its page, in order: how it was measured, what settling found (each note
    /// once, with how many times), the load point's warning, the runs left out.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!("measured {}; {}", self.order_line(), self.runs.run_order.before())];
        for n in &self.runs.notes {
            let times = self.runs.notes.iter().filter(|m| *m == n).count();
            let line = if times > 1 { format!("{n} ({times} times)") } else { n.clone() };
            if !notes.contains(&line) {
                notes.push(line);
            }
        }
        notes.extend(self.load_point.iter().map(|w| format!("warning: {w}")));
        notes.extend(self.judgement.refused.iter().map(|r| format!("left out of the comparison: {r}")));
        notes
    }
}
