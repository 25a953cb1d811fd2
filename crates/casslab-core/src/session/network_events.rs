//! A run's network events (`partition dc1|dc2`, `heal`, `isolate node3`, `slow node2 50ms`,
//! `lossy dc2 5%`, `client-loses dc1`) on a cluster casslab controls: checked before the run
//! (a cluster whose network casslab changes, and nodes it has), carried out through the
//! [`ClusterControl`] seam as a [`NetworkChange`] on node indexes, and the heal at the run's end
//! when the run left a fault in force — a run's faults do not outlive it. The timeline fires
//! them beside the other events.

use super::event_check_error::EventCheckError;
use super::observer::{Observer, SessionEvent};
use crate::cluster::{ClusterControl, ControlError};
use crate::events::{EventAction, EventRecord, EventSpec, EventStatus, NetworkAction};
use crate::network::NetworkChange;
use crate::notice::Notice;

/// Checks one network event: the run has a cluster casslab controls, whose network it can
/// change, with the nodes and data centers the event names.
pub(crate) fn check(e: &EventSpec, control: Option<&dyn ClusterControl>) -> Result<(), EventCheckError> {
    let Some(cluster) = control else {
        return Err(EventCheckError::NetworkNeedsLocalCluster { spec: e.text.clone(), action: e.action.name(), at_s: e.at_ms / 1000 });
    };
    cluster.network_controlled().map_err(|reason| EventCheckError::NoNetworkControl { spec: e.text.clone(), reason })?;
    for selector in e.action.network().map(NetworkAction::selectors).unwrap_or_default() {
        cluster.select(selector).map_err(|source| EventCheckError::UnknownNodes { spec: e.text.clone(), error: source })?;
    }
    Ok(())
}

/// The nodes `selectors` name together, in index order, once each.
fn nodes_of<'a>(cluster: &dyn ClusterControl, selectors: impl IntoIterator<Item = &'a String>) -> Result<Vec<usize>, ControlError> {
    let mut nodes = Vec::new();
    for selector in selectors {
        nodes.extend(cluster.select(selector)?);
    }
    nodes.sort_unstable();
    nodes.dedup();
    Ok(nodes)
}

/// The change a network action makes, on the cluster's node indexes.
pub(crate) fn change_of(action: &NetworkAction, cluster: &dyn ClusterControl) -> Result<NetworkChange, ControlError> {
    let one = |t: &String| nodes_of(cluster, [t]);
    Ok(match action {
        NetworkAction::Partition(sides) => NetworkChange::Partition { sides: sides.iter().map(|side| nodes_of(cluster, side)).collect::<Result<_, _>>()? },
        NetworkAction::Heal => NetworkChange::Heal,
        NetworkAction::Isolate(t) => NetworkChange::Isolate { nodes: one(t)? },
        NetworkAction::Slow(t, rtt) => NetworkChange::Slow { nodes: one(t)?, rtt: *rtt },
        NetworkAction::Lossy(t, pct) => NetworkChange::Lossy { nodes: one(t)?, loss_pct: *pct },
        NetworkAction::ClientLoses(t) => NetworkChange::ClientLoses { nodes: one(t)? },
    })
}

/// Carries out a network action (blocking): its status and what the controller said.
pub(crate) fn carry_out(action: &NetworkAction, cluster: &dyn ClusterControl) -> (EventStatus, Option<i32>, String) {
    let mut lines = Vec::new();
    let result = change_of(action, cluster).and_then(|change| cluster.change_network(&change, &mut |l| lines.push(l.to_string())));
    match result {
        Ok(()) => (EventStatus::Ok, None, lines.join("\n")),
        Err(e) => {
            lines.push(e.to_string());
            (EventStatus::Failed, None, lines.join("\n"))
        }
    }
}

