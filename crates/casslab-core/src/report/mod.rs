//! Output formats for saved runs, one file per format: `json` (the complete, lossless export of a
//! run, histograms included), `hdrlog` (HdrHistogram's interval log, for HdrHistogram's own
//! tools and plotters), `csv` (runs, a run's intervals, a comparison's figures), `runs_json`
//! (the list of runs), `comparison_json` (a comparison as data), `openmetrics` (a running run's
//! figures for Prometheus) and `stream` (one line per interval while a run goes). Each format takes what the store returns and writes or returns a value;
//! none of them reads the store, talks to a cluster or decides where output goes. `comparison`
//! (text) and `experiment_html` render an `analysis::study::Study`. `table` is
//! the column layout every terminal table shares (`text`, `server_view`, and the binary's own).

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
pub mod hdrlog;
pub mod html;
pub mod html_charts;
pub mod json;
pub mod judgement;
pub mod lint_text;
pub mod markdown;
pub mod openmetrics;
pub mod plan_text;
pub mod recall_text;
pub mod report_json;
pub mod run_view;
pub mod runs_json;
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
