//! Events that change the run or the cluster under it, carried out for the timeline: a change
//! of the offered rate (`rate 800`, `ramp 800 over 10s`: handed to the engine, which changes
//! its schedule from that moment), and the cluster's topology (`add node [DC]`, `decommission
//! NODE`, `replace NODE`, through the [`ClusterControl`] seam, each ending with the ring as the
//! first node sees it), and `snapshot [KS]` (with the size it took). The checks that refuse
//! them before a run (a rate change without a rate) are here too.

use super::event_check_error::EventCheckError;
use crate::cluster::ClusterControl;
use crate::config::RunConfig;
use crate::engine::RateChange;
use crate::events::{EventSpec, EventStatus};
use crate::workload::Workload;
use tokio::sync::mpsc::UnboundedSender;

/// `cfg` with the load the workload's `run:` asks for where the config sets none: its `rate`
/// (a level or a schedule), else its `concurrency` schedule. A schedule of the config's own
/// (the command line's) that has an end decides the run's length unless `duration_s` or
/// `count` is set (the schedule counts from the start of the run phase, warm-up included). Under a schedule
/// of requests in flight, `concurrency` is its highest level. This is the one place that
/// decides whether a run has a rate: the merged config's `rate`.
pub fn with_workload_load(mut cfg: RunConfig, w: &Workload) -> RunConfig {
    let own = cfg.rate.is_some() || cfg.concurrency_shape.is_some();
    if let (false, Some(r)) = (own, &w.run) {
        match (&r.rate, &r.concurrency) {
            (Some(rate), _) => cfg.rate = Some(rate.clone()),
            (None, Some(c)) => cfg.concurrency_shape = Some(c.clone()),
            (None, None) => {}
        }
    }
    let length_s = cfg.rate.as_ref().or(cfg.concurrency_shape.as_ref()).and_then(|s| s.length_s());
    if let (true, None, None, Some(len)) = (own, cfg.duration_s, cfg.count, length_s) {
        let warmup_s = cfg.warmup_s.or(w.run.as_ref().map(|r| r.warmup_s)).unwrap_or(0.0);
        cfg.duration_s = Some((len - warmup_s).max(cfg.interval_ms as f64 / 1000.0));
    }
    if let Some(c) = &cfg.concurrency_shape {
        cfg.concurrency = c.peak().round().max(1.0) as usize;
    }
    cfg
}

/// What carrying out an event gave: its status, the exit code of its command, its output.
pub(super) type Outcome = (EventStatus, Option<i32>, String);

/// Refuses, before anything runs, a change of rate in a run that has no rate to change
/// (closed loop, or a replay of captured traffic).
pub fn check_rate_events(events: &[EventSpec], has_rate: bool) -> Result<(), EventCheckError> {
    match events.iter().find(|e| e.action.changes_rate()) {
        Some(e) if !has_rate => Err(EventCheckError::NeedsRate { spec: e.text.clone() }),
        _ => Ok(()),
    }
}

/// Hands a change of the offered rate to the engine (`rate 800`, `ramp 800 over 10s`).
pub(super) fn change_rate(change: RateChange, rates: Option<&UnboundedSender<RateChange>>) -> Outcome {
    let said = format!("the rate goes to {}/s{}", change.to_per_s, if change.over_s > 0.0 { format!(" over {} s", change.over_s) } else { String::new() });
    match rates.map(|r| r.send(change)) {
        Some(Ok(())) => (EventStatus::Ok, None, said),
        _ => (EventStatus::Failed, None, "the run has no rate to change (or its run phase is over)".into()),
    }
}

/// The change of rate an event asks for, as the engine takes it.
pub(super) fn rate_change(to_per_s: f64, over_s: f64) -> RateChange {
    let label = match over_s > 0.0 {
        true => format!("ramp {to_per_s} over {} (event)", crate::load_shape::dur(over_s)),
        false => format!("{to_per_s} (event)"),
    };
    RateChange { to_per_s, over_s, label }
}

