//! The events of a run (`60s kill node2`, a workload's `events:`): checking them against the
//! cluster before anything starts, then a timeline that fires each one at its time after the
//! start of the run phase and carries it out on a blocking thread — so the engine keeps
//! running; node stops, kills and starts one at a time, through the cluster's own lock
//! ([`ClusterControl::one_at_a_time`]) — and records when it started and
//! ended on the run's clock, its exit status and the tail of its output. Node actions and
//! nodetool calls go through the [`ClusterControl`] seam; `exec` runs `sh -c CMD`; network
//! changes are `network_events`'; `create index` is `index_events`' (through CQL).

use super::changes::Outcome;
use super::event_check_error::EventCheckError;
use super::network_events;
use super::observer::{Observer, SessionEvent};
use crate::cluster::ClusterControl;
use crate::engine::{RateChange, RunClock};
use crate::events::{sorted, EventAction, EventRecord, EventSpec, EventStatus};
use std::process::{Command, Output};
use std::sync::Arc;
use tokio::sync::{mpsc::UnboundedSender, watch};
use tokio::task::JoinHandle;

/// Lines of an event's output kept with the run.
const OUTPUT_TAIL_LINES: usize = 20;

/// Checks every event against what the run is aimed at, before anything touches the cluster:
/// node, nodetool and network actions need a cluster casslab controls (network actions: one
/// whose network it relays), and the nodes or data centers they name must exist in it.
pub fn check_events(events: &[EventSpec], control: Option<&dyn ClusterControl>) -> Result<(), EventCheckError> {
    for e in events.iter().filter(|e| e.action.needs_local_cluster()) {
        if e.action.is_network() {
            network_events::check(e, control)?;
            continue;
        }
        let Some(cluster) = control else {
            return Err(EventCheckError::NeedsLocalCluster { spec: e.text.clone(), action: e.action.name(), at_s: e.at_ms / 1000 });
        };
        if let Some(selector) = e.action.node_selector() {
            cluster.select(selector).map_err(|source| EventCheckError::UnknownNodes { spec: e.text.clone(), error: source })?;
        }
    }
    Ok(())
}

/// The events of a run, firing while the engine runs.
pub(crate) struct Timeline {
    task: JoinHandle<Vec<EventRecord>>,
    cancel: watch::Sender<bool>,
    /// A run with network events: its events in firing order, the cluster and the observer.
    network: Option<NetworkEnd>,
}

/// What the end of a run with network events needs to heal what it left in force.
type NetworkEnd = (Vec<EventSpec>, Option<Arc<dyn ClusterControl>>, Arc<dyn Observer>);

impl Timeline {
    /// Starts firing `events` (times since the run phase's start, which is `run_started_at_ms`
    /// on `clock`); changes of rate go to `rates`.
    pub fn start(
        events: Vec<EventSpec>,
        clock: RunClock,
        run_started_at_ms: u64,
        control: Option<Arc<dyn ClusterControl>>,
        observer: Arc<dyn Observer>,
        rates: Option<UnboundedSender<RateChange>>,
        cql: Option<Arc<super::index_events::CqlEvents>>,
    ) -> Timeline {
        let (cancel, mut cancelled) = watch::channel(false);
        // what the run's end needs to heal the network faults it left
        let network = events.iter().any(|e| e.action.is_network()).then(|| (sorted(events.clone()), control.clone(), observer.clone()));
        let task = tokio::spawn(async move {
            let mut running: Vec<JoinHandle<EventRecord>> = Vec::new();
            let mut records = Vec::new();
            // setup events ran before the run phase (`run_setup`); their places in the order stay theirs
            for (seq, spec) in sorted(events).into_iter().enumerate().filter(|(_, e)| !e.setup) {
                let due_ms = run_started_at_ms + spec.at_ms;
                let stopped = *cancelled.borrow()
                    || tokio::select! {
                        _ = tokio::time::sleep_until(clock.at(due_ms)) => false,
                        _ = cancelled.changed() => true,
                    };
                if stopped {
                    records.push(skipped(seq as u32, &spec, due_ms));
                    continue;
                }
                let (control, observer, rates, cql) = (control.clone(), observer.clone(), rates.clone(), cql.clone());
                running.push(tokio::task::spawn_blocking(move || {
                    recorded(seq as u32, &spec, clock, (control.as_deref(), cql.as_deref()), observer.as_ref(), rates.as_ref())
                }));
            }
            for h in running {
                if let Ok(r) = h.await {
                    records.push(r);
                }
            }
            records.sort_by_key(|r| r.seq);
            records
        });
        Timeline { task, cancel, network }
    }

