//! casslab's one reader of CQL text, shared by workload validation, the linter and the engine,
//! so they never disagree about a statement: tokens (`tokenizer`: comments and literals are
//! dropped there, `?` and `:name` are bind markers numbered in order), facts read from the
//! tokens (`facts`: markers, keywords, conditional, idempotent), data statements
//! (`statements`, with `clauses` for relations and terms), schema statements (`schema`) and
//! the head of any statement a workload's `schema:` list holds (`ddl`: verb, object, keyspace).
//! It is a tolerant reader, not a validator: what it does not understand comes back as `None`,
//! and the cluster remains the judge of what is valid CQL. Nothing here knows workloads,
//! generators or sessions.

mod clauses;
mod consistency;
mod ddl;
mod facts;
mod statements;
mod table_schema;
mod tokenizer;

pub use clauses::{RelOp, Relation, Term};
pub use consistency::Consistency;
pub use ddl::{read_ddl, Ddl};
pub use facts::{count_markers, first_keyword, has_keyword, is_bound_by_eq, is_conditional, is_idempotent, to_in_statement};
pub use statements::{parse_dml, AssignKind, Assignment, BatchKind, Dml, DmlKind};
pub use table_schema::{created_table, parse_schema, table_options_at, CollectionKind, Column, Index, OptionsAt, SchemaStmt, Table};
