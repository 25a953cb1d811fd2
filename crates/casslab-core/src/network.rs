//! Distances and faults of the network of a cluster casslab controls: the round-trip time
//! between two data centers (`dc1:dc2=8ms`, with jitter `8ms±1ms`; `dc1:dc1` is the time between
//! the nodes of one) and from the client to a data center (`dc2=8ms`), as a server definition
//! carries them (`rtt:`, `client_rtt:`) and `casslab local up` reads them (`--rtt`,
//! `--client-rtt`); and the changes a run's network events make ([`NetworkChange`]: a partition,
//! an isolated node, a slow or lossy link, the client cut off from some nodes, a heal), on node
//! indexes. Plain types and their parsing; carrying them out is the cluster controller's
//! (casslab-local's relay).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The longest round-trip time casslab delays by (a typo like `8s` for `8ms` is refused).
pub const MAX_RTT_US: u64 = 10_000_000;

/// A round-trip time, optionally with jitter: each chunk of bytes is delayed by half of it each
/// way, give or take half the jitter (uniformly; bytes stay in order). Written `8ms`, `0.5ms`,
/// `250us`, `8ms±1ms` (or `8ms+-1ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rtt {
    pub rtt_us: u64,
    pub jitter_us: u64,
}

/// A network setting that cannot be read, and what to write instead.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum NetworkError {
    #[error("bad round-trip time \"{0}\": write e.g. 8ms, 0.5ms, 250us or 8ms±1ms (at most 10s)")]
    Rtt(String),
    #[error("bad jitter in \"{0}\": the jitter (after ±) must not exceed the round-trip time")]
    Jitter(String),
    #[error("bad distance \"{0}\": write DC:DC=RTT, e.g. dc1:dc2=8ms (dc1:dc1=RTT for the nodes of one data center)")]
    Pair(String),
    #[error("bad client distance \"{0}\": write DC=RTT, e.g. dc2=8ms")]
    Client(String),
    #[error("\"{0}\" is not a data center name (letters, digits, '-' or '_')")]
    DcName(String),
    #[error("the distance {0} is given twice")]
    Twice(String),
}

/// Microseconds of `text`: a number (fractions allowed) and a unit `us`, `µs`, `ms` or `s`; a
/// bare `0` is zero.
fn parse_us(text: &str) -> Option<u64> {
    let t = text.trim();
    if t == "0" {
        return Some(0);
    }
    let at = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = t.split_at(at);
    let x: f64 = num.parse().ok()?;
    let per_unit = match unit.trim() {
        "us" | "µs" => 1.0,
        "ms" => 1_000.0,
        "s" => 1_000_000.0,
        _ => return None,
    };
    let us = x * per_unit;
    (us.is_finite() && us >= 0.0).then(|| us.round() as u64)
}

/// `8` for 8000 µs, `0.25` for 250 µs: milliseconds without trailing zeros.
fn ms_text(us: u64) -> String {
    if us.is_multiple_of(1000) {
        (us / 1000).to_string()
    } else {
        format!("{:.3}", us as f64 / 1000.0).trim_end_matches('0').to_string()
    }
}

impl Rtt {
    pub fn from_ms(ms: u64) -> Rtt {
        Rtt { rtt_us: ms * 1000, jitter_us: 0 }
    }

    /// Reads `8ms`, `8ms±1ms`, `8ms+-1ms`, `0.5ms`, `250us`.
    pub fn parse(text: &str) -> Result<Rtt, NetworkError> {
        let t = text.trim();
        let bad = || NetworkError::Rtt(t.to_string());
        let (rtt, jitter) = match t.split_once('±').or_else(|| t.split_once("+-")).or_else(|| t.split_once("+/-")) {
            Some((r, j)) => (parse_us(r).ok_or_else(bad)?, parse_us(j).ok_or_else(bad)?),
            None => (parse_us(t).ok_or_else(bad)?, 0),
        };
        if rtt > MAX_RTT_US {
            return Err(bad());
        }
        if jitter > rtt {
            return Err(NetworkError::Jitter(t.to_string()));
        }
        Ok(Rtt { rtt_us: rtt, jitter_us: jitter })
    }

