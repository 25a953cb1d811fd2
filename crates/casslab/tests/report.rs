//! `casslab report` end to end, without a cluster: synthetic runs are written into a temporary
//! store through casslab-core's `Store` (as `casslab run` writes them: `common::runs`), the real binary makes
//! the reports, and the HTML is rendered in headless Chromium to check that every uPlot chart
//! drew (canvas size and paint, each series' points, axis labels and ticks, legend) and answers a
//! reader (hover values, zoom and its `casslab:window` event, zoom out, series toggling), and
//! that a screenshot is not blank; a ramped run's hockey-stick chart is checked with its knee and
//! its picture cropped. The JSON is validated
//! against `docs/run-report.schema.json`. Chromium is required: the test fails, saying how to
//! install it, when it is missing.

mod common;

use common::runs::lab;
use std::path::{Path, PathBuf};

fn report(store: &Path, args: &[&str]) -> (i32, String, String) {
    common::run(common::casslab().arg("report").args(args).arg("--store").arg(store))
}

// ---- headless Chromium -------------------------------------------------------------------

use common::chromium::headless;

/// Measures every uPlot chart in the browser after the page's scripts ran, and exercises it:
/// hovers its middle point (reading the legend), zooms into the middle half of its x range,
/// double-clicks to zoom out, selects an interval, hides its first series from the legend.
/// Writes one JSON object per chart into `<pre id="probe">`.
const PROBE: &str = r#"<pre id="probe"></pre><script>
(async () => {
  const tick = () => new Promise(r => setTimeout(r, 20));
  const windows = [];
  document.addEventListener('casslab:window', e => windows.push(e.detail));
  const out = [];
  for (const f of document.querySelectorAll('figure.chart[data-chart]')) {
    const id = f.getAttribute('data-chart');
    const u = (window.casslabCharts || {})[id];
    if (!u) { out.push({ id, missing: true }); continue; }
    const cfg = JSON.parse(f.querySelector('script.chart-data').textContent);
    const cv = u.ctx.canvas, pr = uPlot.pxRatio, b = u.bbox;
    const countPainted = () => { const d = u.ctx.getImageData(0, 0, cv.width, cv.height).data; let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; };
    const painted = countPainted();
    // the pixels the series themselves paint: all of them against none
    for (let i = 1; i < u.series.length; i++) u.setSeries(i, { show: false });
    await tick();
    const bare = countPainted();
    for (let i = 1; i < u.series.length; i++) u.setSeries(i, { show: true });
    await tick();
    const img = u.ctx.getImageData(0, 0, cv.width, cv.height).data;
    const px = (x, y) => { const i = 4 * (Math.round(y) * cv.width + Math.round(x)); return [img[i], img[i + 1], img[i + 2], img[i + 3]]; };
    // each mark: the share of its column in the plot that is painted, and that is dark (a knee's line)
    const marks = cfg.marks.map(m => {
      const x0 = u.valToPos(m.from, 'x', true), x1 = u.valToPos(m.to, 'x', true);
      const xs = m.kind === 'knee' ? [x0] : [x1 - x0 > 8 * pr ? (x0 + x1) / 2 : x0 + pr, x1 - x0 > 8 * pr ? (x0 + x1) / 2 + 3 * pr : x0 + pr];
      let shaded = 1, dark = 0;
      for (const x of xs) {
        let a = 0, d = 0, n = 0;
        for (let y = b.top + 2; y < b.top + b.height - 2; y++) { const p = px(x, y); n++; if (p[3] > 0) a++; if (p[3] > 200 && Math.max(p[0], p[1], p[2]) < 90) d++; }
        shaded = Math.min(shaded, a / n); dark = Math.max(dark, d / n);
      }
      return { kind: m.kind, label: m.label, shaded, dark };
    });
    const rows = [...f.querySelectorAll('.u-legend tr.u-series')];
    const probe = {
      box: (r => [r.left + scrollX, r.top + scrollY, r.width, r.height].map(Math.round))(f.getBoundingClientRect()),
      id, kind: cfg.x.kind, width: u.width, height: u.height, canvas: [cv.width, cv.height], painted, by_series: painted - bare,
      series: u.series.slice(1).map((s, i) => ({ name: s.label, points: u.data[i + 1].filter(v => v != null && isFinite(v)).length, drawn: !!(s._paths && s._paths.stroke) })),
      x_label: u.axes[0].label, y_label: u.axes[1].label,
      x_ticks: (u.axes[0]._values || []).map(String), y_ticks: (u.axes[1]._values || []).map(String),
      legend: rows.slice(1).map(r => r.querySelector('.u-label').textContent),
      marks,
    };
    // hover the middle point of the first series that has one
    const si = u.data.slice(1).findIndex(ys => ys.some(v => v != null));
    const idxs = u.data[si + 1].map((v, i) => v != null ? i : -1).filter(i => i >= 0);
    const idx = idxs[Math.floor(idxs.length / 2)];
    u.setCursor({ left: u.valToPos(u.data[0][idx], 'x'), top: b.height / pr / 2 });
    await tick();
    probe.hover = { x: u.data[0][idx], y: u.data[si + 1][idx], series: si, x_text: rows[0].querySelector('.u-value').textContent, y_text: rows[si + 1].querySelector('.u-value').textContent };
    // zoom into the middle half, zoom out, select
    const [lo, hi] = [u.data[0][0], u.data[0][u.data[0].length - 1]];
    const before = windows.length;
    u.setScale('x', { min: lo + (hi - lo) / 4, max: hi - (hi - lo) / 4 });
    await tick();
    probe.zoom = { asked: [lo + (hi - lo) / 4, hi - (hi - lo) / 4], scale: [u.scales.x.min, u.scales.x.max], event: windows.length > before ? windows[windows.length - 1] : null };
    const beforeReset = windows.length;
    u.over.dispatchEvent(new MouseEvent('dblclick', { bubbles: true }));
    await tick();
    probe.reset = { scale: [u.scales.x.min, u.scales.x.max], full: [lo, hi], event: windows.length > beforeReset ? windows[windows.length - 1] : null };
    const beforeSelect = windows.length;
    const [sl, sr] = [u.valToPos(lo + (hi - lo) / 10, 'x'), u.valToPos(lo + (hi - lo) / 2, 'x')];
    u.setSelect({ left: sl, width: sr - sl, top: 0, height: b.height / pr }, true);
    await tick();
    probe.select = { asked: [u.posToVal(sl, 'x'), u.posToVal(sr, 'x')], event: windows.length > beforeSelect ? windows[windows.length - 1] : null };
    u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
    // a click on the first legend entry hides that series
    rows[1].querySelector('.u-label').click();
    await tick();
    probe.hidden = !u.series[1].show;
    rows[1].querySelector('.u-label').click();
    out.push(probe);
  }
  document.getElementById('probe').textContent = JSON.stringify(out);
})();
</script></body>"#;

