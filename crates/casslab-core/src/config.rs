//! The resolved configuration of a run: plain structs built by the CLI layer at its edge and
//! saved with every run (versioned), so a saved run says exactly how it was produced.
//! Nothing here knows about command-line parsing.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Bumped whenever a field of [`RunConfig`] changes meaning; old records keep their number and
/// are read through [`RunConfig::from_saved`]. Version 2 holds the rate in one field.
pub const CONFIG_VERSION: u32 = 2;

/// Where the cluster is and how to talk to it. Never holds a password: that is passed
/// separately as [`Credentials`] and is neither saved nor printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterConfig {
    /// Contact points, `host` or `host:port`.
    pub hosts: Vec<String>,
    pub port: u16,
    /// Local data center for routing and LOCAL_* consistency levels.
    pub dc: Option<String>,
    pub user: Option<String>,
    pub tls: bool,
    pub tls_ca_file: Option<PathBuf>,
    /// Rewrites of addresses the cluster advertises (`from` → `to`), for NAT, port forwards
    /// and measuring proxies.
    pub translate: Vec<(String, String)>,
    pub connections_per_host: usize,
    pub request_timeout_ms: u64,
    /// True when casslab itself started the node(s) behind `hosts`.
    pub local: bool,
    /// Home of those local nodes (their pids, GC logs), when `local`.
    #[serde(default)]
    pub local_home: Option<PathBuf>,
    /// Jolokia agents on the cluster's nodes (`http://HOST:8778/jolokia/`): Cassandra's latency
    /// histograms are read through them in µs. Nodes casslab starts run one of their own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jolokia: Vec<String>,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            hosts: vec!["127.0.0.1".into()],
            port: 9042,
            dc: None,
            user: None,
            tls: false,
            tls_ca_file: None,
            translate: Vec::new(),
            connections_per_host: 1,
            request_timeout_ms: 12_000,
            local: false,
            local_home: None,
            jolokia: Vec::new(),
        }
    }
}

/// Where a Redis server (or Redis Cluster) is and how to talk to it, for workloads of Redis
/// commands. Never holds a password: that is [`Credentials::redis_password`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RedisConfig {
    /// `redis://[user@]host:port[/db]`, or `rediss://…` for TLS; never with a password in it.
    /// A Redis Cluster is recognised from the node's `INFO` and used through every node.
    pub url: String,
    /// CA certificate (PEM) to verify the server with, for `rediss://`.
    pub tls_ca_file: Option<PathBuf>,
    /// Multiplexed connections (requests are spread over them).
    pub connections: usize,
    pub request_timeout_ms: u64,
    /// True when casslab itself started the server (`casslab local redis up`): only then
    /// does `--reload` empty its database.
    pub local: bool,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig { url: "redis://127.0.0.1:6379".into(), tls_ca_file: None, connections: 1, request_timeout_ms: 12_000, local: false }
    }
}

/// Passwords, kept out of Debug output and never serialized.
#[derive(Clone, Default)]
pub struct Credentials {
    /// The CQL login's.
    pub password: Option<String>,
    /// The Redis server's (`AUTH`), with the URL's user name if it has one.
    pub redis_password: Option<String>,
}

impl Credentials {
    /// The passwords the environment gives (never flags, which would show in `ps`): the CQL
    /// login's in CASSLAB_PASSWORD, the Redis server's in CASSLAB_REDIS_PASSWORD (an empty one
    /// is none).
    pub fn from_env() -> Credentials {
        Credentials { password: std::env::var("CASSLAB_PASSWORD").ok(), redis_password: std::env::var("CASSLAB_REDIS_PASSWORD").ok().filter(|p| !p.is_empty()) }
    }

    /// For a Redis server only: its password from the environment, no CQL login.
    pub fn redis_from_env() -> Credentials {
        Credentials { password: None, ..Credentials::from_env() }
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let said = |p: &Option<String>| if p.is_some() { "<password>" } else { "none" };
        write!(f, "Credentials(cql: {}, redis: {})", said(&self.password), said(&self.redis_password))
    }
}

/// What to do about the workload's load phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LoadMode {
    /// Load unless the same data was loaded before (recorded in the keyspace).
    #[default]
    Auto,
    /// Never load.
    Skip,
    /// Load (as Auto) and stop before the run phase.
    Only,
    /// Truncate the workload's tables (only in a keyspace casslab created) and load again.
    Reload,
}

