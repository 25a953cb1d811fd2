//! Every figure exportable, end to end. Against the real test node: one fixed-rate run with an
//! event and traced requests, scraped while it goes at its `--metrics-listen` endpoint (parsed
//! with a real Prometheus-format parser) and streaming its intervals (`--stream`); its export
//! (`show --json -`) must match `docs/run-export.schema.json` and hold the server side, the
//! events with their impact, the suspects and the traces, as must the Markdown report; a run
//! still going must not be deletable. Without a cluster (synthetic runs in a store, as
//! `casslab run` saves them): `runs` filtered by workload and tag, as JSON and CSV, `runs tag`
//! and `runs delete`, `compare --format json|csv`, `-` as stdout for file options, `--quiet`,
//! the shell completions and the man page.

mod common;

use common::runs::lab;
use common::{casslab, load_lock, node, run};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What the real run left: its store and the figures seen while it went.
struct Live {
    _dir: tempfile::TempDir,
    store: PathBuf,
    id: i64,
    /// Every scrape that parsed, in order.
    scrapes: Vec<prometheus_parse::Scrape>,
    /// The raw text of the last scrape.
    last_text: String,
    /// (code, stderr) of `runs delete ID` while the run went.
    delete_while_running: (i32, String),
    stream: String,
    stdout: String,
}

fn scrape(addr: &str) -> Option<String> {
    let mut conn = std::net::TcpStream::connect(addr).ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: casslab\r\nConnection: close\r\n\r\n").ok()?;
    let mut reply = String::new();
    conn.read_to_string(&mut reply).ok()?;
    let (head, body) = reply.split_once("\r\n\r\n")?;
    assert!(head.starts_with("HTTP/1.1 200 OK") && head.contains("Content-Type: text/plain; version=0.0.4"), "{head}");
    Some(body.to_string())
}

fn counter(s: &prometheus_parse::Scrape, name: &str, phase: &str, op: &str) -> Option<f64> {
    s.samples.iter().find(|x| x.metric == name && x.labels.get("phase") == Some(phase) && x.labels.get("op") == Some(op)).and_then(|x| match x.value {
        prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => Some(v),
        _ => None,
    })
}

fn live() -> &'static Live {
    static LIVE: OnceLock<Live> = OnceLock::new();
    LIVE.get_or_init(|| {
        node();
        let _guard = load_lock();
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("results.db");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        let (out_path, err_path, stream_path) = (dir.path().join("run.out"), dir.path().join("run.err"), dir.path().join("intervals.jsonl"));
        // no --hosts: the local test node, so the GC log, CPU and traces are there too
        let mut child = casslab()
            .args(["run", "kv", "-P", "rows=2000", "-P", "keyspace=casslab_exports", "--rate", "300", "--duration", "8s", "--warmup", "1s"])
            .args(["--event", "3s flush", "--trace-slowest", "2", "--trace-probability", "0.2"])
            .args(["--metrics-listen", &addr, "--stream", stream_path.to_str().unwrap(), "--store", store.to_str().unwrap()])
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(std::fs::File::create(&err_path).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(240);
        let mut scrapes: Vec<prometheus_parse::Scrape> = Vec::new();
        let mut last_text = String::new();
        let mut delete_while_running = None;
        let mut id = None;
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the run did not end:\n{}", std::fs::read_to_string(&err_path).unwrap_or_default());
            std::thread::sleep(Duration::from_millis(700));
            let Some(text) = scrape(&addr) else { continue };
            let parsed = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("a Prometheus text exposition");
            let seen_run = counter(&parsed, "casslab_operations_total", "run", "read").unwrap_or(0.0);
            if seen_run > 0.0 {
                if id.is_none() {
                    id = parsed.samples.iter().find_map(|x| x.labels.get("run")).and_then(|r| r.parse::<i64>().ok());
                }
                if let (Some(run_id), None) = (id, &delete_while_running) {
                    let (code, _, err) = run(casslab().args(["runs", "delete", &run_id.to_string(), "--store", store.to_str().unwrap()]));
                    delete_while_running = Some((code, err));
                }
                last_text = text;
                scrapes.push(parsed);
            }
        }
        let status = child.wait().unwrap();
        let stderr = std::fs::read_to_string(&err_path).unwrap();
        assert!(status.success(), "the run failed:\n{stderr}");
        Live {
            store,
            id: id.expect("a scrape during the run phase named the run"),
            scrapes,
            last_text,
            delete_while_running: delete_while_running.expect("the run was seen running"),
            stream: std::fs::read_to_string(&stream_path).unwrap(),
            stdout: std::fs::read_to_string(&out_path).unwrap(),
            _dir: dir,
        }
    })
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn validator(schema: &str) -> jsonschema::Validator {
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(repo(schema)).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("the schema is valid")
}

