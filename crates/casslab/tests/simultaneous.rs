//! Experiments whose variants are measured at the same time (`design: simultaneous`), end to
//! end on the real test node: on one cluster, each block's runs start together and cover the
//! same seconds, each at its share of the rate, in keyspaces of their own, and the design is
//! said in the output, `compare --experiment` (text and JSON) and the HTML page, which draws
//! every variant's p99 on one time axis; and with every variant on a path of its own through a
//! delaying relay (`common::proxy`), a known delay on one variant's path only is found at its
//! size, while the variant on an undelayed relay beside it stays within its interval of the
//! baseline's figures.

mod common;
use common::proxy::DelayProxy;
use common::{casslab, load_lock, node, run, temp_store};
use std::path::Path;
use std::time::Duration;

/// (variant, run id, wall-clock start and end of its measured intervals in ms, block) of every
/// measured run.
fn measured(store: &Path) -> Vec<(String, i64, i64, i64, i64)> {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut q = db
        .prepare(
            "SELECT (SELECT substr(tag, 9) FROM run_tags t WHERE t.run_id = r.id AND tag LIKE 'variant=%'),
                    r.id,
                    json_extract(r.env_json, '$.clock_t0_unix_ms') + (SELECT min(start_ms) FROM intervals i WHERE i.run_id = r.id AND i.phase = 'run'),
                    json_extract(r.env_json, '$.clock_t0_unix_ms') + (SELECT max(end_ms) FROM intervals i WHERE i.run_id = r.id AND i.phase = 'run'),
                    (SELECT CAST(substr(tag, 12) AS INTEGER) FROM run_tags t WHERE t.run_id = r.id AND tag LIKE 'repetition=%')
             FROM runs r WHERE EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND tag = 'timing=simultaneous') ORDER BY r.id",
        )
        .unwrap();
    q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))).unwrap().map(|r| r.unwrap()).collect()
}