    /// The delay each way, in microseconds: half the round trip.
    pub fn one_way_us(&self) -> u64 {
        self.rtt_us / 2
    }

    pub fn is_zero(&self) -> bool {
        self.rtt_us == 0 && self.jitter_us == 0
    }
}

impl fmt::Display for Rtt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", ms_text(self.rtt_us))?;
        if self.jitter_us > 0 {
            write!(f, "±{}ms", ms_text(self.jitter_us))?;
        }
        Ok(())
    }
}

impl Serialize for Rtt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Rtt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rtt, D::Error> {
        let text = String::deserialize(d)?;
        Rtt::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A data center's name as casslab accepts it wherever one is written (`--dcs`, `--rtt`,
/// `--client-rtt`, a server definition's `dcs:`, `rtt:`, `client_rtt:`): letters, digits, `-`
/// and `_`.
pub fn dc_name(name: &str) -> Result<String, NetworkError> {
    check_dc(name)
}

fn check_dc(name: &str) -> Result<String, NetworkError> {
    let n = name.trim();
    if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(NetworkError::DcName(n.to_string()));
    }
    Ok(n.to_string())
}

/// Two data centers, in name order (`dc2:dc1` is `dc1:dc2`); the same one twice is the distance
/// between its own nodes. Written `dc1:dc2`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DcPair(String, String);

impl DcPair {
    pub fn new(a: &str, b: &str) -> Result<DcPair, NetworkError> {
        let (a, b) = (check_dc(a)?, check_dc(b)?);
        Ok(if a <= b { DcPair(a, b) } else { DcPair(b, a) })
    }

    /// Reads `dc1:dc2`.
    pub fn parse(text: &str) -> Result<DcPair, NetworkError> {
        let (a, b) = text.split_once(':').ok_or_else(|| NetworkError::Pair(text.trim().to_string()))?;
        DcPair::new(a, b)
    }

    pub fn first(&self) -> &str {
        &self.0
    }

    pub fn second(&self) -> &str {
        &self.1
    }

    /// Whether it joins `a` and `b` (in either order).
    pub fn joins(&self, a: &str, b: &str) -> bool {
        (self.0 == a && self.1 == b) || (self.0 == b && self.1 == a)
    }
}

impl fmt::Display for DcPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.0, self.1)
    }
}

