//! generators (in progress)