#[test]
fn variants_on_one_cluster_share_their_seconds_and_the_rate() {
    let _g = load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let file = dir.path().join("together.yaml");
    std::fs::write(
        &file,
        "name: together\nworkload: kv\ndesign: simultaneous\nrate: 600\nrepetitions: 3\nwindow: 1s\njudge: [read.p50]\n\
         params: { rows: 2000, keyspace: casslab_test_together }\nvariants:\n  a: {}\n  b: { params: { valuesize: 200 } }\n",
    )
    .unwrap();
    let page = dir.path().join("page.html");
    let (code, out, err) = run(casslab()
        .arg("experiment")
        .arg(&file)
        .args(["--duration", "3s", "--warmup", "1s", "--resamples", "300", "--concurrency", "16", "--no-lint", "--allow-invalid", "--hosts", host])
        .arg("-o")
        .arg(&page)
        .args(["--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("variants at the same time, 3 repetitions") && !err.contains("counterbalanced order"), "{err}");
    assert!(err.contains("at the same time: the 2 variants ran at the same time on one cluster, each in its own keyspace"), "{err}");
    assert!(out.contains("design: simultaneous, 3 blocks — the 2 variants ran at the same time on one cluster"), "{out}");

    // every block: one run of each, over the same seconds (their run phases started at one
    // gate, a's and b's operations interleaved a few ms apart)
    let runs = measured(&store);
    assert_eq!(runs.len(), 6, "{runs:?}");
    for block in 1..=3 {
        let mut of: Vec<&(String, i64, i64, i64, i64)> = runs.iter().filter(|r| r.4 == block).collect();
        of.sort_by(|x, y| x.0.cmp(&y.0));
        assert_eq!(of.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["a", "b"], "block {block}: {runs:?}");
        let (a, b) = (of[0], of[1]);
        // (in blocks one after the other they would be seconds apart; a busy machine wakes a
        // task some ms late, and ends the last partial interval when it gets to it)
        assert!((a.2 - b.2).abs() <= 100 && (a.3 - b.3).abs() <= 500, "block {block}: a measured {}..{} ms, b {}..{} ms", a.2, a.3, b.2, b.3);
    }
    // the cluster saw the stated 600/s: each variant ran at 300/s, in a keyspace of its own;
    // only the first polled the shared cluster
    let db = rusqlite::Connection::open(&store).unwrap();
    let configs: Vec<(String, f64, String, bool)> = db
        .prepare(
            "SELECT json_extract(config_json, '$.workload'), json_extract(config_json, '$.rate.stages[0].level'), json_extract(config_json, '$.params.keyspace'),
                    json_extract(config_json, '$.server_metrics')
             FROM runs r WHERE EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND tag = 'timing=simultaneous') ORDER BY id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    for (workload, rate, keyspace, polled) in &configs {
        assert_eq!(*rate, 300.0, "{configs:?}");
        let variant = workload.rsplit('#').next().unwrap();
        assert_eq!(keyspace, &format!("casslab_test_together_{variant}"), "{configs:?}");
        assert_eq!(*polled, variant == "a", "{configs:?}");
    }

    // judged again from the store: the same design, in text and JSON
    let compare = |format: &str| {
        let (code, out, err) = run(casslab()
            .args(["compare", "--experiment", "together", "--window", "1s", "--resamples", "300", "--allow-invalid", "--format", format])
            .args(["--store", store.to_str().unwrap()]));
        assert_eq!(code, 0, "{err}");
        out
    };
    assert!(compare("text").contains("design: simultaneous — every block the same seconds seen by each variant"));
    let json: serde_json::Value = serde_json::from_str(&compare("json")).unwrap();
    assert_eq!(json["design"], "simultaneous", "{json}");

    // the page draws each variant's p99 per interval on one time axis: a line per block each
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("read p99 per interval, every variant on one time axis"), "no timeline in the page");
    assert!(html.contains(r#"class="series" data-series="a""#) && html.contains(r#"class="series" data-series="b""#), "a line per variant");
}

#[test]
fn a_delay_on_one_variants_path_is_found_at_its_size() {
    let _g = load_lock();
    let host = node();
    let node_at: std::net::SocketAddr = host.parse().unwrap();
    // one relay per variant: a and c undelayed, b 2 ms later on every reply
    let relays: Vec<DelayProxy> = (0..3).map(|_| DelayProxy::start("127.0.0.52:0".parse().unwrap(), node_at).unwrap()).collect();
    relays[1].set_delay(Duration::from_millis(2));
    let (dir, store) = temp_store();
    let file = dir.path().join("delay.yaml");
    // the driver reaches the node it discovers at the node's address and the contact point's
    // port: that pair is translated back to the relay
    let variant = |name: &str, r: &DelayProxy| {
        let a = r.addr();
        format!("  {name}:\n    hosts: [\"{a}\"]\n    translate: {{ \"{}:{}\": \"{a}\" }}\n", node_at.ip(), a.port())
    };
    std::fs::write(
        &file,
        format!(
            "name: delay\nworkload: kv\ndesign: simultaneous\nrate: 300\nrepetitions: 6\nwindow: 1s\njudge: [read.p50]\nshared_keyspace: false\n\
             params: {{ rows: 2000, keyspace: casslab_test_delay }}\nvariants:\n{}{}{}",
            variant("a", &relays[0]),
            variant("b", &relays[1]),
            variant("c", &relays[2])
        ),
    )
    .unwrap();
    let (code, out, err) = run(casslab()
        .arg("experiment")
        .arg(&file)
        .args(["--duration", "4s", "--warmup", "1s", "--resamples", "300", "--concurrency", "16", "--no-lint", "--allow-invalid", "--hosts", host])
        .args(["--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("design: simultaneous, 6 blocks — the 3 variants ran at the same time on servers of their own"), "{out}");
    for r in &relays {
        assert!(r.connections() > 0, "every variant went through its own relay");
    }
    // b's read p50 rose by the delay: in each block, 2 ms over the p50 a had in the same
    // seconds; the change is the geometric mean of those, and its interval holds it
    let a_p50s = read_p50s_ms(&store, "a");
    let realized = (a_p50s.iter().map(|p| (1.0 + 2.0 / p).ln()).sum::<f64>() / a_p50s.len() as f64).exp() - 1.0;
    let line = out.lines().find(|l| l.trim_start().starts_with("b's read p50 is ")).unwrap_or_else(|| panic!("the delay was not found:\n{out}"));
    let (lo, hi) = interval_of(line);
    // a's figures are known to a few percent: so is the realized change
    let slack = 0.05 * realized;
    assert!(
        lo - slack <= realized && realized <= hi + slack,
        "b's change [{lo:.3}, {hi:.3}] against the realized {realized:.3} (a's read p50s {a_p50s:?} ms): {line}"
    );
}

/// The read p50 of each measured run of `variant`, in ms, in block order.
fn read_p50s_ms(store: &Path, variant: &str) -> Vec<f64> {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut q = db
        .prepare(
            "SELECT h.lat_p50_ns FROM phase_histograms h JOIN run_tags t ON t.run_id = h.run_id
             WHERE t.tag = ?1 AND h.phase = 'run' AND h.op = 'read' ORDER BY h.run_id",
        )
        .unwrap();
    let p50s: Vec<f64> = q.query_map([format!("variant={variant}")], |r| r.get::<_, i64>(0)).unwrap().map(|r| r.unwrap() as f64 / 1e6).collect();
    assert!(!p50s.is_empty(), "no runs of {variant}");
    p50s
}

/// (lo, hi) of a found change "b's read p50 is 288% higher than a's (95% CI 136%–538%)", as
/// fractions.
fn interval_of(line: &str) -> (f64, f64) {
    let ci = line.split("CI ").nth(1).unwrap_or_else(|| panic!("{line}"));
    let mut ends = ci
        .split('–')
        .map(|p| p.trim_matches(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-')).parse::<f64>().unwrap_or_else(|_| panic!("{line}")) / 100.0);
    (ends.next().unwrap(), ends.next().unwrap_or_else(|| panic!("{line}")))
}
