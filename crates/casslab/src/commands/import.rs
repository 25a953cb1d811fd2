//! `casslab import`: a workload from a cassandra-stress profile (and its command line), from a
//! live cluster's schema and sampled data, or from captured traffic. The translation is
//! `casslab_core::import`'s; this file holds the command's flags, reads the inputs, writes the
//! workload (stdout or `-o`) and prints the warnings and notes on stderr.

use crate::cli::ClusterArgs;
use crate::exit::{bail_usage, usage};
use crate::out;
use anyhow::{Context, Result};
use casslab_core::import::{self, Imported};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

pub const HELP: &str = "\
EXAMPLES:
  casslab import cassandra-stress stress.yaml -o stress.casslab.yaml
  casslab import cassandra-stress stress.yaml -o w.yaml --print-command --command 'user profile=stress.yaml ops(insert=1,simple1=3) duration=5m -rate threads=64'
  casslab import cluster --hosts 10.0.0.5 --keyspace shop --sample-rows 5000 -o shop.yaml
  casslab import capture traffic.jsonl -o replay.yaml && casslab run replay.yaml

ENVIRONMENT:
  CASSLAB_PASSWORD  the password of --user (import cluster)";

#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub source: Source,
}

#[derive(Subcommand, Debug)]
pub enum Source {
    /// A cassandra-stress user profile: keyspace, table, columnspec, insert, queries and token
    /// range queries become the schema, generators, load and operations; lines whose meaning
    /// differs carry a comment, and what could not be carried over is listed on stderr.
    #[command(name = "cassandra-stress")]
    CassandraStress(StressArgs),
    /// A live cluster's keyspace: its schema from system_schema, and from a bounded, read-only
    /// sample of its rows (LOCAL_ONE) the sizes, partition sizes, clustering spacing, collection
    /// lengths, null rates and low cardinalities the generators need.
    Cluster(ClusterImportArgs),
    /// Captured traffic (JSONL or CSV: time, query, values) as a workload that replays each
    /// query at its captured time (open loop, latency from the intended start).
    Capture(CaptureArgs),
}

#[derive(Args, Debug)]
pub struct StressArgs {
    /// The profile (YAML). May be left out when --command names it (profile=…).
    pub profile: Option<PathBuf>,
    /// The cassandra-stress command line to translate too, e.g. 'user profile=p.yaml
    /// ops(insert=1,q=3) n=1M -rate threads=64': the ops mix, cl, -pop and -insert go into the
    /// workload; the rest becomes `casslab run` options (see --print-command).
    #[arg(long, value_name = "LINE")]
    pub command: Option<String>,
    /// Write the workload here instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the `casslab run` command line that runs the workload as the command line did
    /// (on stdout; the workload then goes to -o).
    #[arg(long)]
    pub print_command: bool,
}

#[derive(Args, Debug)]
pub struct ClusterImportArgs {
    /// The keyspace to import.
    #[arg(long)]
    pub keyspace: String,
    /// Only these tables (repeatable; default: every table of the keyspace).
    #[arg(long)]
    pub table: Vec<String>,
    /// Read at most this many rows of each table.
    #[arg(long, default_value_t = 2000, value_name = "ROWS")]
    pub sample_rows: u64,
    /// Spend at most this long reading each table's sample.
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
    /// The capture: JSON lines or CSV with the time, the query and its values, or the directory
    /// of a full query log (`nodetool enablefullquerylog --path DIR`; read with the cached
    /// Cassandra jars and the JDK).
    pub capture: PathBuf,
    /// Replay this many times faster (2 = twice as fast; 0.5 = half as fast).
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

pub fn import(args: ImportArgs) -> Result<i32> {
    match args.source {
        Source::CassandraStress(a) => stress(a),
        Source::Cluster(a) => cluster(a),
        Source::Capture(a) => capture(a),
    }
}

fn stress(a: StressArgs) -> Result<i32> {
    let command = match &a.command {
        Some(line) => Some(import::stress_command::parse_command(line).map_err(|m| usage(format!("--command: {m}")))?),
        None => None,
    };
    let profile = match (&a.profile, command.as_ref().and_then(|c| c.profile.clone())) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => PathBuf::from(p),
        (None, None) => bail_usage!("give the profile: casslab import cassandra-stress PROFILE.yaml (or profile=… in --command)"),
    };
    if a.print_command && a.output.is_none() {
        bail_usage!("--print-command prints the command line on stdout: write the workload with -o FILE");
    }
    let src = std::fs::read_to_string(&profile).map_err(|e| usage(format!("cannot read {}: {e}", profile.display())))?;
    let shown = profile.display().to_string();
    let imported = import::cassandra_stress::import_profile(&src, &shown, command.as_ref()).map_err(|e| usage(e.to_string()))?;
    if let Some(c) = &command {
        for w in &c.warnings {
            eprintln!("warning: --command: {w}");
        }
    }
    finish(&imported, a.output.as_deref())?;
    if a.print_command {
        let file = a.output.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
        let line = match &command {
            Some(c) => import::stress_command::casslab_command(c, &file),
            None => format!("casslab run {file}"),
        };
        out::println(&line)?;
    }
    Ok(0)
}

