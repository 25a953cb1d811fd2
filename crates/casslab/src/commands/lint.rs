//! `casslab lint`: runs the data-model linter (`casslab_core::lint`) over a workload or an
//! experiment and prints the findings grouped by severity (or as JSON); exit code 1 when any
//! finding is an error (or, with `--deny-warnings`, a warning). Also the short list `casslab run` prints on stderr before it starts.

use crate::cli::{parse_params, LintArgs};
use crate::exit::{bail_usage, usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::config::Credentials;
use casslab_core::lint::live_schema::lint_target_live;
use casslab_core::lint::{lint, lint_target, Finding, LintOptions, Severity};
use casslab_core::report;
use casslab_core::workload::Workload;
use std::collections::BTreeMap;

pub fn lint_command(args: &LintArgs) -> Result<i32> {
    let overrides = parse_params(&args.params)?;
    let opts = LintOptions {
        concurrency: args.concurrency.max(1),
        max_partition_rows: args.max_partition_rows,
        max_partition_bytes: parse_size(&args.max_partition_size)?,
        local_dc: args.cluster.dc.clone(),
    };
    let min = match args.min_severity.as_str() {
        "info" => Severity::Info,
        "warning" => Severity::Warning,
        "error" => Severity::Error,
        other => bail_usage!("--min-severity {other}: one of info, warning, error"),
    };
    let findings = if args.cluster.hosts.is_empty() { lint_target(&args.target, &overrides, &opts)? } else { lint_live(args, &overrides, &opts)? };
    let shown: Vec<&Finding> = findings.iter().filter(|f| f.severity >= min).collect();
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    let denied = if args.deny_warnings { findings.iter().filter(|f| f.severity == Severity::Warning).count() } else { 0 };
    if args.json {
        out::println(&serde_json::to_string_pretty(&report::lint_text::json(&args.target, &findings, &shown))?)?;
    } else {
        out::print(&report::lint_text::text(&shown))?;
        eprintln!("{}", report::lint_text::tally(&findings));
    }
    if errors == 0 && denied > 0 {
        eprintln!("failed: {denied} warning{} and --deny-warnings", if denied == 1 { "" } else { "s" });
    }
    Ok(if errors + denied > 0 { Exit::Failed } else { Exit::Success }.code())
}

/// Lints with the live schema of each workload's keyspace, read from the --hosts cluster.
fn lint_live(args: &LintArgs, overrides: &BTreeMap<String, String>, opts: &LintOptions) -> Result<Vec<Finding>> {
    let cfg = args.cluster.to_config()?;
    let creds = Credentials::from_env();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let session = rt.block_on(casslab_core::targets::cql::connect(&cfg, &creds))?;
    Ok(lint_target_live(&rt, &session, &args.target, overrides, opts, &mut |line| eprintln!("{line}"))?)
}

/// Before a run: the warnings and errors of the workload's data model, on stderr. The run
/// goes ahead whatever they say.
pub fn print_before_run(workload: &Workload, concurrency: usize, dc: Option<&str>) {
    let opts = LintOptions { concurrency: concurrency.max(1), local_dc: dc.map(String::from), ..LintOptions::default() };
    print_warnings(lint(workload, &opts), workload.origin.trim_start_matches("builtin:"));
}

/// Before an experiment: the same, for its base and every variant (each finding points at
/// the variant's lines in the experiment file).
pub fn print_before_experiment(file: &str, overrides: &BTreeMap<String, String>, concurrency: usize, dc: Option<&str>) {
    let opts = LintOptions { concurrency: concurrency.max(1), local_dc: dc.map(String::from), ..LintOptions::default() };
    // the experiment loaded already; a lint failure only means no findings to show
    if let Ok(findings) = lint_target(file, overrides, &opts) {
        print_warnings(findings, file);
    }
}

fn print_warnings(findings: Vec<Finding>, target: &str) {
    if let Some(text) = report::lint_text::brief(&findings, target) {
        eprint!("{text}");
    }
}

fn parse_size(v: &str) -> Result<u64> {
    casslab_core::units::parse_size_bytes(v).ok_or_else(|| usage(format!("--max-partition-size {v}: write e.g. 100MB or 1GB")))
}
