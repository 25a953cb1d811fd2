//! Headless Chromium for the tests of HTML pages: finds the browser, renders a local file
//! (DOM dump or screenshot), and measures the experiment page's SVG bar charts after layout.
//! The report's uPlot line charts are probed (and driven) by tests/report.rs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CASSLAB_CHROMIUM").map(PathBuf::from).filter(|p| p.is_file()) {
        return p;
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            if dir.join(name).is_file() {
                return dir.join(name);
            }
        }
    }
    panic!(
        "headless Chromium is needed to check the HTML pages, and none was found (looked for \
         chromium, chromium-browser, google-chrome on PATH, or $CASSLAB_CHROMIUM). Install it: \
         `apt-get update && apt-get install -y chromium` (.ci/run does this)"
    );
}

/// Runs Chromium headless on a local file with `extra` flags; returns its stdout. Output goes
/// through files, not pipes: a page's DOM is larger than a pipe's buffer.
pub fn headless(page: &Path, extra: &[String]) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (scratch.path().join("stdout"), scratch.path().join("stderr"));
    let mut child = Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .args(["--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1"])
        .arg(format!("--user-data-dir={}", scratch.path().join("profile").display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s: {}", std::fs::read_to_string(&err_path).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "chromium failed: {}", std::fs::read_to_string(&err_path).unwrap_or_default());
    std::fs::read_to_string(&out_path).unwrap()
}

/// Measures every bar chart after layout and writes the figures into `data-probe`.
const BAR_PROBE: &str = r#"<script>
for (const f of document.querySelectorAll('figure.chart.bars')) {
  const svg = f.querySelector('svg');
  const r = svg.getBoundingClientRect();
  let bars = 0, whiskers = 0;
  for (const e of svg.querySelectorAll('rect.bar')) { const b = e.getBBox(); if (b.width > 0 && b.height > 0) bars++; }
  for (const e of svg.querySelectorAll('path.whisker')) { const b = e.getBBox(); if (b.width > 0 || b.height > 0) whiskers++; }
  f.setAttribute('data-probe', [Math.round(r.width), Math.round(r.height), bars, whiskers].join(' '));
}
</script></body>"#;

/// One bar chart as measured in the browser.
#[derive(Debug)]
pub struct BarProbe {
    pub id: String,
    pub width: u32,
    pub height: u32,
    /// Bars with a non-zero size.
    pub bars: u32,
    /// Whiskers with a non-zero extent.
    pub whiskers: u32,
}

/// Renders the page with the probe and returns every bar chart's measurements.
pub fn probe_bar_charts(html_path: &Path) -> Vec<BarProbe> {
    let html = std::fs::read_to_string(html_path).unwrap();
    assert_eq!(html.matches("</body>").count(), 1);
    let probed = html_path.with_extension("probe.html");
    std::fs::write(&probed, html.replace("</body>", BAR_PROBE)).unwrap();
    let dom = headless(&probed, &["--window-size=1280,900".into(), "--dump-dom".into()]);
    let mut out = Vec::new();
    for fig in dom.split("<figure class=\"chart bars\"").skip(1) {
        let attr = |name: &str| fig.split(&format!("{name}=\"")).nth(1).and_then(|r| r.split('"').next()).map(str::to_string);
        let id = attr("data-chart").expect("every chart has an id");
        let p: Vec<u32> =
            attr("data-probe").unwrap_or_else(|| panic!("chart {id} was not measured: did the page load?")).split(' ').map(|n| n.parse().unwrap()).collect();
        out.push(BarProbe { id, width: p[0], height: p[1], bars: p[2], whiskers: p[3] });
    }
    out
}
