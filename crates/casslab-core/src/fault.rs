//! Whose fault an error of casslab-core is, read from the error itself: the input's (a flag's
//! value, a workload file, a run id, a name: the user fixes it), the setup's (the cluster cannot
//! be reached, a schema is rejected, a node does not start), or neither (casslab's own, or the
//! machine's: a disk that fails, a worker that died). The binary turns each into its exit code.
//! Errors that hold another error they do not give as their source (a session's engine error, a
//! cluster control's) are looked into here; an error of a crate above this one (the local
//! cluster's) is classed by the `other` function the caller passes.

use crate::analysis::saved_experiment::SavedExperimentError;
use crate::analysis::study::StudyError;
use crate::analysis::{AnalysisError, GateError};
use crate::cluster::ControlError;
use crate::engine::EngineError;
use crate::flag_values::FlagError;
use crate::judge::sweep::SweepError;
use crate::judge::JudgeError;
use crate::merge::{GatherError, MergeError};
use crate::report::json::ExportError;
use crate::session::conduct::{ExperimentError, VariantError};
use crate::session::findmax::{FindMaxError, SlaError};
use crate::session::verify_pass::PassError;
use crate::session::{EventCheckError, SessionError};
use crate::store::StoreError;
use crate::workload::WorkloadError;
use std::error::Error;

/// Whose fault an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// What the user gave: a flag's value, a file, a run id, a name.
    Input,
    /// The cluster or its setup.
    Setup,
    /// Neither: casslab's own, or the machine's.
    Other,
}

/// Classes an error of a crate above this one (`None`: not one it knows).
pub type Other<'a> = &'a dyn Fn(&(dyn Error + 'static)) -> Option<Fault>;

/// The fault of `e` if it is an error of casslab-core (or one `other` knows); `None` otherwise,
/// or when the error itself does not say (its source may).
pub fn fault_of(e: &(dyn Error + 'static), other: Other) -> Option<Fault> {
    if let Some(f) = other(e) {
        return Some(f);
    }
    if let Some(c) = e.downcast_ref::<ControlError>() {
        return fault_of(&*c.0, other);
    }
    if e.is::<WorkloadError>()
        || e.is::<GateError>()
        || e.is::<AnalysisError>()
        || e.is::<SlaError>()
        || e.is::<EventCheckError>()
        || e.is::<MergeError>()
        || e.is::<ExportError>()
        || e.is::<FlagError>()
    {
        return Some(Fault::Input);
    }
    if let Some(e) = e.downcast_ref::<GatherError>() {
        return match e {
            GatherError::Store(e) => store(e),
            _ => Some(Fault::Input),
        };
    }
    if let Some(e) = e.downcast_ref::<SessionError>() {
        return session(e, other);
    }
    if let Some(e) = e.downcast_ref::<PassError>() {
        return match e {
            PassError::Unknown { .. } => Some(Fault::Input),
            PassError::Session(e) => session(e, other),
        };
    }
    if let Some(e) = e.downcast_ref::<FindMaxError>() {
        return match e {
            FindMaxError::Sla(_) => Some(Fault::Input),
            FindMaxError::Session(e) => session(e, other),
            FindMaxError::Results(e) => store(e),
        };
    }
    if let Some(e) = e.downcast_ref::<VariantError>() {
        return session(&e.error, other);
    }
    if let Some(e) = e.downcast_ref::<StudyError>() {
        return study(e);
    }
    if let Some(e) = e.downcast_ref::<SavedExperimentError>() {
        return match e {
            SavedExperimentError::Store(e) => store(e),
            _ => None,
        };
    }
    if let Some(e) = e.downcast_ref::<JudgeError>() {
        return judge(e);
    }
    if let Some(e) = e.downcast_ref::<ExperimentError>() {
        return match e {
            ExperimentError::Judge(e) => judge(e),
            ExperimentError::Sweep(SweepError::Sla(_)) => Some(Fault::Input),
            ExperimentError::Sweep(SweepError::Study(e)) => study(e),
            ExperimentError::Variant(e) => session(&e.error, other),
        };
    }
    if let Some(e) = e.downcast_ref::<StoreError>() {
        return store(e);
    }
    e.downcast_ref::<EngineError>().map(engine)
}

fn store(e: &StoreError) -> Option<Fault> {
    match e {
        StoreError::Missing { .. }
        | StoreError::NotOurs { .. }
        | StoreError::NoSuchRun(_)
        | StoreError::StillRunning(_)
        | StoreError::UnsupportedSchema { .. } => Some(Fault::Input),
        _ => None,
    }
}

fn judge(e: &JudgeError) -> Option<Fault> {
    match e {
        JudgeError::Gate(_) => Some(Fault::Input),
        JudgeError::Store(e) => store(e),
        JudgeError::Study(e) => study(e),
    }
}

fn study(e: &StudyError) -> Option<Fault> {
    match e {
        StudyError::Store(e) => store(e),
        StudyError::Run { .. } | StudyError::Analysis(_) => Some(Fault::Input),
    }
}

fn session(e: &SessionError, other: Other) -> Option<Fault> {
    match e {
        SessionError::Engine(e) => Some(engine(e)),
        SessionError::NeedsLocalCluster(_) | SessionError::Sla(_) => Some(Fault::Input),
        SessionError::Server { error, .. } => fault_of(&*error.0, other),
        SessionError::Results(e) | SessionError::Unsaved { error: e, .. } => store(e),
        SessionError::Task(_) => None,
    }
}

/// Setup failures of a run, except for mistakes in the workload or the flags that preparing
/// found. (Errors that wrap an `EngineError` transparently hide it from the chain: their arm
/// calls this.)
fn engine(e: &EngineError) -> Fault {
    match e {
        EngineError::Workload(_) | EngineError::TypeMismatch { .. } | EngineError::NotOurKeyspace(_) | EngineError::NotOurTable { .. } => Fault::Input,
        // casslab's own fault, neither the input's nor the cluster's
        EngineError::WorkerFailed { .. } => Fault::Other,
        _ => Fault::Setup,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(e: impl Error + 'static) -> Option<Fault> {
        fault_of(&e, &|_| None)
    }

    #[test]
    fn core_errors_say_whose_fault_they_are() {
        assert_eq!(fault(StoreError::NoSuchRun(9)), Some(Fault::Input));
        assert_eq!(fault(StoreError::Corrupt { what: "x".into(), detail: "y".into() }), None);
        assert_eq!(fault(AnalysisError::BadWindow(-1.0)), Some(Fault::Input));
        assert_eq!(fault(EngineError::Schema { statement: "CREATE".into(), message: "no".into() }), Some(Fault::Setup));
        assert_eq!(fault(EngineError::WorkerFailed { phase: "run", message: "panicked".into() }), Some(Fault::Other));
        let variant = VariantError { variant: "g1".into(), error: SessionError::NeedsLocalCluster("kv".into()) };
        assert_eq!(fault(ExperimentError::Variant(variant)), Some(Fault::Input));
        assert_eq!(fault(std::io::Error::other("disk full")), None);
    }
}
