//! The servers casslab puts load on, each an implementation of the engine's
//! [`crate::engine::Target`]: `cql` (Apache Cassandra and CQL-compatible databases, through the
//! scylla driver), `redis` (a Redis server or Redis Cluster, through the `redis` crate) and
//! `instant` (no server: every operation answered at once inside casslab, so a run measures
//! the client alone).

pub mod cql;
pub mod instant;
pub mod redis;
