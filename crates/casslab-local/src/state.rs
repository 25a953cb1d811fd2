//! `home/cluster.json`: the options a cluster was started with, saved so `status`,
//! `down` and other casslab commands can find the nodes later without the flags
//! used for `up`. A versioned file format of its own (not `LocalOptions`), written
//! atomically. It does not decide whether a node runs; `process` does.

use std::fs;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use casslab_core::cluster::Gc;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::error::{IoContext, LocalError};
use crate::layout::NodeLayout;
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedCluster {
    pub format_version: u32,
    pub cassandra_version: String,
    pub cluster_name: String,
    pub nodes: usize,
    /// Data centers and node counts (absent in older files: one data center).
    #[serde(default)]
    pub dcs: Vec<(String, usize)>,
    pub heap_mb: u32,
    pub base_address: Ipv4Addr,
    pub cql_port: u16,
    pub storage_port: u16,
    /// Password authentication on (absent in files written before it existed: off).
    #[serde(default)]
    pub auth: bool,
    /// Client TLS on (absent in older files: off).
    #[serde(default)]
    pub tls: bool,
    /// The server's definition beyond version and heap (absent in older files: defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java_home: Option<PathBuf>,
    #[serde(default)]
    pub gc: Gc,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jvm_options: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, serde_json::Value>,
    /// The `java` the nodes run with and its version, as found when they were started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java_version: Option<String>,
    pub node_list: Vec<SavedNode>,
    /// The server as `local up` defined it, kept while a workload's definition runs instead
    /// (absent when the cluster runs as `local up` made it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<UpDefinition>,
}

/// The server part of a cluster's options, as `local up` gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpDefinition {
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub java_home: Option<PathBuf>,
    pub heap_mb: u32,
    #[serde(default)]
    pub gc: Gc,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jvm_options: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, serde_json::Value>,
}

impl UpDefinition {
    pub fn of(o: &LocalOptions) -> UpDefinition {
        UpDefinition {
            version: o.version.clone(),
            build: o.build.clone(),
            java_home: o.java_home.clone(),
            heap_mb: o.heap_mb,
            gc: o.gc,
            jvm_options: o.jvm_options.clone(),
            settings: o.settings.clone(),
        }
    }

    /// `o` with this definition's server.
    pub fn onto(&self, o: &mut LocalOptions) {
        o.version = self.version.clone();
        o.build = self.build.clone();
        o.java_home = self.java_home.clone();
        o.heap_mb = self.heap_mb;
        o.gc = self.gc;
        o.jvm_options = self.jvm_options.clone();
        o.settings = self.settings.clone();
    }
}

/// Path of the file under `home`.
pub fn cluster_file(home: &Path) -> PathBuf {
    home.join("cluster.json")
}

