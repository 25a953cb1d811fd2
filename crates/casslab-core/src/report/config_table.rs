//! A run's saved config and environment as a flat list of `key = value` rows (`concurrency`,
//! `params.rows`, `cluster.hosts`, `env.cassandra_version`, …), and the keys whose values
//! differ between several runs. Rows come from the serialized config, so a field added to
//! `RunConfig` shows up without changes here. The workload file's text is summarized by its
//! size and a fingerprint; the reports show the text itself separately.

use crate::store::RunRecord;
use serde::Serialize;
use serde_json::Value;

/// One config key's value in each run of a report, in the report's run order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigDifference {
    pub key: String,
    pub values: Vec<String>,
}

/// What a report shows for a key a run does not have (e.g. a parameter of another workload).
pub const ABSENT: &str = "—";

/// Top-level keys in the order a reader looks for them; others follow alphabetically.
const KEY_ORDER: [&str; 15] = [
    "workload_name",
    "workload",
    "params",
    "concurrency",
    "rate",
    "duration_s",
    "count",
    "warmup_s",
    "interval_ms",
    "seed",
    "load",
    "threads",
    "cluster",
    "workload_source",
    "env",
];

/// The rows of one run: its config (minus the version number) with the workload text's
/// fingerprint, then its environment under `env.`. The order is fixed (see `KEY_ORDER`),
/// whatever order serde_json keeps object keys in.
pub fn config_rows(r: &RunRecord) -> Vec<(String, String)> {
    // the rate as people write it (`500/s`, a schedule's text, `max`), present in every run
    let mut rows = vec![("workload_name".to_string(), r.workload.clone()), ("rate".to_string(), r.config.rate_text())];
    if let Ok(Value::Object(cfg)) = serde_json::to_value(&r.config) {
        for (k, v) in cfg {
            match k.as_str() {
                "version" | "rate" => {}
                "workload_source" => rows.push((k, source_fingerprint(v.as_str().unwrap_or("")))),
                _ => flatten(&k, &v, &mut rows),
            }
        }
    }
    if let Ok(env) = serde_json::to_value(&r.env) {
        flatten("env", &env, &mut rows);
    }
    rows.sort_by(|(a, _), (b, _)| key_order(a, b));
    rows
}

fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    let rank = |key: &str| {
        let top = key.split('.').next().unwrap_or(key);
        KEY_ORDER.iter().position(|k| *k == top).unwrap_or(KEY_ORDER.len())
    };
    rank(a).cmp(&rank(b)).then_with(|| a.cmp(b))
}

/// Keys whose values are not the same in every run (nothing for fewer than two runs), in the
/// order of [`config_rows`].
pub fn config_differences(runs: &[&RunRecord]) -> Vec<ConfigDifference> {
    if runs.len() < 2 {
        return Vec::new();
    }
    let per_run: Vec<Vec<(String, String)>> = runs.iter().map(|r| config_rows(r)).collect();
    let mut keys: Vec<&str> = Vec::new();
    for rows in &per_run {
        for (k, _) in rows {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    keys.sort_by(|a, b| key_order(a, b));
    keys.into_iter()
        .filter_map(|key| {
            let values: Vec<String> =
                per_run.iter().map(|rows| rows.iter().find(|(k, _)| k == key).map_or_else(|| ABSENT.to_string(), |(_, v)| v.clone())).collect();
            let differ = values.iter().any(|v| *v != values[0]);
            differ.then(|| ConfigDifference { key: key.to_string(), values })
        })
        .collect()
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        Value::Object(_) => out.push((prefix.to_string(), ABSENT.to_string())),
        other => out.push((prefix.to_string(), scalar(other))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "none".to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.is_empty() => "none".to_string(),
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(", "),
        Value::Object(_) => v.to_string(),
        Value::Bool(_) | Value::Number(_) => v.to_string(),
    }
}

/// `"42 lines, 1093 bytes, #9c1d02e7"`: enough to see whether two runs used the same file.
fn source_fingerprint(text: &str) -> String {
    // FNV-1a, 32 bits: a stable fingerprint, not a security measure.
    let hash = text.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    format!("{} lines, {} bytes, #{hash:08x}", text.lines().count(), text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RunConfig, RunEnvironment};
    use crate::store::RunStatus;
    use std::collections::BTreeMap;

    fn record(id: i64, rate: Option<f64>, params: &[(&str, &str)], source: &str) -> RunRecord {
        RunRecord {
            id,
            workload: "kv".into(),
            started_at_ms: 0,
            ended_at_ms: None,
            status: RunStatus::Completed,
            config: RunConfig {
                rate: rate.map(crate::load_shape::LoadShape::fixed),
                workload_source: source.into(),
                params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
                ..RunConfig::default()
            },
            env: RunEnvironment { cassandra_version: Some("5.0.6".into()), node_count: 1, ..Default::default() },
            summary: None,
            tags: vec![],
            process: None,
        }
    }

    #[test]
    fn rows_are_flat_and_readable() {
        let rows = config_rows(&record(1, None, &[("rows", "100")], "a: 1\nb: 2\n"));
        let get = |k: &str| rows.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(get("params.rows"), Some("100"));
        assert_eq!(get("cluster.hosts"), Some("127.0.0.1"));
        assert_eq!(get("rate"), Some("max"));
        assert_eq!(get("concurrency"), Some("128"));
        assert_eq!(get("env.cassandra_version"), Some("5.0.6"));
        assert_eq!(get("cluster.translate"), Some("none"));
        assert!(get("workload_source").unwrap().starts_with("2 lines, 10 bytes, #"));
        assert_eq!(get("version"), None);
    }

    #[test]
    fn only_differing_keys_are_listed_with_every_runs_value() {
        let a = record(1, None, &[("rows", "100")], "x");
        let b = record(2, Some(500.0), &[("rows", "100"), ("extra", "1")], "x");
        let c = record(3, None, &[("rows", "200")], "y");
        let d = config_differences(&[&a, &b, &c]);
        let keys: Vec<&str> = d.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(keys, ["params.extra", "params.rows", "rate", "workload_source"]);
        assert_eq!(d[0].values, [ABSENT, "1", ABSENT]);
        assert_eq!(d[1].values, ["100", "100", "200"]);
        assert_eq!(d[2].values, ["max", "500/s", "max"]);
        assert!(config_differences(&[&a]).is_empty());
        assert!(config_differences(&[&a, &a.clone()]).is_empty());
    }
}
