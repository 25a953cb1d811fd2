//! What `compare` and `experiment` conclude from saved runs, in one place: the runs screened
//! (an invalid run refused, or left out of its group, unless allowed), the window length
//! chosen from the runs' length when none was given, the [`Study`] of the groups that still
//! have runs, what the servers did in each group, and the gates judged on the study. Returns
//! it all as data ([`Judgement`]); the binary prints it, `report::comparison` words it.
//! `sweep` does the same rate by rate for an experiment with `rates:` and an SLA.

pub mod plan;
pub mod search;
pub mod sweep;
pub mod verdict;

use crate::analysis::recall::{compare_recall, RecallComparison};
use crate::analysis::server_figures::{self, GroupServer};
use crate::analysis::study::{study, Group, Study, StudyError, StudyPlan};
use crate::analysis::verified::{compare_verified, VerifiedComparison};
use crate::analysis::{auto_window_s, check_gates, Gate, GateError, GateReport, MaxRegression};
use crate::stats::Phase;
use crate::store::{RunId, Store, StoreError};
use crate::validity::{self, Refused};

/// The gates a comparison must pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gates {
    /// `--fail-if`: thresholds on the compared sides' figures.
    pub fail_if: Vec<Gate>,
    /// `--max-regression`: the largest significant regression against the baseline.
    pub max_regression: Option<MaxRegression>,
}

impl Gates {
    pub fn any(&self) -> bool {
        !self.fail_if.is_empty() || self.max_regression.is_some()
    }
}

/// What to do with a run that is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screening {
    /// Compare nothing when any run is refused (`compare` of runs named one by one).
    RefuseAll,
    /// Leave refused runs out of their group (an experiment's repetitions).
    LeaveOut,
}

/// How to judge.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeOptions {
    pub plan: StudyPlan,
    /// Choose the window length from the runs' length (no `--window` given).
    pub auto_window: bool,
    /// Use invalid runs anyway (`--allow-invalid`).
    pub allow_invalid: bool,
    pub screening: Screening,
    pub gates: Gates,
}

/// The window length chosen from the runs' length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChosenWindow {
    pub window_s: f64,
    /// The shortest measured run, in seconds (`None` when no run says).
    pub shortest_s: Option<f64>,
    /// Whole windows in the shortest run.
    pub windows: usize,
    pub min_windows: usize,
}

/// The servers' side of a comparison: each group's figures and how their definitions differ.
#[derive(Debug, Clone)]
pub struct ServerSide {
    pub figures: Vec<GroupServer>,
    pub differences: Vec<String>,
}

/// Everything concluded.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// Suspect runs, and invalid ones used because allowed, in words.
    pub warnings: Vec<String>,
    /// Invalid runs not used.
    pub refused: Vec<Refused>,
    pub window: Option<ChosenWindow>,
    /// The groups that kept runs.
    pub groups: Vec<Group>,
    /// `None` when nothing could be compared (a refused run under [`Screening::RefuseAll`], or
    /// fewer than two groups with runs where two were given).
    pub study: Option<Study>,
    pub server: Option<ServerSide>,
    /// The gates, when any were asked for and a study was made.
    pub gates: Option<GateReport>,
}

