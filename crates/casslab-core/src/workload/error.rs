//! The one error type of workload files: where (file and line) and what to fix.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl WorkloadError {
    pub fn new(file: &str, line: Option<usize>, message: impl Into<String>) -> Self {
        WorkloadError { file: file.to_string(), line, message: message.into() }
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for WorkloadError {}
