//! `casslab report RUN… [-o FILE] [--format html|md|json]`: reads the runs from the store
//! (which it never creates), builds the report (casslab-core's `report::run_view`) and writes
//! it in the chosen format to the file or stdout. It decides the format (from casslab-core's
//! table `report::format::report_formats`: `--format`, else the file's extension) and where
//! output goes; the formats themselves live in casslab-core's `report/`.

use super::{store_path, store_to_read};
use crate::cli::{format_named, ReportArgs};
use crate::exit::{bail_usage, usage, Exit};
use crate::out;
use anyhow::{Context, Result};
use casslab_core::report::format::{report_formats, Format};
use casslab_core::report::html::HtmlReport;
use casslab_core::report::run_view::{Report, RunView};
use casslab_core::store::{RunId, Store, StoreError};
use std::io::IsTerminal;
use std::path::Path;

pub fn report(args: &ReportArgs) -> Result<i32> {
    let format = match &args.format {
        Some(name) => format_named(report_formats(), "format", name)?,
        None => format_for(args.output.as_deref()),
    };
    let to_stdout = args.output.as_deref().is_none_or(out::is_stdout);
    if to_stdout && format.name() == HtmlReport.name() && std::io::stdout().is_terminal() {
        bail_usage!("the HTML report is a file to open in a browser: add -o report.html (or --format md for the terminal)");
    }
    let path = store_path(&args.store);
    let store = store_to_read(&args.store)?;
    let mut runs = Vec::with_capacity(args.runs.len());
    for arg in &args.runs {
        let id = resolve(&store, arg)?;
        runs.push(RunView::of_saved_run(&store, id, args.wall_clock).map_err(|e| match e {
            StoreError::NoSuchRun(id) => usage(format!("no saved run with id {id} in {} (see `casslab runs`)", path.display())),
            e => anyhow::Error::new(e).context(format!("cannot read run {id}")),
        })?);
    }
    if let Some(dir) = &args.profile_out {
        for arg in &args.runs {
            profile_out(&store, resolve(&store, arg)?, dir)?;
        }
    }
    let text = format.render(&Report::new(runs));
    match &args.output {
        Some(path) if !out::is_stdout(path) => {
            std::fs::write(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
            out::note(&format!("wrote {} ({} KiB)", path.display(), text.len().div_ceil(1024)));
        }
        _ => out::print(&text)?,
    }
    Ok(Exit::Success.code())
}

/// `--profile-out DIR`: the run's profiles over its measured phase as folded stacks, one file
/// per node and kind (and the nodes merged).
pub fn profile_out(store: &Store, id: RunId, dir: &std::path::Path) -> Result<()> {
    let profiles = store.profiles(id)?;
    if profiles.is_empty() {
        out::warn(&format!("--profile-out: run {id} has no profile (record one with --profile, or give --profile-file)"));
        return Ok(());
    }
    let (window, _) = casslab_core::report::flame::measured_of(store, id)?;
    let files = casslab_core::profile::folded::write_dir(dir, id, &profiles, window)?;
    out::note(&format!("wrote {} folded-stack files into {}", files.len(), dir.display()));
    Ok(())
}

/// The format an output file's extension asks for; the table's default (HTML) otherwise.
fn format_for(output: Option<&Path>) -> &'static dyn Format<Report> {
    let formats = report_formats();
    output.and_then(|p| formats.for_path(p)).unwrap_or(formats.default_format())
}

/// A run argument (`latest` or an id) as a run id; a bad one is a usage error. Shared with
/// `compare`.
pub(super) fn resolve(store: &Store, arg: &str) -> Result<RunId> {
    if arg == "latest" {
        return store.latest_run()?.ok_or_else(|| usage("no saved runs yet; `casslab run ycsb-a` makes one"));
    }
    arg.parse().map_err(|_| usage(format!("\"{arg}\" is not a run id: give a number from `casslab runs`, or latest")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_picks_the_format() {
        let name = |p: Option<&str>| format_for(p.map(Path::new)).name();
        assert_eq!(name(Some("r.md")), "md");
        assert_eq!(name(Some("r.markdown")), "md");
        assert_eq!(name(Some("r.JSON")), "json");
        assert_eq!(name(Some("r.html")), "html");
        assert_eq!(name(Some("report")), "html");
        assert_eq!(name(None), "html");
    }
}
