//! Exit codes, decided in one place. A command that finishes returns its code ([`Exit`], or a
//! program's own code passed through, as `local nodetool` does); a command that cannot finish
//! returns an error, and [`classify`] reads the error's chain for the first typed error that
//! says which class it is: the binary's own [`UsageError`], or an error type of casslab-core
//! or casslab-local. It owns the mapping, not the messages (each error says what to fix) and
//! not the exiting itself (`main.rs`).
//!
//! | code | class |
//! |---|---|
//! | 0 | success |
//! | 1 | a gate or a lint finding failed, a run of an `expect: consistent` workload read what was not written, a `verify` pass found rows not as written, invalid runs were refused or left out of a comparison |
//! | 2 | bad usage or bad input: a flag value, a run id, a workload name or file, a store where no run was saved, a `verify` pass that cannot know what the data should hold |
//! | 3 | the cluster or its setup failed: cannot connect, schema rejected, a local node that does not start or is unhealthy |
//! | 4 | a gate could not be judged: a figure's interval reaches past its threshold, or the comparison was too short (`--allow-undecided` makes this 0) |
//! | 5 | an error of no class above: a file that cannot be written, a results store that fails, a fault of casslab's own |
//! | 130 | interrupted (Ctrl-C) |
//!
//! So a CI job tells a regression (1, 4) from a job that could not judge at all (2, 3, 5).

use casslab_core::fault::{fault_of, Fault};
use casslab_local::LocalError;
use std::error::Error;
use std::fmt;

/// The classes of exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success,
    /// A gate or a lint finding failed, or a verification found a violation: what was judged
    /// is not as it should be.
    Failed,
    /// Bad usage or bad input.
    Usage,
    /// The cluster or its setup failed.
    Setup,
    /// A gate could not be judged (its interval reaches past the threshold).
    Undecided,
    /// An error of no other class: the command could not do its work, for no fault of the
    /// input's or the cluster's.
    Error,
    /// Stopped by Ctrl-C.
    Interrupted,
}

impl Exit {
    pub const fn code(self) -> i32 {
        match self {
            Exit::Success => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Setup => 3,
            Exit::Undecided => 4,
            Exit::Error => 5,
            Exit::Interrupted => 130,
        }
    }
}

/// Something wrong in what the user gave (a flag's value, a run id, a name), with what to
/// write instead. Exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for UsageError {}

/// A [`UsageError`] as an `anyhow::Error`, for `return Err(usage(...))` and `map_err`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// `bail!` for usage errors: returns a [`UsageError`] made with `format!`.
macro_rules! bail_usage {
    ($($arg:tt)*) => {
        return Err($crate::exit::usage(format!($($arg)*)))
    };
}
pub(crate) use bail_usage;

/// The class of the first error in `e`'s chain that says whose fault it is (casslab-core's
/// errors say so themselves, `casslab_core::fault`); `Exit::Error` when none does.
pub fn classify(e: &anyhow::Error) -> Exit {
    let class = |f: Fault| match f {
        Fault::Input => Exit::Usage,
        Fault::Setup => Exit::Setup,
        Fault::Other => Exit::Error,
    };
    e.chain().find_map(|e| fault_of(e, &binary_fault)).map_or(Exit::Error, class)
}

