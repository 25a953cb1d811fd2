//! When an experiment's variants run: one after the other in blocks (`design: blocks`, the
//! runs of a block in counterbalanced order), or at the same time (`design: simultaneous`):
//! every block is one stretch of time in which all variants run side by side on one clock,
//! the scheduled operations shared among them in turn, so that whatever the machine does in
//! those seconds it does to every variant. What that needs of the variants, where each of them
//! runs (the [`Layout`]), which share of the rate each gets and what they share is decided
//! here, from the experiment file alone; running them is `session::together`'s job.

use super::{Experiment, Variant};
use crate::load_shape::LoadShape;
use crate::workload::TargetKind;

/// How the variants' runs are placed in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// One after the other, in blocks of one run of each (counterbalanced).
    Blocks,
    /// At the same time, every block one stretch of time for all of them.
    Simultaneous,
}

impl Design {
    pub const NAMES: &'static str = "simultaneous or blocks";

    pub fn parse(s: &str) -> Option<Design> {
        match s.trim().to_ascii_lowercase().as_str() {
            "blocks" | "sequential" | "in-turn" => Some(Design::Blocks),
            "simultaneous" | "together" | "same-time" => Some(Design::Simultaneous),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Design::Blocks => "blocks",
            Design::Simultaneous => "simultaneous",
        }
    }
}

/// Where the variants run when they run at the same time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// Every variant on the one cluster (and Redis server) of the run: each in a keyspace of
    /// its own, the cluster's CPU, disk, memory, compaction and caches shared; the rate is
    /// shared among them, so the cluster sees the stated rate.
    Shared,
    /// Variants that differ in the server: each on a cluster of its own that casslab starts
    /// beside the first (its own JVMs, addresses and data), on this machine; each variant runs
    /// at the full rate, as it would alone.
    Beside,
    /// Each variant on servers of its own that casslab does not start: a variant's `hosts:`,
    /// or a Redis server beside a Cassandra cluster; each at the full rate.
    Apart,
}

impl Layout {
    pub fn as_str(&self) -> &'static str {
        match self {
            Layout::Shared => "shared",
            Layout::Beside => "beside",
            Layout::Apart => "apart",
        }
    }
}

/// The server a variant's runs go to, as far as the file says: which kind, its own hosts,
/// its own server definition.
fn server_of(v: &Variant) -> (TargetKind, &[String], Option<&crate::cluster::ServerSpec>) {
    (v.workload.target, v.hosts.as_slice(), v.workload.cluster.as_ref())
}

/// Whether two variants run on one server (the same kind, hosts and server definition): the
/// rates of one server in a `rates:` experiment, or every variant of a shared layout.
pub fn same_server(a: &Variant, b: &Variant) -> bool {
    server_of(a) == server_of(b)
}

/// Where the variants of `exp` run at the same time.
pub fn layout_of(exp: &Experiment) -> Layout {
    let first = server_of(&exp.variants[0]);
    let same_server = exp.variants.iter().all(|v| server_of(v) == first);
    if same_server {
        return Layout::Shared;
    }
    let kinds_differ = exp.variants.iter().any(|v| v.workload.target != first.0);
    let own_hosts = exp.variants.iter().any(|v| !v.hosts.is_empty());
    if kinds_differ || own_hosts {
        Layout::Apart
    } else {
        Layout::Beside
    }
}

/// Why `exp` cannot run its variants at the same time, in words; `None` when it can.
/// `find_max`: the experiment searches each variant's highest rate.
pub fn why_not_simultaneous(exp: &Experiment, find_max: bool) -> Option<String> {
    if find_max {
        return Some("--find-max searches each variant's highest rate, one search after the other".into());
    }
    if !exp.rates.is_empty() && layout_of(exp) == Layout::Shared {
        return Some("its variants are rates (`rates:`) on one cluster, where the rate is the load itself: each runs on its own".into());
    }
    if exp.variants.len() < 2 {
        return Some("it has a single variant".into());
    }
    if let Some(v) = exp.variants.iter().find(|v| !v.workload.events.is_empty()) {
        return Some(format!("variant {} has events, which would disturb every variant running beside it", v.name));
    }
    if layout_of(exp) == Layout::Shared {
        let keyspaces: Vec<&str> = exp.variants.iter().map(|v| v.workload.keyspace.as_str()).collect();
        let shared = keyspaces.iter().enumerate().any(|(i, k)| keyspaces[..i].contains(k));
        if shared && exp.variants.iter().any(|v| v.workload.target == TargetKind::Cql) {
            return Some("its variants share a keyspace (`shared_keyspace: true`), where their tables would meet".into());
        }
    }
    None
}

/// The variants (indexes) that run together in each part of a block: all of them, or with
/// `rates:` the variants of one rate (a block then runs the rates one after the other).
pub fn groups(exp: &Experiment) -> Vec<Vec<usize>> {
    let n = exp.variants.len();
    let per_rate = if exp.rates.is_empty() { n } else { (n / exp.rates.len()).max(1) };
    (0..n).collect::<Vec<_>>().chunks(per_rate).map(<[usize]>::to_vec).collect()
}

/// The rate variant `index` of `group` runs at when they run at the same time: `rate` (its
/// own, or the experiment's) divided among the variants of the group that share its server,
/// so that every server sees the rate the file states; `None` (closed loop) stays `None`.
pub fn rate_together(exp: &Experiment, group: &[usize], index: usize, rate: Option<&LoadShape>) -> Option<LoadShape> {
    let rate = rate?;
    let me = server_of(&exp.variants[index]);
    let sharing = group.iter().filter(|i| server_of(&exp.variants[**i]) == me).count().max(1);
    Some(rate.scaled(1.0 / sharing as f64))
}

