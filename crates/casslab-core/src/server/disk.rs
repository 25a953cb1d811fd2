//! What the workload's data looks like on disk at the end of a run, from nodetool on the nodes
//! casslab started: per table the SSTable count, live bytes, compression ratio and partition
//! estimate (`tablestats`), and the percentiles of partition size, cells per partition and
//! SSTables touched per read (`tablehistograms`). Parsing only: the caller runs nodetool.
//! Results become [`ServerSample`]s named `disk.<what>:<table>`.

use super::ServerSample;

/// `tablestats` fields kept, with the metric each becomes.
const STATS: &[(&str, &str)] = &[
    ("SSTable count", "disk.sstables"),
    ("Space used (live)", "disk.live_bytes"),
    ("SSTable Compression Ratio", "disk.compression_ratio"),
    ("Number of partitions (estimate)", "disk.partitions"),
    ("Compacted partition mean bytes", "disk.partition_mean_bytes"),
    ("Compacted partition maximum bytes", "disk.partition_max_bytes"),
];

/// Per table of `nodetool tablestats <keyspace>`: the kept fields as (metric, value).
pub fn parse_tablestats(text: &str) -> Vec<(String, Vec<(&'static str, f64)>)> {
    let mut out: Vec<(String, Vec<(&'static str, f64)>)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(t) = line.strip_prefix("Table: ") {
            out.push((t.trim().to_string(), Vec::new()));
            continue;
        }
        let (Some((key, value)), Some(current)) = (line.split_once(": "), out.last_mut()) else { continue };
        if let Some((_, metric)) = STATS.iter().find(|(k, _)| *k == key) {
            if let Ok(v) = value.trim().parse::<f64>() {
                current.1.push((metric, v));
            }
        }
    }
    out
}

/// From `nodetool tablehistograms <ks>.<table>`: (metric, value) for the 50%, 95% and 99%
/// rows and Max of SSTables per read, partition size (bytes) and cell count.
pub fn parse_tablehistograms(text: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let Some(label) = cols.first() else { continue };
        let pct = match *label {
            "50%" => "p50",
            "95%" => "p95",
            "99%" => "p99",
            "Max" => "max",
            _ => continue,
        };
        // Percentile, Read Latency, Write Latency, SSTables, Partition Size, Cell Count
        if cols.len() < 6 {
            continue;
        }
        // a table without SSTables yet prints NaN: no figure
        let num = |i: usize| cols[i].parse::<f64>().ok().filter(|v| v.is_finite());
        for (i, what) in [(3, "disk.sstables_per_read"), (4, "disk.partition_bytes"), (5, "disk.cells_per_partition")] {
            if let Some(v) = num(i) {
                out.push((format!("{what}_{pct}"), v));
            }
        }
    }
    out
}

/// The samples of one node's parsed output, stamped `at_ms`.
pub fn to_samples(node: &str, at_ms: u64, table: &str, values: impl IntoIterator<Item = (String, f64)>) -> Vec<ServerSample> {
    values.into_iter().map(|(m, value)| ServerSample { node: node.to_string(), metric: format!("{m}:{table}"), at_ms, value }).collect()
}