    /// Skips the events not yet due, waits for those under way, heals the network faults the
    /// run left in force, and returns every record.
    pub async fn finish(self) -> Vec<EventRecord> {
        let _ = self.cancel.send(true);
        let records = self.task.await.unwrap_or_default();
        if let Some((specs, control, observer)) = self.network {
            let done = records.clone();
            let _ = tokio::task::spawn_blocking(move || network_events::heal_left_faults(&specs, &done, control.as_deref(), observer.as_ref())).await;
        }
        records
    }
}

/// Carries out the setup events (`setup ACTION`) one after the other, before the load and run
/// phases begin, and returns their records (first in the run's order of events).
pub(crate) async fn run_setup(
    events: &[EventSpec],
    clock: RunClock,
    control: Option<Arc<dyn ClusterControl>>,
    observer: Arc<dyn Observer>,
) -> Vec<EventRecord> {
    let mut records = Vec::new();
    for (seq, spec) in sorted(events.to_vec()).into_iter().enumerate().filter(|(_, e)| e.setup) {
        let (control, observer) = (control.clone(), observer.clone());
        let done = tokio::task::spawn_blocking(move || recorded(seq as u32, &spec, clock, (control.as_deref(), None), observer.as_ref(), None)).await;
        records.extend(done.ok());
    }
    records
}

/// Carries out one event now (blocking; node actions and topology changes wait for the
/// cluster's lock, and their record starts when they do) and records it.
fn recorded(
    seq: u32,
    spec: &EventSpec,
    clock: RunClock,
    (control, cql): (Option<&dyn ClusterControl>, Option<&super::index_events::CqlEvents>),
    observer: &dyn Observer,
    rates: Option<&UnboundedSender<RateChange>>,
) -> EventRecord {
    let fire = || {
        let start_ms = clock.now_ms();
        observer.on(&SessionEvent::EventStarted { spec });
        let (status, exit_code, output) = carry_out(&spec.action, (control, cql), rates);
        let end_ms = clock.now_ms().max(start_ms);
        let record = EventRecord {
            seq,
            spec: spec.text.clone(),
            action: spec.action.name().to_string(),
            target: spec.action.target(),
            start_ms,
            end_ms,
            status,
            exit_code,
            output_tail: tail(&output, OUTPUT_TAIL_LINES),
        };
        observer.on(&SessionEvent::EventFinished { spec, record: &record });
        record
    };
    match (spec.action.one_at_a_time(), control) {
        (true, Some(cluster)) => {
            let mut record = None;
            cluster.one_at_a_time(&mut || record = Some(fire()));
            record.expect("one_at_a_time calls its action once")
        }
        _ => fire(),
    }
}

/// Records for the timed events that never fired (the run ended before the run phase began);
/// setup events have records of their own.
pub(crate) fn all_skipped(events: &[EventSpec]) -> Vec<EventRecord> {
    sorted(events.to_vec()).iter().enumerate().filter(|(_, e)| !e.setup).map(|(i, e)| skipped(i as u32, e, e.at_ms)).collect()
}

