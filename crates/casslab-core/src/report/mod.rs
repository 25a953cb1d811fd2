//! Output formats of casslab's results, one file per format. Every format a command chooses
//! with `--format` (or a file's extension) implements the one trait [`format::Format`] over
//! what it renders and is listed in `format`'s table of that input: a report of saved runs
//! (`html`, `markdown`, `report_json`, built from `run_view`'s `Report`), the list of saved runs
//! (`text`'s table, `runs_json`, `csv`), a comparison (`comparison`'s text, `comparison_json`,
//! `csv`, over `format::ComparisonReport`), a run's intervals streamed while it goes (`stream`:
//! JSON lines, CSV) and a verification pass (`data`'s text, `pass_json`). A new format is a
//! unit struct in a new file, added to its table. What renders rows as the store hands them
//! over stays a writer of its own: `json` (the complete, lossless export of a run, histograms
//! included), `hdrlog` (HdrHistogram's interval log), `csv`'s intervals of a run and `text`'s
//! summary of one; so does `openmetrics` (a running run's figures for Prometheus, in the
//! exposition the scraper accepts). Each format takes what the store returns and returns (or
//! writes) the document; none of them reads the store, talks to a cluster or decides where
//! output goes. `comparison` (text) and `experiment_html` render an `analysis::study::Study`.
//! `table` is the column layout every terminal table shares (`text`, `server_view`, and the
//! binary's own).

pub mod catalogue_text;
pub mod comparison;
pub mod comparison_json;
pub mod config_table;
pub mod csv;
pub mod curve_chart;
pub mod data;
pub mod experiment_html;
pub mod experiment_text;
pub mod explain;
pub mod findmax_text;
pub mod flame;
pub mod format;
pub mod format_trait;
pub mod hdrlog;
pub mod html;
pub mod html_charts;
pub mod json;
pub mod judgement;
pub mod lint_text;
pub mod markdown;
pub mod openmetrics;
pub mod pass_json;
pub mod plan_text;
pub mod recall_text;
pub mod report_json;
pub mod run_view;
pub mod runs_json;
pub mod saved_run_text;
pub mod server_view;
pub mod spectrum;
pub mod stages_text;
pub mod stream;
pub mod svg_chart;
pub mod sweep_text;
pub mod table;
pub mod text;
pub mod timeline_svg;
pub mod uplot_chart;

pub use hdrlog::write_hdr_log;
pub use json::{run_json, write_run_json};