impl Serialize for DcPair {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DcPair {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<DcPair, D::Error> {
        let text = String::deserialize(d)?;
        DcPair::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A server definition's `rtt:` map, read as `--rtt` is: a pair written twice (`dc1:dc2` and
/// `dc2:dc1`, one distance) is refused rather than one of them silently kept.
pub fn rtt_map<'de, D: Deserializer<'de>>(d: D) -> Result<std::collections::BTreeMap<DcPair, Rtt>, D::Error> {
    let written: Vec<(String, Rtt)> = std::collections::BTreeMap::<String, Rtt>::deserialize(d)?.into_iter().collect();
    let mut out = std::collections::BTreeMap::new();
    for (pair, rtt) in written {
        let pair = DcPair::parse(&pair).map_err(serde::de::Error::custom)?;
        if out.insert(pair.clone(), rtt).is_some() {
            return Err(serde::de::Error::custom(NetworkError::Twice(format!("{pair} (written both ways)"))));
        }
    }
    Ok(out)
}

/// A server definition's `client_rtt:` map, its data centers named as `--client-rtt`'s are.
pub fn client_rtt_map<'de, D: Deserializer<'de>>(d: D) -> Result<std::collections::BTreeMap<String, Rtt>, D::Error> {
    let written = std::collections::BTreeMap::<String, Rtt>::deserialize(d)?;
    written.into_iter().map(|(dc, rtt)| Ok((check_dc(&dc).map_err(serde::de::Error::custom)?, rtt))).collect()
}

/// A server definition's `dcs:` list, checked as `--dcs` is: names of data centers, each once,
/// with at least one node.
pub fn dcs_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<(String, usize)>>, D::Error> {
    let Some(dcs) = Option::<Vec<(String, usize)>>::deserialize(d)? else { return Ok(None) };
    for (i, (name, nodes)) in dcs.iter().enumerate() {
        check_dc(name).map_err(serde::de::Error::custom)?;
        if *nodes == 0 {
            return Err(serde::de::Error::custom(format!("data center \"{name}\" has 0 nodes: give at least 1")));
        }
        if dcs[..i].iter().any(|(n, _)| n == name) {
            return Err(serde::de::Error::custom(format!("data center \"{name}\" is listed twice")));
        }
    }
    Ok(Some(dcs))
}

/// The items of a comma-separated flag value (several flags or one list: both work).
fn items(values: &[String]) -> impl Iterator<Item = &str> {
    values.iter().flat_map(|v| v.split(',')).map(str::trim).filter(|s| !s.is_empty())
}

/// Reads `--rtt` values: `dc1:dc2=8ms`, several by commas or flags.
pub fn parse_rtts(values: &[String]) -> Result<Vec<(DcPair, Rtt)>, NetworkError> {
    let mut out: Vec<(DcPair, Rtt)> = Vec::new();
    for item in items(values) {
        let (pair, rtt) = item.split_once('=').ok_or_else(|| NetworkError::Pair(item.to_string()))?;
        let pair = DcPair::parse(pair).map_err(|_| NetworkError::Pair(item.to_string()))?;
        if out.iter().any(|(p, _)| *p == pair) {
            return Err(NetworkError::Twice(pair.to_string()));
        }
        out.push((pair, Rtt::parse(rtt)?));
    }
    Ok(out)
}

/// Reads `--client-rtt` values: `dc2=8ms`, several by commas or flags.
pub fn parse_client_rtts(values: &[String]) -> Result<Vec<(String, Rtt)>, NetworkError> {
    let mut out: Vec<(String, Rtt)> = Vec::new();
    for item in items(values) {
        let (dc, rtt) = item.split_once('=').ok_or_else(|| NetworkError::Client(item.to_string()))?;
        let dc = check_dc(dc)?;
        if out.iter().any(|(d, _)| *d == dc) {
            return Err(NetworkError::Twice(format!("to {dc}")));
        }
        out.push((dc, Rtt::parse(rtt)?));
    }
    Ok(out)
}

/// A change of the network of a controlled cluster, on node indexes (as
/// [`crate::cluster::ClusterControl::select`] gives them). Faults add up until a heal; links
/// between a selection's own nodes are left as they are (a slow data center is a slow uplink,
/// not slow links inside it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum NetworkChange {
    /// Nothing crosses between nodes of different sides (nodes on no side keep every link);
    /// connections stay open and what was sent crosses after the heal, as TCP retransmits.
    Partition { sides: Vec<Vec<usize>> },
    /// The nodes are cut off from every other node and from the client.
    Isolate { nodes: Vec<usize> },
    /// Every link between the nodes and the rest (the client included) gets this much more
    /// round-trip time.
    Slow { nodes: Vec<usize>, rtt: Rtt },
    /// Every link between the nodes and the rest (the client included) loses this share of
    /// its chunks, each lost one (and what follows it) held back by a retransmission timeout.
    Lossy { nodes: Vec<usize>, loss_pct: f64 },
    /// The client's links to the nodes are cut.
    ClientLoses { nodes: Vec<usize> },
    /// Every fault ends: the network is as the cluster's distances define it.
    Heal,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_times_read_and_print_alike() {
        assert_eq!(Rtt::parse("8ms").unwrap(), Rtt { rtt_us: 8_000, jitter_us: 0 });
        assert_eq!(Rtt::parse("0.5ms").unwrap().rtt_us, 500);
        assert_eq!(Rtt::parse("250us").unwrap().rtt_us, 250);
        assert_eq!(Rtt::parse("0").unwrap(), Rtt::default());
        assert_eq!(Rtt::parse("8ms±1ms").unwrap(), Rtt { rtt_us: 8_000, jitter_us: 1_000 });
        assert_eq!(Rtt::parse(" 8ms +- 1ms ").unwrap(), Rtt { rtt_us: 8_000, jitter_us: 1_000 });
        for text in ["8ms", "8ms±1ms", "0.5ms", "0.25ms±0.1ms", "0ms"] {
            assert_eq!(Rtt::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(Rtt::from_ms(8).one_way_us(), 4_000);
        for bad in ["8", "fast", "8 parsecs", "11s", "-3ms", ""] {
            assert!(matches!(Rtt::parse(bad), Err(NetworkError::Rtt(_))), "{bad}");
        }
        assert!(Rtt::parse("2ms±3ms").unwrap_err().to_string().contains("jitter"));
    }

    #[test]
    fn flags_read_pairs_in_name_order_and_client_distances() {
        let rtts = parse_rtts(&["dc2:dc1=8ms, dc1:dc3=20ms±2ms".into(), "dc1:dc1=0.5ms".into()]).unwrap();
        assert_eq!(rtts[0], (DcPair::new("dc1", "dc2").unwrap(), Rtt::from_ms(8)));
        assert_eq!(rtts[0].0.to_string(), "dc1:dc2");
        assert!(rtts[0].0.joins("dc2", "dc1") && !rtts[0].0.joins("dc1", "dc3"));
        assert_eq!(rtts[1].1.to_string(), "20ms±2ms");
        assert_eq!((rtts[2].0.first(), rtts[2].0.second()), ("dc1", "dc1"));
        let e = parse_rtts(&["dc1:dc2=8ms,dc2:dc1=9ms".into()]).unwrap_err();
        assert_eq!(e, NetworkError::Twice("dc1:dc2".into()));
        for bad in ["dc1=8ms", "dc1:dc2", "dc1:d c2=8ms", "dc1:dc2=eight"] {
            assert!(parse_rtts(&[bad.into()]).is_err(), "{bad}");
        }
        let client = parse_client_rtts(&["dc1=4ms,dc2=8ms".into()]).unwrap();
        assert_eq!(client, [("dc1".to_string(), Rtt::from_ms(4)), ("dc2".to_string(), Rtt::from_ms(8))]);
        assert!(parse_client_rtts(&["dc1:dc2=4ms".into()]).is_err());
        assert!(parse_client_rtts(&["dc1".into()]).unwrap_err().to_string().contains("DC=RTT"));
    }

    #[test]
    fn distances_and_changes_round_trip_through_json() {
        let map: std::collections::BTreeMap<DcPair, Rtt> = [(DcPair::parse("dc2:dc1").unwrap(), Rtt::parse("8ms±1ms").unwrap())].into();
        let json = serde_json::to_string(&map).unwrap();
        assert_eq!(json, r#"{"dc1:dc2":"8ms±1ms"}"#);
        assert_eq!(serde_json::from_str::<std::collections::BTreeMap<DcPair, Rtt>>(&json).unwrap(), map);
        assert!(serde_json::from_str::<std::collections::BTreeMap<DcPair, Rtt>>(r#"{"dc1":"8ms"}"#).is_err());
        let change = NetworkChange::Slow { nodes: vec![1], rtt: Rtt::from_ms(50) };
        let json = serde_json::to_string(&change).unwrap();
        assert_eq!(json, r#"{"kind":"slow","nodes":[1],"rtt":"50ms"}"#);
        assert_eq!(serde_json::from_str::<NetworkChange>(&json).unwrap(), change);
        assert_eq!(serde_json::to_string(&NetworkChange::Heal).unwrap(), r#"{"kind":"heal"}"#);
    }
}