/// Whose fault the errors of this binary and of casslab-local are.
fn binary_fault(e: &(dyn Error + 'static)) -> Option<Fault> {
    if e.is::<UsageError>() {
        return Some(Fault::Input);
    }
    Some(match e.downcast_ref::<LocalError>()? {
        LocalError::InvalidOptions { .. }
        | LocalError::NoSuchNode { .. }
        | LocalError::NoSuchTarget { .. }
        | LocalError::OptionsMismatch { .. }
        | LocalError::DataOfAnotherCluster { .. }
        | LocalError::BadDefinition { .. }
        | LocalError::NotRelayed { .. }
        | LocalError::JavaUnsuitable { .. }
        | LocalError::NoSuitableJava { .. }
        | LocalError::NoSuchVersion { .. }
        | LocalError::NotAQueryLog { .. } => Fault::Input,
        _ => Fault::Setup,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;
    use casslab_core::analysis::study::StudyError;
    use casslab_core::analysis::AnalysisError;
    use casslab_core::cluster::ControlError;
    use casslab_core::engine::EngineError;
    use casslab_core::session::conduct::{ExperimentError, VariantError};
    use casslab_core::session::SessionError;
    use casslab_core::store::StoreError;
    use casslab_core::workload::WorkloadError;

    fn class(e: impl Into<anyhow::Error>) -> Exit {
        classify(&e.into())
    }

    #[test]
    fn codes() {
        let all = [Exit::Success, Exit::Failed, Exit::Usage, Exit::Setup, Exit::Undecided, Exit::Error, Exit::Interrupted];
        assert_eq!(all.map(Exit::code), [0, 1, 2, 3, 4, 5, 130]);
    }

    #[test]
    fn usage_errors_keep_their_class_under_context() {
        let e: anyhow::Result<()> = Err(usage("--rate fast: write a number"));
        let e = e.context("while reading the flags").unwrap_err();
        assert_eq!(classify(&e), Exit::Usage);
        assert_eq!(format!("{e:#}"), "while reading the flags: --rate fast: write a number");
        let from_macro = || -> anyhow::Result<()> { bail_usage!("--window {}: bad", "7x") };
        let e = from_macro().unwrap_err();
        assert_eq!((classify(&e), e.to_string()), (Exit::Usage, "--window 7x: bad".to_string()));
    }

    #[test]
    fn library_errors_are_classed_by_what_went_wrong() {
        assert_eq!(class(WorkloadError::new("w.yaml", Some(3), casslab_core::workload::Problem::TooFewVariants)), Exit::Usage);
        assert_eq!(class(StoreError::NoSuchRun(9)), Exit::Usage);
        assert_eq!(class(StoreError::Missing { path: "/nowhere/results.db".into() }), Exit::Usage);
        assert_eq!(class(StoreError::Corrupt { what: "x".into(), detail: "y".into() }), Exit::Error);
        assert_eq!(class(AnalysisError::BadWindow(-1.0)), Exit::Usage);
        let connect = EngineError::ConnectCql { hosts: "127.0.0.1:1".into(), problem: "nothing answers there".into(), driver: "refused".into() };
        assert_eq!(class(connect), Exit::Setup);
        assert_eq!(class(EngineError::Schema { statement: "CREATE".into(), message: "no".into() }), Exit::Setup);
        assert_eq!(class(EngineError::Workload(WorkloadError::new("w", None, casslab_core::workload::Problem::TooFewVariants))), Exit::Usage);
        assert_eq!(class(LocalError::NodeDied { node: "node1".into(), log_tail: String::new() }), Exit::Setup);
        assert_eq!(class(LocalError::NoSuchTarget { selector: "node9".into(), known: "node1".into() }), Exit::Usage);
        assert_eq!(class(LocalError::BadDefinition { reason: "heap".into() }), Exit::Usage);
        // a server definition refused through the session keeps its class
        let refused = casslab_core::session::SessionError::Server {
            workload: "kv".into(),
            error: ControlError::new(LocalError::BadDefinition { reason: "unknown setting".into() }),
        };
        assert_eq!(class(refused), Exit::Usage);
        assert_eq!(class(anyhow::anyhow!("something else")), Exit::Error);
    }

    #[test]
    fn context_does_not_hide_a_class() {
        let store: Result<(), StoreError> = Err(StoreError::NoSuchRun(3));
        assert_eq!(classify(&store.context("cannot read run 3").unwrap_err()), Exit::Usage);
        let connect: Result<(), EngineError> = Err(EngineError::Tls("no CA".into()));
        assert_eq!(classify(&connect.context("variant a").unwrap_err()), Exit::Setup);
        let disk = anyhow::Error::new(std::io::Error::other("disk full")).context("cannot write report.html");
        assert_eq!(classify(&disk), Exit::Error);
    }

    /// Errors that show the error they hold keep its class, though it is not their source:
    /// a server definition with --hosts is the input's, in a run and in an experiment's variant.
    #[test]
    fn held_errors_keep_their_class() {
        let needs_local = || SessionError::NeedsLocalCluster("kv".into());
        assert_eq!(class(needs_local()), Exit::Usage);
        let variant = VariantError { variant: "g1".into(), error: needs_local() };
        assert_eq!(class(ExperimentError::Variant(variant)), Exit::Usage);
        let connect = EngineError::ConnectCql { hosts: "127.0.0.1:1".into(), problem: "nothing answers there".into(), driver: "refused".into() };
        let variant = VariantError { variant: "list".into(), error: SessionError::Engine(connect) };
        assert_eq!(class(ExperimentError::Variant(variant)), Exit::Setup);
        let sla = casslab_core::session::findmax::parse_sla("p99 < 10").unwrap_err();
        assert_eq!(class(SessionError::Sla(sla)), Exit::Usage);
        assert_eq!(class(SessionError::Results(StoreError::NoSuchRun(4))), Exit::Usage);
        assert_eq!(class(StudyError::Store(StoreError::Corrupt { what: "x".into(), detail: "y".into() })), Exit::Error);
    }
}
