//! Events during a run (`--event '60s kill node2'`, a workload's `events:`): checking them
//! against the cluster before anything starts, then a timeline that fires each one at its
//! time after the start of the run phase and carries it out on a blocking thread — so the
//! engine keeps running; node stops, kills and starts one at a time — and records when it started and ended (on the intervals' time
//! axis), its exit status and the tail of its output. Node actions and nodetool calls go
//! through casslab-local; `exec` runs `sh -c CMD`.

use anyhow::{bail, Result};
use casslab_core::events::{sorted, EventAction, EventRecord, EventSpec, EventStatus};
use casslab_local::LocalCluster;
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Lines of an event's output kept with the run.
const OUTPUT_TAIL_LINES: usize = 20;

/// The local cluster a run in this process is aimed at, when it is casslab's own.
static LOCAL_CLUSTER: OnceLock<LocalCluster> = OnceLock::new();

/// Held while a stop, kill or start runs: one that comes due while another is still under
/// way (a start while a graceful stop drains) waits for it, and starts when it can.
static NODE_ACTIONS: Mutex<()> = Mutex::new(());

/// Remembers the local cluster the runs of this process use, for node and nodetool events.
pub fn use_local_cluster(cluster: &LocalCluster) {
    let _ = LOCAL_CLUSTER.set(cluster.clone());
}

/// Checks every event against what the run is aimed at, before anything touches the cluster:
/// node and nodetool actions need casslab's local cluster (`local`), and the nodes or data
/// centers they name must exist in it.
pub fn check(events: &[EventSpec], local: Option<&LocalCluster>) -> Result<()> {
    for e in events {
        if !e.action.needs_local_cluster() {
            continue;
        }
        let Some(cluster) = local else {
            bail!(
                "event '{}': `{}` acts on casslab's local cluster, but this run is aimed at --hosts; for your own cluster run a command at that time with '{}s exec CMD' (e.g. an ssh that stops a service)",
                e.text,
                e.action.name(),
                e.at_ms / 1000
            );
        };
        if let Some(selector) = e.action.node_selector() {
            cluster.select(selector).map_err(|err| anyhow::anyhow!("event '{}': {err}", e.text))?;
        }
    }
    Ok(())
}

/// The events of a run, firing while the engine runs.
pub struct Timeline {
    task: JoinHandle<Vec<EventRecord>>,
    cancel: watch::Sender<bool>,
}