/// Heals the network when the last network event the run carried out (of `records`, whose
/// specs are `specs` by position) left a fault in force, and tells the observer.
pub(crate) fn heal_left_faults(specs: &[EventSpec], records: &[EventRecord], control: Option<&dyn ClusterControl>, observer: &dyn Observer) {
    let last = records.iter().filter(|r| r.status == EventStatus::Ok).filter_map(|r| specs.get(r.seq as usize)).rfind(|s| s.action.is_network());
    let (Some(spec), Some(cluster)) = (last, control) else { return };
    if spec.action == EventAction::Network(NetworkAction::Heal) {
        return;
    }
    let said = match cluster.change_network(&NetworkChange::Heal, &mut |_| {}) {
        Ok(()) => format!("the run ended with a network fault in force (its last: {}): healed, as a run's faults end with it", spec.label()),
        Err(e) => format!("the run ended with a network fault in force (its last: {}) and healing it failed: {e}", spec.label()),
    };
    observer.on(&SessionEvent::Notice(&Notice::Cluster(said)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Applied, ControlledNode, ServerSpec};
    use crate::events::parse_event;
    use std::process::Output;
    use std::sync::Mutex;

    /// Two data centers of two nodes (dc1: node1, node2; dc2: node3, node4) whose network
    /// changes are recorded; `relayed: false` refuses them as a cluster without casslab's relay.
    struct Net {
        relayed: bool,
        changes: Mutex<Vec<NetworkChange>>,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("no node or data center \"{0}\"")]
    struct Unknown(String);

    impl ClusterControl for Net {
        fn select(&self, selector: &str) -> Result<Vec<usize>, ControlError> {
            match selector {
                "dc1" => Ok(vec![0, 1]),
                "dc2" => Ok(vec![2, 3]),
                s => match s.strip_prefix("node").and_then(|n| n.parse::<usize>().ok()).filter(|n| (1..=4).contains(n)) {
                    Some(n) => Ok(vec![n - 1]),
                    None => Err(ControlError::new(Unknown(s.into()))),
                },
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
            action()
        }
        fn nodetool(&self, _: usize, _: &[&str]) -> Result<Output, ControlError> {
            Err(ControlError::new(std::io::Error::other("no nodetool")))
        }
        fn definition(&self) -> ServerSpec {
            ServerSpec::default()
        }
        fn check(&self, _: &ServerSpec, _: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
            Ok(())
        }
        fn apply(&self, _: &ServerSpec, _: bool, _: &mut dyn FnMut(&str)) -> Result<Applied, ControlError> {
            Ok(Applied::default())
        }
        fn network_controlled(&self) -> Result<(), String> {
            if self.relayed {
                Ok(())
            } else {
                Err("start it with --relay".into())
            }
        }
        fn change_network(&self, change: &NetworkChange, log: &mut dyn FnMut(&str)) -> Result<(), ControlError> {
            self.network_controlled().map_err(|e| ControlError::new(std::io::Error::other(e)))?;
            log("changed");
            self.changes.lock().unwrap().push(change.clone());
            Ok(())
        }
    }

    fn net(relayed: bool) -> Net {
        Net { relayed, changes: Mutex::new(Vec::new()) }
    }

    #[test]
    fn network_events_need_a_relayed_local_cluster_and_known_nodes() {
        let partition = parse_event("30s partition dc1|dc2").unwrap();
        let e = check(&partition, None).unwrap_err().to_string();
        assert!(e.contains("--hosts") && e.contains("30s exec") && e.contains("iptables"), "{e}");
        let e = check(&partition, Some(&net(false))).unwrap_err().to_string();
        assert!(e.contains("start it with --relay"), "{e}");
        check(&partition, Some(&net(true))).unwrap();
        let e = check(&parse_event("30s isolate node9").unwrap(), Some(&net(true))).unwrap_err().to_string();
        assert!(e.contains("node9"), "{e}");
    }

    #[test]
    fn actions_become_changes_on_node_indexes() {
        let cluster = net(true);
        let change = |spec: &str| change_of(parse_event(spec).unwrap().action.network().unwrap(), &cluster).unwrap();
        assert_eq!(change("1s partition dc1|dc2"), NetworkChange::Partition { sides: vec![vec![0, 1], vec![2, 3]] });
        assert_eq!(change("1s partition node2,node1,dc1|node4"), NetworkChange::Partition { sides: vec![vec![0, 1], vec![3]] });
        assert_eq!(change("1s isolate node3"), NetworkChange::Isolate { nodes: vec![2] });
        assert_eq!(change("1s slow dc2 50ms"), NetworkChange::Slow { nodes: vec![2, 3], rtt: crate::network::Rtt::from_ms(50) });
        assert_eq!(change("1s lossy node1 5%"), NetworkChange::Lossy { nodes: vec![0], loss_pct: 5.0 });
        assert_eq!(change("1s client-loses dc1"), NetworkChange::ClientLoses { nodes: vec![0, 1] });
        assert_eq!(change("1s heal"), NetworkChange::Heal);
        let (status, _, out) = carry_out(parse_event("1s isolate node3").unwrap().action.network().unwrap(), &cluster);
        assert_eq!((status, out.as_str()), (EventStatus::Ok, "changed"));
        let (status, _, out) = carry_out(parse_event("1s isolate node3").unwrap().action.network().unwrap(), &net(false));
        assert_eq!(status, EventStatus::Failed);
        assert!(out.contains("start it with --relay"), "{out}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_timeline_heals_what_its_run_left_when_the_run_ends_not_before() {
        use crate::engine::RunClock;
        use crate::session::timeline::Timeline;
        let cluster = std::sync::Arc::new(net(true));
        let evs = vec![parse_event("10ms partition dc1|dc2").unwrap()];
        let clock = RunClock { t0: tokio::time::Instant::now(), t0_unix_ms: 0 };
        let t =
            Timeline::start(evs, clock, 0, Some(cluster.clone() as std::sync::Arc<dyn ClusterControl>), std::sync::Arc::new(crate::session::Quiet), None, None);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(cluster.changes.lock().unwrap().len(), 1, "the partition holds while the run goes on");
        let records = t.finish().await;
        assert_eq!(records[0].status, EventStatus::Ok);
        assert_eq!(*cluster.changes.lock().unwrap(), [NetworkChange::Partition { sides: vec![vec![0, 1], vec![2, 3]] }, NetworkChange::Heal]);
    }

    #[test]
    fn a_fault_left_in_force_is_healed_at_the_end_and_said() {
        let specs: Vec<EventSpec> =
            ["1s partition dc1|dc2", "2s heal", "3s slow node2 20ms", "4s kill node1"].iter().map(|s| parse_event(s).unwrap()).collect();
        let record = |seq: u32, status: EventStatus| EventRecord {
            seq,
            spec: specs[seq as usize].text.clone(),
            action: specs[seq as usize].action.name().into(),
            target: None,
            start_ms: 0,
            end_ms: 0,
            status,
            exit_code: None,
            output_tail: String::new(),
        };
        struct Said(Mutex<Vec<String>>);
        impl Observer for Said {
            fn on(&self, e: &SessionEvent) {
                if let SessionEvent::Notice(n) = e {
                    self.0.lock().unwrap().push(n.to_string());
                }
            }
        }
        // the slow link was the last network event: healed
        let (cluster, said) = (net(true), Said(Mutex::new(Vec::new())));
        let records: Vec<EventRecord> = (0..4).map(|i| record(i, EventStatus::Ok)).collect();
        heal_left_faults(&specs, &records, Some(&cluster), &said);
        assert_eq!(*cluster.changes.lock().unwrap(), [NetworkChange::Heal]);
        assert!(said.0.lock().unwrap()[0].contains("slow node2 20ms"), "{:?}", said.0.lock().unwrap());
        // the last one that ran was the heal (the slow link never came): nothing to do
        let cluster = net(true);
        let records = [record(0, EventStatus::Ok), record(1, EventStatus::Ok), record(2, EventStatus::Skipped)];
        heal_left_faults(&specs, &records, Some(&cluster), &said);
        assert!(cluster.changes.lock().unwrap().is_empty());
    }
}