/// What profiles a run makes (saved with its config); `profile` records and reads them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProfileConfig {
    /// Record the nodes casslab started with Java Flight Recorder during the run phase.
    #[serde(default)]
    pub server: bool,
    /// Profile casslab itself during the run phase (where the load generator spends CPU).
    #[serde(default)]
    pub client: bool,
    /// Profiles made elsewhere, read when the run ends: (node, a JFR file or folded stacks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<(String, std::path::PathBuf)>,
}

impl ProfileConfig {
    pub fn is_off(&self) -> bool {
        !self.server && !self.client && self.files.is_empty()
    }
}

/// Everything that decides what a run does. Saved as JSON with the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub version: u32,
    /// Built-in name or file path, as the user gave it.
    pub workload: String,
    /// The workload file's text, exactly as read (before parameter substitution).
    pub workload_source: String,
    /// Every parameter with its final value (defaults and `-P` overrides applied).
    pub params: BTreeMap<String, String>,
    pub cluster: ClusterConfig,
    /// Where the Redis server is, for workloads of Redis commands (`None`: the run has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis: Option<RedisConfig>,
    /// `--target NAME` of a target inside casslab (`targets::IN_PROCESS`, e.g. `instant`): no
    /// server at all is started, reached or applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_process: Option<String>,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// The offered rate of the run phase, open loop: a fixed rate is a shape of one level, a
    /// schedule (stages, steps, a sine, spikes) has several; `None`: closed loop (as fast as
    /// `concurrency` allows, or `concurrency_shape`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<crate::load_shape::LoadShape>,
    /// Requests in flight that change over the run phase (closed loop, without a rate);
    /// `concurrency` is then its highest level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_shape: Option<crate::load_shape::LoadShape>,
    /// Overrides of the workload's run-phase timing; `None` = the workload's own.
    pub duration_s: Option<f64>,
    /// The run phase ends once this many operations were started after the warm-up and have
    /// completed (successes and errors alike, over all workers; a sharded run's whole, each
    /// shard its slice), instead of after a duration (`--count`, cassandra-stress's `n=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    pub warmup_s: Option<f64>,
    pub interval_ms: u64,
    pub seed: u64,
    pub load: LoadMode,
    /// Engine workers. 0 when the user left it to casslab: [`RunConfig::resolved`] decides it,
    /// once every source (flags, an experiment's `rate:`, a variant's, a find-max step's) is
    /// merged, and the run records the number it had.
    pub threads: usize,
    /// Under a rate, the workers share one schedule: whichever has room starts the next
    /// operation due (`--shared-schedule`), instead of each following its own slice of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_schedule: bool,
    /// Collect the nodes' own metrics during the run (`server` module).
    #[serde(default = "yes")]
    pub server_metrics: bool,
    /// Keep the query traces of this many of the slowest requests (0 = no tracing).
    #[serde(default)]
    pub trace_slowest: usize,
    /// Where the servers spend their time (`--profile`, `--profile-file`).
    #[serde(default, skip_serializing_if = "ProfileConfig::is_off")]
    pub profile: ProfileConfig,
    /// Share of requests the nodes trace when `trace_slowest` > 0.
    #[serde(default)]
    pub trace_probability: f64,
    /// At the end of the run, wait for compactions to finish before reading what is on disk.
    #[serde(default)]
    pub settle: bool,
    /// This run is one shard of a run spread over several loaders.
    #[serde(default)]
    pub shard: Option<ShardConfig>,
    /// When the run phase starts on the wall clock (Unix milliseconds): every loader of a
    /// sharded run starts together and cuts its intervals on the same boundaries. `None`: at
    /// once (or when the shards' barrier says, for a sharded run).
    #[serde(default)]
    pub start_at_unix_ms: Option<i64>,
    /// Verify what every operation reads against what was written (`--verify`: on,
    /// `--no-verify`: off); `None`: as the workload and its operations say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<bool>,
    /// The consistency level of every CQL statement (`--consistency`), over what the workload's
    /// operations say; `None`: as they say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<crate::cql::Consistency>,
    /// The serial consistency of every conditional statement (`--serial-consistency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_consistency: Option<crate::cql::Consistency>,
    /// The server the run ran against, as casslab's local cluster was defined (version, Java,
    /// garbage collector, heap, settings, nodes); `None` for a cluster casslab does not control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::server_spec::ServerSpec>,
}

/// One loader's part of a run spread over several (`--shard I/N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardConfig {
    /// This loader's index, from 0.
    pub index: u32,
    /// How many loaders the run has.
    pub count: u32,
    /// The logical run's name, the same on every loader (the barrier's key; `merge` checks it).
    pub run_id: String,
    /// Longest wait at the barrier for the other shards, in milliseconds (without a
    /// `start_at_unix_ms`).
    pub barrier_timeout_ms: u64,
}

