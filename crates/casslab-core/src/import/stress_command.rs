//! A cassandra-stress command line (`cassandra-stress user profile=p.yaml ops(insert=1,q=3)
//! n=100000 duration=5m cl=QUORUM -rate threads=64 fixed=2000/s -node a,b -pop seq=1..1M`)
//! read into a [`StressCommand`], and the matching `casslab run` command line (`n=` of a mixed
//! run → `--count`, `duration=` → `--duration`, an insert-only run → `--load-only`). What shapes the
//! data or the mix (ops, cl, -pop, -insert) goes into the imported workload; what says how to
//! run goes on the command line; the rest is named in `warnings`. Passwords are never kept.

use super::stress_dist::{parse_count, StressDist};

/// What a cassandra-stress command line asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StressCommand {
    pub profile: Option<String>,
    /// `ops(insert=1,simple1=3)`, in order.
    pub ops: Vec<(String, f64)>,
    /// `n=`: operations to run.
    pub n: Option<u64>,
    /// `duration=`, as casslab writes it (`5m`).
    pub duration: Option<String>,
    /// `cl=`: the consistency level of every operation.
    pub cl: Option<String>,
    /// `serial-cl=`: the serial consistency of conditional queries.
    pub serial_cl: Option<String>,
    pub no_warmup: bool,
    /// `truncate=once|always`.
    pub truncate: bool,
    /// `-rate threads=N`: clients, each with one request in flight.
    pub threads: Option<u64>,
    /// `-rate fixed=R/s` (true) or `throttle=R/s` (false).
    pub rate: Option<(f64, bool)>,
    /// `-node`, with `-port native=` applied.
    pub hosts: Vec<String>,
    /// `-mode user=`.
    pub user: Option<String>,
    /// `-pop seq=A..B`.
    pub pop_seq: Option<(i64, i64)>,
    /// `-pop dist=DIST`: the seeds reads (and a mixed run's inserts) draw.
    pub pop_dist: Option<StressDist>,
    /// `-insert partitions=… select-ratio=… batchtype=…`, as profile `insert:` keys.
    pub insert: Vec<(String, String)>,
    /// What is not carried over.
    pub warnings: Vec<String>,
}

impl StressCommand {
    /// Whether the mix is inserts only (cassandra-stress then walks the seeds in sequence).
    pub fn insert_only(&self) -> bool {
        !self.ops.is_empty() && self.ops.iter().all(|(o, _)| o == "insert")
    }

    /// The `--count` of a run that ends after `n=` (a mixed run without `duration=`): n counts
    /// partitions in cassandra-stress, `--count` operations, so it is n / `partitions_per_op`
    /// (the mean partitions one operation of the mix visits), as `--rate` is.
    pub fn run_count(&self, partitions_per_op: Option<f64>) -> Option<u64> {
        let n = self.n.filter(|_| !self.insert_only() && self.duration.is_none())?;
        let per_op = partitions_per_op.filter(|p| *p > 0.0).unwrap_or(1.0);
        Some(((n as f64 / per_op).round() as u64).max(1))
    }
}

