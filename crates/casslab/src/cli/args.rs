//! The flags of every command, as clap reads them: definitions and help texts only. What they
//! become in the library's config is `to_config.rs`'s; checks of their values happen there.

use casslab_core::report::format::{comparison_formats, pass_formats, report_formats, run_list_formats, stream_formats};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// What `casslab show` prints on stdout (each read from the store as it goes).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    Csv,
}

#[derive(Args, Debug)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub command: Option<RunsCommand>,
    #[command(flatten)]
    pub list: RunsListArgs,
}

#[derive(Args, Debug)]
pub struct RunsListArgs {
    /// Most runs to list (0: all of them).
    ///
    /// Newest first, counted after the filters.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Only runs of this workload, e.g. kv or ycsb-a.
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Only runs with this tag (repeatable).
    ///
    /// A tag is `key=value` or a plain word; every one given must match, and a bare `key` matches
    /// any value of it.
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// text (a table), json or csv.
    #[arg(long, hide_possible_values = true, value_parser = format_names(run_list_formats()), default_value = "text")]
    pub format: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Subcommand, Debug)]
pub enum RunsCommand {
    /// Delete saved runs and everything saved with them; a run still running is refused.
    Delete {
        /// Run ids, or `latest`.
        #[arg(required = true, value_name = "RUN")]
        runs: Vec<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Tag a saved run: `key=value` replaces the run's tag of that key, a plain word is added.
    Tag {
        /// Run id, or `latest`.
        run: String,
        /// Tags to set.
        #[arg(value_name = "TAG")]
        tags: Vec<String>,
        /// Remove the run's tags of this key (repeatable).
        ///
        /// The tag `key` itself and any `key=…`.
        #[arg(long, value_name = "KEY")]
        remove: Vec<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Args, Debug)]
pub struct LintArgs {
    /// Built-in workload, workload file or experiment file.
    pub target: String,
    /// A workload parameter, e.g. -P rows=100000000 (repeatable).
    #[arg(short = 'P', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Requests in flight the run will have.
    ///
    /// As `run --concurrency`; the fan-out rules judge with it.
    #[arg(long, short = 'c', default_value_t = 128)]
    pub concurrency: usize,
    /// Most rows a partition may hold.
    ///
    /// Partitions estimated to hold more rows than this are errors.
    #[arg(long, default_value_t = 100_000, value_name = "ROWS")]
    pub max_partition_rows: u64,
    /// Largest size a partition may have, e.g. 1GB.
    ///
    /// Partitions estimated to be larger than this are errors.
    #[arg(long, default_value = "100MB", value_name = "SIZE")]
    pub max_partition_size: String,
    /// With --hosts: also read the keyspace's live schema (tables, indexes, replication) from
    /// that cluster and judge it instead of the workload's own; --dc names the local data center
    /// for LOCAL_* levels. A --user's password comes from CASSLAB_PASSWORD.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Least severity printed: info, warning or error.
    ///
    /// Findings less severe than this are not printed.
    #[arg(long, default_value = "info", value_name = "SEVERITY")]
    pub min_severity: String,
    /// Print the findings as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 on a warning too, not only an error (for CI).
    #[arg(long)]
    pub deny_warnings: bool,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The workload that loaded the data (name or file).
    ///
    /// A built-in workload's name or a workload YAML file.
    pub workload: String,
    /// A parameter the data was loaded with (repeatable).
    #[arg(short = 'P', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// The seed the data was loaded with.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Reads in flight at once.
    #[arg(long, short = 'c', default_value_t = 128)]
    pub concurrency: usize,
    /// Consistency level of the reads, e.g. ONE, ALL.
    #[arg(long, default_value = "QUORUM")]
    pub consistency: String,
    /// text (a table per data set) or json.
    #[arg(long, hide_possible_values = true, value_parser = format_names(pass_formats()), default_value = "text")]
    pub format: String,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The Redis server of a Redis workload (as run --target).
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Where the records of verified runs are read from.
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub local: LocalHomeArgs,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards: exports, directories, run ids or run-id:NAME.
    ///
    /// Their exports (`casslab show RUN --json FILE`), directories of exports, run ids in --store,
    /// or `run-id:NAME` for every shard of run NAME in --store.
    #[arg(required = true, value_name = "SHARD")]
    pub shards: Vec<String>,
    /// Write the merged run as JSON to FILE too (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Where the shards' runs are read from (ids, run-id:) and the merged run is saved.
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Run ids, or `latest`.
    ///
    /// The first is the baseline unless --baseline names another.
    #[arg(required_unless_present = "experiment", value_name = "RUN")]
    pub runs: Vec<String>,
    /// The run the others are compared against.
    ///
    /// It need not be among RUN.
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,
    /// Compare a saved experiment's variants again.
    ///
    /// From its runs in the store: its id (printed when it started, e.g. cache-1732459200) or its
    /// name (its latest execution). Invalid runs are left out, as `casslab experiment` does.
    #[arg(long, value_name = "ID|NAME", conflicts_with_all = ["runs", "baseline"])]
    pub experiment: Option<String>,
    /// Also write the comparison as an HTML page (`-`: stdout).
    ///
    /// One self-contained page, as `casslab experiment -o` writes: bars per side with their
    /// intervals, the verdicts.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Window length the bootstrap resamples, e.g. 30s.
    ///
    /// The measured phase is cut into windows of this length, which the bootstrap resamples
    /// [default: from the runs' length, about 10 windows of the shortest run, at most 60s]
    #[arg(long)]
    pub window: Option<String>,
    #[command(flatten)]
    pub analysis: AnalysisArgs,
    /// Exit 1 when OP.METRIC CMP VALUE holds, e.g. 'read.p99 > 45ms'.
    ///
    /// For a compared run (or for a lone run). METRIC: ops_s or errors (plain numbers), or mean,
    /// p50, p95, p99, p999, max (latencies, with a unit: ns, us, ms, s); OP may be `total`; CMP: >,
    /// >=, <, <=. Repeatable.
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<casslab_core::analysis::Gate>,
    /// Exit 1 on a significant regression above this, e.g. 10%.
    ///
    /// A run significantly worse than the baseline (latency up or throughput down, the interval of
    /// the change excluding 0) by more than this fails the gate. A gate that cannot tell (runs too
    /// short, an interval that reaches past the limit) exits 4.
    #[arg(long, value_name = "PERCENT")]
    pub max_regression: Option<casslab_core::analysis::MaxRegression>,
    /// Exit 0 when a gate could not be judged (else 4).
    #[arg(long)]
    pub allow_undecided: bool,
    /// text (tables and verdicts), json or csv.
    ///
    /// json has the figures, changes and verdicts as data; csv one line per side, operation and
    /// figure.
    #[arg(long, hide_possible_values = true, value_parser = format_names(comparison_formats()), default_value = "text")]
    pub format: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// How runs are compared (shared by `compare` and `experiment`).
#[derive(Args, Debug, Clone)]
pub struct AnalysisArgs {
    /// Bootstrap resamples per figure.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// Confidence level of the intervals, in percent.
    #[arg(long, default_value = "95")]
    pub confidence: String,
    /// Fewest windows a side needs to judge anything.
    ///
    /// With fewer windows than this on either side, a comparison is "too short" to claim anything.
    #[arg(long, default_value_t = 5)]
    pub min_windows: usize,
    /// Cores of the Cassandra servers, for throughput per core.
    ///
    /// [default for local nodes: the machine's cores, shared with the client]
    #[arg(long, value_name = "N")]
    pub server_cores: Option<f64>,
    /// Compare service time instead of latency.
    ///
    /// Service time is timed from the actual send; latency from the intended start.
    #[arg(long)]
    pub service_time: bool,
    /// Use runs whose validity verdict is "invalid".
    ///
    /// Such a run had a client behind its schedule or saturated, a missed rate, many errors or
    /// reads that found nothing; without this flag it is refused, with the reasons.
    #[arg(long)]
    pub allow_invalid: bool,
    /// Use the old method: windows pooled, figures judged alone.
    ///
    /// The method casslab used before repetitions were the unit (every variant's windows pooled and
    /// resampled as if independent, each figure judged on its own), to show what it gets wrong; for
    /// comparison only (bench/aa.sh uses it), not for judging.
    #[arg(long, hide_short_help = true)]
    pub pool_windows: bool,
    /// Hold the confidence over all comparisons together.
    ///
    /// Every variant against the baseline, every judged figure, instead of each comparison's
    /// figures: with many variants, no false claim anywhere at least 95% of the time, at the cost
    /// of wider intervals [default: per comparison, or the experiment file's `family:`]
    #[arg(long)]
    pub family: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Run ids, or `latest`.
    ///
    /// Several runs are shown side by side with their config differences.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    /// Output file (`-`: stdout).
    ///
    /// Without it Markdown and JSON go to stdout, and so does HTML when stdout is not a terminal.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// html, md or json [default: from the output file's extension, else html].
    #[arg(long, hide_possible_values = true, value_parser = format_names(report_formats()))]
    pub format: Option<String>,
    /// HTML time charts on the wall clock (UTC), not from the start.
    ///
    /// To line a run up with the cluster's own dashboards.
    #[arg(long)]
    pub wall_clock: bool,
    /// Also write the runs' profiles as folded stacks into DIR.
    ///
    /// The profiles of --profile and --profile-file, one file per run, node and kind (and the nodes
    /// merged), for other flame graph tools.
    #[arg(long, value_name = "DIR")]
    pub profile_out: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Subcommand, Debug)]
pub enum WorkloadsCommand {
    /// Print a built-in workload's or scenario's YAML (a starting point for your own file).
    Show {
        /// A name from `casslab workloads`, e.g. ycsb-a or node-loss.
        name: String,
    },
}

// parsed once per process: the size of `up`'s flags costs nothing
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum LocalCommand {
    /// Start local Cassandra nodes and wait until CQL answers.
    ///
    /// From Maven Central jars, downloaded once.
    Up(LocalUpArgs),
    /// Show the local nodes and their state in the ring.
    ///
    /// Address, data center, state in the ring (UN = up and normal, DN = down), pid, whether CQL
    /// answers, load (from `nodetool status`), where data is.
    Status(LocalHomeArgs),
    /// Stop nodes gracefully (SIGTERM: Cassandra drains, then exits); their data is kept.
    Stop(LocalNodeArgs),
    /// Kill nodes at once (SIGKILL), as a crash would; their data is kept.
    Kill(LocalNodeArgs),
    /// Start stopped nodes again with their data, and wait until the ring sees them up.
    Start(LocalNodeArgs),
    /// Run Cassandra's own nodetool against a node.
    ///
    /// From the cached jars, against the node's JMX port, e.g. `casslab local nodetool node1
    /// status`.
    Nodetool {
        /// Node name (node2) or address.
        node: String,
        /// nodetool's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
        #[command(flatten)]
        home: LocalHomeArgs,
    },
    /// A local redis-server for workloads of Redis commands.
    ///
    /// From the OS package: `up`, `status`, `down`. `casslab run` of a Redis workload without
    /// --target starts it itself.
    #[command(subcommand)]
    Redis(LocalRedisCommand),
    /// Run the network relay of a relayed local cluster (started by `local up`, stopped by
    /// `local down`; not for people).
    #[command(hide = true)]
    Relay(LocalHomeArgs),
    /// Stop the local nodes casslab started (data is kept unless --wipe).
    Down {
        /// Also delete the nodes' data and logs (the nodes are then stopped at once, without a
        /// drain: their data is not kept).
        #[arg(long)]
        wipe: bool,
        #[command(flatten)]
        home: LocalHomeArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum LocalRedisCommand {
    /// Start casslab's redis-server (no persistence: everything in memory) and wait until it
    /// answers; a server already running there is reused. Prints its URL.
    Up {
        /// Loopback address it listens on.
        #[arg(long, default_value = "127.0.0.1")]
        address: std::net::Ipv4Addr,
        /// TCP port it listens on.
        #[arg(long, default_value_t = casslab_local::local_redis::DEFAULT_REDIS_PORT)]
        port: u16,
        #[command(flatten)]
        home: LocalHomeArgs,
    },
    /// Show casslab's redis-server: address, pid, whether it answers.
    Status(LocalHomeArgs),
    /// Stop the redis-server casslab started (never one it did not start); its data is gone.
    Down(LocalHomeArgs),
}

#[derive(Args, Debug)]
pub struct LocalNodeArgs {
    /// Which nodes: node2, 127.0.0.2, dc2 or `all`.
    ///
    /// A node's name, its address, a data center (every node of it) or every node.
    pub target: String,
    #[command(flatten)]
    pub home: LocalHomeArgs,
}

#[derive(Args, Debug, Clone)]
pub struct LocalHomeArgs {
    /// Directory of the local nodes.
    ///
    /// [default: the user's data dir/casslab]
    #[arg(long, env = "CASSLAB_HOME", value_name = "DIR", hide_env_values = true)]
    pub home: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct LocalUpArgs {
    /// Number of nodes, in one data center.
    ///
    /// On consecutive addresses from --base-address [default: the cluster the data under --home
    /// belongs to, else 1]
    #[arg(long, conflicts_with = "dcs")]
    pub nodes: Option<usize>,
    /// Data centers and their nodes, e.g. dc1:3,dc2:2.
    ///
    /// Addresses in that order; the nodes announce their data center with the
    /// GossipingPropertyFileSnitch.
    #[arg(long, value_name = "DC:N,...")]
    pub dcs: Option<String>,
    /// JVM heap per node, e.g. 1G or 768M.
    ///
    /// [default: 1G for one node, 768M for up to three, 640M beyond]
    #[arg(long)]
    pub heap: Option<String>,
    /// Apache Cassandra version to run.
    ///
    /// From Maven Central's cassandra-all [default: the saved cluster's, else 5.0.9]
    #[arg(long)]
    pub version: Option<String>,
    /// Address of the first node.
    ///
    /// Node i gets the next addresses (127.0.0.0/8 is all loopback) [default: the saved cluster's,
    /// else 127.0.0.1]
    #[arg(long)]
    pub base_address: Option<std::net::Ipv4Addr>,
    /// Require a login (user cassandra, password cassandra).
    ///
    /// PasswordAuthenticator and CassandraAuthorizer, with Cassandra's default superuser. `casslab
    /// run` without --hosts logs in as that user by itself.
    #[arg(long)]
    pub auth: bool,
    /// Accept only TLS clients, with a certificate casslab makes.
    ///
    /// A self-signed certificate for the nodes' addresses, made with the JDK's keytool. Prints the
    /// CA file to pass as --tls-ca; `casslab run` without --hosts uses it by itself.
    #[arg(long)]
    pub tls: bool,
    /// Run a custom build: a directory of jars or a distribution.
    ///
    /// Instead of a released version: a directory of jars, or an unpacked Cassandra distribution
    /// (its lib/), e.g. your patched fork.
    #[arg(long, value_name = "DIR")]
    pub build: Option<PathBuf>,
    /// The Java home to run the nodes with.
    ///
    /// [default: one suited to the version, found on this machine, or for 4.x fetched once from
    /// PyPI]
    #[arg(long, value_name = "DIR")]
    pub java_home: Option<PathBuf>,
    /// Garbage collector: g1 (default), zgc, shenandoah, parallel.
    #[arg(long, value_name = "GC")]
    pub gc: Option<String>,
    /// A JVM option for the nodes (repeatable).
    ///
    /// After casslab's own, e.g. --jvm-opt=-XX:+AlwaysPreTouch.
    #[arg(long = "jvm-opt", value_name = "OPTION", allow_hyphen_values = true)]
    pub jvm_options: Vec<String>,
    /// A cassandra.yaml setting, KEY=VALUE (repeatable).
    ///
    /// VALUE is read as JSON when it is (numbers, true/false, {"nested": "maps"}), else as text,
    /// e.g. --set concurrent_reads=64 --set 'sstable={"selected_format":"bti"}'. Checked before any
    /// node starts.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Round-trip time between two data centers, DC:DC=RTT.
    ///
    /// Repeatable, or by commas, e.g. --rtt dc1:dc2=8ms, with jitter 8ms±1ms (or 8ms+-1ms);
    /// dc1:dc1=RTT between the nodes of one. Every byte between their nodes is delayed by half of
    /// it each way, by casslab's relay. A running cluster takes new distances without a restart.
    #[arg(long, value_name = "DC:DC=RTT")]
    pub rtt: Vec<String>,
    /// The client's round-trip time to a data center, DC=RTT.
    ///
    /// Repeatable, or by commas, e.g. --client-rtt dc2=8ms: added to every request the client sends
    /// there.
    #[arg(long, value_name = "DC=RTT")]
    pub client_rtt: Vec<String>,
    /// Put every connection through casslab's relay.
    ///
    /// Even without distances, so that a run's network events (partition, isolate, slow, lossy,
    /// client-loses) can act.
    #[arg(long)]
    pub relay: bool,
    #[command(flatten)]
    pub home: LocalHomeArgs,
}

#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// Results database (SQLite).
    ///
    /// [default: the user's data dir/casslab/results.db]
    #[arg(long, env = "CASSLAB_STORE", value_name = "FILE", hide_env_values = true)]
    pub store: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// Write the whole run as JSON to FILE (`-`: stdout).
    ///
    /// Config, intervals, full histograms, server side, events, traces; docs/run-export.schema.json
    /// describes it.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write interval histograms as an HdrHistogram log to FILE.
    ///
    /// `-` writes to stdout. Latency from the intended start (see --hdr-service-time).
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,
    /// With --hdr-log: write service time instead of latency.
    #[arg(long, hide_short_help = true)]
    pub hdr_service_time: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Built-in workload name or workload YAML file.
    ///
    /// `casslab workloads` lists the built-in ones.
    pub workload: String,
    #[command(flatten)]
    pub opts: RunOptions,
}

/// Everything about how to run a workload, shared by `run` and `experiment`.
#[derive(Args, Debug)]
pub struct RunOptions {
    /// Set a workload parameter, e.g. -P rows=1000000 (repeatable).
    #[arg(short = 'P', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Measured run length (overrides the workload's), e.g. 30s, 5m.
    #[arg(long, short = 'd')]
    pub duration: Option<String>,
    /// End the run phase after N operations (1M) instead of a duration.
    ///
    /// Like cassandra-stress's `n=`: N started after the warm-up (over all threads; a sharded run's whole, each shard its
    /// slice) and completed, successes and errors alike, e.g. 1000000 or 1M. Under --rate the
    /// schedule runs until then. The warm-up stays timed.
    #[arg(long, short = 'n', value_name = "N", conflicts_with_all = ["duration", "find_max"])]
    pub count: Option<String>,
    /// Unmeasured warm-up before the run (overrides the workload's).
    #[arg(long)]
    pub warmup: Option<String>,
    /// Total rate: fixed (5000) or a schedule of stages.
    ///
    /// For the run phase, fixed (5000, 5000/s) or a schedule of stages ('ramp 100..5000 over 60s,
    /// hold 2m, 500 for 30s', 'steps 1000 2000 4000 each 30s', 'sine 500..5000 period 10m for 30m',
    /// '1000, spike x5 for 5s every 60s'), counted from the start of the run phase (warm-up
    /// included; a schedule with an end sets the run's length unless --duration does). Latency is
    /// measured from each operation's intended start. Default: the workload's run.rate, else as
    /// fast as possible.
    #[arg(long, short = 'r', value_name = "RATE|SCHEDULE")]
    pub rate: Option<String>,
    /// Requests in flight at once, or a schedule of them.
    ///
    /// A schedule (without a rate), e.g. '8 for 30s, 16 for 30s, 32' [default: 128, or an
    /// experiment file's `concurrency`].
    #[arg(long, short = 'c', value_name = "N|SCHEDULE")]
    pub concurrency: Option<String>,
    /// Engine threads (0: chosen for the machine and rate).
    ///
    /// 0 = half the cores, at least one; under --rate, one per 50,000 ops/s of it.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Under --rate, let the threads share one schedule.
    ///
    /// With several threads, whichever has room starts the next operation due, instead of each
    /// following its own slice of it.
    #[arg(long)]
    pub shared_schedule: bool,
    /// Sampling interval of the saved time series.
    #[arg(long, default_value = "1s")]
    pub interval: String,
    /// Seed of every value generator.
    ///
    /// The same seed gives the same data.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Empty the workload's tables and load again.
    ///
    /// Only in a keyspace casslab created.
    #[arg(long, conflicts_with_all = ["skip_load"])]
    pub reload: bool,
    /// Do not run the load phase.
    #[arg(long, conflicts_with_all = ["load_only"])]
    pub skip_load: bool,
    /// Run the schema and load phases, then stop.
    #[arg(long)]
    pub load_only: bool,
    /// Do not print the data-model linter's warnings.
    ///
    /// `casslab lint` shows them all.
    #[arg(long)]
    pub no_lint: bool,
    /// Check every row a read returns against what was written.
    ///
    /// Each is ok, stale, missing, corrupt or resurrected; whatever the workload's `verify:` says,
    /// and --no-verify turns it off.
    #[arg(long, overrides_with = "no_verify")]
    pub verify: bool,
    /// Do not check what reads return.
    ///
    /// Overrides the workload's `verify:`.
    #[arg(long, overrides_with = "verify")]
    pub no_verify: bool,
    /// Do not collect the nodes' own metrics during the run.
    ///
    /// Their system_views tables, and for local nodes GC pauses, CPU and memory.
    #[arg(long)]
    pub no_server_metrics: bool,
    /// Keep the query traces of the N slowest requests.
    ///
    /// From system_traces, shown step by step in the summary and the report. The nodes trace a
    /// sample of requests (--trace-probability); needs nodes casslab started (it sets their trace
    /// probability with nodetool).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub trace_slowest: usize,
    /// Share of requests traced (with --trace-slowest).
    ///
    /// Between 0 and 1.
    #[arg(long, value_name = "P", default_value_t = 0.01, hide_short_help = true)]
    pub trace_probability: f64,
    /// Consistency level of every CQL statement, e.g. QUORUM.
    ///
    /// Over what the workload's operations say (ONE, QUORUM, LOCAL_QUORUM, ALL, …;
    /// cassandra-stress's `cl=`).
    #[arg(long, value_name = "LEVEL")]
    pub consistency: Option<String>,
    /// Serial consistency: SERIAL or LOCAL_SERIAL.
    ///
    /// Of every conditional statement.
    #[arg(long, value_name = "LEVEL")]
    pub serial_consistency: Option<String>,
    /// Record where the nodes spend their time (flame graphs).
    ///
    /// The nodes casslab started, during the run phase, with Java Flight Recorder (jcmd, the JDK's
    /// `profile` settings): CPU samples, allocation, and time blocked on locks and parks. The HTML
    /// report draws them as flame graphs (per node, merged, and for each suspect interval and
    /// event), the Markdown report lists the top frames, compare and experiment pages show where
    /// the time moved. Costs some throughput: bench/profile-cost.sh measures how much.
    #[arg(long)]
    pub profile: bool,
    /// Profile casslab itself during the run phase.
    ///
    /// Every thread sampled 99 times a second: where the load generator spends its CPU, drawn
    /// beside the servers' profiles, to tell a slow client from a slow server.
    #[arg(long)]
    pub profile_client: bool,
    /// A profile made elsewhere, NODE=PATH (repeatable).
    ///
    /// Saved and shown with the run as if recorded: PATH a Java Flight Recorder file (`jcmd PID
    /// JFR.start settings=profile`, then `JFR.dump filename=FILE`) or folded stacks
    /// (`frame;frame;frame COUNT` per line).
    #[arg(long, value_name = "NODE=PATH", hide_short_help = true)]
    pub profile_file: Vec<String>,
    /// Also write the run's profiles as folded stacks into DIR.
    ///
    /// One file per node and kind, and the nodes merged, for other flame graph tools.
    #[arg(long, value_name = "DIR")]
    pub profile_out: Option<PathBuf>,
    /// At the end, wait for compactions and measure the data.
    ///
    /// Wait until the nodes' compactions are done (up to 10 min), then read what the data looks
    /// like on disk (nodes casslab started: SSTables, size, compression ratio, partition size and
    /// SSTables-per-read percentiles; also done after --load-only).
    #[arg(long)]
    pub settle: bool,
    /// Be shard I of N of a run spread over N loaders, e.g. 2/4.
    ///
    /// This loader loads its slice of the rows, takes its slots of the shared --rate schedule, and
    /// starts its run phase with the others (--start-at, else a barrier through the cluster: see
    /// --run-id). Events and the servers' metrics are shard 0's. `casslab merge` makes one run of
    /// them.
    #[arg(long, value_name = "I/N", conflicts_with = "shards")]
    pub shard: Option<String>,
    /// Be one of N shards, the index from $JOB_COMPLETION_INDEX.
    ///
    /// As a Kubernetes Indexed Job sets it.
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub shards: Option<u32>,
    /// The name of the sharded run, the same on every loader.
    ///
    /// The barrier's key, checked by `merge` [default: a digest of the workload, parameters, seed,
    /// rate and timing].
    #[arg(long, value_name = "ID", hide_short_help = true)]
    pub run_id: Option<String>,
    /// Start the run phase at this wall-clock time.
    ///
    /// RFC 3339 (2026-11-24T10:00:00Z) or Unix milliseconds; with shards, every loader gets the
    /// same time and no barrier is used.
    #[arg(long, value_name = "TIME", hide_short_help = true)]
    pub start_at: Option<String>,
    /// Longest wait at the shards' barrier.
    ///
    /// With shards and no --start-at: the longest wait for the others (their load phases included).
    #[arg(long, value_name = "DURATION", default_value = "10m", hide_short_help = true)]
    pub barrier_timeout: String,
    /// Find the highest fixed rate meeting an SLA, e.g. 'p99 < 10ms'.
    #[arg(long, value_name = "SLA", conflicts_with = "rate")]
    pub find_max: Option<String>,
    /// With --find-max: most search steps after the probe.
    #[arg(long, default_value_t = 6)]
    pub max_steps: usize,
    /// With --find-max: ramp the rate before the fixed steps.
    ///
    /// Before the fixed rates, one run whose rate ramps from 5% to 110% of the probe's throughput;
    /// its levels judged against the SLA narrow where the steps bisect (bench/README.md has what it
    /// saves).
    #[arg(long, requires = "find_max")]
    pub ramp_first: bool,
    /// Tag the saved run (repeatable).
    #[arg(long = "tag")]
    pub tags: Vec<String>,
    /// Act during the run: 'TIME ACTION', e.g. '60s kill node2'.
    #[arg(long = "event", value_name = "SPEC")]
    pub events: Vec<String>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Redis URL of a Redis workload, or a target inside casslab (no server).
    #[arg(long, value_name = "URL", help = target_help(false), long_help = target_help(true))]
    pub target: Option<String>,
    /// Serve live figures for Prometheus at http://ADDR/metrics.
    ///
    /// While the run goes, per operation: completed and failed operations, throughput, latency
    /// quantiles; e.g. 127.0.0.1:9464 or 0.0.0.0:9464.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Write one line per interval as it closes to FILE.
    ///
    /// With wall-clock times; `-` is stdout, instead of the summary.
    #[arg(long, value_name = "FILE")]
    pub stream: Option<PathBuf>,
    /// Format of --stream: jsonl, or csv (the default for a .csv file).
    ///
    /// jsonl is one JSON object per interval; csv one line per interval and operation.
    #[arg(long, hide_possible_values = true, value_parser = format_names(stream_formats()), value_name = "FORMAT")]
    pub stream_format: Option<String>,
    #[command(flatten)]
    pub export: ExportArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub local: LocalHomeArgs,
}

#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// Experiment file, or a shipped experiment's name.
    ///
    /// A YAML file of a base workload and its variants; or the name of a shipped experiment (`gc`,
    /// `bins-list-vs-columns`, …: `casslab workloads` lists them).
    pub file: PathBuf,
    /// Run a fixed number of blocks instead.
    ///
    /// One run of each variant per block, instead of running until the precision is reached.
    #[arg(long)]
    pub repetitions: Option<i64>,
    /// Run until each judged change is known within ± this.
    ///
    /// Half its interval, e.g. 5%; or until the change is found [default: 5%]
    #[arg(long, value_name = "PERCENT")]
    pub precision: Option<String>,
    /// The most the whole experiment may take, e.g. 20m.
    ///
    /// Loads and settling included [default: 20m]
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Judge this figure, e.g. read.p99 (repeatable).
    ///
    /// OP.METRIC, e.g. read.p99 or total.ops_s; the others are shown as exploratory [default: each
    /// operation's p50 and p99 at a fixed rate; else total throughput and each operation's p99]
    #[arg(long = "judge", value_name = "OP.METRIC")]
    pub judge: Vec<String>,
    /// Call a change within ± this equivalent, e.g. 5%.
    ///
    /// Two variants are equivalent when a judged change's whole interval lies within ± this (two
    /// one-sided tests).
    #[arg(long, value_name = "PERCENT")]
    pub equivalence: Option<String>,
    /// Measure the variants at the same time.
    ///
    /// Overrides the file's `design`: each block one stretch of time for all of them, on one
    /// cluster (each in its keyspace, the rate divided among them) or, when they differ in the
    /// server, on a local cluster each, side by side. What cannot run at the same time (`rates:` on
    /// one cluster, events, fresh loads) runs in blocks, and says why.
    #[arg(long, conflicts_with = "blocks")]
    pub simultaneous: bool,
    /// Measure the variants one after the other, in blocks.
    ///
    /// Counterbalanced blocks; overrides the file's `design`.
    #[arg(long)]
    pub blocks: bool,
    /// Exit 0 when a gate could not be judged (else 4).
    ///
    /// A gate (--fail-if, --max-regression) whose interval is too wide to tell exits 4 without it.
    #[arg(long)]
    pub allow_undecided: bool,
    /// Plan instead of running: blocks and minutes needed.
    ///
    /// The blocks and minutes each judged figure needs for the precision, and which are out of
    /// reach within the budget. From the last execution of this experiment in the store (4 blocks
    /// or more); else from spreads assumed as measured on an idle machine, running nothing (with
    /// --pilot: from a pilot of 4 blocks run now). Each with the range its spread may lie in.
    #[arg(long)]
    pub plan: bool,
    /// With --plan: measure the spreads in a 4-block pilot.
    ///
    /// With no execution in the store, run the pilot now instead of assuming the spreads.
    #[arg(long, requires = "plan")]
    pub pilot: bool,
    /// Bootstrap window (overrides the file's `window`), e.g. 60s.
    #[arg(long)]
    pub window: Option<String>,
    /// Also write the experiment as an HTML page (`-`: stdout).
    ///
    /// One self-contained page: bars per variant with their intervals, the baseline marked, the
    /// verdicts.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Order of the variants in each repetition.
    ///
    /// Overrides the file's `order`: counterbalanced (a b, b a, …), shuffled (from --order-seed,
    /// else a recorded random seed) or interleaved (a b, a b, …) [default: counterbalanced]
    #[arg(long, value_name = "ORDER")]
    pub order: Option<String>,
    /// Seed of a shuffled order (overrides the file's `order_seed`).
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub order_seed: Option<u64>,
    /// Do not run every variant once, unmeasured, first.
    #[arg(long)]
    pub no_unmeasured_round: bool,
    /// Do not flush and wait for compactions after loading.
    #[arg(long)]
    pub no_settle: bool,
    /// Exit 1 when OP.METRIC CMP VALUE holds for a variant.
    ///
    /// As `compare --fail-if` (e.g. 'read.p99 > 45ms'), so an experiment can gate CI. Repeatable.
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<casslab_core::analysis::Gate>,
    /// Exit 1 when a variant regresses by more than this.
    ///
    /// Significantly worse than the baseline by more than this, as `compare --max-regression`, e.g.
    /// 10%.
    #[arg(long, value_name = "PERCENT")]
    pub max_regression: Option<casslab_core::analysis::MaxRegression>,
    #[command(flatten)]
    pub run: RunOptions,
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

#[derive(Args, Debug, Clone)]
pub struct ClusterArgs {
    /// Contact points of your cluster: host[:port],...
    ///
    /// Without it casslab uses its local node.
    #[arg(long, value_delimiter = ',')]
    pub hosts: Vec<String>,
    /// CQL port of the hosts given without one.
    #[arg(long, default_value_t = 9042)]
    pub port: u16,
    /// Local data center (routing, LOCAL_* levels).
    #[arg(long)]
    pub dc: Option<String>,
    /// User name; the password comes from CASSLAB_PASSWORD.
    ///
    /// Or from a prompt; it is never stored.
    #[arg(long)]
    pub user: Option<String>,
    /// Connect with TLS.
    #[arg(long)]
    pub tls: bool,
    /// CA certificate (PEM) to verify the nodes with; implies --tls.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Rewrite an address the cluster advertises, FROM=TO.
    ///
    /// As host:port (NAT, port forwards, proxies). Every advertised address must be mapped when
    /// used. Repeatable.
    #[arg(long, value_name = "FROM=TO")]
    pub translate: Vec<String>,
    /// A Jolokia agent on a node, by URL (repeatable).
    ///
    /// E.g. http://10.0.0.5:8778/jolokia/, one per node: Cassandra's latency histograms are read
    /// through it each interval, in µs, instead of system_views' whole milliseconds [default: nodes
    /// casslab starts run their own]
    #[arg(long, value_name = "URL")]
    pub jolokia: Vec<String>,
    /// Connections per node.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub connections: usize,
    /// Client-side request timeout.
    #[arg(long, default_value = "12s", value_name = "DURATION")]
    pub request_timeout: String,
}

/// `casslab import`: where the workload comes from.
#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub source: Source,
}

#[derive(Subcommand, Debug)]
pub enum Source {
    /// A cassandra-stress user profile (and command line).
    ///
    /// Keyspace, table, columnspec, insert, queries and token range queries become the schema,
    /// generators, load and operations; lines whose meaning differs carry a comment, and what could
    /// not be carried over is listed on stderr.
    #[command(name = "cassandra-stress")]
    CassandraStress(StressArgs),
    /// A live cluster's keyspace: its schema and a sample of its data.
    ///
    /// Its schema from system_schema, and from a bounded, read-only sample of its rows (LOCAL_ONE)
    /// the sizes, partition sizes, clustering spacing, collection lengths, null rates and low
    /// cardinalities the generators need.
    Cluster(ClusterImportArgs),
    /// Captured traffic, replayed at its own times.
    ///
    /// JSONL or CSV of time, query and values, as a workload that replays each query at its
    /// captured time (open loop, latency from the intended start).
    Capture(CaptureArgs),
}

#[derive(Args, Debug)]
pub struct StressArgs {
    /// The cassandra-stress profile (YAML).
    ///
    /// May be left out when --command names it (profile=…).
    pub profile: Option<PathBuf>,
    /// A cassandra-stress command line to translate too.
    ///
    /// E.g. 'user profile=stress.yaml ops(insert=1,latest=3) n=1M -rate threads=64': the ops mix,
    /// cl, -pop and -insert go into the workload; the rest becomes `casslab run` options (see
    /// --print-command).
    #[arg(long, value_name = "LINE")]
    pub command: Option<String>,
    /// Write the workload here instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the matching `casslab run` command line.
    ///
    /// The one that runs the workload as the command line did, on stdout; the workload then goes to
    /// -o.
    #[arg(long)]
    pub print_command: bool,
}

#[derive(Args, Debug)]
pub struct ClusterImportArgs {
    /// The keyspace to import.
    #[arg(long)]
    pub keyspace: String,
    /// Only this table (repeatable; default: all of them).
    #[arg(long)]
    pub table: Vec<String>,
    /// Read at most this many rows of each table.
    #[arg(long, default_value_t = 2000, value_name = "ROWS")]
    pub sample_rows: u64,
    /// Longest time spent reading each table's sample.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub sample_time: String,
    /// Write the workload here instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// The capture: JSON lines, CSV, or a full query log.
    ///
    /// JSON lines or CSV with the time, the query and its values, or the directory of a full query
    /// log (`nodetool enablefullquerylog --path DIR`; read with the cached Cassandra jars and the
    /// JDK).
    pub capture: PathBuf,
    /// Replay this many times faster (0.5: half as fast).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Keep only the traffic of this keyspace.
    #[arg(long)]
    pub keyspace: Option<String>,
    /// Write the workload here instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With --hosts: read the value types from that cluster's schema (needed for a full query
    /// log, whose values are bytes); without it they are inferred from the values.
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// The values of a `--format` flag: the names (and aliases) of a table of formats, for clap to
/// check, list in the help and complete.
pub fn format_names<In: ?Sized>(formats: casslab_core::report::format::Formats<'_, In>) -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(formats.all().iter().map(|f| clap::builder::PossibleValue::new(f.name()).aliases(f.aliases().iter().copied())))
}

/// `--target`'s help, naming the targets inside casslab from their one list in the core.
fn target_help(long: bool) -> String {
    let names: Vec<String> = casslab_core::targets::IN_PROCESS.iter().map(|t| format!("`{}`", t.name)).collect();
    if !long {
        return format!("Redis URL, or {} (no server).", names.join(" or "));
    }
    format!(
        "Redis URL of a Redis workload, or a target inside casslab (no server).\n\n\
         redis://[USER@]HOST:PORT[/DB], rediss:// for TLS (with --tls-ca FILE for a private CA); a node of a Redis \
         Cluster is recognised and the whole cluster used. The password comes from CASSLAB_REDIS_PASSWORD and is \
         never stored. Without it casslab uses its local redis-server, starting one if needed.\n\n\
         A target inside casslab runs any workload against no server: each operation draws its values as it would \
         before sending. {}.",
        casslab_core::targets::in_process_help()
    )
}
