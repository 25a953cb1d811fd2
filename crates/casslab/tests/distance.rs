//! End-to-end tests of distance and network faults, on a real local cluster of two data centers
//! of one node each (dc1: 127.0.2.21, dc2: .22 — `CASSLAB_TEST_DC_BASE` moves them), started
//! through `casslab local up` with casslab's relay in front of both, under its own home, and
//! stopped and wiped at the end by a drop guard. What they check, measured against real
//! Cassandra: the round-trip time between the data centers is real (EACH_QUORUM and QUORUM
//! writes from dc1 take ≈ 8 ms more at `--rtt dc1:dc2=8ms` than at 0 ms, ± 1 ms at the median,
//! while LOCAL_QUORUM stays within 1 ms), a client 4 ms from dc1 sees ≈ 4 ms more on every
//! request, distances change without a node restart; a run's partition fails the writes that
//! need the other data center (and only those) until its heal, the client cut off from dc1
//! fails every request, a slow link slows what crosses it; a run killed mid-partition leaves
//! its fault in force only until the next `local up`, a killed relay comes back with `local
//! up`, and `local down` leaves no process and no listening address behind. The checks of
//! network event specs before anything starts need no cluster.

mod common;
use common::{casslab, casslab_at, cluster_home, load_lock, run, store_arg, summary_row, summary_rows, temp_store, WipeOnDrop, QUICK_JIT};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WORKLOAD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cross-dc.yaml");

/// The first node's address: $CASSLAB_TEST_DC_BASE, else 127.0.2.21 (the second node gets the
/// next address).
fn base() -> Ipv4Addr {
    std::env::var("CASSLAB_TEST_DC_BASE").ok().and_then(|a| a.parse().ok()).unwrap_or(Ipv4Addr::new(127, 0, 2, 21))
}

fn addr(i: u8) -> Ipv4Addr {
    let [a, b, c, d] = base().octets();
    Ipv4Addr::new(a, b, c, d + i)
}

/// Where the relay takes node `i`'s peers (`127.(x+64).y.z`) and clients (`127.(x+128).y.z`).
fn relay_addrs(i: u8) -> (Ipv4Addr, Ipv4Addr) {
    let [a, b, c, d] = addr(i).octets();
    (Ipv4Addr::new(a, b + 64, c, d), Ipv4Addr::new(a, b + 128, c, d))
}

fn home() -> PathBuf {
    cluster_home("dc-home")
}

/// A casslab command aimed at the cluster's home.
fn cl() -> Command {
    casslab_at(&home())
}

/// Runs the cross-dc workload at a fixed rate and returns its printed summary.
fn cross_dc(store: &Path, extra: &[&str]) -> String {
    let (code, out, err) =
        run(cl().args(["run", WORKLOAD, "--rate", "100", "--no-lint", "--no-server-metrics", "--concurrency", "512"]).args(extra).args(store_arg(store)));
    assert_eq!(code, 0, "run failed:\n{out}\n{err}");
    out
}

/// The median latency (from the intended start) of each operation of a summary, in ms.
fn p50s(summary: &str) -> [f64; 3] {
    let rows = summary_rows(summary);
    ["local", "quorum", "each"].map(|op| summary_row(&rows, op)[3].parse::<f64>().unwrap_or_else(|_| panic!("p50 of {op}:\n{summary}")))
}

/// Whether something listens on `ip:port`.
fn listening(ip: Ipv4Addr, port: u16) -> bool {
    std::net::TcpStream::connect_timeout(&(ip, port).into(), Duration::from_millis(500)).is_ok()
}

/// Pids of the processes whose command line names this home (nodes and relay).
fn our_processes() -> Vec<u32> {
    let home = home().to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(&home)))
        .collect()
}