fn errors(v: &jsonschema::Validator, json: &serde_json::Value) -> Vec<String> {
    v.iter_errors(json).map(|e| format!("{e} at {}", e.instance_path())).collect()
}

#[test]
fn a_running_test_is_scraped_by_prometheus_and_streams_its_intervals() {
    let l = live();
    assert!(l.scrapes.len() >= 2, "scraped {} times during the run phase", l.scrapes.len());
    let reads: Vec<f64> = l.scrapes.iter().filter_map(|s| counter(s, "casslab_operations_total", "run", "read")).collect();
    assert!(reads.windows(2).all(|w| w[0] <= w[1]) && reads[reads.len() - 1] > reads[0], "a counter that grows: {reads:?}");
    // the last interval of a run can be a few milliseconds long with no read in it: take the last scrape whose interval had reads
    let last = l
        .scrapes
        .iter()
        .rev()
        .find(|s| counter(s, "casslab_throughput_ops_per_second", "run", "read").is_some_and(|v| v > 0.0))
        .unwrap_or_else(|| panic!("no scrape showed reads per second above 0; the last one:\n{}", l.last_text));
    let latency = last
        .samples
        .iter()
        .find(|x| x.metric == "casslab_latency_seconds" && x.labels.get("op") == Some("read") && x.labels.get("phase") == Some("run"))
        .expect("a latency summary");
    let prometheus_parse::Value::Summary(qs) = &latency.value else { panic!("not a summary: {:?}", latency.value) };
    let q = |want: f64| qs.iter().find(|c| (c.quantile - want).abs() < 1e-9).map(|c| c.count).unwrap();
    assert!(q(0.5) > 0.0 && q(0.5) <= q(0.99) && q(0.99) <= q(1.0) && q(1.0) < 10.0, "quantiles in seconds: {qs:?}");
    assert!(last.samples.iter().any(|x| x.metric == "casslab_run_info" && x.labels.get("workload") == Some("kv")), "{}", l.last_text);
    assert!(l.last_text.contains("# TYPE casslab_errors_total counter"));

    let (code, err) = &l.delete_while_running;
    assert_eq!(*code, 2, "deleting a running run is refused: {err}");
    assert!(err.contains("still running"), "{err}");

    // one JSON object per interval, with wall-clock times, in order
    let lines: Vec<serde_json::Value> = l.stream.lines().map(|x| serde_json::from_str(x).unwrap()).collect();
    assert!(lines.iter().filter(|v| v["phase"] == "run").count() >= 6, "{}", l.stream);
    assert!(lines.iter().all(|v| v["run"] == l.id && v["time"].as_str().is_some_and(|t| t.ends_with('Z'))));
    let ends: Vec<i64> = lines.iter().map(|v| v["end_unix_ms"].as_i64().unwrap()).collect();
    assert!(ends.windows(2).all(|w| w[0] < w[1]), "{ends:?}");
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    assert!(ends[0] > now_ms - 3_600_000 && ends[ends.len() - 1] <= now_ms, "wall-clock times: {ends:?}");
    assert!(lines.iter().any(|v| v["ops"].as_array().unwrap().iter().any(|o| o["op"] == "read" && o["latency"]["p99_ns"].as_u64() > Some(0))));
    assert!(l.stdout.contains("read"), "the summary still goes to stdout: {}", l.stdout);
}