impl ShardConfig {
    /// This shard's slice `[first, first + count)` of `total` operations: contiguous, without
    /// overlap or gap over all shards.
    pub fn slice(&self, total: u64) -> (u64, u64) {
        let (i, n) = (self.index as u128, self.count.max(1) as u128);
        let first = (total as u128 * i / n) as u64;
        let end = (total as u128 * (i + 1) / n) as u64;
        (first, end - first)
    }

    /// Whether this shard carries out events and polls the servers (one shard does: shard 0).
    pub fn controls(&self) -> bool {
        self.index == 0
    }
}

fn yes() -> bool {
    true
}

/// Operations per second one engine worker keeps up under a fixed rate with room to spare
/// (one worker spends well under 10 µs of CPU per operation).
const RATE_PER_WORKER: f64 = 50_000.0;

/// Engine threads when `--threads` is not given: half the cores (at least one). The cluster
/// under test, or other loaders, need the rest more than the client: on a 2-core machine one
/// thread delivered more operations per second than two, for less CPU per operation, and
/// threads that hand completions to each other cost a wake-up (a system call) each time.
pub fn default_threads() -> usize {
    default_threads_of(machine_cores())
}

/// The machine's cores, as the standard library sees them (2 when it cannot tell).
pub fn machine_cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}

fn default_threads_of(cores: usize) -> usize {
    (cores / 2).max(1)
}

/// Engine workers when `--threads` is not given, on a machine of `cores`: half the cores, and
/// under a fixed rate only as many as the rate needs (at a few thousand operations per second,
/// one worker starts them in batches on its timer ticks, where several would each wake for a
/// share).
pub fn default_workers(rate_per_s: Option<f64>, cores: usize) -> usize {
    let threads = default_threads_of(cores);
    match rate_per_s {
        Some(r) => ((r / RATE_PER_WORKER).ceil() as usize).clamp(1, threads),
        None => threads,
    }
}

impl RunConfig {
    /// The settings derived from others, decided in this one place once every source is
    /// merged: the engine workers (`threads` 0 → [`default_workers`] of this loader's rate on
    /// this machine). A run session resolves its config before anything runs.
    pub fn resolved(self) -> RunConfig {
        self.resolved_on(machine_cores())
    }

    /// [`RunConfig::resolved`] on a machine of `cores` cores.
    pub fn resolved_on(mut self, cores: usize) -> RunConfig {
        if self.threads == 0 {
            self.threads = default_workers(self.shard_rate_per_s(), cores);
        }
        self
    }

    /// This loader's share of the highest rate: the whole rate (a schedule's peak), or a
    /// shard's part of it.
    pub fn shard_rate_per_s(&self) -> Option<f64> {
        let shards = self.shard.as_ref().map_or(1, |s| s.count.max(1));
        self.peak_rate_per_s().map(|r| r / shards as f64)
    }

    /// This loader's share of the run phase's count of operations: the whole count, or a
    /// shard's slice of it (see [`ShardConfig::slice`]); `None`: the run phase lasts a duration.
    pub fn shard_count(&self) -> Option<u64> {
        let count = self.count?;
        Some(self.shard.as_ref().filter(|s| s.count > 1).map_or(count, |s| s.slice(count).1))
    }

    /// The fixed rate, or the highest level of the rate schedule; `None`: closed loop.
    pub fn peak_rate_per_s(&self) -> Option<f64> {
        self.rate.as_ref().map(crate::load_shape::LoadShape::peak)
    }

    /// The rate when it is one level held for the whole run; `None` for a schedule or a
    /// closed loop.
    pub fn fixed_rate_per_s(&self) -> Option<f64> {
        self.rate.as_ref().and_then(crate::load_shape::LoadShape::as_fixed)
    }

    /// The rate when it follows a schedule of several levels; `None` for a fixed rate or a
    /// closed loop.
    pub fn rate_schedule(&self) -> Option<&crate::load_shape::LoadShape> {
        self.rate.as_ref().filter(|s| s.as_fixed().is_none())
    }

    /// Sets a fixed rate (ops/s).
    pub fn set_fixed_rate(&mut self, rate_per_s: f64) {
        self.rate = Some(crate::load_shape::LoadShape::fixed(rate_per_s));
    }

    /// The rate as people write it: `5000/s`, a schedule's text, or `max`.
    pub fn rate_text(&self) -> String {
        match (&self.rate, self.fixed_rate_per_s()) {
            (_, Some(r)) => format!("{r:.0}/s"),
            (Some(s), None) => s.to_string(),
            (None, _) => "max".into(),
        }
    }