fn skipped(seq: u32, spec: &EventSpec, at_ms: u64) -> EventRecord {
    EventRecord {
        seq,
        spec: spec.text.clone(),
        action: spec.action.name().to_string(),
        target: spec.action.target(),
        start_ms: at_ms,
        end_ms: at_ms,
        status: EventStatus::Skipped,
        exit_code: None,
        output_tail: "the run ended before this event's time".into(),
    }
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Carries out one action (blocking): its status, exit code (of a command) and output. One
/// exhaustive match over every kind of event: a new kind does not compile until it says here
/// how it is carried out.
fn carry_out(
    action: &EventAction,
    (control, cql): (Option<&dyn ClusterControl>, Option<&super::index_events::CqlEvents>),
    rates: Option<&UnboundedSender<RateChange>>,
) -> Outcome {
    use super::changes::{change_rate, change_topology, rate_change, snapshot, stream_throughput, Topology};
    use EventAction as A;
    let on_cluster = |act: &dyn Fn(&dyn ClusterControl) -> Outcome| match control {
        Some(cluster) => act(cluster),
        None => (EventStatus::Failed, None, "no local cluster to act on".into()),
    };
    let nodetool = |args: Vec<String>, nodes: Nodes| on_cluster(&|c| nodetool_on_nodes(c, &args, nodes));
    let with_table = |command: &[&str], t: &Option<String>| [command.iter().map(|s| s.to_string()).collect(), table_args(t)].concat();
    match action {
        A::Rate(r) => change_rate(rate_change(*r, 0.0), rates),
        A::RampRate { to_per_s, over_s } => change_rate(rate_change(*to_per_s, *over_s), rates),
        A::Exec(cmd) => exec(cmd),
        A::CreateIndex(statement) => super::index_events::create_index(statement, cql),
        A::Network(network) => on_cluster(&|c| network_events::carry_out(network, c)),
        A::AddNode(dc) => on_cluster(&|c| change_topology(c, Topology::AddNode(dc.as_deref()))),
        A::Decommission(sel) => on_cluster(&|c| change_topology(c, Topology::Decommission(sel))),
        A::Replace(sel) => on_cluster(&|c| change_topology(c, Topology::Replace(sel))),
        A::Snapshot(ks) => on_cluster(&|c| snapshot(c, ks.as_deref())),
        A::SetStreamThroughput(n) => on_cluster(&|c| stream_throughput(c, *n)),
        A::Stop(sel) => on_cluster(&|c| stop_or_start(c, sel, NodeChange::Stop)),
        A::Kill(sel) => on_cluster(&|c| stop_or_start(c, sel, NodeChange::Kill)),
        A::Start(sel) => on_cluster(&|c| stop_or_start(c, sel, NodeChange::Start)),
        A::Flush(t) => nodetool(with_table(&["flush"], t), Nodes::Running),
        A::Compact(t) => nodetool(with_table(&["compact"], t), Nodes::Running),
        A::Repair(t) => nodetool(with_table(&["repair", "--full"], t), Nodes::First),
        A::Cleanup(t) => nodetool(with_table(&["cleanup"], t), Nodes::Running),
        A::SetCompactionThroughput(n) => nodetool(vec!["setcompactionthroughput".into(), n.to_string()], Nodes::Running),
        A::SetTraceProbability(p) => nodetool(vec!["settraceprobability".into(), p.to_string()], Nodes::Running),
    }
}

/// `exec CMD`: `sh -c CMD`, its exit status and output.
fn exec(cmd: &str) -> Outcome {
    match Command::new("sh").arg("-c").arg(cmd).output() {
        Ok(o) => {
            let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            (if o.status.success() { EventStatus::Ok } else { EventStatus::Failed }, o.status.code(), out)
        }
        Err(e) => (EventStatus::Failed, None, format!("cannot run sh -c {cmd}: {e}")),
    }
}

/// What a node event does to the nodes it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeChange {
    Stop,
    Kill,
    Start,
}

/// Stops, kills or starts the nodes `sel` names.
fn stop_or_start(cluster: &dyn ClusterControl, sel: &str, change: NodeChange) -> Outcome {
    let mut lines = Vec::new();
    let mut log = |l: &str| lines.push(l.to_string());
    let result = cluster.select(sel).and_then(|idx| match change {
        NodeChange::Stop | NodeChange::Kill => cluster.stop(&idx, change == NodeChange::Kill, &mut log),
        NodeChange::Start => cluster.start(&idx, &mut log),
    });
    match result {
        Ok(()) => (EventStatus::Ok, None, lines.join("\n")),
        Err(e) => {
            lines.push(e.to_string());
            (EventStatus::Failed, None, lines.join("\n"))
        }
    }
}

