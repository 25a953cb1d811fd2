//! The terminal view of a run session: an [`Observer`] that prints on stderr what the session
//! reports — the progress line, and the line of every event that says one (the library's
//! `session::narration`: connection, phases, notices, events, find-max steps, experiment
//! runs). With `summaries` it also prints each finished run's summary on stdout (experiments,
//! whose runs follow each other). It only reads what the session sends; results are printed
//! by the commands.

use crate::progress::Progress;
use casslab_core::notice::Severity;
use casslab_core::session::{narration, Observer, SessionEvent};
use casslab_core::store::Store;
use std::sync::{Arc, Mutex};

pub struct Terminal {
    progress: Mutex<Progress>,
    /// Print each finished run's summary (read back from this store).
    summaries: Option<Arc<Store>>,
}

impl Terminal {
    pub fn new() -> Terminal {
        Terminal { progress: Mutex::new(Progress::new()), summaries: None }
    }

    /// Also prints the summary of every run as it is saved.
    pub fn with_summaries(store: Arc<Store>) -> Terminal {
        Terminal { summaries: Some(store), ..Terminal::new() }
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Prints a line on stderr, after ending the progress line.
    fn say(&self, line: &str) {
        self.progress().clear();
        eprintln!("{line}");
    }
}

impl Observer for Terminal {
    fn on(&self, event: &SessionEvent<'_>) {
        // --quiet: warnings, and the summaries that are results, only
        let warning = matches!(event, SessionEvent::Notice(n) if n.severity() == Severity::Warning);
        if crate::out::quiet() && !warning && !matches!(event, SessionEvent::RunFinished { .. }) {
            return;
        }
        match event {
            SessionEvent::PhaseStarted { count, warmup_s, duration_s, .. } => self.progress().phase(*count, warmup_s + duration_s.unwrap_or(0.0)),
            SessionEvent::Interval(s) => self.progress().interval(s),
            SessionEvent::PhaseFinished { .. } => self.progress().clear(),
            SessionEvent::RunFinished { run, .. } => {
                self.progress().clear();
                if let Some(store) = &self.summaries {
                    if let Ok(r) = store.run(*run) {
                        if let Some(s) = &r.summary {
                            let _ = crate::out::print(&casslab_core::report::text::run_summary(&r, s));
                        }
                    }
                }
            }
            _ => {}
        }
        if let Some(line) = narration(event) {
            self.say(&line);
        }
    }
}