/// One line per (node, table) for the terminal, e.g.
/// `kv: 2 SSTables, 31.2 MiB live, compression ratio 0.99, ~20000 partitions; partition size p50 1109 B ...`.
pub fn describe(samples: &[ServerSample]) -> Vec<String> {
    let mut keys: Vec<(&str, &str)> = samples
        .iter()
        .filter(|s| s.metric.starts_with("disk.") && !s.metric.starts_with("disk_usage"))
        .filter_map(|s| s.metric.split_once(':').map(|(_, t)| (s.node.as_str(), t)))
        .collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for (node, table) in keys {
        let get = |m: &str| samples.iter().rev().find(|s| s.node == node && s.metric == format!("{m}:{table}")).map(|s| s.value);
        let mut parts = Vec::new();
        if let Some(n) = get("disk.sstables") {
            parts.push(format!("{n:.0} SSTables"));
        }
        if let Some(b) = get("disk.live_bytes") {
            parts.push(format!("{:.1} MiB live", b / 1_048_576.0));
        }
        if let Some(r) = get("disk.compression_ratio").filter(|r| *r > 0.0) {
            parts.push(format!("compression ratio {r:.2}"));
        }
        if let Some(p) = get("disk.partitions") {
            parts.push(format!("~{p:.0} partitions"));
        }
        let pcts = |what: &str, unit: &str| -> Option<String> {
            let v: Vec<String> = ["p50", "p95", "p99", "max"].iter().filter_map(|p| get(&format!("{what}_{p}")).map(|x| format!("{p} {x:.0}{unit}"))).collect();
            (!v.is_empty()).then(|| v.join(" "))
        };
        if let Some(s) = pcts("disk.partition_bytes", " B") {
            parts.push(format!("partition size {s}"));
        }
        if let Some(s) = pcts("disk.cells_per_partition", "") {
            parts.push(format!("cells per partition {s}"));
        }
        if let Some(s) = pcts("disk.sstables_per_read", "") {
            parts.push(format!("SSTables per read {s}"));
        }
        out.push(format!("{node} {table}: {}", parts.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // shortened from a real `nodetool tablestats` of Cassandra 5.0.6
    const STATS_TEXT: &str = "Total number of tables: 2\n----------------\nKeyspace: ks\n\tRead Count: 150128\n\t\tTable: casslab_meta\n\t\tSSTable count: 0\n\t\tSpace used (live): 0\n\t\tSSTable Compression Ratio: -1.00000\n\n\t\tTable: kv\n\t\tSSTable count: 2\n\t\tOld SSTable count: 0\n\t\tMax SSTable size: 19.151MiB\n\t\tSpace used (live): 32754671\n\t\tSSTable Compression Ratio: 0.98850\n\t\tNumber of partitions (estimate): 20112\n\t\tCompacted partition maximum bytes: 1109\n\t\tCompacted partition mean bytes: 1109\n";
    const HIST_TEXT: &str = "ks/kv histograms\nPercentile      Read Latency     Write Latency          SSTables    Partition Size        Cell Count\n                    (micros)          (micros)                             (bytes)                  \n50%                   124.00             14.00              1.00              1109                 1\n75%                   179.00             20.00              2.00              1109                 1\n95%                   372.00             29.00              2.00              1109                 1\n99%                   642.00             42.00              2.00              1109                 1\nMin                    36.00              3.00              0.00               925                 0\nMax                   642.00             42.00              2.00              1109                 1\n";

    #[test]
    fn tablestats_give_the_kept_fields_per_table() {
        let t = parse_tablestats(STATS_TEXT);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].0, "casslab_meta");
        assert_eq!(t[1].0, "kv");
        assert_eq!(
            t[1].1,
            [
                ("disk.sstables", 2.0),
                ("disk.live_bytes", 32_754_671.0),
                ("disk.compression_ratio", 0.9885),
                ("disk.partitions", 20_112.0),
                ("disk.partition_max_bytes", 1109.0),
                ("disk.partition_mean_bytes", 1109.0)
            ]
        );
    }

    #[test]
    fn histograms_give_percentiles_of_sstables_partition_size_and_cells() {
        let h = parse_tablehistograms(HIST_TEXT);
        let get = |m: &str| h.iter().find(|(k, _)| k == m).map(|(_, v)| *v);
        assert_eq!(get("disk.sstables_per_read_p50"), Some(1.0));
        assert_eq!(get("disk.sstables_per_read_p99"), Some(2.0));
        assert_eq!(get("disk.partition_bytes_p95"), Some(1109.0));
        assert_eq!(get("disk.cells_per_partition_max"), Some(1.0));
        assert_eq!(get("disk.partition_bytes_p75"), None, "only p50, p95, p99 and max");
    }

    #[test]
    fn a_table_without_sstables_gives_no_figures() {
        let text = "ks/t histograms\nPercentile  Read Latency     Write Latency     SSTables    Partition Size        Cell Count\n                              (micros)          (micros)                             (bytes)\n50%                NaN               NaN               NaN               NaN               NaN\nMax                NaN               NaN               NaN               NaN               NaN\n";
        assert!(parse_tablehistograms(text).is_empty());
    }

    #[test]
    fn a_table_reads_as_one_line() {
        let stats = parse_tablestats(STATS_TEXT);
        let mut samples = to_samples("n1", 10, "kv", stats[1].1.iter().map(|(m, v)| (m.to_string(), *v)));
        samples.extend(to_samples("n1", 10, "kv", parse_tablehistograms(HIST_TEXT)));
        let lines = describe(&samples);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with(
                "n1 kv: 2 SSTables, 31.2 MiB live, compression ratio 0.99, ~20112 partitions, partition size p50 1109 B p95 1109 B p99 1109 B max 1109 B"
            ),
            "{}",
            lines[0]
        );
        assert!(lines[0].ends_with("SSTables per read p50 1 p95 2 p99 2 max 2"), "{}", lines[0]);
    }
}