    /// A config as saved, of any version: version 1 held the rate in two fields
    /// (`rate_per_s`, a fixed rate, and `rate_shape`, a schedule), read here into `rate`.
    pub fn from_saved(mut saved: serde_json::Value) -> Result<RunConfig, serde_json::Error> {
        if let Some(map) = saved.as_object_mut() {
            let fixed = map.remove("rate_per_s");
            let shape = map.remove("rate_shape");
            if !map.contains_key("rate") {
                let rate = match (shape, fixed.as_ref().and_then(serde_json::Value::as_f64)) {
                    (Some(s), _) if !s.is_null() => Some(s),
                    (_, Some(r)) => Some(serde_json::to_value(crate::load_shape::LoadShape::fixed(r))?),
                    _ => None,
                };
                if let Some(r) = rate {
                    map.insert("rate".into(), r);
                }
            }
        }
        serde_json::from_value(saved)
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            version: CONFIG_VERSION,
            workload: String::new(),
            workload_source: String::new(),
            params: BTreeMap::new(),
            cluster: ClusterConfig::default(),
            redis: None,
            in_process: None,
            concurrency: 128,
            rate: None,
            concurrency_shape: None,
            duration_s: None,
            count: None,
            warmup_s: None,
            interval_ms: 1000,
            seed: 42,
            load: LoadMode::Auto,
            threads: 0,
            shared_schedule: false,
            server_metrics: true,
            trace_slowest: 0,
            profile: ProfileConfig::default(),
            trace_probability: 0.01,
            settle: false,
            shard: None,
            start_at_unix_ms: None,
            verify: None,
            server: None,
            consistency: None,
            serial_consistency: None,
        }
    }
}

/// Facts about where a run happened, saved beside its config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct RunEnvironment {
    pub casslab_version: String,
    pub cassandra_version: Option<String>,
    pub node_count: usize,
    pub client_cores: usize,
    pub hostname: Option<String>,
    /// The wall-clock time (Unix milliseconds) of the run's time axis origin: interval times
    /// are milliseconds since it.
    #[serde(default)]
    pub clock_t0_unix_ms: Option<i64>,
}

/// The server as people name it, from a saved version: `Cassandra 5.0.6`, `Redis 7.0.15`
/// (a target other than Cassandra saves its version with its name: it starts with a letter).
pub fn server_label(version: Option<&str>) -> String {
    match version {
        Some(v) if v.starts_with(|c: char| c.is_ascii_alphabetic()) => v.to_string(),
        Some(v) => format!("Cassandra {v}"),
        None => "server version unknown".to_string(),
    }
}

