//! casslab's library core: the workload model and its validation, value generators, the async
//! load engine, latency statistics, the results store and the report formats. It prints nothing
//! and never exits the process; the `casslab` binary owns the terminal.

pub mod analysis;
pub mod cluster;
pub mod config;
pub mod cql;
pub mod engine;
pub mod events;
pub mod experiment;
pub mod fault;
pub mod flag_values;
pub mod gen;
pub mod import;
pub mod judge;
pub mod limits;
pub mod lint;
pub mod load_shape;
pub mod merge;
pub mod network;
pub mod notice;
pub mod profile;
pub mod recall;
pub mod report;
pub mod server;
pub mod server_spec;
pub mod session;
pub mod stats;
pub mod store;
pub mod suggest;
pub mod targets;
pub mod units;
pub mod validity;
pub mod verify;
pub mod workload;
pub mod yaml;