#[test]
fn the_export_matches_its_schema_with_server_side_events_suspects_and_traces() {
    let l = live();
    let (code, out, err) = run(casslab().args(["show", &l.id.to_string(), "--json", "-", "--store", l.store.to_str().unwrap(), "-q"]));
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("wrote"), "--quiet: {err}");
    let start = out.find("\n{\n").map(|i| i + 1).expect("the JSON after the summary");
    let v: serde_json::Value = serde_json::from_str(&out[start..]).unwrap();
    let schema = validator("docs/run-export.schema.json");
    let errs = errors(&schema, &v);
    assert!(errs.is_empty(), "the export does not match docs/run-export.schema.json:\n{}", errs.join("\n"));
    // --format json prints the same export alone
    let (code, alone, err) = run(casslab().args(["show", &l.id.to_string(), "--format", "json", "--store", l.store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let v2: serde_json::Value = serde_json::from_str(&alone).unwrap();
    assert_eq!(v2["intervals"], v["intervals"]);

    let samples = v["server_samples"].as_array().unwrap();
    assert!(samples.iter().any(|s| s["metric"] == "cpu_pct" && s["node"] != "client"), "a node's CPU series");
    let event = &v["events"][0];
    assert_eq!(event["record"]["action"], "flush");
    assert!(event["impact"]["baseline_ops_per_s"].as_f64().is_some_and(|x| x > 0.0), "{event}");
    assert!(v["suspects"].is_array());
    assert!(v["traces"].as_array().is_some_and(|t| !t.is_empty()), "traced requests: {}", v["traces"]);
    // not a rubber stamp
    let mut broken = v.clone();
    broken["suspects"] = serde_json::json!([{ "op": "read" }]);
    assert!(!schema.is_valid(&broken));

    let (code, md, err) = run(casslab().args(["report", &l.id.to_string(), "--format", "md", "--store", l.store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    assert!(md.contains("**Events**") && md.contains("flush"), "{md}");
    assert!(md.contains("**Server side**") && md.contains("suspects (intervals whose p99"), "{md}");
    assert!(md.contains("**Slowest traced requests**"), "{md}");

    let (code, json, err) = run(casslab().args(["report", &l.id.to_string(), "-o", "-", "--format", "json", "--store", l.store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let errs = errors(&validator("docs/run-report.schema.json"), &r);
    assert!(errs.is_empty(), "the report does not match docs/run-report.schema.json:\n{}", errs.join("\n"));
    assert_eq!(r["runs"][0]["events"][0]["record"]["action"], "flush");
    assert!(!r["runs"][0]["server_samples"].as_array().unwrap().is_empty());

    let (code, log, err) = run(casslab().args(["show", &l.id.to_string(), "--format", "csv", "--hdr-log", "-", "--store", l.store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    assert!(log.starts_with("index,phase,start_ms,end_ms,end_unix_ms,op,"), "{log}");
    assert!(log.contains("\n#[Histogram log format version 1.3]\n") && log.contains("\nTag=run.read,"), "the HDR log on stdout too");
}

fn runs_cmd(store: &Path, args: &[&str]) -> (i32, String, String) {
    run(casslab().arg("runs").args(args).arg("--store").arg(store))
}

#[test]
fn runs_are_filtered_listed_as_data_tagged_and_deleted() {
    let (_dir, store) = lab();
    let (code, out, err) = runs_cmd(&store, &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect::<Vec<_>>(), [3, 2, 1]);

    let (code, _, err) = run(casslab().args(["runs", "tag", "2", "variant=a", "nightly", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    run(casslab().args(["runs", "tag", "1", "variant=b", "--store", store.to_str().unwrap()]));
    run(casslab().args(["runs", "tag", "1", "variant=a", "--store", store.to_str().unwrap()]));
    let ids = |args: &[&str]| -> Vec<String> {
        let (code, out, err) = runs_cmd(&store, &[&["--format", "csv"], args].concat());
        assert_eq!(code, 0, "{err}");
        let mut lines = out.lines();
        assert!(lines.next().unwrap().starts_with("id,started_at_ms,"));
        lines.map(|l| l.split(',').next().unwrap().to_string()).collect()
    };
    assert_eq!(ids(&["--tag", "variant=a"]), ["2", "1"], "run 1's variant=b was replaced");
    assert_eq!(ids(&["--tag", "variant=a", "--tag", "nightly"]), ["2"]);
    assert_eq!(ids(&["--tag", "variant"]), ["2", "1"], "a bare key matches any value");
    assert_eq!(ids(&["--workload", "kv", "--limit", "2"]), ["3", "2"]);
    assert!(ids(&["--workload", "ycsb-a"]).is_empty());
    run(casslab().args(["runs", "tag", "2", "--remove", "nightly", "--store", store.to_str().unwrap()]));
    assert!(ids(&["--tag", "nightly"]).is_empty());

    // run 3 was begun by this test process, which is alive: it is still running
    let (code, _, err) = run(casslab().args(["runs", "delete", "1", "3", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("run 3 is still running"), "{err}");
    assert_eq!(ids(&[]), ["3", "2", "1"], "nothing deleted when one is refused");
    let (code, _, err) = run(casslab().args(["runs", "delete", "1", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(ids(&[]), ["3", "2"]);
    let (code, out, _) = run(casslab().args(["show", "1", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 2, "run 1 is gone: {out}");
    let (code, _, err) = run(casslab().args(["runs", "delete", "7", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no saved run with id 7"), "{err}");
}

#[test]
fn comparisons_come_as_json_and_csv() {
    let (_dir, store) = lab();
    let (code, out, err) = run(casslab().args(["compare", "1", "2", "--format", "json", "--resamples", "500", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["format"], "casslab-comparison");
    assert_eq!(v["sides"].as_array().unwrap().len(), 2);
    let figures = v["figures"].as_array().unwrap();
    let p99 = figures.iter().find(|f| f["side"] == "run 2" && f["op"] == "read" && f["metric"] == "p99_ns").expect("run 2's read p99");
    assert!(p99["value"].as_f64().unwrap() > 0.0 && p99["change"].is_number() && p99["outcome"].is_string(), "{p99}");
    assert!(figures.iter().any(|f| f["side"] == "run 1" && f["outcome"].is_null()), "the baseline has no change");

    let (code, csv, err) = run(casslab().args(["compare", "1", "2", "--format", "csv", "--resamples", "500", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let mut lines = csv.lines();
    assert_eq!(lines.next().unwrap(), "side,op,metric,value,lo,hi,change,change_lo,change_hi,outcome");
    assert_eq!(lines.count(), figures.len());
}

#[test]
fn completions_and_the_man_page_come_from_the_cli_definition() {
    let (code, bash, err) = run(casslab().args(["completions", "bash"]));
    assert_eq!(code, 0, "{err}");
    assert!(bash.contains("_casslab()") && bash.contains("--metrics-listen") && bash.contains("delete"), "bash completion");
    let (code, zsh, _) = run(casslab().args(["completions", "zsh"]));
    assert_eq!(code, 0);
    assert!(zsh.starts_with("#compdef casslab"), "{}", &zsh[..60.min(zsh.len())]);
    let (code, man, err) = run(casslab().args(["man"]));
    assert_eq!(code, 0, "{err}");
    assert!(man.contains(".TH casslab 1") && man.contains(".SH SUBCOMMANDS") && man.contains("CASSLAB_STORE"), "{man}");
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(casslab().args(["man", "--dir", dir.path().to_str().unwrap()]));
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(dir.path().join("casslab-run.1")).unwrap();
    assert!(page.contains("metrics\\-listen") && page.contains("EXAMPLES"), "{page}");
}
