//! The servers casslab puts load on, each an implementation of the engine's
//! [`crate::engine::Target`]: `cql` (Apache Cassandra and CQL-compatible databases, through the
//! scylla driver), `redis` (a Redis server or Redis Cluster, through the `redis` crate) and the
//! targets inside casslab, which need no server and are chosen by name with `--target NAME`:
//! `instant` (every operation answered at once, so a run measures the client alone) and
//! `fixed-10ms` (every operation answered after 10 ms, a known service time).
//!
//! A new target inside casslab is one file here plus its entry in [`IN_PROCESS`] and its arm
//! in [`drive_in_process`]: the CLI's help and refusals, the config, the session and the run
//! and experiment commands all go by the name.

pub mod cql;
pub mod delayed;
pub mod instant;
pub mod redis;

use crate::engine::Target;
use std::future::Future;
use std::pin::Pin;

/// A target inside casslab: its name for `--target` and what it does, for the help.
pub struct InProcess {
    pub name: &'static str,
    pub about: &'static str,
}

/// Every target inside casslab.
pub const IN_PROCESS: &[InProcess] = &[
    InProcess { name: "instant", about: "answers every operation at once inside casslab, so the run measures the client alone" },
    InProcess { name: "fixed-10ms", about: "answers every operation 10 ms after it starts: a known service time to see what the measurement adds" },
];

/// The target inside casslab that `--target NAME` names (any case), if it names one.
pub fn in_process(name: &str) -> Option<&'static InProcess> {
    IN_PROCESS.iter().find(|t| t.name.eq_ignore_ascii_case(name.trim()))
}

/// `--target`'s help line for the targets inside casslab: `instant` (…).
pub fn in_process_help() -> String {
    IN_PROCESS.iter().map(|t| format!("`{}` ({})", t.name, t.about)).collect::<Vec<_>>().join("; ")
}

/// A future the session drives a target with; boxed, as each target is its own type.
pub type Driven<'a, O> = Pin<Box<dyn Future<Output = O> + Send + 'a>>;

/// What drives a target once it is chosen (the session, generic over the target's type).
pub trait Driver<'a> {
    type Output;
    fn drive<T: Target>(self, target: T) -> Driven<'a, Self::Output>;
}

/// Drives the target inside casslab named `name` with `driver`; `None` if no such target.
pub fn drive_in_process<'a, D: Driver<'a>>(name: &str, driver: D) -> Option<Driven<'a, D::Output>> {
    match in_process(name)?.name {
        "instant" => Some(driver.drive(instant::InstantTarget::new())),
        "fixed-10ms" => Some(driver.drive(delayed::DelayedTarget::new())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names the target it is handed (what it says its server is).
    struct Named;

    impl<'a> Driver<'a> for Named {
        type Output = String;
        fn drive<T: Target>(self, target: T) -> Driven<'a, String> {
            let said = target.info().server_version.clone().unwrap_or_default();
            Box::pin(async move { said })
        }
    }

    #[tokio::test]
    async fn every_target_inside_casslab_has_its_arm_and_no_other_name_does() {
        for t in IN_PROCESS {
            let driven = drive_in_process(&t.name.to_uppercase(), Named).unwrap_or_else(|| panic!("{} has no arm", t.name));
            assert!(driven.await.starts_with(t.name.split('-').next().unwrap()), "{}", t.name);
        }
        assert!(drive_in_process("redis://127.0.0.1:6379", Named).is_none());
    }
}