/// (action, status, start_ms, end_ms, errors during its impact) of the latest run's events.
fn events_of(store: &Path) -> Vec<(String, String, u64, u64, u64)> {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut stmt =
        db.prepare("SELECT action, status, start_ms, end_ms, impact_json FROM run_events WHERE run_id = (SELECT max(id) FROM runs) ORDER BY seq").unwrap();
    stmt.query_map([], |r| {
        let impact: Option<String> = r.get(4)?;
        let errors = impact
            .and_then(|j| serde_json::from_str::<serde_json::Value>(&j).ok())
            .and_then(|v| v["errors"].as_object().map(|m| m.values().filter_map(|n| n.as_u64()).sum()))
            .unwrap_or(0);
        Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as u64, r.get::<_, i64>(3)? as u64, errors))
    })
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

/// One interval of one operation: when, successes, failures, median latency in ms.
struct Interval {
    start_ms: u64,
    end_ms: u64,
    op: String,
    ok: u64,
    errors: u64,
    p50_ms: f64,
}

/// The latest run's intervals of the run phase.
fn intervals_of(store: &Path) -> Vec<Interval> {
    let (code, csv, err) = run(cl().args(["show", "latest", "--format", "csv"]).args(store_arg(store)));
    assert_eq!(code, 0, "{err}");
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[1] != "load")
        .map(|f| Interval {
            start_ms: f[2].parse().unwrap(),
            end_ms: f[3].parse().unwrap(),
            op: f[5].to_string(),
            ok: f[6].parse().unwrap(),
            errors: f[7].parse().unwrap(),
            p50_ms: f[10].parse::<f64>().unwrap() / 1e6,
        })
        .collect()
}

/// `op`'s intervals that lie wholly within [from_ms, to_ms).
fn within<'a>(intervals: &'a [Interval], op: &'a str, from_ms: u64, to_ms: u64) -> impl Iterator<Item = &'a Interval> {
    intervals.iter().filter(move |i| i.op == op && i.start_ms >= from_ms && i.end_ms <= to_ms)
}

/// `op`'s intervals from `from_ms` to `to_ms` as (start, end, ok, errors), for a failure's message.
fn shown(intervals: &[Interval], op: &str, from_ms: u64, to_ms: u64) -> String {
    let near = intervals.iter().filter(|i| i.op == op && i.end_ms > from_ms && i.start_ms < to_ms);
    let rows: Vec<String> = near.map(|i| format!("{}..{} ms: {} ok, {} failed", i.start_ms, i.end_ms, i.ok, i.errors)).collect();
    format!("{op}'s intervals from {from_ms} to {to_ms} ms: {}", rows.join("; "))
}

/// Successes and failures of `op` within [from_ms, to_ms).
fn outcomes(intervals: &[Interval], op: &str, from_ms: u64, to_ms: u64) -> (u64, u64) {
    within(intervals, op, from_ms, to_ms).fold((0, 0), |(ok, err), i| (ok + i.ok, err + i.errors))
}

/// The median of `op`'s interval medians within [from_ms, to_ms), in ms.
fn median_p50(intervals: &[Interval], op: &str, from_ms: u64, to_ms: u64) -> f64 {
    let mut v: Vec<f64> = within(intervals, op, from_ms, to_ms).filter(|i| i.ok > 0).map(|i| i.p50_ms).collect();
    v.sort_by(f64::total_cmp);
    assert!(!v.is_empty(), "no interval of {op} in {from_ms}..{to_ms}");
    v[v.len() / 2]
}

/// What a round added to the p50s of (local, quorum, each) in ms: at 8 ms between the data
/// centers, and with the client 4 ms from dc1.
type Added = ([f64; 3], [f64; 3]);

/// Rounds of the three measurements; the median of each figure counts.
const ROUNDS: usize = 3;