impl Timeline {
    /// Starts firing `events` (times since the run phase's start). `run_started_at_ms` is when
    /// the run phase started on the intervals' time axis, which this process knows as
    /// `origin` + milliseconds.
    pub fn start(events: Vec<EventSpec>, run_started_at_ms: u64) -> Timeline {
        let origin = Instant::now() - Duration::from_millis(run_started_at_ms);
        let axis_ms = move || origin.elapsed().as_millis() as u64;
        let (cancel, mut cancelled) = watch::channel(false);
        let local = LOCAL_CLUSTER.get().cloned();
        let task = tokio::spawn(async move {
            let mut running: Vec<JoinHandle<EventRecord>> = Vec::new();
            let mut records = Vec::new();
            for (seq, spec) in sorted(events).into_iter().enumerate() {
                let due_ms = run_started_at_ms + spec.at_ms;
                let due = origin + Duration::from_millis(due_ms);
                let stopped = *cancelled.borrow()
                    || tokio::select! {
                        _ = tokio::time::sleep_until(tokio::time::Instant::from_std(due)) => false,
                        _ = cancelled.changed() => true,
                    };
                if stopped {
                    records.push(skipped(seq as u32, &spec, due_ms));
                    continue;
                }
                let local = local.clone();
                running.push(tokio::task::spawn_blocking(move || {
                    let _one_at_a_time = spec.action.node_selector().map(|_| NODE_ACTIONS.lock().unwrap_or_else(|e| e.into_inner()));
                    let start_ms = axis_ms();
                    eprintln!("event {}: {} ...", fmt_s(spec.at_ms), spec.label());
                    let (status, exit_code, output) = carry_out(&spec.action, local.as_ref());
                    let end_ms = axis_ms().max(start_ms);
                    eprintln!("event {}: {} {} after {:.1} s", fmt_s(spec.at_ms), spec.label(), status.as_str(), (end_ms - start_ms) as f64 / 1000.0);
                    EventRecord {
                        seq: seq as u32,
                        spec: spec.text.clone(),
                        action: spec.action.name().to_string(),
                        target: spec.action.target(),
                        start_ms,
                        end_ms,
                        status,
                        exit_code,
                        output_tail: tail(&output, OUTPUT_TAIL_LINES),
                    }
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
        Timeline { task, cancel }
    }

    /// Skips the events not yet due, waits for those under way, and returns every record.
    pub async fn finish(self) -> Vec<EventRecord> {
        let _ = self.cancel.send(true);
        self.task.await.unwrap_or_default()
    }
}

/// Records for events that never fired (the run ended before the run phase began).
pub fn all_skipped(events: &[EventSpec]) -> Vec<EventRecord> {
    sorted(events.to_vec()).iter().enumerate().map(|(i, e)| skipped(i as u32, e, e.at_ms)).collect()
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

fn fmt_s(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Carries out one action (blocking): its status, exit code (of a command) and output.
fn carry_out(action: &EventAction, local: Option<&LocalCluster>) -> (EventStatus, Option<i32>, String) {
    if let EventAction::Exec(cmd) = action {
        return match Command::new("sh").arg("-c").arg(cmd).output() {
            Ok(o) => {
                let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
                (if o.status.success() { EventStatus::Ok } else { EventStatus::Failed }, o.status.code(), out)
            }
            Err(e) => (EventStatus::Failed, None, format!("cannot run sh -c {cmd}: {e}")),
        };
    }
    let Some(cluster) = local else {
        return (EventStatus::Failed, None, "no local cluster to act on".into());
    };
    let mut lines = Vec::new();
    let mut log = |l: &str| lines.push(l.to_string());
    let result = match action {
        EventAction::Stop(sel) | EventAction::Kill(sel) => cluster
            .select(sel)
            .and_then(|idx| cluster.stop_nodes(&idx, matches!(action, EventAction::Kill(_)), &mut log))
            .map(|()| None),
        EventAction::Start(sel) => cluster.select(sel).and_then(|idx| cluster.start_nodes(&idx, &mut log)).map(|_| None),
        _ => return nodetool_on_nodes(cluster, action),
    };
    match result {
        Ok(code) => (EventStatus::Ok, code, lines.join("\n")),
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

/// Runs the nodetool command of `action` on every running node at once (repair: on the first
/// only).
fn nodetool_on_nodes(cluster: &LocalCluster, action: &EventAction) -> (EventStatus, Option<i32>, String) {
    let args: Vec<String> = match action {
        EventAction::Flush(t) => [vec!["flush".to_string()], table_args(t)].concat(),
        EventAction::Compact(t) => [vec!["compact".to_string()], table_args(t)].concat(),
        EventAction::Repair(t) => [vec!["repair".to_string(), "--full".to_string()], table_args(t)].concat(),
        EventAction::SetCompactionThroughput(n) => vec!["setcompactionthroughput".into(), n.to_string()],
        EventAction::SetTraceProbability(p) => vec!["settraceprobability".into(), p.to_string()],
        _ => unreachable!("node actions are carried out by casslab-local"),
    };
    let running: Vec<(usize, String)> = match cluster.status() {
        Ok(nodes) => nodes.iter().enumerate().filter(|(_, n)| n.running).map(|(i, n)| (i, n.name.clone())).collect(),
        Err(e) => return (EventStatus::Failed, None, e.to_string()),
    };
    let targets = if matches!(action, EventAction::Repair(_)) { running.into_iter().take(1).collect() } else { running };
    if targets.is_empty() {
        return (EventStatus::Failed, None, "no local node is running".into());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let results: Vec<(String, Result<std::process::Output, casslab_local::LocalError>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = targets.iter().map(|(i, name)| (name.clone(), scope.spawn(|| cluster.nodetool(*i, &refs)))).collect();
        handles.into_iter().map(|(name, h)| (name, h.join().expect("nodetool thread"))).collect()
    });
    let (mut status, mut code, mut out) = (EventStatus::Ok, Some(0), String::new());
    for (name, result) in results {
        match result {
            Ok(o) => {
                out.push_str(&format!("{name}: nodetool {} → {}\n", args.join(" "), o.status));
                out.push_str(&String::from_utf8_lossy(&o.stdout));
                out.push_str(&String::from_utf8_lossy(&o.stderr));
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
    use casslab_core::events::parse_event;

    #[test]
    fn local_actions_need_the_local_cluster_and_known_nodes() {
        let evs = vec![parse_event("10s exec true").unwrap()];
        check(&evs, None).unwrap();
        let kill = vec![parse_event("10s kill node2").unwrap()];
        let e = check(&kill, None).unwrap_err().to_string();
        assert!(e.contains("exec CMD"), "{e}");
        let cluster = LocalCluster::new(casslab_local::LocalOptions { nodes: 3, home: std::env::temp_dir().join("casslab-events-check"), ..Default::default() });
        check(&kill, Some(&cluster)).unwrap();
        let e = check(&[parse_event("10s stop dc9").unwrap()], Some(&cluster)).unwrap_err().to_string();
        assert!(e.contains("dc9") && e.contains("node2"), "{e}");
    }

    #[test]
    fn exec_records_exit_status_and_output() {
        let (status, code, out) = carry_out(&EventAction::Exec("echo hi; echo oops >&2; exit 3".into()), None);
        assert_eq!((status, code), (EventStatus::Failed, Some(3)));
        assert!(out.contains("hi") && out.contains("oops"), "{out}");
        assert_eq!(carry_out(&EventAction::Exec("true".into()), None).0, EventStatus::Ok);
        assert_eq!(carry_out(&EventAction::Flush(None), None).0, EventStatus::Failed);
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(table_args(&Some("ks.t".into())), ["ks", "t"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_timeline_fires_on_time_and_skips_what_the_run_outlived() {
        let evs = vec![parse_event("200ms exec sleep 0.3").unwrap(), parse_event("50ms exec echo first").unwrap(), parse_event("1h exec true").unwrap()];
        // the run phase started 1000 ms after the engine
        let t = Timeline::start(evs, 1_000);
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
}
