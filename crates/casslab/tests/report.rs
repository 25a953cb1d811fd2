//! `casslab report` end to end, without a cluster: synthetic runs are written into a temporary
//! store through casslab-core's `Store` (as `casslab run` writes them: `common::runs`), the real binary makes
//! the reports, and the HTML is rendered in headless Chromium to check that every chart drew
//! (size, drawn series, ticks) and that a screenshot is not blank. The JSON is validated
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

/// Measures every chart after layout and writes the figures into `data-probe` attributes.
const PROBE: &str = r#"<script>
for (const f of document.querySelectorAll('figure.chart')) {
  const svg = f.querySelector('svg');
  const r = svg.getBoundingClientRect();
  const plot = svg.querySelector('rect.plot').getBBox();
  let drawn = 0, outside = 0;
  for (const e of svg.querySelectorAll('path.series, circle.series')) {
    const b = e.getBBox();
    if (b.width > 0 || b.height > 0 || e.tagName === 'circle') drawn++;
    if (b.x < plot.x - 3 || b.y < plot.y - 3 || b.x + b.width > plot.x + plot.width + 3 || b.y + b.height > plot.y + plot.height + 3) outside++;
  }
  f.setAttribute('data-probe', [Math.round(r.width), Math.round(r.height), drawn, outside,
    svg.querySelectorAll('text.tick').length, svg.querySelectorAll('text.axis-label').length].join(' '));
}
</script></body>"#;

/// One chart as measured in the browser.
#[derive(Debug)]
struct Probe {
    id: String,
    width: u32,
    height: u32,
    drawn: u32,
    outside: u32,
    ticks: u32,
    axis_labels: u32,
}

fn probe_charts(html_path: &Path) -> Vec<Probe> {
    let html = std::fs::read_to_string(html_path).unwrap();
    assert_eq!(html.matches("</body>").count(), 1);
    let probed = html_path.with_extension("probe.html");
    std::fs::write(&probed, html.replace("</body>", PROBE)).unwrap();
    let dom = headless(&probed, &["--window-size=1280,900".into(), "--dump-dom".into()]);
    let mut out = Vec::new();
    for fig in dom.split("<figure class=\"chart\"").skip(1) {
        let attr = |name: &str| fig.split(&format!("{name}=\"")).nth(1).and_then(|r| r.split('"').next()).map(str::to_string);
        let id = attr("data-chart").expect("every chart has an id");
        let p: Vec<u32> =
            attr("data-probe").unwrap_or_else(|| panic!("chart {id} was not measured: did the page load?")).split(' ').map(|n| n.parse().unwrap()).collect();
        out.push(Probe { id, width: p[0], height: p[1], drawn: p[2], outside: p[3], ticks: p[4], axis_labels: p[5] });
    }
    out
}

fn assert_drawn(probes: &[Probe], expected: &[(&str, u32)]) {
    let ids: Vec<&str> = probes.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, expected.iter().map(|e| e.0).collect::<Vec<_>>(), "charts on the page");
    for (p, (_, series)) in probes.iter().zip(expected) {
        assert!(p.width >= 400 && p.height >= 150, "chart {} is {}x{} px", p.id, p.width, p.height);
        assert_eq!(p.drawn, *series, "chart {}: drawn series", p.id);
        assert_eq!(p.outside, 0, "chart {}: series reaching outside the plot area", p.id);
        assert!(p.ticks >= 5 && p.axis_labels == 2, "chart {}: {} ticks, {} axis labels", p.id, p.ticks, p.axis_labels);
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
    assert!(!html.contains("<script") && !html.contains("https://"), "the page must be self-contained");

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
    assert!(compare.iter().all(|p| p.drawn == 3), "three runs in each: {compare:?}");
    for p in &probes {
        assert!(p.width >= 400 && p.height >= 150 && p.drawn >= 1 && p.outside == 0, "{p:?}");
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
    // the wall clock: run 1 started at 1_795_000_060_000 ms = 11:07:40 UTC
    assert!(html.contains("time of day (UTC)") && !html.contains("time since the run started"), "wall-clock axes");
    assert!(html.contains(">11:07:45</text>"), "a tick on a round wall-clock time");
    // hover: each x a strip whose tooltip gives its time and every series' value there
    assert!(html.contains("<rect class=\"hover\""), "no hover strips");
    assert!(
        html.contains("<title>11:07:45.5\nread: ") || html.contains("<title>11:07:45.5&#10;read: ") || html.contains("11:07:45.5\nread: "),
        "a tooltip with the time and values"
    );
    // the time axis ends where the data ends: no tick past the last interval
    let probes = probe_charts(&out);
    assert!(probes.iter().all(|p| p.drawn >= 1 && p.outside == 0), "{probes:?}");
    let time_ticks: Vec<&str> = html
        .split("<text class=\"tick\"")
        .skip(1)
        .filter_map(|t| t.split('>').nth(1)?.split('<').next())
        .filter(|t| t.len() == 8 && t.as_bytes()[2] == b':')
        .collect();
    assert!(!time_ticks.is_empty() && time_ticks.iter().all(|t| *t <= "11:08:05"), "ticks past the data (the run's intervals end at 11:08:05): {time_ticks:?}");
}