/// One chart as measured in the browser (see [`PROBE`]).
#[derive(Debug, serde::Deserialize)]
struct Probe {
    id: String,
    #[serde(default)]
    missing: bool,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    width: f64,
    #[serde(default)]
    height: f64,
    #[serde(default)]
    canvas: Vec<u32>,
    #[serde(default)]
    painted: u64,
    /// Pixels painted by the series (the chart with its series against the chart without).
    #[serde(default)]
    by_series: i64,
    #[serde(default)]
    series: Vec<ProbedSeries>,
    #[serde(default)]
    x_label: String,
    #[serde(default)]
    y_label: String,
    #[serde(default)]
    x_ticks: Vec<String>,
    #[serde(default)]
    y_ticks: Vec<String>,
    #[serde(default)]
    legend: Vec<String>,
    #[serde(default)]
    marks: Vec<ProbedMark>,
    #[serde(default)]
    hover: serde_json::Value,
    #[serde(default)]
    zoom: serde_json::Value,
    #[serde(default)]
    reset: serde_json::Value,
    #[serde(default)]
    select: serde_json::Value,
    #[serde(default)]
    hidden: bool,
    /// The figure on the page: left, top, width, height in CSS px.
    #[serde(default, rename = "box")]
    bounds: Vec<u32>,
}

#[derive(Debug, serde::Deserialize)]
struct ProbedSeries {
    name: String,
    points: u32,
    drawn: bool,
}

