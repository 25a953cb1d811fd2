//! `casslab import`: a workload from a cassandra-stress profile (and its command line), from a
//! live cluster's schema and sampled data, or from captured traffic. The translation is
//! `casslab_core::import`'s; this file reads the inputs (its flags are `cli`'s), writes the
//! workload (stdout or `-o`) and prints the warnings and notes on stderr.

use crate::cli::{CaptureArgs, ClusterImportArgs, ImportArgs, Source, StressArgs};
use crate::exit::{bail_usage, usage};
use crate::out;
use anyhow::{Context, Result};
use casslab_core::import::{self, Imported};
use std::path::{Path, PathBuf};

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
            Some(c) => import::stress_command::casslab_command(c, &file, imported.partitions_per_op),
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
    let creds = casslab_core::config::Credentials::from_env();
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
        let creds = casslab_core::config::Credentials::from_env();
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
        import::capture::capture_workload(&entries, &shown, name, a.speed, a.keyspace.as_deref(), schema.as_ref()).map_err(|e| usage(e.to_string()))?;
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