/// Reads a command line (the words as a shell would split them; `\(` and quotes are tolerated).
pub fn parse_command(line: &str) -> Result<StressCommand, String> {
    let cleaned = line.replace("\\(", "(").replace("\\)", ")").replace(['\'', '"'], "");
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let mut c = StressCommand::default();
    let mut i = 0;
    if words.first().is_some_and(|w| w.ends_with("cassandra-stress")) {
        i += 1;
    }
    match words.get(i) {
        Some(&"user") => i += 1,
        Some(w) if !w.starts_with('-') && !w.contains('=') && !w.starts_with("ops(") => {
            return Err(format!("\"{w}\" is not the user command: only `cassandra-stress user profile=… ops(…)` command lines are translated (write, read and mixed use cassandra-stress's own schema)"));
        }
        _ => {}
    }
    let mut group = "";
    while i < words.len() {
        let w = words[i];
        i += 1;
        if let Some(g) = w.strip_prefix('-') {
            group = match g.to_ascii_lowercase().as_str() {
                "rate" => "rate",
                "node" => "node",
                "port" => "port",
                "mode" => "mode",
                "pop" => "pop",
                "insert" => "insert",
                "schema" => "schema",
                "log" | "graph" | "errors" | "sample" | "col" | "transport" | "sendto" | "tokenrange" | "credentials-file" | "jmx" | "reporting" => {
                    c.warnings.push(format!("-{g} is not carried over: casslab saves every run with its histograms (see `casslab show`, `casslab report`); its TLS and login are --tls-ca and --user"));
                    "skip"
                }
                other => {
                    c.warnings.push(format!("-{other} is not known here and is not carried over"));
                    "skip"
                }
            };
            continue;
        }
        let (key, value) = w.split_once('=').map_or((w, ""), |(k, v)| (k, v));
        let key_l = key.to_ascii_lowercase();
        match (group, key_l.as_str()) {
            ("", "profile") => c.profile = Some(value.to_string()),
            ("", k) if k.starts_with("ops(") => {
                let inner = w[4..].strip_suffix(')').ok_or_else(|| format!("{w}: `ops(` is not closed; write ops(insert=1,simple1=3) as one word"))?;
                for part in inner.split(',').filter(|p| !p.trim().is_empty()) {
                    let (op, ratio) = part.split_once('=').ok_or_else(|| format!("ops(…): \"{part}\" is not NAME=RATIO"))?;
                    let r: f64 = ratio.trim().parse().map_err(|_| format!("ops(…): \"{ratio}\" is not a number"))?;
                    if !(r >= 0.0 && r.is_finite()) {
                        return Err(format!("ops(…): the ratio of {} is {ratio}; give a number ≥ 0", op.trim()));
                    }
                    c.ops.push((op.trim().to_ascii_lowercase(), r));
                }
                if !c.ops.is_empty() && c.ops.iter().all(|(_, r)| *r == 0.0) {
                    return Err(format!("{w}: every ratio is 0, so nothing would run; give at least one operation a ratio above 0"));
                }
            }
            ("", "n") => c.n = Some(parse_count(value).filter(|n| *n > 0).ok_or_else(|| format!("n={value} is not a count"))? as u64),
            ("", "duration") => c.duration = Some(duration(value)?),
            ("", "cl") => c.cl = Some(value.to_ascii_uppercase()),
            ("", "serial-cl") => c.serial_cl = Some(value.to_ascii_uppercase()),
            ("", "no-warmup") => c.no_warmup = true,
            ("", "truncate") => c.truncate = !value.eq_ignore_ascii_case("never"),
            ("", k) if k.starts_with("n>") || k.starts_with("n<") || k.starts_with("err<") => {
                c.warnings.push(format!(
                    "{w}: stopping on convergence has no equivalent; casslab runs for --duration and reports confidence intervals (`casslab compare`)"
                ));
            }
            ("", k) if k.starts_with("clustering") => {
                c.warnings.push(format!("{w}: runs of one operation kind are not reproduced; casslab draws every operation from the mix"))
            }
            ("rate", "threads") => {
                let n = parse_count(value).ok_or_else(|| format!("-rate threads={value} is not a count"))?;
                // the same answer as --concurrency, which it becomes
                crate::limits::concurrency(n as f64).map_err(|e| format!("-rate threads={value}: {e}"))?;
                c.threads = Some(n as u64);
            }
            ("rate", k) if k.starts_with("threads") => c.warnings.push(format!(
                "-rate {w}: casslab does not search for a thread count; give --concurrency (or find the highest rate meeting an SLA with --find-max)"
            )),
            ("rate", "fixed") | ("rate", "throttle") => {
                let r: f64 = value.trim_end_matches("/s").trim().parse().ok().filter(|r: &f64| *r > 0.0 && r.is_finite()).ok_or_else(|| format!("-rate {w}: expected a rate above 0 such as 1000/s"))?;
                c.rate = Some((r, key_l == "fixed"));
                if key_l == "throttle" {
                    c.warnings.push(format!("-rate {w}: cassandra-stress throttles its clients (closed loop); casslab's --rate is open loop and measures latency from each operation's intended start"));
                }
            }
            ("node", _) => {
                if key_l == "file" || key_l == "whitelist" || key_l == "datacenter" {
                    c.warnings.push(format!("-node {w} is not carried over: give the hosts with --hosts (and --dc)"));
                } else {
                    c.hosts.extend(w.split(',').filter(|h| !h.is_empty()).map(str::to_string));
                }
            }
            ("port", "native") => {
                let port = value.to_string();
                c.hosts = c.hosts.iter().map(|h| if h.contains(':') { h.clone() } else { format!("{h}:{port}") }).collect();
                if c.hosts.is_empty() {
                    c.warnings.push("-port native=… without -node: the port applies to the hosts you give --hosts".into());
                }
            }
            ("mode", "user") => c.user = Some(value.to_string()),
            ("mode", "password") => c.warnings.push("-mode password=… is left out on purpose: give it in CASSLAB_PASSWORD".into()),
            ("mode", "native") | ("mode", "cql3") => {}
            ("mode", _) => c.warnings.push(format!(
                "-mode {w}: not carried over (casslab speaks CQL's native protocol with the scylla driver: compression, protocol version, connections per host and SSL options are its own; TLS is --tls-ca)"
            )),
            ("pop", "seq") => {
                let (a, b) = value.split_once("..").ok_or_else(|| format!("-pop seq={value}: expected A..B"))?;
                let lo = parse_count(a).ok_or_else(|| format!("-pop seq={value}: \"{a}\" is not a count"))?;
                let hi = parse_count(b.trim_start_matches('.')).ok_or_else(|| format!("-pop seq={value}: \"{b}\" is not a count"))?;
                if lo < 1 || hi < lo {
                    return Err(format!("-pop seq={value}: the seeds run from A up to B, both at least 1 (e.g. seq=1..1000000)"));
                }
                c.pop_seq = Some((lo, hi));
            }
            ("pop", "dist") => c.pop_dist = Some(StressDist::parse(value)?),
            ("pop", _) => c.warnings.push(format!("-pop {w}: not carried over (casslab writes each partition's rows in the same order)")),
            ("insert", "partitions") | ("insert", "select-ratio") | ("insert", "batchtype") | ("insert", "row-population-ratio") => {
                let k = if key_l == "select-ratio" { "select".to_string() } else { key_l.replace("-ratio", "") };
                c.insert.push((k, value.to_string()));
            }
            ("insert", _) => c.warnings.push(format!("-insert {w}: visits and revisits are not reproduced; each insert writes its rows once")),
            ("schema", _) => c.warnings.push(format!(
                "-schema {w}: not carried over; the keyspace's replication comes from the profile's keyspace_definition (or `replication:` in the workload)"
            )),
            ("skip", _) => {}
            _ => c.warnings.push(format!("\"{w}\" is not known here and is not carried over")),
        }
    }
    if c.ops.is_empty() {
        return Err("the command line has no ops(…): say which operations to run, e.g. ops(insert=1,simple1=3)".into());
    }
    if c.n.is_none() && c.duration.is_none() && c.threads.is_none() {
        c.warnings.push("no n=, duration= or -rate threads=: cassandra-stress would run until the standard error of its mean is below 0.02, raising its threads from 4 up to 1000; casslab runs for 60 s with 128 requests in flight (give --duration and --concurrency, or find the highest rate meeting an SLA with --find-max)".into());
    }
    if c.ops.len() > 1 && !c.warnings.iter().any(|w| w.starts_with("clustering")) {
        c.warnings.push("cassandra-stress runs operations of one kind in runs of gaussian(1..10) (clustering=); casslab draws each operation from the mix on its own, with the same ratios".into());
    }
    if let (Some(n), false, Some(d)) = (c.n, c.insert_only(), &c.duration) {
        c.warnings.push(format!("n={n} with duration={d}: the run lasts --duration {d}, not a count (n= still sets the partitions written and read)"));
    }
    Ok(c)
}

