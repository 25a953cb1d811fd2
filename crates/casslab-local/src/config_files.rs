//! The files casslab writes for a node: `conf/cassandra.yaml` (the minimal set that
//! Cassandra 5.0 needs, addresses and directories filled in, plus password authentication
//! and client TLS when asked for) and `conf/logback.xml` (INFO to `logs/system.log`, rolled
//! by size). Rendering is pure; `write_node_files` is the only function here that touches
//! the disk. JVM flags live in `jvm`, the TLS keystore is made by `tls`.

use std::collections::BTreeMap;
use std::fs;

use crate::layout::NodeLayout;
use crate::local_error::{IoContext, LocalError};
use crate::tls::Keystore;

/// The client-facing security settings of a node's yaml.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Security {
    /// `PasswordAuthenticator` and `CassandraAuthorizer` instead of allowing everyone.
    pub auth: bool,
    /// Serve CQL over TLS only, with this keystore.
    pub tls: Option<Keystore>,
}

/// Quotes `text` as a YAML single-quoted scalar (a `'` is written twice).
fn yaml_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Escapes `text` for an XML attribute or element.
fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// `cassandra.yaml` for `node`; `seed` is the first node, whose `address:storage_port` (on a
/// relayed cluster: where its peers reach it, the relay's) every node lists as its only seed;
/// a relayed node broadcasts the relay's addresses. A node of a multi-node cluster gets the
/// `GossipingPropertyFileSnitch` (its data center from `cassandra-rackdc.properties`) and
/// `auto_bootstrap: false`: the nodes of a fresh local cluster hold no data to stream, so each
/// takes its tokens at once instead of bootstrapping (a node restarted later keeps its own).
pub fn render_yaml(cluster_name: &str, node: &NodeLayout, seed: &NodeLayout, security: &Security, multi_node: bool) -> String {
    let dir = |p: std::path::PathBuf| yaml_quote(&p.to_string_lossy());
    let mut yaml = format!(
        "# Written by casslab for {name}; rewritten on every `casslab local up`.\n\
cluster_name: {cluster}\n\
num_tokens: 16\n\
partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n\
endpoint_snitch: {snitch}\n\
commitlog_sync: periodic\n\
commitlog_sync_period: 10000ms\n\
seed_provider:\n\
\x20 - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n\
\x20   parameters:\n\
\x20     - seeds: \"{seed_addr}:{seed_port}\"\n\
listen_address: {addr}\n\
rpc_address: {addr}\n\
native_transport_port: {cql}\n\
storage_port: {storage}\n\
start_native_transport: true\n\
data_file_directories:\n\
\x20 - {data}\n\
commitlog_directory: {commitlog}\n\
saved_caches_directory: {caches}\n\
hints_directory: {hints}\n\
cdc_raw_directory: {cdc}\n",
        name = node.name,
        snitch = if multi_node { "GossipingPropertyFileSnitch" } else { "SimpleSnitch" },
        cluster = yaml_quote(cluster_name),
        seed_addr = seed.peer_address,
        seed_port = seed.storage_port,
        addr = node.address,
        cql = node.cql_port,
        storage = node.storage_port,
        data = dir(node.data_dir()),
        commitlog = dir(node.commitlog_dir()),
        caches = dir(node.saved_caches_dir()),
        hints = dir(node.hints_dir()),
        cdc = dir(node.cdc_raw_dir()),
    );
    if multi_node {
        yaml.push_str("auto_bootstrap: false\n");
    }
    if node.is_relayed() {
        // peers and clients reach the node through casslab's relay, which delays (or cuts) what crosses
        yaml.push_str(&format!("broadcast_address: {}\nbroadcast_rpc_address: {}\n", node.peer_address, node.client_address));
    }
    yaml.push_str(&render_security(security));
    yaml
}

/// The settings casslab keeps to itself: where a node listens, who its seeds are, where its
/// files go. A definition that sets one is refused.
pub const OWN_SETTINGS: &[&str] = &[
    "cluster_name",
    "listen_address",
    "rpc_address",
    "broadcast_address",
    "broadcast_rpc_address",
    "native_transport_port",
    "storage_port",
    "seed_provider",
    "data_file_directories",
    "commitlog_directory",
    "saved_caches_directory",
    "hints_directory",
    "cdc_raw_directory",
    "endpoint_snitch",
];

/// Refuses a setting casslab keeps to itself, or a name that is no YAML key.
pub fn check_settings(settings: &BTreeMap<String, serde_json::Value>) -> Result<(), String> {
    for key in settings.keys() {
        if OWN_SETTINGS.contains(&key.as_str()) {
            return Err(format!("setting {key}: casslab sets it itself for its local nodes"));
        }
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("setting \"{key}\": not a cassandra.yaml key (letters, digits and _)"));
        }
    }
    Ok(())
}