/// What the variants share when they run at the same time, in words, for the output.
pub fn shared_words(layout: &Layout, variants: usize, cores: usize) -> String {
    match layout {
        Layout::Shared => format!(
            "the {variants} variants ran at the same time on one cluster, each in its own keyspace, sharing its CPU, disk, memory, compaction and caches (and this machine's {cores} cores with the client); the rate was divided among them"
        ),
        Layout::Beside => format!(
            "the {variants} variants ran at the same time, each on a cluster of its own on this machine, each at the full rate; they shared this machine's {cores} cores (no cluster is pinned to cores of its own), its disk and the client"
        ),
        Layout::Apart => {
            format!("the {variants} variants ran at the same time on servers of their own, each at the full rate; they shared the client (this machine's {cores} cores)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn experiment(text: &str) -> Experiment {
        let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        crate::experiment::load_experiment(f.path(), &BTreeMap::new()).unwrap()
    }

    #[test]
    fn variants_of_a_data_model_share_a_cluster_and_divide_the_rate() {
        let e = experiment("workload: kv\nrate: 1000\nvariants:\n  a: {}\n  b: { params: { valuesize: 500 } }\n  c: {}\n");
        assert_eq!(layout_of(&e), Layout::Shared);
        assert_eq!(why_not_simultaneous(&e, false), None);
        assert_eq!(groups(&e), [vec![0, 1, 2]]);
        let r = rate_together(&e, &[0, 1, 2], 1, e.rate.as_ref()).unwrap();
        assert!((r.as_fixed().unwrap() - 1000.0 / 3.0).abs() < 1e-9);
        assert_eq!(rate_together(&e, &[0, 1, 2], 0, None), None);
    }

    #[test]
    fn variants_of_a_server_run_beside_each_other_at_the_full_rate() {
        let e = experiment("workload: kv\nrate: 800\nvariants:\n  g1:\n    cluster: { gc: g1 }\n  zgc:\n    cluster: { gc: zgc }\n");
        assert_eq!(layout_of(&e), Layout::Beside);
        assert_eq!(rate_together(&e, &[0, 1], 1, e.rate.as_ref()).and_then(|r| r.as_fixed()), Some(800.0));
        // one server definition for every variant is one cluster
        let same = experiment("workload: kv\ncluster: { heap_mb: 1024 }\nvariants:\n  a: {}\n  b: { params: { valuesize: 10 } }\n");
        assert_eq!(layout_of(&same), Layout::Shared);
    }

    #[test]
    fn redis_beside_cassandra_and_own_hosts_are_apart() {
        let e = experiment("workload: ycsb-a\nrate: 500\nvariants:\n  cassandra: {}\n  redis: { workload: ycsb-a-redis }\n");
        assert_eq!(layout_of(&e), Layout::Apart);
        assert_eq!(rate_together(&e, &[0, 1], 1, e.rate.as_ref()).and_then(|r| r.as_fixed()), Some(500.0));
        // with rates, each rate's variants run together, each at that rate
        let sweep = experiment("workload: ycsb-a\nrates: [500, 1000]\nvariants:\n  cassandra: {}\n  redis: { workload: ycsb-a-redis }\n");
        assert_eq!(why_not_simultaneous(&sweep, false), None);
        assert_eq!(groups(&sweep), [vec![0, 1], vec![2, 3]]);
        let v3 = &sweep.variants[3];
        assert_eq!((v3.name.as_str(), rate_together(&sweep, &[2, 3], 3, v3.rate.as_ref()).and_then(|r| r.as_fixed())), ("redis@1000", Some(1000.0)));
        let h = experiment("workload: kv\nvariants:\n  a: {}\n  b: { hosts: [10.0.0.5] }\n");
        assert_eq!(layout_of(&h), Layout::Apart);
    }

    #[test]
    fn what_cannot_run_at_the_same_time_says_why() {
        let rates = experiment("workload: kv\nrates: [100, 200]\nvariants:\n  a: {}\n  b: {}\n");
        assert!(why_not_simultaneous(&rates, false).unwrap().contains("rates (`rates:`) on one cluster"));
        let events = experiment("workload: kv\nvariants:\n  a: {}\n  b: { events: ['5s kill node2'] }\n");
        assert!(why_not_simultaneous(&events, false).unwrap().contains("variant b has events"));
        // fresh loads: every block loads all variants afresh, together
        let fresh = experiment("workload: kv\nload: fresh\nvariants:\n  a: {}\n  b: {}\n");
        assert_eq!(why_not_simultaneous(&fresh, false), None);
        let shared = experiment("workload: kv\nshared_keyspace: true\nvariants:\n  a: {}\n  b: {}\n");
        assert!(why_not_simultaneous(&shared, false).unwrap().contains("share a keyspace"));
        let ok = experiment("workload: kv\nvariants:\n  a: {}\n  b: {}\n");
        assert!(why_not_simultaneous(&ok, true).unwrap().contains("--find-max"));
        assert_eq!(Design::parse("Simultaneous"), Some(Design::Simultaneous));
        assert_eq!(Design::parse("blocks"), Some(Design::Blocks));
        assert_eq!(Design::parse("x"), None);
    }
}