/// cassandra-stress durations (`30s`, `5m`, `2h`, `1d`) as casslab writes them.
fn duration(v: &str) -> Result<String, String> {
    let t = v.trim().to_ascii_lowercase();
    let unit_ok = ["s", "m", "h", "d"].iter().any(|u| t.ends_with(u));
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if unit_ok && digits.parse::<u64>().is_ok() {
        Ok(t)
    } else {
        Err(format!("duration={v}: expected a number with s, m, h or d"))
    }
}

/// The `casslab run` command line that runs `workload_file` as the command did.
/// `partitions_per_op`: the mean partitions one operation of the mix visits; cassandra-stress's
/// `fixed=`/`throttle=` rate counts partitions, casslab's `--rate` operations.
pub fn casslab_command(c: &StressCommand, workload_file: &str, partitions_per_op: Option<f64>) -> String {
    let mut out = vec!["casslab".to_string(), "run".to_string(), workload_file.to_string()];
    if c.insert_only() {
        out.push("--load-only".into());
    } else if let Some(d) = &c.duration {
        out.push(format!("--duration {d}"));
    } else if let Some(n) = c.run_count(partitions_per_op) {
        out.push(format!("--count {n}"));
    }
    if c.no_warmup && !c.insert_only() {
        out.push("--warmup 0s".into());
    }
    if let Some(t) = c.threads {
        out.push(format!("--concurrency {t}"));
    }
    if let Some((r, _)) = c.rate {
        let per_op = partitions_per_op.filter(|p| *p > 0.0).unwrap_or(1.0);
        out.push(format!("--rate {}", super::stress_dist::num((r / per_op * 10.0).round() / 10.0)));
    }
    if c.truncate {
        out.push("--reload".into());
    }
    if !c.hosts.is_empty() {
        out.push(format!("--hosts {}", c.hosts.join(",")));
    }
    if let Some(u) = &c.user {
        out.push(format!("--user {u}"));
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_command_line_translates() {
        let c = parse_command(
            "cassandra-stress user profile=./p.yaml ops\\(insert=1,simple1=3\\) n=1M duration=5m cl=quorum serial-cl=local_serial no-warmup truncate=once -rate threads=64 fixed=2000/s -node 10.0.0.5,10.0.0.6 -port native=9142 -mode native cql3 user=bench password=secret -pop dist=uniform(1..1000) -insert partitions=fixed(2) select-ratio=fixed(1)/2 -log file=x.log",
        )
        .unwrap();
        assert_eq!(c.profile.as_deref(), Some("./p.yaml"));
        assert_eq!(c.ops, vec![("insert".into(), 1.0), ("simple1".into(), 3.0)]);
        assert_eq!((c.n, c.duration.as_deref(), c.cl.as_deref(), c.no_warmup, c.truncate), (Some(1_000_000), Some("5m"), Some("QUORUM"), true, true));
        assert_eq!((c.threads, c.rate, c.serial_cl.as_deref()), (Some(64), Some((2000.0, true)), Some("LOCAL_SERIAL")));
        assert_eq!(c.hosts, ["10.0.0.5:9142", "10.0.0.6:9142"]);
        assert_eq!(c.insert, vec![("partitions".into(), "fixed(2)".into()), ("select".into(), "fixed(1)/2".into())]);
        assert!(c.warnings.iter().any(|w| w.contains("CASSLAB_PASSWORD")));
        assert!(c.warnings.iter().any(|w| w.starts_with("-log")));
        let line = casslab_command(&c, "p.casslab.yaml", None);
        assert_eq!(
            line,
            "casslab run p.casslab.yaml --duration 5m --warmup 0s --concurrency 64 --rate 2000 --reload --hosts 10.0.0.5:9142,10.0.0.6:9142 --user bench"
        );
        assert!(!format!("{c:?}").contains("secret"), "the password is never kept");
    }

    #[test]
    fn insert_only_loads_and_mistakes_are_named() {
        let c = parse_command("user profile=p.yaml ops(insert=1) n=1000 -rate threads=8").unwrap();
        assert!(c.insert_only());
        assert_eq!(casslab_command(&c, "w.yaml", None), "casslab run w.yaml --load-only --concurrency 8");
        // fixed=1000/s counts partitions: an insert of 25.5 partitions and a read of one
        let c =
            parse_command("user profile=p.yaml ops(insert=1,simple1=1) duration=1m -rate threads=8 fixed=1000/s -mode native cql3 compression=lz4").unwrap();
        assert_eq!(casslab_command(&c, "w.yaml", Some(13.25)), "casslab run w.yaml --duration 1m --concurrency 8 --rate 75.5");
        assert!(c.warnings.iter().any(|w| w.starts_with("-mode compression=lz4")), "{:?}", c.warnings);
        assert!(c.warnings.iter().any(|w| w.contains("gaussian(1..10)")));
        assert!(parse_command("user ops(insert=1)").unwrap().warnings.iter().any(|w| w.contains("below 0.02")));
        assert!(parse_command("write n=1000").unwrap_err().contains("only `cassandra-stress user"));
        assert!(parse_command("user profile=p.yaml n=10").unwrap_err().contains("no ops"));
        assert!(parse_command("user ops(insert=x)").unwrap_err().contains("not a number"));
        assert!(parse_command("user ops(insert=1) duration=5 minutes").unwrap_err().contains("duration=5"));
    }

    #[test]
    fn n_of_a_mixed_run_becomes_its_count() {
        let c = parse_command("user profile=p.yaml ops(insert=1,simple1=3) n=1M -rate threads=8").unwrap();
        assert!(!c.warnings.iter().any(|w| w.starts_with("n=")), "{:?}", c.warnings);
        assert_eq!(casslab_command(&c, "w.yaml", None), "casslab run w.yaml --count 1000000 --concurrency 8");
        // n counts partitions: an insert of 5 partitions and three reads of one make 2 a mean
        assert_eq!(casslab_command(&c, "w.yaml", Some(2.0)), "casslab run w.yaml --count 500000 --concurrency 8");
        // a duration wins, and says so
        let both = parse_command("user profile=p.yaml ops(insert=1,simple1=3) n=1000 duration=2m").unwrap();
        assert_eq!(casslab_command(&both, "w.yaml", None), "casslab run w.yaml --duration 2m");
        assert!(both.warnings.iter().any(|w| w.starts_with("n=1000 with duration=2m")), "{:?}", both.warnings);
        // an insert-only run's n= is the load's
        assert_eq!(parse_command("user profile=p.yaml ops(insert=1) n=1000").unwrap().run_count(None), None);
    }

    #[test]
    fn ratios_ranges_and_threads_that_cannot_run_are_refused() {
        for (line, says) in [
            ("user ops(insert=-1,simple1=1)", "the ratio of insert is -1"),
            ("user ops(insert=NaN,simple1=1)", "the ratio of insert is NaN"),
            ("user ops(insert=inf)", "the ratio of insert is inf"),
            ("user ops(insert=0,simple1=0)", "every ratio is 0"),
            ("user ops(insert=1,simple1=1", "`ops(` is not closed"),
            ("user ops(insert=1) -pop seq=10..1", "from A up to B"),
            ("user ops(insert=1) -pop seq=0..10", "both at least 1"),
            ("user ops(insert=1) -rate threads=-5", "-rate threads=-5: -5 requests in flight: give at least 1"),
            ("user ops(insert=1) -rate threads=99999999999", "at most 100000"),
            ("user ops(insert=1) -rate fixed=-3/s", "a rate above 0"),
        ] {
            let e = parse_command(line).unwrap_err();
            assert!(e.contains(says), "{line}: {e}");
        }
        assert_eq!(parse_command("user ops(insert=1) -pop seq=1..10").unwrap().pop_seq, Some((1, 10)));
    }
}