/// A change of the cluster's topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Topology<'a> {
    AddNode(Option<&'a str>),
    Decommission(&'a str),
    Replace(&'a str),
}

/// Carries out a change of topology (blocking), ending with the ring as the first node sees it.
pub(super) fn change_topology(cluster: &dyn ClusterControl, change: Topology<'_>) -> Outcome {
    let mut lines: Vec<String> = Vec::new();
    let mut log = |l: &str| lines.push(l.to_string());
    let one = |sel: &str| match cluster.select(sel) {
        Ok(nodes) if nodes.len() == 1 => Ok(nodes[0]),
        Ok(nodes) => Err(crate::cluster::ControlError::new(OneNode { selector: sel.to_string(), nodes: nodes.len() })),
        Err(e) => Err(e),
    };
    let result = match change {
        Topology::AddNode(dc) => cluster.add_node(dc, &mut log).map(|_| ()),
        Topology::Decommission(sel) => one(sel).and_then(|n| cluster.decommission(n, &mut log)),
        Topology::Replace(sel) => one(sel).and_then(|n| cluster.replace(n, &mut log)),
    };
    let status = match &result {
        Ok(()) => EventStatus::Ok,
        Err(e) => {
            lines.push(e.to_string());
            EventStatus::Failed
        }
    };
    lines.push(ring(cluster));
    (status, None, lines.join("\n"))
}

/// `decommission dc1` names several nodes: these events act on one.
#[derive(Debug, thiserror::Error)]
#[error("\"{selector}\" names {nodes} nodes: decommission and replace act on one node (node2, 127.0.0.2)")]
struct OneNode {
    selector: String,
    nodes: usize,
}

/// `nodetool status` of the first running node, for the event's output.
fn ring(cluster: &dyn ClusterControl) -> String {
    let first = cluster.nodes().ok().and_then(|nodes| nodes.iter().position(|n| n.running));
    match first.map(|i| cluster.nodetool(i, &["status"])) {
        Some(Ok(o)) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let lines: Vec<&str> =
                text.lines().filter(|l| l.starts_with("Datacenter") || l.len() > 2 && l.as_bytes()[2] == b' ' && "UD?".contains(&l[..1])).collect();
            format!("ring afterwards:\n{}", lines.join("\n"))
        }
        _ => "ring afterwards: no node answers nodetool".into(),
    }
}

/// The streaming limit, `n` MiB/s (0: none), on every running node: for streams of parts of
/// SSTables and for whole SSTables sent as they are (Cassandra 4.0+ sends those unless told
/// otherwise, and the first limit does not bound them).
pub(super) fn stream_throughput(cluster: &dyn ClusterControl, n: u32) -> Outcome {
    let running: Vec<(usize, String)> = match cluster.nodes() {
        Ok(nodes) => nodes.iter().enumerate().filter(|(_, x)| x.running).map(|(i, x)| (i, x.name.clone())).collect(),
        Err(e) => return (EventStatus::Failed, None, e.to_string()),
    };
    if running.is_empty() {
        return (EventStatus::Failed, None, "no local node is running".into());
    }
    let value = n.to_string();
    let set = |i: usize, name: &str| -> (bool, String) {
        let mut said = String::new();
        let mut ok = true;
        for args in [["setstreamthroughput", "--mib", value.as_str()], ["setstreamthroughput", "-e", value.as_str()]] {
            match cluster.nodetool(i, &args) {
                Ok(o) if o.status.success() => said.push_str(&format!("{name}: nodetool {} → ok\n", args.join(" "))),
                Ok(o) => {
                    ok = false;
                    said.push_str(&format!("{name}: nodetool {} → {}\n{}", args.join(" "), o.status, quiet(&String::from_utf8_lossy(&o.stderr))));
                }
                Err(e) => {
                    ok = false;
                    said.push_str(&format!("{name}: {e}\n"));
                }
            }
        }
        (ok, said)
    };
    // every node at once (a nodetool call starts a JVM)
    let results: Vec<(bool, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = running.iter().map(|(i, name)| scope.spawn(move || set(*i, name))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or((false, "nodetool thread failed\n".into()))).collect()
    });
    let status = if results.iter().all(|r| r.0) { EventStatus::Ok } else { EventStatus::Failed };
    (status, None, results.into_iter().map(|r| r.1).collect())
}

/// nodetool's output without the start-up lines its logging prints at DEBUG.
pub(super) fn quiet(text: &str) -> String {
    text.lines().filter(|l| !l.contains("] DEBUG ")).map(|l| format!("{l}\n")).collect()
}

