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
use crate::analysis::recall::RecallComparison;
use crate::analysis::study::Study;
use crate::analysis::verified::VerifiedComparison;
use crate::judge::ServerSide;
use crate::store::RunRecord;
use crate::verify::pass_report::PassReport;
use std::path::Path;

/// An output format of `In`: what `--format` calls it, the file extensions that ask for it,
/// and the document it makes.
pub trait Format<In: ?Sized>: Sync {
    /// Its name for `--format`.
    fn name(&self) -> &'static str;
    /// Other names `--format` takes for it (`markdown` for `md`).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// File extensions (lower case, without the dot) that ask for it.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }
    /// What a file of its renderings starts with when they are written one after the other
    /// (a stream's CSV header); nothing for a format whose rendering is a whole document.
    fn preamble(&self) -> String {
        String::new()
    }
    /// `input` as a document of this format.
    fn render(&self, input: &In) -> String;
}

/// The formats of one kind of input, the default first.
pub struct Formats<'f, In: ?Sized> {
    all: &'f [&'f dyn Format<In>],
}

impl<'f, In: ?Sized> Formats<'f, In> {
    pub const fn new(all: &'f [&'f dyn Format<In>]) -> Formats<'f, In> {
        Formats { all }
    }

    /// Every format, the default first.
    pub fn all(&self) -> &'f [&'f dyn Format<In>] {
        self.all
    }

    /// The one used when nothing asks for another.
    pub fn default_format(&self) -> &'f dyn Format<In> {
        self.all[0]
    }

    /// The format called `name` (or by one of its aliases), in any case.
    pub fn named(&self, name: &str) -> Option<&'f dyn Format<In>> {
        let is = |n: &str| n.eq_ignore_ascii_case(name.trim());
        self.all.iter().copied().find(|f| is(f.name()) || f.aliases().iter().any(|a| is(a)))
    }

    /// The format a file's extension asks for; `None` without a known one.
    pub fn for_path(&self, path: &Path) -> Option<&'f dyn Format<In>> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        self.all.iter().copied().find(|f| f.extensions().contains(&ext.as_str()))
    }

    /// The names `--format` takes, in order (`md`, not its aliases).
    pub fn names(&self) -> Vec<&'static str> {
        self.all.iter().map(|f| f.name()).collect()
    }
}

/// A report of saved runs (`casslab report`): a page with charts, Markdown, JSON.
pub fn report_formats() -> Formats<'static, Report> {
    Formats::new(&[&HtmlReport, &MarkdownReport, &JsonReport])
}

/// The list of saved runs (`casslab runs`).
pub fn run_list_formats() -> Formats<'static, [RunRecord]> {
    Formats::new(&[&RunsTable, &RunsJson, &RunsCsv])
}

/// What a comparison of saved runs shows (`casslab compare`): the study, and beside it the
/// verified reads, the recall of vector searches and the servers' side, when the runs have them.
pub struct ComparisonReport<'a> {
    pub study: &'a Study,
    pub verified: Option<&'a VerifiedComparison>,
    pub recall: Option<&'a RecallComparison>,
    pub server: Option<&'a ServerSide>,
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
