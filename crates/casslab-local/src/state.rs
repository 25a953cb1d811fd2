//! `home/cluster.json`: the options a cluster was started with, saved so `status`,
//! `down` and other casslab commands can find the nodes later without the flags
//! used for `up`. A versioned file format of its own (not `LocalOptions`), written
//! atomically. It does not decide whether a node runs; `process` does. The server the
//! nodes run is one [`ServerSpec`], whose fields sit at the top level of the file (the
//! version as `cassandra_version`), as they always have: files written before it was one
//! struct read as they are, and older casslab versions read the files this one writes.

use std::fs;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use casslab_core::cluster::ServerSpec;
use serde::{Deserialize, Serialize};

use crate::layout::NodeLayout;
use crate::local_error::{IoContext, LocalError};
use crate::LocalOptions;

/// Version of the `cluster.json` layout; bump on incompatible changes.
pub const FORMAT_VERSION: u32 = 1;

/// One node as recorded in `cluster.json` (for people and other tools reading it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedNode {
    pub name: String,
    pub address: Ipv4Addr,
    pub cql_port: u16,
    pub storage_port: u16,
    pub jmx_port: u16,
    pub dir: PathBuf,
}

/// The contents of `cluster.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedCluster {
    pub format_version: u32,
    /// The server the nodes run, every field filled in ([`LocalOptions::full_server`]).
    #[serde(flatten, with = "on_disk")]
    pub server: ServerSpec,
    pub cluster_name: String,
    pub base_address: Ipv4Addr,
    pub cql_port: u16,
    pub storage_port: u16,
    /// Password authentication on (absent in files written before it existed: off).
    #[serde(default)]
    pub auth: bool,
    /// Client TLS on (absent in older files: off).
    #[serde(default)]
    pub tls: bool,
    /// The `java` the nodes run with and its version, as found when they were started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java_version: Option<String>,
    pub node_list: Vec<SavedNode>,
    /// The server as `local up` defined it, kept while a workload's definition runs instead
    /// (absent when the cluster runs as `local up` made it). Without the nodes and data
    /// centers: [`up_definition`] and [`with_up_definition`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<ServerSpec>,
    /// Names of the nodes that left the cluster (decommissioned), never started again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<String>,
}

/// The server part of `opts` that `up` keeps: all but the nodes and data centers.
pub fn up_definition(opts: &LocalOptions) -> ServerSpec {
    ServerSpec { nodes: None, dcs: None, ..opts.full_server() }
}

/// `opts` running the server `up` (from [`up_definition`]) on its own nodes.
pub fn with_up_definition(opts: &LocalOptions, up: &ServerSpec) -> LocalOptions {
    let server = ServerSpec { nodes: opts.server.nodes, dcs: opts.server.dcs.clone(), ..up.clone() };
    LocalOptions { server, ..opts.clone() }
}

/// The server's fields at the top level of `cluster.json`, the version as `cassandra_version`;
/// an empty list of data centers (which older files wrote) reads as none.
mod on_disk {
    use casslab_core::cluster::ServerSpec;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct OnDisk {
        cassandra_version: String,
        #[serde(flatten)]
        rest: ServerSpec,
    }

