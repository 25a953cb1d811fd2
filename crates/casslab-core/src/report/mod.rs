//! reports (in progress)