/// `keyspace.table` as nodetool's two arguments.
fn table_args(t: &Option<String>) -> Vec<String> {
    t.as_deref().map(|t| t.split('.').map(String::from).collect()).unwrap_or_default()
}

/// The nodes a nodetool command runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nodes {
    /// Every running node, at once.
    Running,
    /// The first running node (a repair, which reaches the others itself).
    First,
}

/// Runs `nodetool ARGS` on the running nodes (all at once, or the first only).
fn nodetool_on_nodes(cluster: &dyn ClusterControl, args: &[String], nodes: Nodes) -> Outcome {
    let running: Vec<(usize, String)> = match cluster.nodes() {
        Ok(nodes) => nodes.iter().enumerate().filter(|(_, n)| n.running).map(|(i, n)| (i, n.name.clone())).collect(),
        Err(e) => return (EventStatus::Failed, None, e.to_string()),
    };
    let targets = if nodes == Nodes::First { running.into_iter().take(1).collect() } else { running };
    if targets.is_empty() {
        return (EventStatus::Failed, None, "no local node is running".into());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let results: Vec<(String, Result<Output, crate::cluster::ControlError>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = targets.iter().map(|(i, name)| (name.clone(), scope.spawn(|| cluster.nodetool(*i, &refs)))).collect();
        handles.into_iter().map(|(name, h)| (name, h.join().expect("nodetool thread"))).collect()
    });
    let (mut status, mut code, mut out) = (EventStatus::Ok, Some(0), String::new());
    for (name, result) in results {
        match result {
            Ok(o) => {
                out.push_str(&format!("{name}: nodetool {} → {}\n", args.join(" "), o.status));
                out.push_str(&super::changes::quiet(&String::from_utf8_lossy(&o.stdout)));
                out.push_str(&super::changes::quiet(&String::from_utf8_lossy(&o.stderr)));
                if !o.status.success() {
                    status = EventStatus::Failed;
                    code = o.status.code();
                }
            }
            Err(e) => {
                out.push_str(&format!("{name}: {e}\n"));
                status = EventStatus::Failed;
                code = None;
            }
        }
    }
    (status, code, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{ControlError, ControlledNode};
    use crate::events::parse_event;
    use crate::session::observer::Quiet;
    use std::time::Duration;

    /// A cluster of named nodes that only answers `select`, and counts the actions run one at
    /// a time.
    struct Named(Vec<&'static str>, std::sync::atomic::AtomicUsize);

    fn named(nodes: Vec<&'static str>) -> Named {
        Named(nodes, Default::default())
    }

    #[derive(Debug, thiserror::Error)]
    #[error("no node or data center \"{0}\" (nodes: {1})")]
    struct Unknown(String, String);

    impl ClusterControl for Named {
        fn select(&self, selector: &str) -> Result<Vec<usize>, ControlError> {
            match self.0.iter().position(|n| *n == selector) {
                Some(i) => Ok(vec![i]),
                None => Err(ControlError::new(Unknown(selector.into(), self.0.join(", ")))),
            }
        }
        fn nodes(&self) -> Result<Vec<ControlledNode>, ControlError> {
            Ok(Vec::new())
        }
        fn stop(&self, _: &[usize], _: bool, _: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
            Ok(())
        }
        fn start(&self, _: &[usize], _: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
            Ok(())
        }
        fn one_at_a_time(&self, action: &mut dyn FnMut()) {
            self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            action()
        }
        fn nodetool(&self, _: usize, _: &[&str]) -> Result<Output, ControlError> {
            Err(ControlError::new(std::io::Error::other("no nodetool here")))
        }
        fn definition(&self) -> crate::cluster::ServerSpec {
            Default::default()
        }
        fn check(&self, _: &crate::cluster::ServerSpec, _: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
            Ok(())
        }
        fn apply(&self, _: &crate::cluster::ServerSpec, _: bool, _: &mut dyn FnMut(&str)) -> Result<crate::cluster::Applied, ControlError> {
            Ok(Default::default())
        }
    }

    #[test]
    fn node_actions_need_a_controlled_cluster_and_known_nodes() {
        check_events(&[parse_event("10s exec true").unwrap()], None).unwrap();
        let kill = vec![parse_event("10s kill node2").unwrap()];
        let e = check_events(&kill, None).unwrap_err().to_string();
        assert!(e.contains("exec CMD"), "{e}");
        let cluster = named(vec!["node1", "node2", "node3"]);
        check_events(&kill, Some(&cluster)).unwrap();
        let e = check_events(&[parse_event("10s stop dc9").unwrap()], Some(&cluster)).unwrap_err().to_string();
        assert!(e.contains("dc9") && e.contains("node2"), "{e}");
    }

    #[test]
    fn exec_records_exit_status_and_output() {
        let (status, code, out) = carry_out(&EventAction::Exec("echo hi; echo oops >&2; exit 3".into()), (None, None), None);
        assert_eq!((status, code), (EventStatus::Failed, Some(3)));
        assert!(out.contains("hi") && out.contains("oops"), "{out}");
        assert_eq!(carry_out(&EventAction::Exec("true".into()), (None, None), None).0, EventStatus::Ok);
        assert_eq!(carry_out(&EventAction::Flush(None), (None, None), None).0, EventStatus::Failed);
        assert_eq!(carry_out(&EventAction::Flush(None), (Some(&named(vec![])), None), None).0, EventStatus::Failed, "no node runs");
        assert_eq!(carry_out(&EventAction::AddNode(None), (None, None), None).0, EventStatus::Failed, "no cluster");
        assert_eq!(carry_out(&EventAction::Rate(5.0), (None, None), None).0, EventStatus::Failed, "no rate to change");
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(table_args(&Some("ks.t".into())), ["ks", "t"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_timeline_fires_on_time_and_skips_what_the_run_outlived() {
        let evs = vec![parse_event("200ms exec sleep 0.3").unwrap(), parse_event("50ms exec echo first").unwrap(), parse_event("1h exec true").unwrap()];
        // the run phase started 1000 ms after the clock
        let clock = RunClock { t0: tokio::time::Instant::now() - Duration::from_millis(1_000), t0_unix_ms: 0 };
        let t = Timeline::start(evs, clock, 1_000, None, Arc::new(Quiet), None, None);
        tokio::time::sleep(Duration::from_millis(400)).await;
        let recs = t.finish().await;
        assert_eq!(recs.len(), 3);
        assert_eq!((recs[0].spec.as_str(), recs[0].status), ("50ms exec echo first", EventStatus::Ok));
        assert!(recs[0].start_ms >= 1_050 && recs[0].output_tail == "first", "{recs:?}");
        // the sleep started before the run ended, so it is waited for
        assert_eq!(recs[1].status, EventStatus::Ok);
        assert!(recs[1].start_ms >= 1_200 && recs[1].end_ms >= recs[1].start_ms + 300, "{recs:?}");
        assert_eq!((recs[2].status, recs[2].start_ms), (EventStatus::Skipped, 1_000 + 3_600_000));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn node_stops_and_starts_go_through_the_cluster_one_at_a_time_and_nodetool_does_not() {
        let evs = vec![
            parse_event("10ms stop node1").unwrap(),
            parse_event("10ms start node2").unwrap(),
            parse_event("10ms flush").unwrap(),
            parse_event("10ms exec true").unwrap(),
        ];
        let cluster = Arc::new(named(vec!["node1", "node2"]));
        let clock = RunClock { t0: tokio::time::Instant::now(), t0_unix_ms: 0 };
        let t = Timeline::start(evs, clock, 0, Some(cluster.clone() as Arc<dyn ClusterControl>), Arc::new(Quiet), None, None);
        tokio::time::sleep(Duration::from_millis(200)).await;
        let recs = t.finish().await;
        let statuses: Vec<(&str, EventStatus)> = recs.iter().map(|r| (r.action.as_str(), r.status)).collect();
        assert_eq!(statuses, [("stop", EventStatus::Ok), ("start", EventStatus::Ok), ("flush", EventStatus::Failed), ("exec", EventStatus::Ok)]);
        assert_eq!(cluster.1.load(std::sync::atomic::Ordering::SeqCst), 2, "the stop and the start, not the flush or the command");
    }
}