/// `yaml` (casslab's top-level keys, one per line with their indented blocks) with `settings`
/// in place of the keys they name, each written as a YAML flow value (JSON is YAML).
pub fn with_settings(yaml: &str, settings: &BTreeMap<String, serde_json::Value>) -> String {
    if settings.is_empty() {
        return yaml.to_string();
    }
    let mut out = String::new();
    let mut skipping = false;
    for line in yaml.lines() {
        let top_key = (!line.starts_with([' ', '-', '#']) && !line.is_empty()).then(|| line.split(':').next().unwrap_or(""));
        if let Some(key) = top_key {
            skipping = settings.contains_key(key);
        } else if line.is_empty() || line.starts_with('#') {
            skipping = false;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str("# settings of the server definition\n");
    for (key, value) in settings {
        out.push_str(&format!("{key}: {value}\n"));
    }
    out
}

/// `cassandra-rackdc.properties`: the node's data center and rack, which the
/// `GossipingPropertyFileSnitch` announces to the other nodes.
pub fn render_rackdc(node: &NodeLayout) -> String {
    format!("# Written by casslab for {}; rewritten on every start.\ndc={}\nrack={}\n", node.name, node.dc, node.rack)
}

/// The yaml lines of `security`; empty when both are off (Cassandra's defaults: no login,
/// no TLS).
fn render_security(security: &Security) -> String {
    let mut yaml = String::new();
    if security.auth {
        yaml.push_str(
            "authenticator:\n\
\x20 class_name: org.apache.cassandra.auth.PasswordAuthenticator\n\
authorizer:\n\
\x20 class_name: org.apache.cassandra.auth.CassandraAuthorizer\n",
        );
    }
    if let Some(keystore) = &security.tls {
        let path = yaml_quote(&keystore.path.to_string_lossy());
        let password = yaml_quote(&keystore.password);
        yaml.push_str(&format!(
            "client_encryption_options:\n\
\x20 enabled: true\n\
\x20 optional: false\n\
\x20 keystore: {path}\n\
\x20 keystore_password: {password}\n\
\x20 store_type: PKCS12\n\
\x20 require_client_auth: false\n"
        ));
    }
    yaml
}

/// `logback.xml` for `node`: INFO and above to `logs/system.log` (rolled at 50 MiB,
/// 5 files kept), WARN and above also to stdout, which casslab sends to `logs/stdout.log`.
pub fn render_logback(node: &NodeLayout) -> String {
    let log = xml_escape(&node.system_log().to_string_lossy());
    format!(
        r#"<!-- Written by casslab for {name}; rewritten on every `casslab local up`. -->
<configuration scan="false">
  <appender name="SYSTEMLOG" class="ch.qos.logback.core.rolling.RollingFileAppender">
    <file>{log}</file>
    <rollingPolicy class="ch.qos.logback.core.rolling.FixedWindowRollingPolicy">
      <fileNamePattern>{log}.%i.zip</fileNamePattern>
      <minIndex>1</minIndex>
      <maxIndex>5</maxIndex>
    </rollingPolicy>
    <triggeringPolicy class="ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy">
      <maxFileSize>50MB</maxFileSize>
    </triggeringPolicy>
    <encoder>
      <pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <filter class="ch.qos.logback.classic.filter.ThresholdFilter">
      <level>WARN</level>
    </filter>
    <encoder>
      <pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
  <root level="INFO">
    <appender-ref ref="SYSTEMLOG" />
    <appender-ref ref="STDOUT" />
  </root>
  <logger name="org.apache.cassandra" level="INFO" />
</configuration>
"#,
        name = node.name,
    )
}

/// Creates the node's directories (and its marker, the first time) and writes both
/// config files. Existing data, commit logs and logs are kept.
pub fn write_node_files(
    cluster_name: &str,
    node: &NodeLayout,
    seed: &NodeLayout,
    security: &Security,
    multi_node: bool,
    settings: &BTreeMap<String, serde_json::Value>,
) -> Result<(), LocalError> {
    fs::create_dir_all(&node.dir).context(|| format!("creating {}", node.dir.display()))?;
    if !node.marker_path().exists() && is_empty_dir(&node.dir) {
        let marker = node.marker_path();
        fs::write(&marker, "created by casslab; `casslab local down --wipe` may delete this directory\n")
            .context(|| format!("writing {}", marker.display()))?;
    }
    for dir in node.all_dirs() {
        fs::create_dir_all(&dir).context(|| format!("creating {}", dir.display()))?;
    }
    let yaml = node.yaml_path();
    fs::write(&yaml, with_settings(&render_yaml(cluster_name, node, seed, security, multi_node), settings))
        .context(|| format!("writing {}", yaml.display()))?;
    let rackdc = node.rackdc_path();
    fs::write(&rackdc, render_rackdc(node)).context(|| format!("writing {}", rackdc.display()))?;
    let logback = node.logback_path();
    fs::write(&logback, render_logback(node)).context(|| format!("writing {}", logback.display()))?;
    Ok(())
}

/// Lets the node bootstrap (drops casslab's `auto_bootstrap: false` from its yaml): a node that
/// joins a running cluster, or replaces a dead node, streams its data before it serves.
pub fn allow_bootstrap(node: &NodeLayout) -> Result<(), LocalError> {
    let path = node.yaml_path();
    let yaml = fs::read_to_string(&path).context(|| format!("reading {}", path.display()))?;
    let kept: Vec<&str> = yaml.lines().filter(|l| l.trim() != "auto_bootstrap: false").collect();
    fs::write(&path, kept.join("\n") + "\n").context(|| format!("writing {}", path.display()))
}

fn is_empty_dir(dir: &std::path::Path) -> bool {
    fs::read_dir(dir).map(|mut it| it.next().is_none()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::layouts;
    use crate::LocalOptions;
    use std::net::Ipv4Addr;
    use std::path::PathBuf;

    fn two_nodes() -> Vec<NodeLayout> {
        layouts(&LocalOptions {
            home: PathBuf::from("/h/it's"),
            server: casslab_core::cluster::ServerSpec { nodes: Some(2), ..LocalOptions::default().server },
            base_address: Ipv4Addr::new(127, 0, 0, 61),
            cql_port: 9142,
            storage_port: 7100,
            ..LocalOptions::default()
        })
        .unwrap()
    }

    #[test]
    fn yaml_has_addresses_ports_seed_and_dirs() {
        let nodes = two_nodes();
        let yaml = render_yaml("casslab", &nodes[1], &nodes[0], &Security::default(), false);
        assert!(yaml.contains("cluster_name: 'casslab'\n"), "{yaml}");
        assert!(yaml.contains("listen_address: 127.0.0.62\n"));
        assert!(yaml.contains("rpc_address: 127.0.0.62\n"));
        assert!(yaml.contains("native_transport_port: 9142\n"));
        assert!(yaml.contains("storage_port: 7100\n"));
        assert!(yaml.contains("- seeds: \"127.0.0.61:7100\"\n"));
        assert!(yaml.contains("data_file_directories:\n  - '/h/it''s/node2/data'\n"), "{yaml}");
        assert!(yaml.contains("commitlog_directory: '/h/it''s/node2/commitlog'\n"));
        assert!(yaml.contains("saved_caches_directory: '/h/it''s/node2/saved_caches'\n"));
        assert!(yaml.contains("hints_directory: '/h/it''s/node2/hints'\n"));
        assert!(yaml.contains("cdc_raw_directory: '/h/it''s/node2/cdc_raw'\n"));
        assert!(yaml.contains("partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n"));
    }

    #[test]
    fn multi_node_yaml_gossips_its_data_center_and_skips_bootstrap() {
        let nodes = two_nodes();
        let single = render_yaml("casslab", &nodes[0], &nodes[0], &Security::default(), false);
        assert!(single.contains("endpoint_snitch: SimpleSnitch\n") && !single.contains("auto_bootstrap"));
        let multi = render_yaml("casslab", &nodes[1], &nodes[0], &Security::default(), true);
        assert!(multi.contains("endpoint_snitch: GossipingPropertyFileSnitch\n"), "{multi}");
        assert!(multi.contains("auto_bootstrap: false\n"));
        assert_eq!(render_rackdc(&nodes[1]), "# Written by casslab for node2; rewritten on every start.\ndc=datacenter1\nrack=rack1\n");
    }

    #[test]
    fn a_relayed_node_broadcasts_the_relays_addresses_and_seeds_through_it() {
        let relayed = layouts(&LocalOptions {
            home: PathBuf::from("/h"),
            server: casslab_core::cluster::ServerSpec { nodes: Some(2), relay: Some(true), ..LocalOptions::default().server },
            base_address: Ipv4Addr::new(127, 0, 0, 121),
            ..LocalOptions::default()
        })
        .unwrap();
        let yaml = render_yaml("casslab", &relayed[1], &relayed[0], &Security::default(), true);
        assert!(yaml.contains("listen_address: 127.0.0.122\nrpc_address: 127.0.0.122\n"), "{yaml}");
        assert!(yaml.contains("broadcast_address: 127.64.0.122\nbroadcast_rpc_address: 127.128.0.122\n"), "{yaml}");
        assert!(yaml.contains("- seeds: \"127.64.0.121:7000\"\n"), "{yaml}");
        let plain = render_yaml("casslab", &two_nodes()[1], &two_nodes()[0], &Security::default(), true);
        assert!(!plain.contains("broadcast_"), "{plain}");
    }

    #[test]
    fn yaml_without_security_keeps_cassandras_defaults() {
        let nodes = two_nodes();
        let yaml = render_yaml("casslab", &nodes[0], &nodes[0], &Security::default(), false);
        for key in ["authenticator", "authorizer", "client_encryption_options"] {
            assert!(!yaml.contains(key), "{key} in {yaml}");
        }
    }

    #[test]
    fn yaml_with_auth_uses_password_authenticator() {
        let nodes = two_nodes();
        let security = Security { auth: true, tls: None };
        let yaml = render_yaml("casslab", &nodes[0], &nodes[0], &security, false);
        assert!(yaml.contains("\nauthenticator:\n  class_name: org.apache.cassandra.auth.PasswordAuthenticator\n"), "{yaml}");
        assert!(yaml.contains("\nauthorizer:\n  class_name: org.apache.cassandra.auth.CassandraAuthorizer\n"), "{yaml}");
        assert!(!yaml.contains("client_encryption_options"));
    }

    #[test]
    fn yaml_with_tls_requires_encrypted_clients() {
        let nodes = two_nodes();
        let security = Security { auth: false, tls: Some(Keystore { path: PathBuf::from("/h/it's/tls/keystore.p12"), password: "0a1b'2c".into() }) };
        let yaml = render_yaml("casslab", &nodes[0], &nodes[0], &security, false);
        assert!(
            yaml.ends_with(
                "client_encryption_options:\n  enabled: true\n  optional: false\n  \
                 keystore: '/h/it''s/tls/keystore.p12'\n  keystore_password: '0a1b''2c'\n  \
                 store_type: PKCS12\n  require_client_auth: false\n"
            ),
            "{yaml}"
        );
        assert!(!yaml.contains("authenticator"));
        // still one mapping per key: the security block comes after everything else
        assert_eq!(yaml.matches("client_encryption_options:").count(), 1);
    }

    #[test]
    fn yaml_quotes_cluster_name() {
        let nodes = two_nodes();
        assert!(render_yaml("bob's: lab", &nodes[0], &nodes[0], &Security::default(), false).contains("cluster_name: 'bob''s: lab'\n"));
    }

    #[test]
    fn settings_replace_casslabs_own_and_add_others() {
        let nodes = two_nodes();
        let base = render_yaml("casslab", &nodes[0], &nodes[0], &Security::default(), false);
        let mut settings = BTreeMap::new();
        settings.insert("commitlog_sync".to_string(), serde_json::json!("batch"));
        settings.insert("concurrent_reads".to_string(), serde_json::json!(64));
        settings
            .insert("memtable".to_string(), serde_json::json!({"configurations": {"trie": {"class_name": "TrieMemtable"}, "default": {"inherits": "trie"}}}));
        let yaml = with_settings(&base, &settings);
        assert_eq!(yaml.matches("commitlog_sync:").count(), 1, "{yaml}");
        assert!(yaml.contains("commitlog_sync: \"batch\"\n") && yaml.contains("concurrent_reads: 64\n"));
        assert!(yaml.contains(r#"memtable: {"configurations":{"default":{"inherits":"trie"},"trie":{"class_name":"TrieMemtable"}}}"#), "{yaml}");
        assert!(yaml.contains("seed_provider:") && yaml.contains("- seeds:"), "casslab's blocks stay whole");
        let mut own = BTreeMap::new();
        own.insert("listen_address".to_string(), serde_json::json!("10.0.0.1"));
        assert!(check_settings(&own).unwrap_err().contains("casslab sets it itself"));
        own.clear();
        own.insert("bad key".to_string(), serde_json::json!(1));
        assert!(check_settings(&own).is_err());
        assert!(check_settings(&settings).is_ok());
    }

    #[test]
    fn logback_writes_system_log_in_node_logs() {
        let nodes = two_nodes();
        let xml = render_logback(&nodes[0]);
        assert!(xml.contains("<file>/h/it's/node1/logs/system.log</file>"), "{xml}");
        assert!(xml.contains("<root level=\"INFO\">"));
        assert!(xml.contains("%date{ISO8601}"));
    }

    #[test]
    fn write_node_files_creates_dirs_and_marker() {
        let tmp = tempfile::tempdir().unwrap();
        let nodes = layouts(&LocalOptions { home: tmp.path().to_path_buf(), ..LocalOptions::default() }).unwrap();
        write_node_files("casslab", &nodes[0], &nodes[0], &Security::default(), false, &BTreeMap::new()).unwrap();
        for dir in nodes[0].all_dirs() {
            assert!(dir.is_dir(), "{}", dir.display());
        }
        assert!(nodes[0].marker_path().is_file());
        assert!(nodes[0].yaml_path().is_file());
        assert!(nodes[0].logback_path().is_file());
    }
}