#[derive(Debug, serde::Deserialize)]
struct ProbedMark {
    kind: String,
    label: String,
    /// Share of the mark's column in the plot that is painted.
    shaded: f64,
    /// Share of it that is dark (a knee's line).
    dark: f64,
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&nbsp;", "\u{a0}").replace("&amp;", "&")
}

/// Renders the page with [`PROBE`] in headless Chromium and returns every chart's probe.
fn probe_charts(html_path: &Path) -> Vec<Probe> {
    probe_charts_at(html_path, 1280)
}

/// [`probe_charts`] in a window `width` px wide.
fn probe_charts_at(html_path: &Path, width: u32) -> Vec<Probe> {
    let html = std::fs::read_to_string(html_path).unwrap();
    assert_eq!(html.matches("</body>").count(), 1);
    let probed = html_path.with_extension("probe.html");
    std::fs::write(&probed, html.replace("</body>", PROBE)).unwrap();
    let dom = headless(&probed, &[format!("--window-size={width},900"), "--virtual-time-budget=30000".into(), "--dump-dom".into()]);
    let json = dom.split("<pre id=\"probe\">").nth(1).and_then(|r| r.split("</pre>").next()).expect("the probe ran");
    assert!(!json.is_empty(), "the probe wrote nothing: did the page's scripts fail?");
    serde_json::from_str(&unescape(json)).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// A number as the charts write it (12.5k, 1.5M, 0.05), back to a number.
fn short_number(text: &str) -> f64 {
    let (digits, factor) = match text.strip_suffix('k') {
        Some(d) => (d, 1e3),
        None => text.strip_suffix('M').map_or((text, 1.0), |d| (d, 1e6)),
    };
    digits.parse::<f64>().unwrap_or_else(|_| panic!("{text:?} is no number")) * factor
}

/// Every chart drew, in the browser: its canvas has a size and paint, each series has points
/// and a drawn path, both axes have a label and ticks, the legend names the series; and it
/// answers the reader: a hover shows the x and the value, a zoom (and a time chart's selection)
/// announces its window in seconds, a double-click zooms out, a legend click hides a series.
fn assert_chart_works(p: &Probe) {
    assert!(!p.missing, "chart {} was not drawn (no uPlot instance)", p.id);
    assert!(p.width >= 400.0 && p.height >= 150.0 && p.canvas.iter().all(|c| *c >= 150), "chart {} is {}x{} px ({:?})", p.id, p.width, p.height, p.canvas);
    assert!(p.painted > 5_000 && p.by_series > 400, "chart {}: {} painted pixels, {} of them by the series", p.id, p.painted, p.by_series);
    for s in &p.series {
        assert!(s.points >= 2 && s.drawn, "chart {}: series {:?} has {} points, drawn {}", p.id, s.name, s.points, s.drawn);
    }
    assert!(!p.x_label.is_empty() && !p.y_label.is_empty(), "chart {}: axis labels {:?} {:?}", p.id, p.x_label, p.y_label);
    let labelled = |ticks: &[String]| ticks.iter().filter(|t| !t.is_empty()).count();
    assert!(labelled(&p.x_ticks) >= 3 && labelled(&p.y_ticks) >= 3, "chart {}: ticks {:?} {:?}", p.id, p.x_ticks, p.y_ticks);
    assert!(!p.x_ticks.iter().chain(&p.y_ticks).any(|t| t.contains("--") || t == "null"), "chart {}: ticks {:?} {:?}", p.id, p.x_ticks, p.y_ticks);
    assert_eq!(p.legend, p.series.iter().map(|s| s.name.clone()).collect::<Vec<_>>(), "chart {}: legend", p.id);
    // hover: the legend shows the x and the series' value there
    let (x, y) = (p.hover["x"].as_f64().unwrap(), p.hover["y"].as_f64().unwrap());
    let (x_text, y_text) = (p.hover["x_text"].as_str().unwrap(), p.hover["y_text"].as_str().unwrap());
    let shown = short_number(y_text);
    assert!((shown - y).abs() <= y.abs() * 0.01 + 0.01, "chart {}: hovering shows {y_text:?} for {y}", p.id);
    match p.kind.as_str() {
        "time" if x_text.ends_with(" s") => assert_eq!(x_text, format!("{x:.1} s"), "chart {}", p.id),
        "time" => assert!(x_text.len() >= 8 && x_text.as_bytes()[2] == b':', "chart {}: the time of day, got {x_text:?}", p.id),
        "percentile" => assert!(x_text.ends_with('%'), "chart {}: {x_text:?}", p.id),
        _ => assert!((short_number(x_text) - x).abs() <= x.abs() * 0.01 + 0.01, "chart {}: {x_text:?} for {x}", p.id),
    }
    // zoom and zoom out
    let close = |a: &serde_json::Value, b: &serde_json::Value| (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-6;
    let z = &p.zoom;
    assert!(close(&z["scale"][0], &z["asked"][0]) && close(&z["scale"][1], &z["asked"][1]), "chart {}: zoom {z}", p.id);
    let r = &p.reset;
    assert!(close(&r["scale"][0], &r["full"][0]) && close(&r["scale"][1], &r["full"][1]), "chart {}: a double-click zooms out: {r}", p.id);
    if p.kind == "time" {
        let e = &z["event"];
        assert!(
            e["chart"] == p.id.as_str() && close(&e["from_s"], &z["asked"][0]) && close(&e["to_s"], &z["asked"][1]),
            "chart {}: casslab:window on zoom: {z}",
            p.id
        );
        let e = &r["event"];
        assert!(e["chart"] == p.id.as_str() && e["from_s"].is_null() && e["to_s"].is_null(), "chart {}: casslab:window on reset: {r}", p.id);
        let (s, e) = (&p.select["asked"], &p.select["event"]);
        assert!((e["from_s"].as_f64().unwrap() - s[0].as_f64().unwrap()).abs() < 0.05, "chart {}: casslab:window on select: {}", p.id, p.select);
        assert!((e["to_s"].as_f64().unwrap() - s[1].as_f64().unwrap()).abs() < 0.05, "chart {}: casslab:window on select: {}", p.id, p.select);
    } else {
        assert!(z["event"].is_null() && p.select["event"].is_null(), "chart {}: only time charts announce windows", p.id);
    }
    assert!(p.hidden, "chart {}: a legend click hides the series", p.id);
}

fn assert_drawn(probes: &[Probe], expected: &[(&str, usize)]) {
    let ids: Vec<&str> = probes.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, expected.iter().map(|e| e.0).collect::<Vec<_>>(), "charts on the page");
    for (p, (_, series)) in probes.iter().zip(expected) {
        assert_chart_works(p);
        assert_eq!(p.series.len(), *series, "chart {}: series {:?}", p.id, p.legend);
    }
}

/// Pixels that are clearly colored (not white, grey or black), and distinct colors.
fn colorfulness(png_path: &Path) -> (u32, u32, usize, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png_path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3 && info.bit_depth == png::BitDepth::Eight, "{:?} {:?}", info.color_type, info.bit_depth);
    let mut colored = 0;
    let mut distinct = std::collections::HashSet::new();
    for px in buf[..info.buffer_size()].chunks(channels) {
        let (r, g, b) = (px[0], px[1], px[2]);
        distinct.insert((r, g, b));
        if r.max(g).max(b) - r.min(g).min(b) > 60 {
            colored += 1;
        }
    }
    (info.width, info.height, colored, distinct.len())
}

