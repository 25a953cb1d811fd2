//! A saved run as `casslab show` gives it on a terminal: its summary (summed up from its
//! intervals, one row at a time, when the run did not finish), its intervals of recall, its
//! validity, the reads that broke what was written, its stages of load, its events and its
//! server side.

use super::{data, recall_text, run_view::summary_of_rows, server_view, stages_text, text};
use crate::analysis::load_curve;
use crate::store::{RunId, RunRecord, Store, StoreError};
use crate::validity;

/// Every section of the saved run `record` (as `store` returned it), as text.
pub fn saved_run_text(store: &Store, record: &RunRecord) -> Result<String, StoreError> {
    let id = record.id;
    let summary = summary_of_rows(record, |add| {
        store.for_each_interval(id, |row| {
            add(&row);
            Ok(())
        })
    })?;
    let mut out = match summary {
        Some(s) => text::run_summary(record, &s) + &recall_text::intervals_text(store, id)?,
        None => format!("run {id} ({}) has no summary and no saved interval yet: status {}\n", record.workload, record.status.as_str()),
    };
    out += &validity::of_run(store, id)?.text();
    out += &data::violations_table(&store.violations(id)?);
    if let Some(load) = load_curve::of_run(store, id)? {
        out += &stages_text::stages_text(&load);
    }
    out += &text::events_table(&store.events(id)?);
    Ok(out + &server_text(store, id))
}

/// The server section of a saved run's terminal summary (empty when nothing was collected).
pub fn server_text(store: &Store, run: RunId) -> String {
    let mut series = server_view::ClientSeries::default();
    let rows = store.for_each_interval_figures(run, |iv| {
        series.add(&iv);
        Ok(())
    });
    match (rows, store.server_samples(run)) {
        (Ok(()), Ok(samples)) => {
            let traces = store.traces(run).unwrap_or_default();
            series.text_section(&samples) + &server_view::traces_text(&traces)
        }
        (Err(e), _) | (_, Err(e)) => format!("\nserver side: cannot read the saved samples: {e}\n"),
    }
}
