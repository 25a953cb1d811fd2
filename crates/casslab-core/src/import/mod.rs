//! Bringing a workload that is written down elsewhere into casslab: a cassandra-stress user
//! profile and command line (`cassandra_stress`, with `stress_dist` for its distributions and
//! `stress_command` for its command line), a live cluster's schema and the shape of its data
//! (`cluster`), and captured traffic (`capture`). Each returns typed values: the workload as
//! YAML text, commented where its meaning differs from the source, and the warnings a person
//! should read (what could not be carried over, what was guessed). Nothing here prints; the
//! binary's `casslab import` renders them.

pub mod capture;
pub mod cassandra_stress;
pub mod cluster_shape;
pub mod live_cluster;
mod markers;
mod stress_columns;
pub mod stress_command;
pub mod stress_dist;
pub mod stress_profile;
mod stress_rows;
mod workload_writer;

/// A workload made from another form.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The workload file, ready to save and run.
    pub yaml: String,
    /// What could not be carried over, or differs; one sentence each, with the source's line
    /// when it has one.
    pub warnings: Vec<String>,
    /// What was measured or decided, for the person importing (not problems).
    pub notes: Vec<String>,
    /// cassandra-stress's rate and `n=` count partitions: the mean one operation of the
    /// imported mix visits (an insert its `partitions`, a query one), to convert a rate.
    pub partitions_per_op: Option<f64>,
}

/// A source that cannot be imported: where, and what to fix.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{}{message}", location(.file, .line))]
pub struct ImportError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

fn location(file: &str, line: &Option<usize>) -> String {
    match (file.is_empty(), line) {
        (true, _) => String::new(),
        (false, Some(l)) => format!("{file}:{l}: "),
        (false, None) => format!("{file}: "),
    }
}

impl ImportError {
    pub fn new(file: &str, line: Option<usize>, message: impl Into<String>) -> ImportError {
        ImportError { file: file.to_string(), line, message: message.into() }
    }
}
