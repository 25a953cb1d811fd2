//! The text forms of single flag values, as a person writes them after a flag: durations,
//! counts, rates and schedules, requests in flight, `-P NAME=VALUE`, `--set KEY=VALUE`, levels
//! of consistency, heaps, shards, a Redis URL, a format's name. A value that does not parse is a
//! [`FlagError`] naming the flag and what to write; it is the input's fault (`fault`).

use crate::cql::Consistency;
use crate::load_shape::LoadShape;
use crate::report::format::{Format, Formats};
use std::collections::BTreeMap;
use std::fmt;

/// A flag's value that does not parse: the message names the flag and what to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagError(pub String);

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlagError {}

/// A value of a flag, or what is wrong with it.
pub type Result<T> = std::result::Result<T, FlagError>;

/// Returns a [`FlagError`] made with `format!`.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err(FlagError(format!($($arg)*)))
    };
}

/// `KEY=VALUE` settings: VALUE as JSON when it parses, else as text.
pub fn parse_settings(items: &[String]) -> Result<BTreeMap<String, serde_json::Value>> {
    let mut out = BTreeMap::new();
    for it in items {
        let (k, v) = it.split_once('=').ok_or_else(|| FlagError(format!("--set {it}: write KEY=VALUE, e.g. --set concurrent_reads=64")))?;
        let v = v.trim();
        let value = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
        out.insert(k.trim().to_string(), value);
    }
    Ok(out)
}

pub fn parse_duration_s(what: &str, v: &str) -> Result<f64> {
    crate::units::parse_duration_s(v).map_err(|m| FlagError(format!("--{what}: {m}")))
}

pub fn parse_rate(v: &str) -> Result<f64> {
    let t = v.trim().trim_end_matches("/s").trim_end_matches("ops").trim();
    match t.parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(r),
        _ => bail!("--rate {v}: write a number of operations per second, e.g. --rate 5000"),
    }
}

/// `--rate`: a fixed rate (`5000`, `5000/s`) or a schedule (`ramp 100..5000 over 60s, hold 2m`).
pub fn parse_rate_shape(v: &str) -> Result<LoadShape> {
    if let Ok(r) = parse_rate(v) {
        return Ok(LoadShape::fixed(r));
    }
    let shape = LoadShape::parse(v).map_err(|e| FlagError(format!("--rate {e}")))?;
    if shape.peak() <= 0.0 {
        bail!("--rate {v}: the schedule never rises above 0");
    }
    Ok(shape)
}

/// The format `name` of a table, given with `--flag` (clap checked it against the table).
pub fn format_named<'f, In: ?Sized>(formats: Formats<'f, In>, flag: &str, name: &str) -> Result<&'f dyn Format<In>> {
    let names = formats.names().join(", ");
    formats.named(name).ok_or_else(|| FlagError(format!("--{flag} {name}: one of {names}")))
}

/// `--count`: operations of the run phase, at least 1 (`1000000`, `1M`, `10k`).
pub fn parse_count(v: &str) -> Result<u64> {
    match crate::units::parse_count(v) {
        Some(n) if n >= 1 => Ok(n as u64),
        Some(_) => bail!("--count {v}: a run phase of no operations measures nothing; give how many to run, e.g. --count 100000"),
        None => bail!("--count {v}: write a whole number of operations, e.g. --count 100000 or --count 1M"),
    }
}

/// `--concurrency`: a number of requests in flight (at least 1) or a schedule of them.
pub fn parse_concurrency(v: &str) -> Result<LoadShape> {
    if let Ok(n) = v.trim().parse::<f64>() {
        let n = crate::limits::concurrency(n).map_err(|e| FlagError(format!("--concurrency {v}: {e}")))?;
        return Ok(LoadShape::fixed(n as f64));
    }
    let shape = LoadShape::parse(v).map_err(|e| FlagError(format!("--concurrency {e}")))?;
    shape.check_in_flight().map_err(|e| FlagError(format!("--concurrency {e}")))?;
    Ok(shape)
}

pub fn parse_params(items: &[String]) -> Result<BTreeMap<String, String>> {
    let mut m = BTreeMap::new();
    for it in items {
        let (k, v) = it.split_once('=').ok_or_else(|| FlagError(format!("-P {it}: write NAME=VALUE, e.g. -P rows=100000")))?;
        m.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(m)
}

/// `--consistency LEVEL` (`serial`: false) or `--serial-consistency LEVEL` (true).
pub fn level(flag: &str, text: &str, serial: bool) -> Result<Consistency> {
    match Consistency::parse(text).filter(|c| c.is_serial() == serial) {
        Some(c) => Ok(c),
        None if serial => bail!("--{flag} {text}: write SERIAL or LOCAL_SERIAL"),
        None => bail!("--{flag} {text}: write one of ANY, ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, LOCAL_ONE (SERIAL and LOCAL_SERIAL are --serial-consistency's)"),
    }
}

/// This loader's (index, count) from `--shard I/N`, or `--shards N` and the job's index.
pub fn shard_index(shard: Option<&str>, shards: Option<u32>, job_index: Option<String>) -> Result<Option<(u32, u32)>> {
    match (shard, shards) {
        (Some(text), _) => {
            let parsed = text.split_once('/').and_then(|(i, n)| Some((i.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?)));
            match parsed {
                Some((i, n)) if n >= 1 && i < n => Ok(Some((i, n))),
                _ => bail!("--shard {text}: write INDEX/COUNT with 0 <= INDEX < COUNT, e.g. --shard 0/4"),
            }
        }
        (None, Some(n)) => {
            let var =
                job_index.ok_or_else(|| FlagError(format!("--shards {n}: set JOB_COMPLETION_INDEX (a Kubernetes Indexed Job does), or give --shard I/{n}")))?;
            match var.trim().parse::<u32>() {
                Ok(i) if n >= 1 && i < n => Ok(Some((i, n))),
                _ => bail!("--shards {n}: JOB_COMPLETION_INDEX is \"{var}\", not an index below {n}"),
            }
        }
        (None, None) => Ok(None),
    }
}

/// Parses `1G`, `768M`, `1024` (MiB) into MiB.
pub fn parse_heap_mb(v: &str) -> Result<u32> {
    let t = v.trim().to_ascii_uppercase();
    let (num, mult) = if let Some(n) = t.strip_suffix('G') {
        (n, 1024.0)
    } else if let Some(n) = t.strip_suffix('M') {
        (n, 1.0)
    } else {
        (t.as_str(), 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(x) if x > 0.0 => Ok((x * mult) as u32),
        _ => bail!("--heap {v}: write e.g. 1G or 768M"),
    }
}

/// `--target URL` of a Redis server: `redis://` or `rediss://`, with no password in it (it
/// would be saved with the run).
pub fn redis_url(url: &str) -> Result<&str> {
    let url = url.trim();
    if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
        bail!("--target {url}: write redis://HOST:PORT (rediss:// for TLS); a CQL cluster is given with --hosts");
    }
    let authority = url.split_once("://").map(|(_, r)| r.split('/').next().unwrap_or("")).unwrap_or("");
    if authority.rsplit_once('@').is_some_and(|(user, _)| user.contains(':')) {
        bail!("--target: the URL holds a password, which would be saved with the run; drop it and set CASSLAB_REDIS_PASSWORD");
    }
    Ok(url)
}