/// Where the screenshot is kept for a person to look at.
fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---- tests ---------------------------------------------------------------------------------

#[test]
fn html_report_of_a_fixed_rate_run_draws_every_chart() {
    let (_dir, store) = lab();
    let out = artifacts().join("run2.html");
    let (code, stdout, err) = report(&store, &["2", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.is_empty() && err.contains("wrote"), "{err}");
    let html = std::fs::read_to_string(&out).unwrap();
    for part in [
        "run 2 · kv",
        "fixed rate 850 ops/s",
        "Latency from intended start (ms)",
        "Service time, from the actual send (ms)",
        "Errors by kind: timeout 25",
        "5.0.6",
        "params.rows",
    ] {
        assert!(html.contains(part), "the page lacks {part:?}");
    }
    for fetch in [" src=", "<link", "fetch(", "url(", "@import"] {
        assert!(!html.contains(fetch), "the page must be self-contained: it has {fetch:?}");
    }

    let probes = probe_charts(&out);
    assert_drawn(
        &probes,
        &[
            // read, update, total, target line
            ("r0-run-throughput", 4),
            ("r0-run-errors", 1),
            // p50, p99, p99.9 and the service time's p99
            ("r0-run-latency-0", 4),
            ("r0-run-latency-1", 4),
            // two operations, intended and service time
            ("r0-run-spectrum", 4),
            ("r0-load-throughput", 1),
            ("r0-load-latency-0", 3),
            ("r0-load-spectrum", 1),
        ],
    );
    // the warm-up is shaded on the measured run's time charts, and named
    let warm = probes[0].marks.iter().find(|m| m.kind == "warmup").expect("a warm-up mark");
    assert!(warm.shaded > 0.9 && warm.label == "warm-up (not measured)", "{warm:?}");
    assert_eq!(probes[0].legend, ["read", "update", "total", "target 850 ops/s"]);
    assert!(probes[2].y_label.starts_with("latency (ms)") && probes[0].y_label == "operations per second", "units in the axis labels");
    assert!(probes[4].x_ticks.iter().any(|t| t == "99%") && probes[4].x_ticks.iter().any(|t| t == "99.9%"), "percentile ticks: {:?}", probes[4].x_ticks);

    let png = artifacts().join("run2.png");
    let _ = std::fs::remove_file(&png);
    headless(&out, &[format!("--screenshot={}", png.display()), "--window-size=1280,2200".into()]);
    let (w, h, colored, distinct) = colorfulness(&png);
    assert_eq!((w, h), (1280, 2200));
    assert!(colored > 5_000, "only {colored} colored pixels: is the page blank? see {}", png.display());
    assert!(distinct > 200, "only {distinct} distinct colors: is the page blank? see {}", png.display());
    eprintln!("screenshot: {} ({colored} colored pixels, {distinct} colors)", png.display());
}

#[test]
fn html_report_of_several_runs_compares_them() {
    let (_dir, store) = lab();
    let out = artifacts().join("runs.html");
    let (code, _, err) = report(&store, &["1", "2", "latest", "--format", "html", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("Runs compared") && html.contains("Config differences"));
    assert!(html.contains("<code>params.rows</code></td><td>100000</td><td class=\"diff\">200000</td><td>100000</td>"), "differences highlighted");
    assert!(html.contains("no final summary (status running)"), "the crashed run says so");
    let probes = probe_charts(&out);
    let compare: Vec<&Probe> = probes.iter().filter(|p| p.id.starts_with("compare-")).collect();
    assert_eq!(compare.len(), 2, "one overlaid spectrum per operation");
    assert!(compare.iter().all(|p| p.legend == ["run 1", "run 2", "run 3"]), "three runs in each: {compare:?}");
    for p in &probes {
        assert_chart_works(p);
    }
    // Per run: 4 or 5 charts of the measured run (errors only when there were some) + 3 of the load.
    assert_eq!(probes.len(), 2 + 8 + 8 + 7, "{:?}", probes.iter().map(|p| &p.id).collect::<Vec<_>>());
}

#[test]
fn markdown_report_pastes_into_a_pull_request() {
    let (_dir, store) = lab();
    let (code, md, err) = report(&store, &["1", "2", "--format", "md"]);
    assert_eq!(code, 0, "{err}");
    assert!(md.starts_with("## casslab: runs 1, 2\n"), "{md}");
    assert!(md.contains("| run 1 | kv | completed | max throughput, 128 in flight |"), "{md}");
    assert!(md.contains("| run 2 | kv | completed | fixed rate 850 ops/s |"), "{md}");
    assert!(md.contains("| `params.rows` | 100000 | **200000** |"), "{md}");
    assert!(md.contains("| op | count | ops/s | mean | p50 | p95 | p99 | p99.9 | max | errors |"));
    assert!(md.contains("| read | 29,800 | 1490 |"), "{md}");
    assert!(md.contains("Service time (from the actual send), ms:"));
    assert!(md.contains("> **Note:** target rate 850/s not kept"));
    assert!(md.contains("<details><summary>Full config of run 2</summary>"));
    let out = artifacts().join("run1.md");
    let (code, _, err) = report(&store, &["1", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("## casslab: run 1 · kv\n"), "the .md extension picks Markdown");
}

#[test]
fn json_report_matches_its_schema() {
    let (_dir, store) = lab();
    let out = artifacts().join("runs.json");
    let (code, _, err) = report(&store, &["1", "2", "3", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/run-report.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema is valid");
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "the report does not match {}:\n{}", schema_path.display(), errors.join("\n"));

    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.iter().map(|r| r["id"].as_i64().unwrap()).collect::<Vec<_>>(), [1, 2, 3]);
    let run = &runs[0]["phases"][1];
    assert_eq!((run["phase"].as_str(), run["ops"][0]["ok"].as_u64()), (Some("run"), Some(29_800)));
    assert_eq!(runs[0]["intervals"].as_array().unwrap().len(), 25);
    assert_eq!(runs[1]["mode"]["target_rate_per_s"], 850.0);
    assert_eq!(runs[2]["status"], "running");
    assert!(runs[2]["phases"].as_array().unwrap().iter().any(|p| p["phase"] == "run"), "rebuilt from intervals");
    assert!(v["config_differences"].as_array().unwrap().iter().any(|d| d["key"] == "params.rows"));

    // The schema is not a rubber stamp: a renamed field fails it.
    let mut broken = v.clone();
    let op = broken["runs"][0]["phases"][1]["ops"][0].as_object_mut().unwrap();
    let ok = op.remove("ok").unwrap();
    op.insert("okay".into(), ok);
    assert!(!validator.is_valid(&broken));
}

#[test]
fn bad_run_arguments_say_what_to_do() {
    let (_dir, store) = lab();
    let (code, _, err) = report(&store, &["42", "--format", "md"]);
    assert_eq!(code, 2);
    assert!(err.contains("no saved run with id 42") && err.contains("casslab runs"), "{err}");
    let (code, _, err) = report(&store, &["first", "--format", "md"]);
    assert_eq!(code, 2);
    assert!(err.contains("\"first\" is not a run id"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = report(&empty.path().join("r.db"), &["latest", "--format", "json"]);
    assert_eq!(code, 2);
    assert!(err.contains("no run was saved there yet"), "{err}");
    assert!(!empty.path().join("r.db").exists(), "report created the store");
    let (code, _, err) = common::run(common::casslab().args(["report"]));
    assert_eq!(code, 2, "clap rejects a missing RUN: {err}");
    let (code, help, _) = common::run(common::casslab().args(["report", "--help"]));
    assert_eq!(code, 0);
    assert!(help.contains("--format") && help.contains("latest"), "{help}");
    // Without -o the page goes to stdout when stdout is not a terminal (here: a pipe).
    let (code, html, err) = report(&store, &["latest"]);
    assert_eq!(code, 0, "{err}");
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("run 3 · kv"));
}

#[test]
fn html_charts_end_with_the_data_name_their_phase_and_show_values_on_hover() {
    let (_dir, store) = lab();
    let out = artifacts().join("run1-wall-clock.html");
    let (code, _, err) = report(&store, &["1", "--wall-clock", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&out).unwrap();
    // load-phase charts are told from the measured run's
    assert!(html.contains("run 1 · measured run · throughput per interval") && html.contains("run 1 · load phase · throughput per interval"), "titles");
    assert!(html.contains("run 1 · load phase · insert · latency by percentile"), "a lone operation is named");
    let probes = probe_charts(&out);
    for p in &probes {
        assert_chart_works(p);
    }
    // the wall clock: run 1 started at 1_795_000_060_000 ms = 11:07:40 UTC
    let time: Vec<&Probe> = probes.iter().filter(|p| p.kind == "time").collect();
    assert!(time.len() >= 4 && time.iter().all(|p| p.x_label == "time of day (UTC)"), "wall-clock axes");
    let run = time.iter().find(|p| p.id == "r0-run-throughput").unwrap();
    assert!(run.x_ticks.iter().any(|t| t == "11:07:45"), "a tick on a round wall-clock time: {:?}", run.x_ticks);
    assert!(run.hover["x_text"].as_str().unwrap().starts_with("11:07:") || run.hover["x_text"].as_str().unwrap().starts_with("11:08:"), "{}", run.hover);
    // the time axis ends where the data ends: no tick past the last interval
    for p in &time {
        assert!(
            p.x_ticks.iter().all(|t| t.as_str() <= "11:08:05"),
            "chart {}: ticks past the data (the run's intervals end at 11:08:05): {:?}",
            p.id,
            p.x_ticks
        );
    }
}

/// Crops a PNG to `(left, top, width, height)` px and writes it to `to`.
fn crop_png(from: &Path, (left, top, width, height): (u32, u32, u32, u32), to: &Path) {
    let mut reader = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(from).unwrap())).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(
        left + width <= info.width && top + height <= info.height,
        "{:?} outside the {}x{} screenshot",
        (left, top, width, height),
        info.width,
        info.height
    );
    let stride = info.width as usize * channels;
    let mut out = Vec::with_capacity(width as usize * height as usize * channels);
    for y in top..top + height {
        let row = y as usize * stride + left as usize * channels;
        out.extend_from_slice(&buf[row..row + width as usize * channels]);
    }
    let mut enc = png::Encoder::new(std::io::BufWriter::new(std::fs::File::create(to).unwrap()), width, height);
    enc.set_color(info.color_type);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().unwrap().write_image_data(&out).unwrap();
}

#[test]
fn html_report_of_a_ramped_run_draws_the_hockey_stick_with_its_knee() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    let id = common::runs::save_ramped_run(&casslab_core::store::Store::open(&store).unwrap(), 5);
    let out = artifacts().join("ramp.html");
    let (code, _, err) = report(&store, &[&id.to_string(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("Latency against offered load") && html.contains("Knee: "), "the curve's section");
    let probes = probe_charts_at(&out, 1000);
    for p in &probes {
        assert_chart_works(p);
    }
    // the schedule's offered rate, dashed over the achieved throughput
    let throughput = probes.iter().find(|p| p.id == "r0-run-throughput").expect("a throughput chart");
    assert_eq!(throughput.legend, ["read", "offered (schedule)"]);
    assert!(throughput.series[1].points >= 20, "{:?}", throughput.series);
    let curve = probes.iter().find(|p| p.id == "r0-run-curve").expect("the hockey-stick chart");
    assert_eq!((curve.kind.as_str(), curve.legend.clone()), ("linear", vec!["p50".to_string(), "p99".to_string()]));
    assert!(curve.x_label == "achieved operations per second" && curve.y_label.starts_with("latency from intended start (ms)"), "{curve:?}");
    assert!(curve.series.iter().all(|s| s.points >= 5), "a point per level: {:?}", curve.series);
    let knee = curve.marks.iter().find(|m| m.kind == "knee").expect("the knee is marked");
    assert!(knee.label.starts_with("knee ") && knee.label.ends_with(" ops/s"), "{knee:?}");
    assert!(knee.dark > 0.3, "the knee's line is drawn across the plot: {knee:?}");
    let knee_rate: f64 = knee.label.trim_start_matches("knee ").trim_end_matches(" ops/s").parse().unwrap();
    assert!(html.contains(&format!("Knee: {knee_rate:.0} ops/s")) && knee_rate > 1000.0 && knee_rate < 4500.0, "knee at {knee_rate}");

    // its picture, cropped to the chart (docs/images/hockey-stick.png is a real run's, not this one)
    let [left, top, width, height] = curve.bounds[..] else { panic!("{:?}", curve.bounds) };
    let png = artifacts().join("ramp.png");
    let _ = std::fs::remove_file(&png);
    headless(&out, &[format!("--screenshot={}", png.display()), format!("--window-size=1000,{}", top + height + 40)]);
    let chart_png = artifacts().join("hockey-stick.png");
    crop_png(&png, (left, top, width, height), &chart_png);
    let (w, h, colored, distinct) = colorfulness(&chart_png);
    assert!(w >= 800 && h >= 380, "the chart is {w}x{h} px");
    assert!(colored > 2_000 && distinct > 100, "{colored} colored pixels, {distinct} colors: is the chart blank? see {}", chart_png.display());
    eprintln!("hockey stick: {} ({w}x{h})", chart_png.display());
}