impl Judgement {
    /// Whether every gate asked for was judged and passed (true without gates). Gates that
    /// could not be judged because nothing was compared fail.
    pub fn gates_passed(&self, gates: &Gates) -> bool {
        match &self.gates {
            Some(r) => r.failures.is_empty(),
            None => !gates.any(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Study(#[from] StudyError),
    #[error(transparent)]
    Gate(#[from] GateError),
}

/// Screens the groups' runs, compares the groups that keep runs (the first is the baseline),
/// reads what the servers did and judges the gates.
pub fn judge(store: &Store, groups: &[Group], o: &JudgeOptions) -> Result<Judgement, JudgeError> {
    let mut j = screen(store, groups, o)?;
    let comparable = match o.screening {
        Screening::RefuseAll => j.refused.is_empty() && !j.groups.is_empty(),
        Screening::LeaveOut => j.groups.len() >= 2,
    };
    if comparable {
        let mut plan = o.plan.clone();
        if let Some(w) = &j.window {
            plan.opts.window_s = w.window_s;
        }
        compare_into(store, &mut j, &plan, &o.gates)?;
    }
    Ok(j)
}

/// The screening alone: the window chosen (with `auto_window`), the runs refused or used
/// with a warning, and the groups with the runs they keep; nothing compared.
pub fn screen(store: &Store, groups: &[Group], o: &JudgeOptions) -> Result<Judgement, JudgeError> {
    let all: Vec<RunId> = groups.iter().flat_map(|g| g.runs.iter().copied()).collect();
    let window = if o.auto_window { chosen_window(store, &all, o.plan.opts.min_windows)? } else { None };
    let screened = validity::screen(store, &all, o.allow_invalid)?;
    let mut j = Judgement { warnings: screened.warnings, refused: screened.refused, window, groups: Vec::new(), study: None, server: None, gates: None };
    j.groups = j.kept(groups);
    Ok(j)
}

impl Judgement {
    /// `groups` without the refused runs, and without the groups left with none.
    pub fn kept(&self, groups: &[Group]) -> Vec<Group> {
        let refused: Vec<RunId> = self.refused.iter().map(|r| r.run).collect();
        groups
            .iter()
            .map(|g| Group { label: g.label.clone(), runs: g.runs.iter().copied().filter(|id| !refused.contains(id)).collect() })
            .filter(|g| !g.runs.is_empty())
            .collect()
    }

    /// The window and confidence the study used (60 s and 95 % when nothing was compared).
    fn window_and_confidence(&self) -> (f64, f64) {
        self.study.as_ref().map_or((60.0, 0.95), |s| (s.plan.opts.window_s, s.plan.opts.confidence))
    }

    /// The verified reads of the judged groups compared, when any side verified reads.
    pub fn verified(&self, store: &Store) -> Result<Option<VerifiedComparison>, StoreError> {
        let (window_s, confidence) = self.window_and_confidence();
        compare_verified(store, &self.groups, window_s, confidence)
    }

    /// The recall of the judged groups' vector searches compared, when any side searched.
    pub fn recall(&self, store: &Store) -> Result<Option<RecallComparison>, StoreError> {
        let (window_s, confidence) = self.window_and_confidence();
        compare_recall(store, &self.groups, window_s, confidence)
    }

    /// A judgement of other groups of the same screened runs (an experiment's rates one by
    /// one): `groups` kept as [`Judgement::kept`] says, compared when two or more remain.
    pub fn of_groups(&self, store: &Store, groups: &[Group], plan: &StudyPlan, gates: &Gates) -> Result<Judgement, JudgeError> {
        let mut j = Judgement { warnings: Vec::new(), refused: Vec::new(), window: None, groups: self.kept(groups), study: None, server: None, gates: None };
        if j.groups.len() >= 2 {
            compare_into(store, &mut j, plan, gates)?;
        }
        Ok(j)
    }
}

/// Compares `j`'s groups, reads the servers' side and judges the gates.
fn compare_into(store: &Store, j: &mut Judgement, plan: &StudyPlan, gates: &Gates) -> Result<(), JudgeError> {
    let s = study(store, &j.groups, plan.clone())?;
    j.server = Some(ServerSide { figures: server_figures::of_groups(store, &j.groups)?, differences: server_figures::differences(store, &j.groups)? });
    if gates.any() {
        j.gates = Some(check_gates(&s, &gates.fail_if, gates.max_regression)?);
    }
    j.study = Some(s);
    Ok(())
}

/// The window length for `ids` from their measured length (see [`auto_window_s`]).
pub fn chosen_window(store: &Store, ids: &[RunId], min_windows: usize) -> Result<Option<ChosenWindow>, StoreError> {
    let Some(first) = ids.first() else { return Ok(None) };
    let mut measured = Vec::new();
    for id in ids {
        let r = store.run(*id)?;
        let phase =
            r.summary.as_ref().and_then(|s| s.phases.iter().find(|p| p.phase == Phase::Run).or_else(|| s.phases.iter().find(|p| p.phase == Phase::Load)));
        if let Some(s) = phase.map(|p| p.duration_s).or(r.config.duration_s) {
            measured.push(s);
        }
    }
    let interval_s = store.run(*first)?.config.interval_ms as f64 / 1000.0;
    let window_s = auto_window_s(&measured, interval_s);
    let shortest = measured.iter().copied().fold(f64::INFINITY, f64::min);
    let shortest_s = shortest.is_finite().then_some(shortest);
    let windows = shortest_s.map_or(0, |s| (s / window_s).floor() as usize);
    Ok(Some(ChosenWindow { window_s, shortest_s, windows, min_windows }))
}
