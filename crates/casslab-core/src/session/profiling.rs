//! The profiles of a run session: with `--profile`, a recording (async-profiler, else Java Flight
//! Recorder: `profile::record`) on every
//! running node of the controlled cluster from the start of the run phase to the end of the
//! run (started and stopped on blocking threads, so the engine never waits for `jcmd`), read
//! into profiles on the run's clock; with `--profile-file`, profiles made elsewhere read at
//! the end. Both are saved with the run; what could not be recorded or read is a note, never a
//! failed run.

use crate::cluster::ClusterControl;
use crate::config::RunConfig;
use crate::engine::RunClock;
use crate::profile::{self, record, Profile, ProfileKind};
use crate::store::{RunId, Store};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::task::JoinHandle;

type Started = (Vec<record::Recording>, Vec<String>);

/// A run's profiling, from its start to the saved profiles.
pub(crate) struct Profiling {
    control: Option<Arc<dyn ClusterControl>>,
    files: Vec<(String, PathBuf)>,
    clock: RunClock,
    started: Option<JoinHandle<Started>>,
    /// casslab's own profile, when asked for, from the start of the run phase.
    client: Option<Result<profile::client::ClientProfiler, String>>,
    wants_client: bool,
}

impl Profiling {
    /// What `cfg` asks for; `None` when it asks for nothing. Recording needs `control` (a run
    /// against `--hosts` was refused before, when it asked to record).
    pub(crate) fn new(cfg: &RunConfig, control: Option<Arc<dyn ClusterControl>>, clock: RunClock) -> Option<Profiling> {
        if cfg.profile.is_off() {
            return None;
        }
        Some(Profiling {
            control: control.filter(|_| cfg.profile.server),
            files: cfg.profile.files.clone(),
            clock,
            started: None,
            client: None,
            wants_client: cfg.profile.client,
        })
    }

    /// Begins recording on the nodes (once; the run phase starts once).
    pub(crate) fn start(&mut self, run: RunId) {
        if self.wants_client && self.client.is_none() {
            self.client = Some(profile::client::ClientProfiler::start().map_err(|e| e.to_string()));
        }
        let Some(control) = self.control.clone() else { return };
        if self.started.is_some() {
            return;
        }
        let dir = recording_dir(run);
        self.started = Some(tokio::task::spawn_blocking(move || match control.nodes() {
            Ok(nodes) => record::start(&nodes, &format!("casslab-run-{run}"), &dir),
            Err(e) => (Vec::new(), vec![format!("profile: the nodes could not be listed: {e}")]),
        }));
    }

    /// Stops the recordings, reads them and the files, saves the profiles with `run`; the notes
    /// say what was saved and what was not.
    pub(crate) async fn finish(self, results: &Store, run: RunId) -> Vec<String> {
        let t0 = self.clock.t0_unix_ms;
        let started = match self.started {
            Some(task) => task.await.unwrap_or_default(),
            None => Default::default(),
        };
        let (recordings, mut notes) = started;
        let mut client = None;
        match self.client {
            Some(Ok(p)) => match p.finish(t0) {
                Ok(p) => client = p,
                Err(e) => notes.push(format!("profile: {e}")),
            },
            Some(Err(e)) => notes.push(format!("profile: {e}")),
            None => {}
        }
        let files = self.files;
        let read = tokio::task::spawn_blocking(move || {
            let mut notes = Vec::new();
            let mut profiles = Vec::new();
            let dir = recording_dir(run);
            if !recordings.is_empty() {
                match record::stop(&recordings, &dir) {
                    Ok((written, n)) => {
                        notes.extend(n);
                        for (node, path, source) in written {
                            match profile::jfr::read(&path, &node, t0, &source) {
                                Ok(p) => profiles.extend(p),
                                Err(e) => notes.push(format!("profile: {e}")),
                            }
                        }
                    }
                    Err(e) => notes.push(format!("profile: {e}")),
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
            for (node, path) in &files {
                match profile::read_file(path, node, t0) {
                    Ok(p) => profiles.extend(p),
                    Err(e) => notes.push(format!("--profile-file {node}={}: {e}", path.display())),
                }
            }
            (profiles, notes)
        })
        .await;
        let (mut profiles, n) = read.unwrap_or_else(|e| (Vec::new(), vec![format!("profile: reading the recordings failed: {e}")]));
        notes.extend(n);
        profiles.extend(client);
        if !profiles.is_empty() {
            notes.push(saved_note(&profiles));
            if let Err(e) = results.add_profiles(run, &profiles) {
                notes.push(format!("profile: the profiles could not be saved: {e}"));
            }
        }
        notes
    }
}

/// Where a run's recordings are written before they are read and saved.
fn recording_dir(run: RunId) -> PathBuf {
    std::env::temp_dir().join(format!("casslab-profile-{}-{run}", std::process::id()))
}

/// "profile: 2 nodes, cpu 1234 samples, alloc 1.2 GB, lock 3.4 s (casslab report RUN)".
fn saved_note(profiles: &[Profile]) -> String {
    let is_client = |p: &&Profile| p.node == profile::client::CLIENT_NODE;
    let servers: Vec<&Profile> = profiles.iter().filter(|p| !is_client(p)).collect();
    let nodes: std::collections::BTreeSet<&str> = servers.iter().map(|p| p.node.as_str()).collect();
    let total = |k: ProfileKind| servers.iter().filter(|p| p.kind == k).map(|p| p.total(None)).sum::<u64>();
    let mut parts = Vec::new();
    if !nodes.is_empty() {
        let mut figures = Vec::new();
        for k in ProfileKind::ALL {
            let t = total(k);
            if t > 0 {
                figures.push(match k {
                    ProfileKind::Cpu => format!("{t} CPU samples"),
                    ProfileKind::Alloc => format!("{:.1} MB allocated (estimated from samples)", t as f64 / 1e6),
                    ProfileKind::Lock => format!("{:.1} s blocked on locks and parks", t as f64 / 1e9),
                });
            }
        }
        parts.push(format!("{} node{}: {}", nodes.len(), if nodes.len() == 1 { "" } else { "s" }, figures.join(", ")));
    }
    if let Some(c) = profiles.iter().find(|p| is_client(p)) {
        parts.push(format!("the client: {} CPU samples", c.total(None)));
    }
    format!("profile: {}; flame graphs in the HTML report", parts.join("; "))
}
