//! A verification pass as JSON (`casslab verify --format json`): the pass report as it
//! serializes (`verify::pass_report`), pretty-printed, with a final line break.

use super::format_trait::Format;
use crate::verify::pass_report::PassReport;

/// A verification pass as pretty-printed JSON.
pub struct PassJson;

impl Format<PassReport> for PassJson {
    fn name(&self) -> &'static str {
        "json"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["json"]
    }
    fn render(&self, p: &PassReport) -> String {
        format!("{}\n", serde_json::to_string_pretty(p).expect("a pass report always serializes"))
    }
}
