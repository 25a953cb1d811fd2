//! A run's figures while it goes, for what watches it from outside: the Prometheus endpoint of
//! `--metrics-listen ADDR` (a small HTTP server on the run's runtime answering `GET /metrics`)
//! and the per-interval stream of `--stream FILE|-`. [`Live`] is an observer that passes every
//! session event on to the terminal and feeds both; the figures and line formats are
//! casslab-core's (`report::openmetrics`, `report::stream`).

use crate::cli::{RunOptions, StreamFormatArg};
use crate::out;
use anyhow::{Context, Result};
use casslab_core::report::openmetrics::{LiveMetrics, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_CONTENT_TYPE};
use casslab_core::report::stream::{self, StreamFormat};
use casslab_core::session::{Observer, SessionEvent};
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Where the stream goes.
struct Stream {
    format: StreamFormat,
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
            eprintln!("warning: --stream: {e}; the stream stops, the run goes on");
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
                let csv = opts.stream_format == Some(StreamFormatArg::Csv) || (opts.stream_format.is_none() && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")));
                let file = if out::is_stdout(path) { None } else { Some(std::io::BufWriter::new(create(path)?)) };
                Some(Mutex::new(Stream { format: if csv { StreamFormat::Csv } else { StreamFormat::JsonLines }, file, header_written: false, failed: false }))
            }
        };
        Ok(Live { inner, metrics: Arc::new(Mutex::new(LiveMetrics::default())), stream, run: Mutex::new(None) })
    }

    /// Serves the live figures at http://`addr`/metrics on `rt` until the process ends.
    pub fn serve(&self, rt: &tokio::runtime::Runtime, addr: SocketAddr) -> Result<()> {
        let listener = std::net::TcpListener::bind(addr).with_context(|| format!("--metrics-listen {addr}: cannot listen there"))?;
        listener.set_nonblocking(true)?;
        let metrics = self.metrics.clone();
        rt.spawn(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(answer(conn, metrics.clone()));
            }
        });
        Ok(())
    }
}

fn create(path: &Path) -> Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::File::create(path).with_context(|| format!("--stream: cannot create {}", path.display()))
}

/// One HTTP/1.x exchange: `GET /metrics` (or `/`) gets the figures, anything else a 404.
async fn answer(mut conn: tokio::net::TcpStream, metrics: Arc<Mutex<LiveMetrics>>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        match conn.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let openmetrics = head.lines().any(|l| l.to_ascii_lowercase().starts_with("accept:") && l.contains("application/openmetrics-text"));
    let (status, content_type, body) = match (method, path.split('?').next().unwrap_or("")) {
        ("GET", "/metrics" | "/") => {
            let body = metrics.lock().unwrap_or_else(|e| e.into_inner()).render(openmetrics);
            ("200 OK", if openmetrics { OPENMETRICS_CONTENT_TYPE } else { PROMETHEUS_CONTENT_TYPE }, body)
        }
        _ => ("404 Not Found", "text/plain; charset=utf-8", "casslab serves GET /metrics\n".to_string()),
    };
    let reply = format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    let _ = conn.write_all(reply.as_bytes()).await;
    let _ = conn.shutdown().await;
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
                        let header = stream::header(s.format);
                        s.write(&header);
                    }
                }
            }
            SessionEvent::Interval(sample) => {
                self.metrics.lock().unwrap_or_else(|e| e.into_inner()).interval(sample);
                let run = *self.run.lock().unwrap_or_else(|e| e.into_inner());
                if let (Some(s), Some((run, t0))) = (&self.stream, run) {
                    let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
                    let lines = stream::lines(s.format, run, t0, sample);
                    s.write(&lines);
                }
            }
            _ => {}
        }
    }
}
