//! The one trait of casslab's output formats, [`Format`], and the tables of formats by what
//! they render: a report of saved runs ([`report_formats`]: html, md, json), the list of saved
//! runs ([`run_list_formats`]: text, json, csv), a comparison ([`comparison_formats`]: text,
//! json, csv), a run's intervals streamed as they close ([`stream_formats`]: jsonl, csv) and a
//! verification pass ([`pass_formats`]: text, json). A format is a unit struct in its own file,
//! added to its table here; the binary takes `--format` and the guess from a file's extension
//! from the tables, and renders through the trait. What renders from the store as it reads
//! (a run's JSON export, its HdrHistogram log, its intervals as CSV, its terminal summary) and
//! the Prometheus exposition (chosen by the scraper's `Accept`) are not tables' formats.

use super::comparison::ComparisonText;
use super::comparison_json::ComparisonJson;
use super::csv::{ComparisonCsv, RunsCsv};
use super::data::PassText;
use super::html::HtmlReport;
use super::markdown::MarkdownReport;
use super::pass_json::PassJson;
use super::report_json::JsonReport;
use super::run_view::Report;
use super::runs_json::RunsJson;
use super::stream::{LiveInterval, StreamCsv, StreamJsonLines};
use super::text::RunsTable;
use crate::store::RunRecord;
use crate::verify::pass_report::PassReport;

pub use super::format_trait::{ComparisonReport, Format, Formats};

/// A report of saved runs (`casslab report`): a page with charts, Markdown, JSON.
pub fn report_formats() -> Formats<'static, Report> {
    Formats::new(&[&HtmlReport, &MarkdownReport, &JsonReport])
}

/// The list of saved runs (`casslab runs`).
pub fn run_list_formats() -> Formats<'static, [RunRecord]> {
    Formats::new(&[&RunsTable, &RunsJson, &RunsCsv])
}

/// A comparison (`casslab compare`).
pub fn comparison_formats<'a>() -> Formats<'a, ComparisonReport<'a>> {
    Formats::new(&[&ComparisonText, &ComparisonJson, &ComparisonCsv])
}

/// A run's intervals as they close (`casslab run --stream`).
pub fn stream_formats() -> Formats<'static, LiveInterval> {
    Formats::new(&[&StreamJsonLines, &StreamCsv])
}

/// A verification pass (`casslab verify`).
pub fn pass_formats() -> Formats<'static, PassReport> {
    Formats::new(&[&PassText, &PassJson])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every table's names, aliases and extensions, each naming one format.
    fn unambiguous<In: ?Sized>(f: Formats<'_, In>) -> Vec<&'static str> {
        let mut said: Vec<&str> = Vec::new();
        for x in f.all() {
            for n in std::iter::once(x.name()).chain(x.aliases().iter().copied()) {
                assert!(!said.contains(&n), "{n} names two formats");
                said.push(n);
                assert_eq!(f.named(n).map(|y| y.name()), Some(x.name()));
            }
            for e in x.extensions() {
                assert_eq!(f.for_path(Path::new(&format!("out.{e}"))).map(|y| y.name()), Some(x.name()));
            }
        }
        f.names()
    }

    #[test]
    fn each_table_names_its_formats_once_the_default_first() {
        assert_eq!(unambiguous(report_formats()), ["html", "md", "json"]);
        assert_eq!(unambiguous(run_list_formats()), ["text", "json", "csv"]);
        assert_eq!(unambiguous(comparison_formats()), ["text", "json", "csv"]);
        assert_eq!(unambiguous(stream_formats()), ["jsonl", "csv"]);
        assert_eq!(unambiguous(pass_formats()), ["text", "json"]);
        let r = report_formats();
        assert_eq!(r.named("Markdown").map(|f| f.name()), Some("md"));
        assert_eq!(r.for_path(Path::new("r.JSON")).map(|f| f.name()), Some("json"));
        assert!(r.for_path(Path::new("report")).is_none() && r.named("pdf").is_none());
        assert_eq!(r.default_format().name(), "html");
        let formats = [
            report_formats().all().len(),
            run_list_formats().all().len(),
            comparison_formats().all().len(),
            stream_formats().all().len(),
            pass_formats().all().len(),
        ];
        assert_eq!(formats.iter().sum::<usize>(), 13, "the formats behind the trait");
    }
}