fn cluster(a: ClusterImportArgs) -> Result<i32> {
    if a.cluster.hosts.is_empty() {
        bail_usage!("import cluster reads a cluster you name: give --hosts (and --user, with the password in CASSLAB_PASSWORD)");
    }
    let limits = import::live_cluster::SampleLimits { rows: a.sample_rows.max(1), time_s: crate::cli::parse_duration_s("sample-time", &a.sample_time)? };
    let cfg = a.cluster.to_config()?;
    let creds = casslab_core::config::Credentials { password: std::env::var("CASSLAB_PASSWORD").ok(), ..Default::default() };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let imported = rt.block_on(async {
        let session = casslab_core::targets::cql::connect(&cfg, &creds).await?;
        anyhow::Ok(import::live_cluster::import_keyspace(&session, &a.keyspace, &a.table, &limits).await?)
    })?;
    finish(&imported, a.output.as_deref())?;
    Ok(0)
}

fn capture(a: CaptureArgs) -> Result<i32> {
    if !(a.speed > 0.0 && a.speed.is_finite()) {
        bail_usage!("--speed {}: a factor above 0, e.g. 2 for twice as fast", a.speed);
    }
    let shown = a.capture.display().to_string();
    let src = if a.capture.is_dir() {
        out::note(&format!("reading the full query log in {shown}"));
        casslab_local::fql::dump_full_query_log(&a.capture, casslab_local::DEFAULT_CASSANDRA_VERSION, &mut |m| out::note(m))?
    } else {
        std::fs::read_to_string(&a.capture).map_err(|e| usage(format!("cannot read {shown}: {e}")))?
    };
    let entries = import::capture::read_capture(&src, &shown).map_err(|e| usage(e.to_string()))?;
    let schema = if a.cluster.hosts.is_empty() {
        None
    } else {
        let cfg = a.cluster.to_config()?;
        let creds = casslab_core::config::Credentials { password: std::env::var("CASSLAB_PASSWORD").ok(), ..Default::default() };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let wanted: Vec<String> = match &a.keyspace {
            Some(k) => vec![k.clone()],
            None => import::capture::keyspaces(&entries).into_iter().collect(),
        };
        Some(rt.block_on(async {
            let session = casslab_core::targets::cql::connect(&cfg, &creds).await?;
            anyhow::Ok(import::live_cluster::read_schema(&session, &wanted).await?)
        })?)
    };
    let name = a.capture.file_stem().and_then(|s| s.to_str()).unwrap_or("capture");
    let imported =
        import::capture::capture_workload(&entries, name, a.speed, a.keyspace.as_deref(), schema.as_ref()).map_err(|e| usage(format!("{shown}: {e}")))?;
    finish(&imported, a.output.as_deref())?;
    Ok(0)
}

/// Writes the workload and tells what was not carried over (warnings) and what was decided.
fn finish(imported: &Imported, output: Option<&Path>) -> Result<()> {
    for n in &imported.notes {
        out::note(&format!("note: {n}"));
    }
    for w in &imported.warnings {
        eprintln!("warning: {w}");
    }
    match output {
        None => out::print(&imported.yaml)?,
        Some(p) => {
            out::write_to_file_or_stdout(p, |w| w.write_all(imported.yaml.as_bytes())).with_context(|| format!("writing {}", p.display()))?;
        }
    }
    Ok(())
}