/// `nodetool snapshot -t TAG [KS]` on every running node, then the size each snapshot takes
/// (`nodetool listsnapshots`: its files' size on disk, and its true size — what it holds that
/// live data no longer shares).
pub(super) fn snapshot(cluster: &dyn ClusterControl, keyspace: Option<&str>) -> Outcome {
    let tag = format!("casslab-{}", crate::engine::unix_now_ms());
    let running: Vec<(usize, String)> = match cluster.nodes() {
        Ok(nodes) => nodes.iter().enumerate().filter(|(_, n)| n.running).map(|(i, n)| (i, n.name.clone())).collect(),
        Err(e) => return (EventStatus::Failed, None, e.to_string()),
    };
    let mut args = vec!["snapshot", "-t", tag.as_str()];
    args.extend(keyspace);
    let (mut status, mut out, mut total) = (EventStatus::Ok, String::new(), (0.0, 0.0));
    for (i, name) in &running {
        match cluster.nodetool(*i, &args) {
            Ok(o) if o.status.success() => {
                let list = cluster.nodetool(*i, &["listsnapshots"]).map(|l| String::from_utf8_lossy(&l.stdout).into_owned()).unwrap_or_default();
                let (on_disk, true_size) = snapshot_size(&list, &tag);
                total = (total.0 + on_disk, total.1 + true_size);
                out.push_str(&format!("{name}: snapshot {tag}: {} on disk, {} true size\n", mib(on_disk), mib(true_size)));
            }
            Ok(o) => {
                status = EventStatus::Failed;
                out.push_str(&format!("{name}: nodetool {} → {}\n{}", args.join(" "), o.status, String::from_utf8_lossy(&o.stderr)));
            }
            Err(e) => {
                status = EventStatus::Failed;
                out.push_str(&format!("{name}: {e}\n"));
            }
        }
    }
    out.push_str(&format!("snapshot {tag} on {} nodes: {} on disk, {} true size", running.len(), mib(total.0), mib(total.1)));
    (status, None, out)
}

fn mib(bytes: f64) -> String {
    format!("{:.1} MiB", bytes / 1_048_576.0)
}

/// Bytes as nodetool prints them: `4.52 MiB`, `0 bytes`, `1.2 KiB`.
fn bytes_of(value: &str, unit: &str) -> Option<f64> {
    let v: f64 = value.parse().ok()?;
    let scale = match unit {
        "bytes" | "B" => 1.0,
        "KiB" | "KB" => 1024.0,
        "MiB" | "MB" => 1_048_576.0,
        "GiB" | "GB" => 1_073_741_824.0,
        "TiB" | "TB" => 1_099_511_627_776.0,
        _ => return None,
    };
    Some(v * scale)
}

/// The size on disk and the true size of snapshot `tag` in `nodetool listsnapshots` output,
/// summed over its tables (each row: name, keyspace, table, true size, size on disk, ...).
fn snapshot_size(listing: &str, tag: &str) -> (f64, f64) {
    let mut sums = (0.0, 0.0);
    for line in listing.lines().filter(|l| l.split_whitespace().next() == Some(tag)) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let sizes: Vec<f64> = words.windows(2).filter_map(|w| bytes_of(w[0], w[1])).collect();
        if let [true_size, on_disk, ..] = sizes.as_slice() {
            sums = (sums.0 + on_disk, sums.1 + true_size);
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::parse_event;

    #[test]
    fn a_rate_change_needs_a_rate() {
        let evs = vec![parse_event("10s kill node2").unwrap(), parse_event("20s ramp 900 over 5s").unwrap()];
        check_rate_events(&evs, true).unwrap();
        let e = check_rate_events(&evs, false).unwrap_err().to_string();
        assert!(e.contains("20s ramp 900 over 5s") && e.contains("--rate"), "{e}");
        check_rate_events(&evs[..1], false).unwrap();
    }

    #[test]
    fn rate_changes_go_to_the_engine() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let (status, _, out) = change_rate(rate_change(900.0, 5.0), Some(&tx));
        assert_eq!(status, EventStatus::Ok, "{out}");
        assert_eq!(rx.try_recv().unwrap(), RateChange { to_per_s: 900.0, over_s: 5.0, label: "ramp 900 over 5s (event)".into() });
        assert_eq!(rate_change(5.0, 0.0).label, "5 (event)");
        assert_eq!(change_rate(rate_change(5.0, 0.0), None).0, EventStatus::Failed, "no rate to change");
    }

    #[test]
    fn snapshot_sizes_are_read_from_listsnapshots() {
        let listing = "Snapshot Details: \n\
Snapshot name    Keyspace name Column family name True size Size on disk Creation time            Expiration time\n\
casslab-17       ks            kv                 0 bytes   4.5 MiB      2026-01-01T00:00:00.000Z\n\
casslab-17       ks            kv2                1 KiB     512 KiB      2026-01-01T00:00:00.000Z\n\
other            ks            kv                 0 bytes   9 MiB        2026-01-01T00:00:00.000Z\n\n\
Total TrueDiskSpaceUsed: 1 KiB\n";
        assert_eq!(snapshot_size(listing, "casslab-17"), (4.5 * 1_048_576.0 + 512.0 * 1024.0, 1024.0));
        assert_eq!(snapshot_size(listing, "none"), (0.0, 0.0));
    }
}
