//! A run's figures while it goes, for what watches it from outside: the Prometheus endpoint of
//! `--metrics-listen ADDR` (served on the run's runtime by `report::openmetrics::serve`) and
//! the per-interval stream of `--stream FILE|-`. [`Live`] is an observer that passes every
//! session event on to the terminal and feeds both; the figures and line formats are
//! casslab-core's (`report::openmetrics`, `report::stream`).

use crate::cli::{format_named, RunOptions};
use crate::out;
use anyhow::{Context, Result};
use casslab_core::report::format::{stream_formats, Format};
use casslab_core::report::openmetrics::LiveMetrics;
use casslab_core::report::stream::LiveInterval;
use casslab_core::session::{Observer, SessionEvent};
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Where the stream goes.
struct Stream {
    format: &'static dyn Format<LiveInterval>,
    /// `None`: stdout.
    file: Option<std::io::BufWriter<std::fs::File>>,
    header_written: bool,
    failed: bool,
}

impl Stream {
    fn write(&mut self, text: &str) {
        if text.is_empty() || self.failed {
            return;
        }
        let result = match &mut self.file {
            None => out::print(text).map_err(|e| e.to_string()),
            Some(f) => f.write_all(text.as_bytes()).and_then(|()| f.flush()).map_err(|e| e.to_string()),
        };
        if let Err(e) = result {
            crate::out::warn(&format!("--stream: {e}; the stream stops, the run goes on"));
            self.failed = true;
        }
    }
}

/// The terminal, plus the live figures and the stream.
pub struct Live {
    inner: Arc<dyn Observer>,
    metrics: Arc<Mutex<LiveMetrics>>,
    stream: Option<Mutex<Stream>>,
    /// The run in progress and its time axis' origin (Unix ms).
    run: Mutex<Option<(i64, i64)>>,
}

impl Live {
    pub fn new(inner: Arc<dyn Observer>, opts: &RunOptions) -> Result<Live> {
        let stream = match &opts.stream {
            None => None,
            Some(path) => {
                // --stream-format, else the file's extension, else JSON lines
                let formats = stream_formats();
                let format = match &opts.stream_format {
                    Some(name) => format_named(formats, "stream-format", name)?,
                    None => formats.for_path(path).unwrap_or(formats.default_format()),
                };
                let file = if out::is_stdout(path) { None } else { Some(std::io::BufWriter::new(create(path)?)) };
                Some(Mutex::new(Stream { format, file, header_written: false, failed: false }))
            }
        };
        Ok(Live { inner, metrics: Arc::new(Mutex::new(LiveMetrics::default())), stream, run: Mutex::new(None) })
    }

    /// Serves the live figures at http://`addr`/metrics on `rt` until the process ends.
    pub fn serve(&self, rt: &tokio::runtime::Runtime, addr: SocketAddr) -> Result<()> {
        let listener = std::net::TcpListener::bind(addr).with_context(|| format!("--metrics-listen {addr}: cannot listen there"))?;
        listener.set_nonblocking(true)?;
        rt.spawn(casslab_core::report::openmetrics::serve(listener, self.metrics.clone()));
        Ok(())
    }
}

fn create(path: &Path) -> Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::File::create(path).with_context(|| format!("--stream: cannot create {}", path.display()))
}

impl Observer for Live {
    fn on(&self, event: &SessionEvent<'_>) {
        self.inner.on(event);
        match event {
            SessionEvent::RunStarted { run, workload, t0_unix_ms } => {
                *self.run.lock().unwrap_or_else(|e| e.into_inner()) = Some((*run, *t0_unix_ms));
                self.metrics.lock().unwrap_or_else(|e| e.into_inner()).started(*run, workload, *t0_unix_ms);
                if let Some(s) = &self.stream {
                    let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
                    if !s.header_written {
                        s.header_written = true;
                        let header = s.format.preamble();
                        s.write(&header);
                    }
                }
            }
            SessionEvent::Interval(sample) => {
                self.metrics.lock().unwrap_or_else(|e| e.into_inner()).interval(sample);
                let run = *self.run.lock().unwrap_or_else(|e| e.into_inner());
                if let (Some(s), Some((run, t0))) = (&self.stream, run) {
                    let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
                    let lines = s.format.render(&LiveInterval::of(run, t0, sample));
                    s.write(&lines);
                }
            }
            _ => {}
        }
    }
}