    pub fn serialize<S: Serializer>(server: &ServerSpec, s: S) -> Result<S::Ok, S::Error> {
        let version = server.version.clone().unwrap_or_default();
        OnDisk { cassandra_version: version, rest: ServerSpec { version: None, ..server.clone() } }.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ServerSpec, D::Error> {
        let OnDisk { cassandra_version, mut rest } = OnDisk::deserialize(d)?;
        rest.dcs = rest.dcs.filter(|d| !d.is_empty());
        Ok(ServerSpec { version: Some(cassandra_version), ..rest })
    }
}

/// Path of the file under `home`.
pub fn cluster_file(home: &Path) -> PathBuf {
    home.join("cluster.json")
}

/// How the server's fields are named in [`SavedCluster::difference`] (others by their key).
const LABELS: &[(&str, &str)] = &[("dcs", "data centers"), ("heap_mb", "heap MiB"), ("java_home", "java home"), ("gc", "GC"), ("jvm_options", "JVM options")];

/// A server field's value for people: text as it is, a list's items by spaces (data centers
/// as `name:count` by commas), a map as JSON; absent, as the other side's kind is when empty.
fn show(v: Option<&serde_json::Value>, other: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    match (v, other) {
        (Some(Value::String(s)), _) => s.clone(),
        (Some(Value::Array(items)), _) if items.iter().all(Value::is_array) => {
            items.iter().map(|p| p.as_array().into_iter().flatten().map(|x| show(Some(x), None)).collect::<Vec<_>>().join(":")).collect::<Vec<_>>().join(",")
        }
        (Some(Value::Array(items)), _) => items.iter().map(|x| show(Some(x), None)).collect::<Vec<_>>().join(" "),
        (Some(v), _) => v.to_string(),
        (None, Some(Value::Array(_))) => String::new(),
        (None, Some(Value::Object(_))) => "{}".to_string(),
        (None, _) => "-".to_string(),
    }
}

impl SavedCluster {
    pub fn new(opts: &LocalOptions, nodes: &[NodeLayout]) -> Self {
        SavedCluster {
            format_version: FORMAT_VERSION,
            server: opts.full_server(),
            cluster_name: opts.cluster_name.clone(),
            base_address: opts.base_address,
            cql_port: opts.cql_port,
            storage_port: opts.storage_port,
            auth: opts.auth,
            tls: opts.tls,
            java: None,
            java_version: None,
            up: None,
            left: opts.left.iter().map(|i| crate::layout::node_name(*i)).collect(),
            node_list: nodes
                .iter()
                .map(|n| SavedNode {
                    name: n.name.clone(),
                    address: n.address,
                    cql_port: n.cql_port,
                    storage_port: n.storage_port,
                    jmx_port: n.jmx_port,
                    dir: n.dir.clone(),
                })
                .collect(),
        }
    }

    /// The options this cluster was started with, rooted at `home`.
    pub fn to_options(&self, home: &Path) -> LocalOptions {
        let mut o = LocalOptions {
            home: home.to_path_buf(),
            server: self.server.clone(),
            base_address: self.base_address,
            cql_port: self.cql_port,
            storage_port: self.storage_port,
            cluster_name: self.cluster_name.clone(),
            auth: self.auth,
            tls: self.tls,
            left: self.left_indices(),
            ..LocalOptions::default()
        };
        o.server = o.full_server();
        o
    }

