//! `casslab lint`: runs the data-model linter (`casslab_core::lint`) over a workload or an
//! experiment and prints the findings grouped by severity (or as JSON); exit code 1 when any
//! finding is an error. Also the short list `casslab run` prints on stderr before it starts.

use crate::cli::{parse_params, LintArgs};
use crate::exit::{bail_usage, Exit};
use crate::out;
use anyhow::Result;
use casslab_core::config::Credentials;
use casslab_core::lint::live::{apply_live, read_live_schema, LiveSchema};
use casslab_core::lint::{lint, lint_target, lint_target_with, Finding, LintOptions, Severity};
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
    let findings = if args.cluster.hosts.is_empty() {
        lint_target(&args.target, &overrides, &opts)?
    } else {
        lint_live(args, &overrides, &opts)?
    };
    let shown: Vec<&Finding> = findings.iter().filter(|f| f.severity >= min).collect();
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    if args.json {
        let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
        let report = serde_json::json!({
            "target": args.target,
            "errors": errors,
            "warnings": count(Severity::Warning),
            "infos": count(Severity::Info),
            "findings": shown,
        });
        out::println(&serde_json::to_string_pretty(&report)?)?;
    } else {
        out::print(&render(&shown))?;
        eprintln!("{}", tally(&findings));
    }
    Ok(if errors > 0 { Exit::Failed } else { Exit::Success }.code())
}

/// Lints with the live schema of each workload's keyspace, read from the --hosts cluster.
fn lint_live(args: &LintArgs, overrides: &BTreeMap<String, String>, opts: &LintOptions) -> Result<Vec<Finding>> {
    let cfg = args.cluster.to_config()?;
    let creds = Credentials { password: std::env::var("CASSLAB_PASSWORD").ok(), ..Credentials::default() };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let session = rt.block_on(casslab_core::targets::cql::connect(&cfg, &creds))?;
    let mut cache: BTreeMap<String, Option<LiveSchema>> = BTreeMap::new();
    let mut adjust = |w: Workload| -> Workload {
        let live = cache.entry(w.keyspace.clone()).or_insert_with(|| match rt.block_on(read_live_schema(&session, &w.keyspace)) {
            Ok(Some(l)) => {
                eprintln!("lint: keyspace {} read from the cluster ({} tables, replication {})", w.keyspace, l.tables.len(), l.replication.as_deref().unwrap_or("?"));
                Some(l)
            }
            Ok(None) => {
                eprintln!("lint: the cluster has no keyspace {}; judging the workload's own schema", w.keyspace);
                None
            }
            Err(e) => {
                eprintln!("warning: {e}; judging the workload's own schema");
                None
            }
        });
        match live {
            Some(l) => apply_live(&w, l),
            None => w,
        }
    };
    Ok(lint_target_with(&args.target, overrides, opts, &mut adjust)?)
}

/// Findings grouped by severity, worst first, each with why and what to do instead.
fn render(findings: &[&Finding]) -> String {
    let mut out = String::new();
    for sev in [Severity::Error, Severity::Warning, Severity::Info] {
        let group: Vec<&&Finding> = findings.iter().filter(|f| f.severity == sev).collect();
        if group.is_empty() {
            continue;
        }
        let title = match sev {
            Severity::Error => "errors",
            Severity::Warning => "warnings",
            Severity::Info => "notes",
        };
        out.push_str(&format!("{title} ({})\n", group.len()));
        for f in group {
            out.push_str(&format!("  {}  [{}] {}\n", f.location(), f.rule.id(), f.subject));
            out.push_str(&format!("    {}\n", f.message));
            if !f.statement.is_empty() {
                out.push_str(&format!("    > {}\n", f.statement));
            }
            out.push_str(&format!("    why: {}\n", f.why));
            out.push_str(&format!("    fix: {}\n", f.fix));
        }
        out.push('\n');
    }
    out
}

fn tally(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "lint: no findings".into();
    }
    let n = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let plural = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    format!(
        "lint: {}, {}, {}",
        plural(n(Severity::Error), "error", "errors"),
        plural(n(Severity::Warning), "warning", "warnings"),
        plural(n(Severity::Info), "note", "notes")
    )
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
    let findings: Vec<Finding> = findings.into_iter().filter(|f| f.severity >= Severity::Warning).collect();
    if findings.is_empty() {
        return;
    }
    eprintln!("lint: {} finding(s) in the data model (details: `casslab lint {target}`; --no-lint hides this):", findings.len());
    for f in &findings {
        eprintln!("  {} {}  [{}] {}", f.severity.name(), f.location(), f.rule.id(), f.message);
        eprintln!("    fix: {}", f.fix);
    }
}

/// `100MB`, `1GB`, `512KB`, `1048576` (bytes); units are powers of 1024.
fn parse_size(v: &str) -> Result<u64> {
    let t = v.trim().to_ascii_uppercase().replace("IB", "B");
    let (num, mult) = [("GB", 1u64 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)]
        .iter()
        .find_map(|(u, m)| t.strip_suffix(u).map(|n| (n.trim().to_string(), *m)))
        .unwrap_or((t.clone(), 1));
    match num.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok((x * mult as f64) as u64),
        _ => bail_usage!("--max-partition-size {v}: write e.g. 100MB or 1GB"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100MB").unwrap(), 100 << 20);
        assert_eq!(parse_size("1 GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("big").is_err());
    }
}