#[test]
fn distances_are_real_and_network_faults_act_inside_a_run() {
    let _load = load_lock();
    let _guard = WipeOnDrop(home());
    let (n1, n2) = (addr(0).to_string(), addr(1).to_string());
    let ((p1, c1), (p2, c2)) = (relay_addrs(0), relay_addrs(1));

    // the home is this test's own: what an interrupted earlier run left there goes first
    let (code, _, err) = run(cl().args(["local", "down", "--wipe"]));
    assert_eq!(code, 0, "{err}");

    // --- a relayed cluster of two data centers, 0 ms apart
    let started = Instant::now();
    let (code, out, err) = run(cl().args(["local", "up", "--dcs", "dc1:1,dc2:1", "--base-address", &n1, "--heap", "512M", "--rtt", "dc1:dc2=0ms", QUICK_JIT]));
    assert_eq!(code, 0, "local up:\n{out}\n{err}");
    eprintln!("two data centers up in {:.1} s", started.elapsed().as_secs_f64());
    assert!(err.contains("relay (pid ") && err.contains("every node sees the other 1 as up (UN)"), "{err}");
    assert_eq!(out.trim(), format!("{c1}:9042,{c2}:9042"), "clients reach the nodes through the relay");
    let (code, status, err) = run(cl().args(["local", "status"]));
    assert_eq!(code, 0, "status:\n{status}\n{err}");
    for (node, dc) in [(&n1, "dc1"), (&n2, "dc2")] {
        let line = status.lines().find(|l| l.contains(&format!("{node}:9042"))).unwrap_or_else(|| panic!("{node} missing:\n{status}"));
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!((cols[2], cols[3], cols[5], cols[6]), (dc, "UN", "running", "up"), "{line}");
    }
    assert!(status.contains("distances: dc1:dc2 0ms") && status.contains("faults in force: none"), "{status}");
    assert!(status.contains(&format!("node2 {p2}/{c2}")), "{status}");
    assert!(listening(p1, 7000) && listening(c2, 9042), "the relay listens in front of the nodes");

    // --- the distance is real: 0 ms, 8 ms between the data centers, a client 4 ms from dc1, in
    // alternating rounds (the median round counts: this machine is shared and noisy)
    let (_dir, store) = temp_store();
    cross_dc(&store, &["--duration", "15s"]); // loads, and warms the nodes up (not measured)
    let mut rounds: Vec<Added> = Vec::new();
    for round in 0..ROUNDS {
        let at = |rtt: &str, client: &str| {
            let (code, _, err) = run(cl().args(["local", "up", "--rtt", &format!("dc1:dc2={rtt}"), "--client-rtt", &format!("dc1={client}")]));
            assert_eq!(code, 0, "{err}");
            if round == 0 && rtt == "8ms" {
                assert!(err.contains("distances now: dc1:dc2 8ms") && err.contains("node1 already running"), "no restart: {err}");
            }
            p50s(&cross_dc(&store, &["--duration", "8s", "--warmup", "1s"]))
        };
        let (at_0, at_8, client_4) = (at("0ms", "0ms"), at("8ms", "0ms"), at("0ms", "4ms"));
        eprintln!("round {round}: p50 (local, quorum, each) in ms: 0 ms {at_0:?}, dc1:dc2 8 ms {at_8:?}, client 4 ms from dc1 {client_4:?}");
        let added = |b: [f64; 3]| [b[0] - at_0[0], b[1] - at_0[1], b[2] - at_0[2]];
        rounds.push((added(at_8), added(client_4)));
    }
    let median = |f: &dyn Fn(&Added) -> f64| {
        let mut v: Vec<f64> = rounds.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[ROUNDS / 2]
    };
    let rtt = [median(&|r| r.0[0]), median(&|r| r.0[1]), median(&|r| r.0[2])];
    let client = [median(&|r| r.1[0]), median(&|r| r.1[1]), median(&|r| r.1[2])];
    eprintln!("added p50 (local, quorum, each), median of {ROUNDS} rounds: dc1:dc2 8 ms {rtt:.2?}, client 4 ms from dc1 {client:.2?}");
    assert!(rtt[0].abs() <= 1.0, "LOCAL_QUORUM stays near its 0 ms figure: {rtt:?} ({rounds:?})");
    assert!((rtt[1] - 8.0).abs() <= 1.0 && (rtt[2] - 8.0).abs() <= 1.0, "QUORUM and EACH_QUORUM take the 8 ms round trip: {rtt:?} ({rounds:?})");
    assert!(client.iter().all(|d| (d - 4.0).abs() <= 1.0), "every request takes the client's 4 ms: {client:?} ({rounds:?})");
    // the run records the distances it ran with
    let (code, json, err) = run(cl().args(["show", "latest", "--format", "json"]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let server = &json["config"]["server"];
    assert_eq!((server["rtt"]["dc1:dc2"].as_str(), server["client_rtt"]["dc1"].as_str()), (Some("0ms"), Some("4ms")), "{server}");

    // --- faults inside a run: a partition, the client cut off from dc1, a slow node2 (requests
    // time out after 2 s at the client)
    let (code, _, err) = run(cl().args(["local", "up", "--client-rtt", "dc1=0ms"]));
    assert_eq!(code, 0, "{err}");
    // (each window the assertions read holds at least two whole 1 s intervals, whatever the
    // few milliseconds by which an event's time and an interval's edge differ)
    let events = ["6s slow node2 20ms", "12s heal", "16s partition dc1|dc2", "24s heal", "30s client-loses dc1", "36s heal"];
    let mut args: Vec<&str> = vec!["--duration", "40s", "--request-timeout", "2s"];
    for e in &events {
        args.extend(["--event", e]);
    }
    let out = cross_dc(&store, &args);
    eprintln!("faults:\n{out}");
    let evs = events_of(&store);
    let got: Vec<(&str, &str)> = evs.iter().map(|e| (e.0.as_str(), e.1.as_str())).collect();
    assert_eq!(got, [("slow", "ok"), ("heal", "ok"), ("partition", "ok"), ("heal", "ok"), ("client-loses", "ok"), ("heal", "ok")]);
    assert!(out.contains("partition dc1|dc2") && out.contains("client-loses dc1"), "the impact table names them:\n{out}");
    let iv = intervals_of(&store);
    // a slow node2: what crosses to dc2 takes the 20 ms more, what stays in dc1 does not
    let before = median_p50(&iv, "each", 1_000, evs[0].2);
    let during = median_p50(&iv, "each", evs[0].3 + 1_000, evs[1].2);
    assert!(during - before >= 15.0, "EACH_QUORUM p50 {before:.1} ms before node2 turned slow, {during:.1} ms after");
    // the writes that need dc2 fail while it is cut off; LOCAL_QUORUM in dc1 does not
    let (partition, heal) = (evs[2].2, evs[3].3);
    assert!(evs[2].4 > 0, "the partition's impact counts errors: {evs:?}");
    let (ok, failed) = outcomes(&iv, "each", partition + 2_000, heal);
    assert!(failed > 0 && ok == 0, "EACH_QUORUM during the partition: {ok} ok, {failed} failed; {}", shown(&iv, "each", partition, heal));
    let (ok, failed) = outcomes(&iv, "local", partition + 1_000, heal);
    assert!(ok > 0 && failed == 0, "LOCAL_QUORUM during the partition: {ok} ok, {failed} failed; {}", shown(&iv, "local", partition, heal));
    let (ok, failed) = outcomes(&iv, "each", heal + 2_000, evs[4].2);
    assert!(ok > 0 && failed == 0, "EACH_QUORUM after the heal: {ok} ok, {failed} failed; {}", shown(&iv, "each", heal, evs[4].2));
    // the client cut off from dc1: what it sends there times out
    let (ok, failed) = outcomes(&iv, "local", evs[4].2 + 3_000, evs[5].2);
    assert!(failed > 0 && ok == 0, "LOCAL_QUORUM with dc1 out of the client's reach: {ok} ok, {failed} failed; {}", shown(&iv, "local", evs[4].2, evs[5].2));
    let (_, status, _) = run(cl().args(["local", "status"]));
    assert!(status.contains("faults in force: none"), "{status}");

    // --- a run killed mid-partition leaves the fault only until the next `local up`
    let (dir2, store2) = temp_store();
    let said = dir2.path().join("stderr");
    let mut child = cl()
        .args(["run", WORKLOAD, "--rate", "50", "--no-lint", "--no-server-metrics", "--duration", "60s", "--event", "1s partition dc1|dc2"])
        .args(store_arg(&store2))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&said).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (_, status, _) = run(cl().args(["local", "status"]));
        if status.contains("faults in force: partition dc1|dc2") {
            break;
        }
        let ended = child.try_wait().unwrap();
        assert!(
            Instant::now() < deadline && ended.is_none(),
            "the partition never came into force ({ended:?}):\n{status}\n{}",
            std::fs::read_to_string(&said).unwrap()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // SAFETY: kill(2) on the pid of the child this test started
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    child.wait().unwrap();
    let (_, status, _) = run(cl().args(["local", "status"]));
    assert!(status.contains("faults in force: partition dc1|dc2"), "the relay keeps the fault of the killed run:\n{status}");
    let (code, _, err) = run(cl().args(["local", "up"]));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("healed the network faults an ended run left in force: partition dc1|dc2"), "{err}");
    let (_, status, _) = run(cl().args(["local", "status"]));
    assert!(status.contains("faults in force: none"), "{status}");

    // --- a relay that dies is missed by `status` and brought back by `local up`
    let relay_pid: i32 = std::fs::read_to_string(home().join("relay/pid")).unwrap().trim().parse().unwrap();
    // SAFETY: kill(2) on the relay this test's cluster started (its pid file)
    unsafe { libc::kill(relay_pid, libc::SIGKILL) };
    std::thread::sleep(Duration::from_millis(500));
    let (code, status, _) = run(cl().args(["local", "status"]));
    assert!(code == 3 && status.contains("relay not running"), "exit {code}:\n{status}");
    let (code, _, err) = run(cl().args(["local", "up"]));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("relay (pid "), "{err}");
    let out = cross_dc(&store, &["--duration", "5s", "--warmup", "0s"]);
    assert!(!out.contains("errors by kind"), "EACH_QUORUM works through the new relay:\n{out}");

    // --- `local down` leaves nothing behind: no node, no relay, no relay address listening
    let (code, _, err) = run(cl().args(["local", "down"]));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("relay (pid ") && err.contains(") stopped"), "{err}");
    assert_eq!(our_processes(), Vec::<u32>::new(), "processes of the home left running");
    for (ip, port) in [(p1, 7000), (p2, 7000), (c1, 9042), (c2, 9042), (addr(0), 9042), (addr(1), 7000)] {
        assert!(!listening(ip, port), "{ip}:{port} still listens");
    }
}