    /// The indices of the nodes that left (`node4` → 3).
    pub fn left_indices(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self.left.iter().filter_map(|n| n.strip_prefix("node")?.parse::<usize>().ok()?.checked_sub(1)).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// A human list of the settings that differ from `other`, or `None` when equal.
    pub fn difference(&self, other: &SavedCluster) -> Option<String> {
        let mut diffs = Vec::new();
        let mut check = |what: &str, a: String, b: String| {
            if a != b {
                diffs.push(format!("{what} {a} running, {b} asked"));
            }
        };
        // the server, field by field (its fields by their keys; the version, then the nodes, first)
        let fields = |s: &ServerSpec| match serde_json::to_value(s) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        let (mine, theirs) = (fields(&self.server), fields(&other.server));
        let mut keys: Vec<&String> = mine.keys().chain(theirs.keys().filter(|k| !mine.contains_key(*k))).collect();
        keys.sort_by_key(|k| (k.as_str() != "version", k.as_str() != "nodes", k.as_str()));
        for key in keys {
            let label = LABELS.iter().find(|(k, _)| k == key).map_or(key.as_str(), |(_, label)| label);
            check(label, show(mine.get(key), theirs.get(key)), show(theirs.get(key), mine.get(key)));
        }
        check("cluster name", self.cluster_name.clone(), other.cluster_name.clone());
        check("base address", self.base_address.to_string(), other.base_address.to_string());
        check("CQL port", self.cql_port.to_string(), other.cql_port.to_string());
        check("storage port", self.storage_port.to_string(), other.storage_port.to_string());
        let on_off = |on: bool| if on { "on" } else { "off" }.to_string();
        check("auth", on_off(self.auth), on_off(other.auth));
        check("TLS", on_off(self.tls), on_off(other.tls));
        check("nodes that left", self.left.join(" "), other.left.join(" "));
        (!diffs.is_empty()).then(|| diffs.join(", "))
    }

    /// [`SavedCluster::difference`] but for the distances, when both run relayed: a running
    /// relayed cluster takes new distances without a restart.
    pub fn difference_but_distances(&self, other: &SavedCluster) -> Option<String> {
        if !(self.server.relayed() && other.server.relayed()) {
            return self.difference(other);
        }
        let without = |s: &SavedCluster| {
            let mut s = s.clone();
            s.server.rtt.clear();
            s.server.client_rtt.clear();
            s.server.relay = Some(true);
            s
        };
        without(self).difference(&without(other))
    }

    /// Reads `home/cluster.json`.
    pub fn load(home: &Path) -> Result<Self, LocalError> {
        let path = cluster_file(home);
        let no = |reason: String| LocalError::NoSavedCluster { path: path.clone(), reason };
        let text = fs::read_to_string(&path).map_err(|e| no(e.to_string()))?;
        let saved: SavedCluster = serde_json::from_str(&text).map_err(|e| no(e.to_string()))?;
        if saved.format_version != FORMAT_VERSION {
            return Err(no(format!("format version {} is not the supported {FORMAT_VERSION}", saved.format_version)));
        }
        Ok(saved)
    }

    /// Writes `home/cluster.json` through a temporary file and a rename.
    pub fn save(&self, home: &Path) -> Result<(), LocalError> {
        let path = cluster_file(home);
        let tmp = home.join(".cluster.json.tmp");
        let text = serde_json::to_string_pretty(self).expect("SavedCluster always serializes");
        fs::create_dir_all(home).context(|| format!("creating {}", home.display()))?;
        fs::write(&tmp, text + "\n").context(|| format!("writing {}", tmp.display()))?;
        fs::rename(&tmp, &path).context(|| format!("writing {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::layouts;
    use casslab_core::cluster::Gc;

    /// `LocalOptions::default()` rooted at `home`, running `server` over the defaults.
    fn options(home: &Path, server: ServerSpec) -> LocalOptions {
        crate::options_for(&LocalOptions { home: home.to_path_buf(), ..LocalOptions::default() }, &server)
    }

    #[test]
    fn save_load_round_trip_and_options() {
        let tmp = tempfile::tempdir().unwrap();
        let opts = LocalOptions {
            base_address: Ipv4Addr::new(127, 0, 0, 61),
            auth: true,
            tls: true,
            ..options(tmp.path(), ServerSpec { nodes: Some(2), heap_mb: Some(768), ..ServerSpec::default() })
        };
        let saved = SavedCluster::new(&opts, &layouts(&opts).unwrap());
        saved.save(tmp.path()).unwrap();
        let loaded = SavedCluster::load(tmp.path()).unwrap();
        assert_eq!(loaded, saved);
        assert_eq!(loaded.node_list[1].address, Ipv4Addr::new(127, 0, 0, 62));
        assert_eq!(loaded.node_list[1].jmx_port, 7260);
        let back = loaded.to_options(tmp.path());
        assert_eq!((back.nodes(), back.heap_mb(), back.base_address), (2, 768, opts.base_address));
        assert!(back.auth && back.tls);
        assert_eq!(back, opts, "the options come back whole");
    }

    #[test]
    fn files_without_auth_and_tls_load_with_both_off() {
        let tmp = tempfile::tempdir().unwrap();
        let opts = LocalOptions { home: tmp.path().to_path_buf(), ..LocalOptions::default() };
        let mut json = serde_json::to_value(SavedCluster::new(&opts, &[])).unwrap();
        let fields = json.as_object_mut().unwrap();
        fields.remove("auth");
        fields.remove("tls");
        fs::write(cluster_file(tmp.path()), json.to_string()).unwrap();
        let back = SavedCluster::load(tmp.path()).unwrap().to_options(tmp.path());
        assert!(!back.auth && !back.tls);
    }

    /// A cluster.json as casslab wrote it while the server's fields were listed one by one.
    const WRITTEN_BEFORE: &str = r#"{
  "format_version": 1,
  "cassandra_version": "5.0.9",
  "cluster_name": "casslab",
  "nodes": 3,
  "dcs": [["east", 2], ["west", 1]],
  "heap_mb": 768,
  "base_address": "127.0.0.21",
  "cql_port": 9042,
  "storage_port": 7000,
  "auth": false,
  "tls": true,
  "build": "/src/cassandra/build",
  "gc": "zgc",
  "jvm_options": ["-XX:+AlwaysPreTouch"],
  "settings": {"concurrent_reads": 64, "sstable": {"selected_format": "bti"}},
  "java": "/usr/lib/jvm/java-17/bin/java",
  "java_version": "17.0.12",
  "node_list": [
    {"name": "node1", "address": "127.0.0.21", "cql_port": 9042, "storage_port": 7000, "jmx_port": 7219, "dir": "/h/node1"}
  ],
  "up": {"version": "5.0.9", "java_home": "/usr/lib/jvm/java-17", "heap_mb": 1024, "gc": "g1"}
}"#;

    #[test]
    fn a_file_written_before_the_server_was_one_struct_loads_and_writes_back_alike() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(cluster_file(tmp.path()), WRITTEN_BEFORE).unwrap();
        let saved = SavedCluster::load(tmp.path()).unwrap();
        let server = &saved.server;
        assert_eq!((server.version.as_deref(), server.nodes, server.heap_mb, server.gc), (Some("5.0.9"), Some(3), Some(768), Some(Gc::Zgc)));
        assert_eq!(server.dcs, Some(vec![("east".to_string(), 2), ("west".to_string(), 1)]));
        assert_eq!((server.build.as_deref(), server.java_home.as_deref()), (Some(Path::new("/src/cassandra/build")), None));
        assert_eq!(server.jvm_options, ["-XX:+AlwaysPreTouch"]);
        assert_eq!(server.settings.get("sstable"), Some(&serde_json::json!({"selected_format": "bti"})));
        assert!(saved.tls && !saved.auth);
        assert_eq!(saved.java_version.as_deref(), Some("17.0.12"));
        let up = saved.up.clone().unwrap();
        assert_eq!((up.version.as_deref(), up.heap_mb, up.gc, up.nodes), (Some("5.0.9"), Some(1024), Some(Gc::G1), None));
        assert_eq!(up.java_home.as_deref(), Some(Path::new("/usr/lib/jvm/java-17")));
        let opts = saved.to_options(tmp.path());
        assert_eq!((opts.version(), opts.nodes(), opts.dcs().len(), opts.heap_mb()), ("5.0.9", 3, 2, 768));
        // the server `local up` gave, on the cluster's nodes
        let up_opts = with_up_definition(&opts, &up);
        assert_eq!((up_opts.heap_mb(), up_opts.gc(), up_opts.server.build.as_deref(), up_opts.nodes()), (1024, Gc::G1, None, 3));
        assert_eq!(up_definition(&up_opts), up);

        // written again, every key an older reader needs is where it was, with the same value
        saved.save(tmp.path()).unwrap();
        let before: serde_json::Value = serde_json::from_str(WRITTEN_BEFORE).unwrap();
        let after: serde_json::Value = serde_json::from_str(&fs::read_to_string(cluster_file(tmp.path())).unwrap()).unwrap();
        assert_eq!(after, before);
        assert_eq!(SavedCluster::load(tmp.path()).unwrap(), saved);
    }

    #[test]
    fn a_single_data_center_reads_the_same_with_or_without_an_empty_list() {
        let tmp = tempfile::tempdir().unwrap();
        let mut json: serde_json::Value = serde_json::from_str(WRITTEN_BEFORE).unwrap();
        json["nodes"] = 1.into();
        json["dcs"] = serde_json::json!([]);
        fs::write(cluster_file(tmp.path()), json.to_string()).unwrap();
        let with_empty = SavedCluster::load(tmp.path()).unwrap();
        assert_eq!(with_empty.server.dcs, None);
        json.as_object_mut().unwrap().remove("dcs");
        fs::write(cluster_file(tmp.path()), json.to_string()).unwrap();
        assert_eq!(SavedCluster::load(tmp.path()).unwrap(), with_empty);
        assert!(!with_empty.to_options(tmp.path()).is_multi_node());
    }

    #[test]
    fn difference_names_changed_settings() {
        let opts = LocalOptions { home: PathBuf::from("/h"), ..LocalOptions::default() };
        let a = SavedCluster::new(&opts, &[]);
        assert_eq!(a.difference(&a), None);
        let mut b = a.clone();
        b.server.heap_mb = Some(2048);
        assert_eq!(a.difference(&b).unwrap(), "heap MiB 1024 running, 2048 asked");
        let mut c = a.clone();
        c.tls = true;
        assert_eq!(a.difference(&c).unwrap(), "TLS off running, on asked");
        let mut d = a.clone();
        d.server.version = Some("4.1.10".into());
        d.server.nodes = Some(2);
        d.server.dcs = Some(vec![("a".into(), 1), ("b".into(), 1)]);
        d.server.build = Some("/b".into());
        d.server.gc = Some(Gc::Zgc);
        d.server.jvm_options = vec!["-Xss1m".into(), "-XX:+AlwaysPreTouch".into()];
        d.server.settings = [("concurrent_reads".to_string(), serde_json::json!(64))].into();
        let diff = a.difference(&d).unwrap();
        for part in [
            "version 5.0.9 running, 4.1.10 asked",
            "nodes 1 running, 2 asked",
            "data centers  running, a:1,b:1 asked",
            "build - running, /b asked",
            "GC g1 running, zgc asked",
            "JVM options  running, -Xss1m -XX:+AlwaysPreTouch asked",
            r#"settings {} running, {"concurrent_reads":64} asked"#,
        ] {
            assert!(diff.contains(part), "{part:?} in {diff}");
        }
        assert!(diff.starts_with("version 5.0.9 running, 4.1.10 asked, nodes 1 running, 2 asked, "), "{diff}");
        assert_eq!(d.difference(&a).unwrap().matches(" running, ").count(), 7);
    }

    #[test]
    fn a_relayed_cluster_differs_by_its_distances_only_when_it_stops_being_relayed() {
        use casslab_core::network::{DcPair, Rtt};
        let opts = LocalOptions { home: PathBuf::from("/h"), ..LocalOptions::default() };
        let mut a = SavedCluster::new(&opts, &[]);
        a.server.rtt = [(DcPair::new("datacenter1", "datacenter1").unwrap(), Rtt::from_ms(1))].into();
        a.server.relay = Some(true);
        let mut b = a.clone();
        b.server.rtt = [(DcPair::new("datacenter1", "datacenter1").unwrap(), Rtt::from_ms(8))].into();
        b.server.client_rtt = [("datacenter1".to_string(), Rtt::from_ms(4))].into();
        assert!(a.difference(&b).unwrap().contains("rtt"));
        assert_eq!(a.difference_but_distances(&b), None, "the relay takes new distances as it runs");
        let mut plain = a.clone();
        plain.server.rtt.clear();
        plain.server.relay = None;
        assert!(a.difference_but_distances(&plain).unwrap().contains("relay true running, - asked"), "{:?}", a.difference_but_distances(&plain));
    }

    #[test]
    fn missing_file_is_no_saved_cluster() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(SavedCluster::load(tmp.path()), Err(LocalError::NoSavedCluster { .. })));
    }
}
