//! The built-in workloads, embedded in the binary from the repository's `workloads/` folder.
//! A built-in name works wherever a workload file path does.

/// (name, YAML text) of every built-in workload, in the order `casslab workloads` lists them.
pub const BUILTINS: &[(&str, &str)] = &[
    ("ycsb-a", include_str!("../../../../workloads/ycsb-a.yaml")),
    ("ycsb-b", include_str!("../../../../workloads/ycsb-b.yaml")),
    ("ycsb-c", include_str!("../../../../workloads/ycsb-c.yaml")),
    ("ycsb-d", include_str!("../../../../workloads/ycsb-d.yaml")),
    ("ycsb-e", include_str!("../../../../workloads/ycsb-e.yaml")),
    ("ycsb-f", include_str!("../../../../workloads/ycsb-f.yaml")),
    ("ycsb-a-redis", include_str!("../../../../workloads/ycsb-a-redis.yaml")),
    ("ycsb-b-redis", include_str!("../../../../workloads/ycsb-b-redis.yaml")),
    ("ycsb-c-redis", include_str!("../../../../workloads/ycsb-c-redis.yaml")),
    ("kv", include_str!("../../../../workloads/kv.yaml")),
    ("user-events", include_str!("../../../../workloads/user-events.yaml")),
    ("user-events-bucketed", include_str!("../../../../workloads/user-events-bucketed.yaml")),
    ("kv-at-scale", include_str!("../../../../workloads/kv-at-scale.yaml")),
    ("daily-shape", include_str!("../../../../workloads/daily-shape.yaml")),
    ("emp", include_str!("../../../../workloads/emp.yaml")),
    ("revision-store", include_str!("../../../../workloads/revision-store.yaml")),
    ("tombstones-ttl-set", include_str!("../../../../workloads/tombstones-ttl-set.yaml")),
    ("tombstones-ttl-frozen", include_str!("../../../../workloads/tombstones-ttl-frozen.yaml")),
    ("tombstones-range-deletes", include_str!("../../../../workloads/tombstones-range-deletes.yaml")),
    ("tombstones-ttl-expiry", include_str!("../../../../workloads/tombstones-ttl-expiry.yaml")),
    ("vector-search", include_str!("../../../../workloads/vector-search.yaml")),
    ("sai-range", include_str!("../../../../workloads/sai-range.yaml")),
    // the base workloads of the shipped experiments, each a workload of its own
    ("bins", include_str!("../../../../workloads/bins.yaml")),
    ("column-count", include_str!("../../../../workloads/column-count.yaml")),
    ("partition-set", include_str!("../../../../workloads/partition-set.yaml")),
    ("wide-partition", include_str!("../../../../workloads/wide-partition.yaml")),
    ("users-by-email", include_str!("../../../../workloads/users-by-email.yaml")),
];

/// The text of a built-in workload.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `workloads/` holds built-ins only: every file there is listed under its own name, with
    /// the file's text, so `casslab workloads show NAME` prints what the folder has.
    #[test]
    fn every_file_of_the_workloads_folder_is_a_builtin_of_its_name() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(builtin(&name), Some(text.as_str()), "workloads/{name}.yaml is not the built-in {name}");
            files += 1;
        }
        assert_eq!(files, BUILTINS.len(), "a built-in without its file in workloads/");
    }
}
