//! The servers casslab puts load on, each an implementation of the engine's
//! [`crate::engine::Target`]: `cql` (Apache Cassandra and CQL-compatible databases, through the
//! scylla driver) and `redis` (a Redis server or Redis Cluster, through the `redis` crate).

pub mod cql;
pub mod redis;