impl SavedCluster {
    pub fn new(opts: &LocalOptions, nodes: &[NodeLayout]) -> Self {
        SavedCluster {
            format_version: FORMAT_VERSION,
            cassandra_version: opts.version.clone(),
            cluster_name: opts.cluster_name.clone(),
            nodes: opts.nodes,
            dcs: opts.dcs.clone(),
            heap_mb: opts.heap_mb,
            base_address: opts.base_address,
            cql_port: opts.cql_port,
            storage_port: opts.storage_port,
            auth: opts.auth,
            tls: opts.tls,
            build: opts.build.clone(),
            java_home: opts.java_home.clone(),
            gc: opts.gc,
            jvm_options: opts.jvm_options.clone(),
            settings: opts.settings.clone(),
            java: None,
            java_version: None,
            up: None,
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
        LocalOptions {
            home: home.to_path_buf(),
            version: self.cassandra_version.clone(),
            nodes: self.nodes,
            dcs: self.dcs.clone(),
            heap_mb: self.heap_mb,
            base_address: self.base_address,
            cql_port: self.cql_port,
            storage_port: self.storage_port,
            cluster_name: self.cluster_name.clone(),
            auth: self.auth,
            tls: self.tls,
            build: self.build.clone(),
            java_home: self.java_home.clone(),
            gc: self.gc,
            jvm_options: self.jvm_options.clone(),
            settings: self.settings.clone(),
            ..LocalOptions::default()
        }
    }

    /// A human list of the settings that differ from `other`, or `None` when equal.
    pub fn difference(&self, other: &SavedCluster) -> Option<String> {
        let mut diffs = Vec::new();
        let mut check = |what: &str, a: String, b: String| {
            if a != b {
                diffs.push(format!("{what} {a} running, {b} asked"));
            }
        };
        check(
            "version",
            self.cassandra_version.clone(),
            other.cassandra_version.clone(),
        );
        check(
            "cluster name",
            self.cluster_name.clone(),
            other.cluster_name.clone(),
        );
        check("nodes", self.nodes.to_string(), other.nodes.to_string());
        let dcs = |d: &[(String, usize)]| {
            d.iter().map(|(n, c)| format!("{n}:{c}")).collect::<Vec<_>>().join(",")
        };
        check("data centers", dcs(&self.dcs), dcs(&other.dcs));
        check(
            "heap MiB",
            self.heap_mb.to_string(),
            other.heap_mb.to_string(),
        );
        check(
            "base address",
            self.base_address.to_string(),
            other.base_address.to_string(),
        );
        check(
            "CQL port",
            self.cql_port.to_string(),
            other.cql_port.to_string(),
        );
        check(
            "storage port",
            self.storage_port.to_string(),
            other.storage_port.to_string(),
        );
        let on_off = |on: bool| if on { "on" } else { "off" }.to_string();
        check("auth", on_off(self.auth), on_off(other.auth));
        check("TLS", on_off(self.tls), on_off(other.tls));
        let path = |p: &Option<PathBuf>| p.as_ref().map_or("-".to_string(), |p| p.display().to_string());
        check("build", path(&self.build), path(&other.build));
        check("java home", path(&self.java_home), path(&other.java_home));
        check("GC", self.gc.as_str().to_string(), other.gc.as_str().to_string());
        check("JVM options", self.jvm_options.join(" "), other.jvm_options.join(" "));
        check("settings", serde_json::to_string(&self.settings).unwrap_or_default(), serde_json::to_string(&other.settings).unwrap_or_default());
        (!diffs.is_empty()).then(|| diffs.join(", "))
    }

    /// Reads `home/cluster.json`.
    pub fn load(home: &Path) -> Result<Self, LocalError> {
        let path = cluster_file(home);
        let no = |reason: String| LocalError::NoSavedCluster {
            path: path.clone(),
            reason,
        };
        let text = fs::read_to_string(&path).map_err(|e| no(e.to_string()))?;
        let saved: SavedCluster = serde_json::from_str(&text).map_err(|e| no(e.to_string()))?;
        if saved.format_version != FORMAT_VERSION {
            return Err(no(format!(
                "format version {} is not the supported {FORMAT_VERSION}",
                saved.format_version
            )));
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

    #[test]
    fn save_load_round_trip_and_options() {
        let tmp = tempfile::tempdir().unwrap();
        let opts = LocalOptions {
            home: tmp.path().to_path_buf(),
            nodes: 2,
            heap_mb: 768,
            base_address: Ipv4Addr::new(127, 0, 0, 61),
            auth: true,
            tls: true,
            ..LocalOptions::default()
        };
        let saved = SavedCluster::new(&opts, &layouts(&opts).unwrap());
        saved.save(tmp.path()).unwrap();
        let loaded = SavedCluster::load(tmp.path()).unwrap();
        assert_eq!(loaded, saved);
        assert_eq!(loaded.node_list[1].address, Ipv4Addr::new(127, 0, 0, 62));
        assert_eq!(loaded.node_list[1].jmx_port, 7260);
        let back = loaded.to_options(tmp.path());
        assert_eq!(
            (back.nodes, back.heap_mb, back.base_address),
            (2, 768, opts.base_address)
        );
        assert!(back.auth && back.tls);
    }

    #[test]
    fn files_without_auth_and_tls_load_with_both_off() {
        let tmp = tempfile::tempdir().unwrap();
        let opts = LocalOptions {
            home: tmp.path().to_path_buf(),
            ..LocalOptions::default()
        };
        let mut json = serde_json::to_value(SavedCluster::new(&opts, &[])).unwrap();
        let fields = json.as_object_mut().unwrap();
        fields.remove("auth");
        fields.remove("tls");
        fs::write(cluster_file(tmp.path()), json.to_string()).unwrap();
        let back = SavedCluster::load(tmp.path())
            .unwrap()
            .to_options(tmp.path());
        assert!(!back.auth && !back.tls);
    }

    #[test]
    fn difference_names_changed_settings() {
        let opts = LocalOptions {
            home: PathBuf::from("/h"),
            ..LocalOptions::default()
        };
        let a = SavedCluster::new(&opts, &[]);
        assert_eq!(a.difference(&a), None);
        let mut b = a.clone();
        b.heap_mb = 2048;
        assert_eq!(
            a.difference(&b).unwrap(),
            "heap MiB 1024 running, 2048 asked"
        );
        let mut c = a.clone();
        c.tls = true;
        assert_eq!(a.difference(&c).unwrap(), "TLS off running, on asked");
    }

    #[test]
    fn missing_file_is_no_saved_cluster() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(
            SavedCluster::load(tmp.path()),
            Err(LocalError::NoSavedCluster { .. })
        ));
    }
}
