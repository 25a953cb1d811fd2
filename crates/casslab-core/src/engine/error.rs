//! Engine errors (setup failures that abort a run, each saying what to do) and the
//! classification of request failures into counted [`ErrorKind`]s.

use crate::stats::ErrorKind;
use crate::workload::WorkloadError;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot connect to {hosts}: {message}\n  hint: {hint}")]
    Connect { hosts: String, message: String, hint: String },
    #[error("TLS setup failed: {0}")]
    Tls(String),
    #[error("the cluster rejected `{statement}`: {message}")]
    Schema { statement: String, message: String },
    #[error("{file}:{line}: operation \"{op}\": the cluster could not prepare `{cql}`: {message}")]
    Prepare { file: String, line: usize, op: String, cql: String, message: String },
    #[error("{file}:{line}: operation \"{op}\": bind marker {position} ({column}) is {column_type} but generator \"{generator}\" makes {generator_type}; change the generator's `type` to {column_type}")]
    TypeMismatch {
        file: String,
        line: usize,
        op: String,
        position: usize,
        column: String,
        column_type: String,
        generator: String,
        generator_type: String,
    },
    #[error("keyspace \"{0}\" was not created by casslab, so casslab will not truncate it for --reload; use a keyspace casslab creates (e.g. -P keyspace=casslab_mine) or truncate it yourself")]
    NotOurKeyspace(String),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error("{0}")]
    Other(String),
}

/// Which counted kind a failed request belongs to.
pub fn classify(e: &ExecutionError) -> ErrorKind {
    match e {
        ExecutionError::RequestTimeout(_) => ErrorKind::Timeout,
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => match db {
            DbError::ReadTimeout { .. } | DbError::WriteTimeout { .. } => ErrorKind::Timeout,
            DbError::Unavailable { .. } => ErrorKind::Unavailable,
            DbError::Overloaded | DbError::RateLimitReached { .. } | DbError::IsBootstrapping => ErrorKind::Overloaded,
            _ => ErrorKind::Other,
        },
        ExecutionError::ConnectionPoolError(_)
        | ExecutionError::EmptyPlan
        | ExecutionError::LastAttemptError(RequestAttemptError::BrokenConnectionError(_))
        | ExecutionError::LastAttemptError(RequestAttemptError::UnableToAllocStreamId) => ErrorKind::Connection,
        _ => ErrorKind::Other,
    }
}
