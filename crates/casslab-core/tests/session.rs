//! A whole run session through the library, without the binary: against the real local test
//! node (started through casslab-local, the cluster-control seam's implementation), a session
//! loads a small key-value data set, runs a mix with an event (a flush on every node, carried
//! out through the seam) and server collection on, saves everything into a store, and the test
//! reads it back: the run, its phases, intervals on the run's clock, the event with its impact,
//! and server samples of both the node and the client; the observer saw the session's steps in
//! order.

use casslab_core::cluster::{ClusterControl, ServerSpec};
use casslab_core::config::{Credentials, LoadMode, RunConfig};
use casslab_core::events::{parse_event, EventStatus};
use casslab_core::session::{self, Lab, Observer, RunSpec, SessionEvent};
use casslab_core::stats::Phase;
use casslab_core::store::{RunStatus, Store};
use casslab_core::workload::load_workload;
use casslab_local::{LocalCluster, LocalOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The shared test node's home and address (as crates/casslab/tests/common/mod.rs has them).
fn test_home() -> PathBuf {
    let home = match std::env::var_os("CASSLAB_TEST_HOME") {
        Some(h) => PathBuf::from(h),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/casslab-test/home"),
    };
    std::fs::create_dir_all(&home).unwrap();
    home.canonicalize().unwrap()
}

fn node_addr() -> String {
    std::env::var("CASSLAB_TEST_NODE").ok().filter(|a| !a.is_empty()).unwrap_or_else(|| "127.0.0.51".into())
}

/// Keeps load-generating tests of different test processes from overlapping (the same flock
/// the binary's tests take).
fn load_lock(home: &std::path::Path) -> std::fs::File {
    let file = std::fs::File::create(home.join("load.lock")).unwrap();
    use std::os::fd::AsRawFd;
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0, "flock failed");
    file
}

/// Remembers what the session reported, as short words.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl Observer for Seen {
    fn on(&self, event: &SessionEvent<'_>) {
        let word = match event {
            SessionEvent::Connected { info, .. } => format!("connected {}", info.server_version.as_deref().unwrap_or("?")),
            SessionEvent::PhaseStarted { phase, .. } => format!("start {}", phase.as_str()),
            SessionEvent::PhaseFinished { phase } => format!("finish {}", phase.as_str()),
            SessionEvent::EventStarted { spec } => format!("event {}", spec.label()),
            SessionEvent::EventFinished { record, .. } => format!("event done {}", record.status.as_str()),
            SessionEvent::RunFinished { status, .. } => format!("saved {}", status.as_str()),
            SessionEvent::Interval(_) => "interval".into(),
            _ => return,
        };
        self.0.lock().unwrap().push(word);
    }
}

#[test]
fn a_whole_session_runs_against_the_real_node_and_is_saved() {
    let home = test_home();
    let _lock = load_lock(&home);
    let cluster = LocalCluster::new(LocalOptions {
        home: home.clone(),
        base_address: node_addr().parse().unwrap(),
        server: ServerSpec { heap_mb: Some(1024), ..LocalOptions::default().server },
        ..LocalOptions::default()
    });
    cluster.up(&mut |_| {}).expect("the test node starts");

    let params: BTreeMap<String, String> =
        [("rows", "2000"), ("keyspace", "casslab_core_session")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let (mut workload, source) = load_workload("kv", &params).unwrap();
    workload.events.push(parse_event("1s flush casslab_core_session").unwrap());
    let mut config = RunConfig {
        workload: "kv".into(),
        workload_source: source,
        params: workload.params.clone(),
        concurrency: 16,
        warmup_s: Some(1.0),
        duration_s: Some(4.0),
        load: LoadMode::Reload,
        ..RunConfig::default()
    };
    assert_eq!(cluster.aim_client(&mut config.cluster), None, "no login on the test node");

    let store = Store::open_in_memory().unwrap();
    let seen = Arc::new(Seen::default());
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let lab = Lab {
        credentials: Credentials::default(),
        control: Some(Arc::new(casslab_local::LocalControl::new(cluster)) as Arc<dyn ClusterControl>),
        results: &store,
        observer: seen.clone(),
        stop,
    };
    let spec = RunSpec { config, workload, tags: vec!["library-test".into()], together: None };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let saved = rt.block_on(session::run(&lab, &spec)).expect("the session runs");

    // the run and its phases
    assert_eq!(saved.status, RunStatus::Completed);
    let record = store.run(saved.run).unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    assert_eq!(record.tags, vec!["library-test".to_string()]);
    let summary = record.summary.expect("a summary");
    assert_eq!(summary, saved.summary);
    let load = summary.phases.iter().find(|p| p.phase == Phase::Load).expect("a load phase");
    assert_eq!(load.total.ok, 2000, "every row loaded once");
    let run = summary.phases.iter().find(|p| p.phase == Phase::Run).expect("a run phase");
    assert!(run.total.ok > 100 && run.total.error_count() == 0, "{run:?}");
    assert_eq!(run.ops.iter().map(|o| o.op.as_str()).collect::<Vec<_>>(), ["read", "update"]);

    // intervals on the run's clock, numbered across phases, in order
    let intervals = store.intervals(saved.run).unwrap();
    assert!(intervals.iter().any(|i| i.phase == Phase::Warmup) && intervals.iter().any(|i| i.phase == Phase::Run));
    assert!(intervals.windows(2).all(|w| w[0].start_ms <= w[1].start_ms && w[0].index <= w[1].index));
    let run_start_ms = intervals.iter().find(|i| i.phase == Phase::Warmup).unwrap().start_ms;

    // the event ran through the cluster-control seam, on the same axis, and has an impact
    let events = store.events(saved.run).unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    let (ev, impact) = &events[0];
    assert_eq!((ev.action.as_str(), ev.status), ("flush", EventStatus::Ok), "{}", ev.output_tail);
    assert!(ev.output_tail.contains("nodetool flush casslab_core_session"), "{}", ev.output_tail);
    assert!(
        ev.start_ms >= run_start_ms + 1_000 && ev.start_ms < run_start_ms + 3_000 && ev.end_ms >= ev.start_ms,
        "event at {} ms, run phase from {run_start_ms} ms",
        ev.start_ms
    );
    assert!(impact.is_some(), "an event inside the run has an impact");

    // server samples of the node (virtual tables, its process) and of the client, on the axis
    let samples = store.server_samples(saved.run).unwrap();
    let addr = node_addr();
    assert!(samples.iter().any(|s| s.node == addr), "no sample of the node");
    assert!(samples.iter().any(|s| s.node == casslab_core::server::CLIENT), "no sample of the client");
    let last_ms = intervals.last().unwrap().end_ms;
    assert!(samples.iter().all(|s| s.at_ms <= last_ms + 15_000), "samples off the run's axis");

    // what the observer saw, in order
    let seen = seen.0.lock().unwrap().clone();
    let pos = |w: &str| seen.iter().position(|s| s.starts_with(w)).unwrap_or_else(|| panic!("never saw {w}: {seen:?}"));
    assert!(seen[0].starts_with("connected 5."), "{seen:?}");
    assert!(pos("start load") < pos("finish load") && pos("finish load") < pos("start run") && pos("start run") < pos("event flush"));
    assert!(pos("event flush") < pos("event done ok") && pos("event done ok") < pos("saved completed"));
    assert_eq!(seen.iter().filter(|s| *s == "interval").count(), intervals.iter().map(|i| i.index).collect::<std::collections::BTreeSet<_>>().len());
}
