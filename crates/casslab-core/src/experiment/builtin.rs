//! The shipped experiments, embedded in the binary from the repository's `experiments/` folder,
//! so that `casslab experiment gc` runs after an install as well as in a clone. A built-in name
//! works wherever an experiment file's path does (a file of that name in the working directory
//! wins); the built-ins name their base workloads as built-ins too.

/// (name, YAML text) of every shipped experiment, in the order `casslab workloads` lists them.
pub const BUILTIN_EXPERIMENTS: &[(&str, &str)] = &[
    ("gc", include_str!("../../../../experiments/gc.yaml")),
    ("storage-engine", include_str!("../../../../experiments/storage-engine.yaml")),
    ("heap-and-memtable", include_str!("../../../../experiments/heap-and-memtable.yaml")),
    ("upgrade", include_str!("../../../../experiments/upgrade.yaml")),
    ("bins-list-vs-columns", include_str!("../../../../experiments/bins-list-vs-columns.yaml")),
    ("column-count", include_str!("../../../../experiments/column-count.yaml")),
    ("partition-set", include_str!("../../../../experiments/partition-set.yaml")),
    ("partition-read-chunks", include_str!("../../../../experiments/partition-read-chunks.yaml")),
    ("sai-lookup", include_str!("../../../../experiments/sai-lookup.yaml")),
    ("compaction-strategies", include_str!("../../../../experiments/compaction-strategies.yaml")),
    ("consistency-across-dcs", include_str!("../../../../experiments/consistency-across-dcs.yaml")),
    ("daily-shape", include_str!("../../../../experiments/daily-shape.yaml")),
    ("redis-vs-cassandra", include_str!("../../../../experiments/redis-vs-cassandra.yaml")),
];

/// The text of a shipped experiment.
pub fn builtin_experiment(name: &str) -> Option<&'static str> {
    BUILTIN_EXPERIMENTS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// Where an experiment comes from: a file's path, or a shipped experiment's name when no file
/// of that name exists. The label errors name it by (`builtin:gc`, or the path), and its text.
pub fn experiment_source(path: &std::path::Path) -> Result<(String, String), std::io::Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((path.display().to_string(), text)),
        Err(e) => {
            let name = path.to_str().unwrap_or_default();
            match (path.exists(), builtin_experiment(name)) {
                (false, Some(text)) => Ok((format!("builtin:{name}"), text.to_string())),
                _ => Err(e),
            }
        }
    }
}

/// What a shipped experiment asks, in one line: the first sentence of its opening comment.
pub fn experiment_summary(text: &str) -> String {
    let comment: Vec<&str> = text.lines().map_while(|l| l.strip_prefix('#')).map(str::trim).collect();
    let joined = comment.join(" ");
    let end = joined.char_indices().find(|&(i, c)| matches!(c, '.' | '?') && joined[i + 1..].starts_with(' ')).map(|(i, _)| i + 1).unwrap_or(joined.len());
    joined[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `experiments/` holds the shipped experiments only: every file there is a built-in of its
    /// own name with the file's text, and each names its base workload (and its variants'
    /// workloads) as built-ins, so it runs where the folder is not.
    #[test]
    fn every_file_of_the_experiments_folder_is_a_builtin_that_names_builtin_workloads() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(builtin_experiment(&name), Some(text.as_str()), "experiments/{name}.yaml is not the built-in {name}");
            for line in text.lines().filter(|l| l.trim_start().starts_with("workload:")) {
                let w = line.split_once(':').unwrap().1.trim();
                assert!(crate::workload::builtin(w).is_some(), "experiments/{name}.yaml names the workload {w:?}, which is no built-in");
            }
            files += 1;
        }
        assert_eq!(files, BUILTIN_EXPERIMENTS.len(), "a built-in without its file in experiments/");
        let (label, text) = experiment_source(std::path::Path::new("gc")).unwrap();
        assert_eq!((label.as_str(), text.as_str()), ("builtin:gc", builtin_experiment("gc").unwrap()));
        assert!(experiment_source(std::path::Path::new("no-such-experiment")).is_err());
        assert_eq!(experiment_summary("# G1 against ZGC under load. More here.\n# And here\nname: gc\n"), "G1 against ZGC under load.");
        assert!(
            BUILTIN_EXPERIMENTS.iter().all(|(_, t)| !experiment_summary(t).is_empty()),
            "every shipped experiment opens with a comment saying what it asks"
        );
    }
}