#[test]
fn network_events_are_checked_before_anything_starts() {
    // aimed at --hosts: casslab cannot change that network, and says how to do it there
    let (code, _, err) = run(casslab().args(["run", "kv", "--hosts", "127.0.2.59", "--event", "5s partition dc1|dc2"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("changes the network of casslab's local cluster") && err.contains("5s exec") && err.contains("iptables"), "{err}");
    assert!(!err.contains("cannot connect"), "checked before connecting: {err}");
    // a local cluster without the relay: how to start one with it
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = run(casslab().env("CASSLAB_HOME", tmp.path()).args(["run", "kv", "--event", "5s isolate node1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("runs without casslab's relay") && err.contains("--relay"), "{err}");
    // a bad spec is bad usage
    let (code, _, err) = run(casslab().env("CASSLAB_HOME", tmp.path()).args(["run", "kv", "--event", "5s partition dc1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs two sides or more"), "{err}");
    // distances are checked before anything starts
    let (code, _, err) = run(casslab().env("CASSLAB_HOME", tmp.path()).args(["local", "up", "--dcs", "dc1:1,dc2:1", "--rtt", "dc1:dc3=8ms"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("dc3, which the cluster does not have"), "{err}");
    let (code, _, err) = run(casslab().env("CASSLAB_HOME", tmp.path()).args(["local", "up", "--rtt", "dc1-dc2=8ms"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--rtt: bad distance \"dc1-dc2=8ms\""), "{err}");
}
