//! The server definition: what server to run — version or custom build, Java, heap, garbage
//! collector, JVM options, cassandra.yaml settings, nodes, and the distances of its network —
//! as a workload's, an experiment's or a variant's `cluster:` writes it and a run records it.
//! Definitions lie over one another field by field (`overlaid`). A controlled cluster
//! (`cluster.rs`) applies one; the run's configuration (`config.rs`) carries one.

use std::path::PathBuf;

/// The garbage collector a node's JVM runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Gc {
    #[default]
    G1,
    Zgc,
    Shenandoah,
    Parallel,
}

impl Gc {
    pub const ALL: [Gc; 4] = [Gc::G1, Gc::Zgc, Gc::Shenandoah, Gc::Parallel];

    pub fn as_str(self) -> &'static str {
        match self {
            Gc::G1 => "g1",
            Gc::Zgc => "zgc",
            Gc::Shenandoah => "shenandoah",
            Gc::Parallel => "parallel",
        }
    }

    pub fn parse(s: &str) -> Option<Gc> {
        let s = s.trim().to_ascii_lowercase();
        Gc::ALL.into_iter().find(|g| g.as_str() == s || (s == "z" && *g == Gc::Zgc) || (s == "g1gc" && *g == Gc::G1))
    }
}

/// How a field of a server definition lies over the same field of another: an `Option` that
/// is set replaces, a list that is not empty replaces the whole list, a map adds its keys
/// (its values winning). [`ServerSpec::overlaid`] applies it to every field, by type.
trait Overlay {
    fn overlay(&self, over: &Self) -> Self;
}

impl<T: Clone> Overlay for Option<T> {
    fn overlay(&self, over: &Self) -> Self {
        over.clone().or_else(|| self.clone())
    }
}

impl<T: Clone> Overlay for Vec<T> {
    fn overlay(&self, over: &Self) -> Self {
        if over.is_empty() {
            self.clone()
        } else {
            over.clone()
        }
    }
}

impl<K: Ord + Clone, V: Clone> Overlay for std::collections::BTreeMap<K, V> {
    fn overlay(&self, over: &Self) -> Self {
        let mut merged = self.clone();
        merged.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
        merged
    }
}

/// Declares a struct of overlayable fields and its `overlaid`, which overlays every field with
/// [`Overlay`]: a field added to the struct is overlaid without another line.
macro_rules! overlaid_struct {
    ($(#[$meta:meta])* $vis:vis struct $name:ident { $($(#[$field_meta:meta])* $field_vis:vis $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty,)*
        }

        impl $name {
            /// `self` with `over`'s fields where it sets them (a list given replaces the whole
            /// list; settings merged key by key).
            pub fn overlaid(&self, over: &$name) -> $name {
                $name { $($field: Overlay::overlay(&self.$field, &over.$field),)* }
            }
        }
    };
}

overlaid_struct! {
    /// What server to run: a workload's, an experiment's or a variant's `cluster:`, and what a
    /// run records about the server it ran against. Every field is optional: what a definition
    /// leaves out is what the cluster was started with.
    #[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct ServerSpec {
        /// Apache Cassandra version (Maven Central's `cassandra-all`), e.g. `5.0.9`, `4.1.10`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub version: Option<String>,
        /// A custom build instead of a released version: a directory of jars, or an unpacked
        /// Cassandra distribution (its `lib/`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub build: Option<PathBuf>,
        /// The Java to run it with (else one suited to the version is found or fetched).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub java_home: Option<PathBuf>,
        /// Heap per node, in MiB.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub heap_mb: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub gc: Option<Gc>,
        /// More JVM options, after casslab's own.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub jvm_options: Vec<String>,
        /// cassandra.yaml settings, over casslab's (any value YAML can hold).
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        pub settings: std::collections::BTreeMap<String, serde_json::Value>,
        /// Nodes in one data center, or data centers and their nodes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub nodes: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::network::dcs_list")]
        pub dcs: Option<Vec<(String, usize)>>,
        /// Round-trip times between data centers (`dc1:dc2: 8ms`, with jitter `8ms±1ms`;
        /// `dc1:dc1` between the nodes of one); a pair left out is 0 ms apart. Any distance puts
        /// every connection of the cluster through casslab's relay.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty", deserialize_with = "crate::network::rtt_map")]
        pub rtt: std::collections::BTreeMap<crate::network::DcPair, crate::network::Rtt>,
        /// The client's round-trip time to each data center (`dc2: 8ms`).
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty", deserialize_with = "crate::network::client_rtt_map")]
        pub client_rtt: std::collections::BTreeMap<String, crate::network::Rtt>,
        /// Every connection through casslab's relay even at 0 ms, so that a run's network events
        /// (partition, isolate, slow, lossy, client-loses) can act; distances imply it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub relay: Option<bool>,
    }
}

impl ServerSpec {
    pub fn is_empty(&self) -> bool {
        *self == ServerSpec::default()
    }

