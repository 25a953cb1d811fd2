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
    /// Why it stopped measuring (a sequential experiment's reason, in words by the report).
    pub stop: Option<StopReason>,
    /// A sequential experiment's horizon: the most blocks its budget allowed.
    pub max_blocks: Option<usize>,
    /// The variants ran at the same time: what they shared, in words; `None`: one after the
    /// other.
    pub together: Option<String>,
    /// Why the variants ran one after the other although the design asked for the same time.
    pub not_together: Option<String>,
    /// The look at which the budget ended a sequential experiment (it spent all the error
    /// rate left there).
    pub final_look: Option<usize>,
}

/// Why an experiment stopped measuring.
#[derive(Debug, Clone, PartialEq)]
pub enum StopReason {
    /// Every judged figure settled: a difference found, equivalence, or the precision reached.
    Settled,
    /// The budget would be spent before another block ends; `unsettled`: the judged figures
    /// short of the precision, with their half-widths.
    Budget { unsettled: Vec<String> },
    /// A fixed design's blocks are all done.
    Done,
    /// The user asked to stop.
    Interrupted,
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
    /// How long the experiment took, from its first run to its last, in seconds.
    pub elapsed_s: f64,
    /// A sequential experiment's target (half the width of a judged change's interval).
    pub precision: Option<f64>,
}

impl ExperimentVerdict {
    /// "order (counterbalanced, seed 7): a b b a".
    pub fn order_line(&self) -> String {
        if let Some(words) = &self.runs.together {
            let blocks = self.runs.variants.iter().map(|(_, r)| r.len()).min().unwrap_or(0);
            return format!("design: simultaneous, {blocks} blocks — {words}");
        }
        let ro = &self.runs.run_order;
        let seed = ro.seed.map(|s| format!(", seed {s}")).unwrap_or_default();
        let not_together = self.runs.not_together.as_ref().map(|why| format!(" (one after the other, not at the same time: {why})")).unwrap_or_default();
        format!("order ({}{seed}): {}{not_together}", ro.order.as_str(), self.runs.order.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>().join(" "))
    }

    /// Why it stopped, in words: "every judged figure settled after 12 blocks (8.5 min)".
    pub fn stop_line(&self) -> Option<String> {
        let took = crate::analysis::approx_duration(self.elapsed_s);
        let blocks = self.runs.variants.iter().map(|(_, r)| r.len()).min().unwrap_or(0);
        let of = self.runs.max_blocks.map(|m| format!(" of at most {m}")).unwrap_or_default();
        let precision = self.precision.map(|p| format!("±{:.1}%", p * 100.0)).unwrap_or_default();
        Some(match self.runs.stop.as_ref()? {
            StopReason::Settled => {
                format!("stopped after {blocks} blocks{of} ({took}): every judged figure settled (a difference found, equivalence, or within {precision})")
            }
            StopReason::Budget { unsettled } if unsettled.is_empty() => format!("stopped after {blocks} blocks{of} ({took}): the budget is spent"),
            StopReason::Budget { unsettled } => {
                format!("stopped after {blocks} blocks{of} ({took}): the budget is spent before {precision} was reached for {}", unsettled.join(", "))
            }
            StopReason::Done if self.precision.is_none() => format!("{blocks} blocks ({took})"),
            StopReason::Done => format!("stopped after {blocks} blocks ({took}): the most blocks ran"),
            StopReason::Interrupted => format!("interrupted after {blocks} blocks ({took})"),
        })
    }

    /// The notes of its page, in order: how it was measured, what settling found (each note
    /// once, with how many times), the load point's warning, the runs left out.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!("measured {}; {}", self.order_line(), self.runs.run_order.before())];
        notes.extend(self.stop_line());
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