impl RunConfig {
    /// Where the run's load went: the Redis URL for a Redis run (its environment says so),
    /// else the CQL contact points.
    pub fn server_address(&self, env: &RunEnvironment) -> String {
        if self.in_process.is_some() {
            return "in-process".to_string();
        }
        match &self.redis {
            Some(r) if env.cassandra_version.as_deref().is_some_and(|v| v.starts_with("Redis")) => r.url.clone(),
            _ => self.cluster.hosts.join(","),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::load_shape::LoadShape;

    #[test]
    fn workers_are_decided_from_the_merged_rate() {
        assert!(default_threads() >= 1);
        // on 8 cores: half of them at maximum throughput, what the rate needs under one
        assert_eq!(default_workers(None, 8), 4);
        assert_eq!(default_workers(Some(5_000.0), 8), 1);
        assert_eq!(default_workers(Some(120_000.0), 8), 3);
        assert_eq!(default_workers(Some(1e9), 8), 4);
        let free = RunConfig { threads: 0, ..RunConfig::default() };
        assert_eq!(free.clone().resolved_on(8).threads, 4);
        assert_eq!(RunConfig { rate: Some(LoadShape::fixed(5_000.0)), ..free.clone() }.resolved_on(8).threads, 1);
        // what the user asked for stands
        assert_eq!(RunConfig { threads: 3, rate: Some(LoadShape::fixed(5_000.0)), ..free.clone() }.resolved_on(8).threads, 3);
        // a shard's share of the rate decides its workers
        let shard = ShardConfig { index: 1, count: 4, run_id: "r".into(), barrier_timeout_ms: 1 };
        let sharded = RunConfig { rate: Some(LoadShape::fixed(200_000.0)), shard: Some(shard), ..free };
        assert_eq!(sharded.shard_rate_per_s(), Some(50_000.0));
        assert_eq!(sharded.resolved_on(8).threads, 1);
    }

    #[test]
    fn a_count_is_shared_among_shards_as_their_slices() {
        let counted = RunConfig { count: Some(2_000), ..RunConfig::default() };
        assert_eq!(counted.shard_count(), Some(2_000));
        let shard = |index| ShardConfig { index, count: 3, run_id: "r".into(), barrier_timeout_ms: 1 };
        let slices: Vec<Option<u64>> = (0..3).map(|i| RunConfig { shard: Some(shard(i)), ..counted.clone() }.shard_count()).collect();
        assert_eq!(slices, [Some(666), Some(667), Some(667)]);
        assert_eq!(RunConfig::default().shard_count(), None);
    }

    #[test]
    fn shard_slices_cover_the_whole_without_overlap() {
        for (total, n) in [(10u64, 3u32), (2000, 3), (7, 7), (5, 8), (0, 2), (1_000_000_007, 4)] {
            let mut next = 0;
            for i in 0..n {
                let s = ShardConfig { index: i, count: n, run_id: "r".into(), barrier_timeout_ms: 0 };
                let (first, count) = s.slice(total);
                assert_eq!(first, next, "shard {i}/{n} of {total} starts where the last ended");
                next = first + count;
            }
            assert_eq!(next, total, "{n} shards of {total}");
        }
        let s = ShardConfig { index: 1, count: 3, run_id: "r".into(), barrier_timeout_ms: 0 };
        assert_eq!(s.slice(2000), (666, 667));
        assert!(!s.controls());
    }

    #[test]
    fn old_configs_read_without_the_new_fields() {
        let mut v = serde_json::to_value(RunConfig::default()).unwrap();
        v.as_object_mut().unwrap().remove("shard");
        v.as_object_mut().unwrap().remove("start_at_unix_ms");
        let back: RunConfig = serde_json::from_value(v).unwrap();
        assert_eq!(back, RunConfig::default());
        assert!(!serde_json::to_string(&RunConfig::default()).unwrap().contains("\"rate\""), "no rate, no key");
        assert!(!serde_json::to_string(&RunConfig::default()).unwrap().contains("\"count\""), "no count, no key");
    }

    #[test]
    fn a_schedules_peak_decides_the_workers_and_a_single_level_is_a_fixed_rate() {
        let mut cfg = RunConfig { rate: Some(LoadShape::parse("ramp 100..120000 over 60s, 500 for 10s").unwrap()), ..RunConfig::default() };
        assert_eq!((cfg.fixed_rate_per_s(), cfg.peak_rate_per_s()), (None, Some(120_000.0)));
        assert!(cfg.rate_schedule().is_some());
        assert_eq!(cfg.clone().resolved_on(8).threads, 3);
        assert_eq!(cfg.rate_text(), "ramp 100..120000 over 1m, 500 for 10s");
        cfg.rate = Some(LoadShape::parse("800/s").unwrap());
        assert_eq!((cfg.fixed_rate_per_s(), cfg.rate_schedule().is_none(), cfg.rate_text()), (Some(800.0), true, "800/s".to_string()));
        assert_eq!(RunConfig::default().rate_text(), "max");
    }

    #[test]
    fn saved_configs_of_version_1_read_their_rate_into_one_field() {
        let mut v1 = serde_json::to_value(RunConfig::default()).unwrap();
        let m = v1.as_object_mut().unwrap();
        m.insert("version".into(), 1.into());
        m.insert("rate_per_s".into(), 800.0.into());
        assert_eq!(RunConfig::from_saved(v1.clone()).unwrap().fixed_rate_per_s(), Some(800.0));
        let ramp = LoadShape::parse("ramp 100..5000 over 60s").unwrap();
        let m = v1.as_object_mut().unwrap();
        m.insert("rate_per_s".into(), serde_json::Value::Null);
        m.insert("rate_shape".into(), serde_json::to_value(&ramp).unwrap());
        assert_eq!(RunConfig::from_saved(v1.clone()).unwrap().rate, Some(ramp));
        v1.as_object_mut().unwrap().remove("rate_shape");
        assert_eq!(RunConfig::from_saved(v1.clone()).unwrap().count, None, "a config saved before --count has none");
        assert_eq!(RunConfig::from_saved(v1).unwrap().rate, None);
        // today's configs read as they were written
        let now = RunConfig { rate: Some(LoadShape::fixed(300.0)), count: Some(2_000), ..RunConfig::default() };
        assert_eq!(RunConfig::from_saved(serde_json::to_value(&now).unwrap()).unwrap(), now);
    }
}