    /// Whether its connections go through casslab's relay: asked for, or implied by a distance.
    pub fn relayed(&self) -> bool {
        self.relay.unwrap_or(false) || !self.rtt.is_empty() || !self.client_rtt.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_definition_over_another_replaces_what_it_sets_and_adds_settings() {
        let base = ServerSpec {
            version: Some("5.0.9".into()),
            java_home: Some("/jdk17".into()),
            heap_mb: Some(1024),
            gc: Some(Gc::G1),
            jvm_options: vec!["-XX:+AlwaysPreTouch".into()],
            settings: [("concurrent_reads".to_string(), json!(32)), ("concurrent_writes".to_string(), json!(32))].into(),
            nodes: Some(3),
            ..ServerSpec::default()
        };
        // what `over` leaves out is the base's
        assert_eq!(base.overlaid(&ServerSpec::default()), base);
        assert_eq!(ServerSpec::default().overlaid(&base), base);
        let over = ServerSpec {
            version: Some("4.1.10".into()),
            build: Some("/src/cassandra".into()),
            heap_mb: Some(512),
            jvm_options: vec!["-Xss512k".into()],
            settings: [("concurrent_reads".to_string(), json!(64)), ("sstable".to_string(), json!({"selected_format": "bti"}))].into(),
            dcs: Some(vec![("east".into(), 2), ("west".into(), 1)]),
            ..ServerSpec::default()
        };
        let s = base.overlaid(&over);
        assert_eq!((s.version.as_deref(), s.build.as_deref(), s.heap_mb), (Some("4.1.10"), Some(std::path::Path::new("/src/cassandra")), Some(512)));
        assert_eq!((s.java_home.as_deref(), s.gc), (Some(std::path::Path::new("/jdk17")), Some(Gc::G1)), "kept where `over` is silent");
        assert_eq!(s.jvm_options, ["-Xss512k"], "a list given replaces the base's whole");
        assert_eq!(
            s.settings,
            [
                ("concurrent_reads".to_string(), json!(64)),
                ("concurrent_writes".to_string(), json!(32)),
                ("sstable".to_string(), json!({"selected_format": "bti"}))
            ]
            .into(),
            "settings merge key by key"
        );
        // nodes and data centers are fields like the others: each kept unless `over` sets it
        assert_eq!((s.nodes, s.dcs.as_ref().map(Vec::len)), (Some(3), Some(2)));
    }

    #[test]
    fn distances_read_from_yaml_merge_pair_by_pair_and_imply_the_relay() {
        use crate::network::{DcPair, Rtt};
        let base: ServerSpec = crate::yaml::from_str("dcs: [[dc1, 1], [dc2, 1]]\nrtt: { dc1:dc2: 8ms, dc2:dc2: 1ms }\n").unwrap();
        assert_eq!(base.rtt.get(&DcPair::new("dc2", "dc1").unwrap()), Some(&Rtt::from_ms(8)));
        assert!(base.relayed() && !ServerSpec::default().relayed());
        let over: ServerSpec = crate::yaml::from_str("rtt:\n  dc2:dc1: 20ms±2ms\nclient_rtt: { dc2: 4ms }\n").unwrap();
        let s = base.overlaid(&over);
        let rtts: Vec<String> = s.rtt.iter().map(|(p, r)| format!("{p}={r}")).collect();
        assert_eq!(rtts, ["dc1:dc2=20ms±2ms", "dc2:dc2=1ms"], "the pair written either way is one pair");
        assert_eq!(s.client_rtt.get("dc2"), Some(&Rtt::from_ms(4)));
        let relay_only: ServerSpec = crate::yaml::from_str("relay: true").unwrap();
        assert!(relay_only.relayed());
        // what the flags refuse, a file refuses too
        let both = crate::yaml::from_str::<ServerSpec>("rtt:\n  dc1:dc2: 8ms\n  dc2:dc1: 9ms\n").unwrap_err().to_string();
        assert!(both.contains("the distance dc1:dc2 (written both ways) is given twice"), "{both}");
        let named = crate::yaml::from_str::<ServerSpec>("dcs: [[\"dc1; rm -rf /\", 1]]\n").unwrap_err().to_string();
        assert!(named.contains("\"dc1; rm -rf /\" is not a data center name"), "{named}");
        let client = crate::yaml::from_str::<ServerSpec>("client_rtt: { \"dc 2\": 4ms }\n").unwrap_err().to_string();
        assert!(client.contains("\"dc 2\" is not a data center name"), "{client}");
        assert!(crate::yaml::from_str::<ServerSpec>("dcs: [[a, 1], [a, 2]]\n").unwrap_err().to_string().contains("listed twice"));
        assert!(crate::yaml::from_str::<ServerSpec>("dcs: [[a, 0]]\n").unwrap_err().to_string().contains("0 nodes"));
        let e = crate::yaml::from_str::<ServerSpec>("rtt: { dc1-dc2: 8ms }").unwrap_err().to_string();
        assert!(e.contains("DC:DC=RTT"), "{e}");
    }
}
