//! Captured traffic as a workload that replays it. A capture is JSON lines or CSV, one query
//! per line: its start time (`t_ms`, Unix or relative milliseconds, or `time` in RFC 3339), its
//! CQL (`query`), the values bound to its `?` markers (`values`, a JSON array; `"0x…"` for a
//! value's bytes as the protocol serializes them) and optionally its `keyspace`. A full query
//! log dumped by casslab (`casslab_local::fql`) has the same lines, with the values inside the
//! serialized query options (`options`), decoded here. Each distinct statement becomes an
//! operation whose generators list the captured values in order; the run phase's `replay:`
//! starts every query at its captured time (divided by `speed`). Value types come from the
//! cluster's schema when given, else from the values themselves (a warning says so).

use super::markers::{markers, Marker};
use super::workload_writer::{ident, quote, Yaml};
use super::{ImportError, Imported};
use crate::gen::Scalar;
use std::collections::{BTreeMap, BTreeSet};

/// The farthest a start time may lie from 0, in ms (about 31,700 years): beyond it a time is
/// no clock's.
const MAX_T_MS: f64 = 1e15;

/// One captured query.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub t_ms: f64,
    pub keyspace: Option<String>,
    pub query: String,
    /// The bound values; `None` for a null.
    pub values: Vec<Option<Scalar>>,
    /// Part of a batch (replayed as its own statement).
    pub batch: bool,
    pub line: usize,
}

/// Column types by `keyspace.table`, then column name (types as system_schema writes them).
pub type Schema = BTreeMap<String, BTreeMap<String, String>>;

fn json_scalar(v: &serde_json::Value) -> Option<Scalar> {
    match v {
        serde_json::Value::Bool(b) => Some(Scalar::Bool(*b)),
        serde_json::Value::Number(n) => Some(n.as_i64().map(Scalar::Int).unwrap_or_else(|| Scalar::Float(n.as_f64().unwrap_or(0.0)))),
        serde_json::Value::String(s) => Some(Scalar::Text(s.clone())),
        _ => None,
    }
}

fn hex_bytes(s: &str) -> Option<Vec<u8>> {
    let h = s.strip_prefix("0x")?;
    (0..h.len()).step_by(2).map(|i| h.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok())).collect()
}

/// The values inside serialized query options (native protocol: consistency, flags, then
/// with flag 0x01 the values, each named with flag 0x40), as `0x…` bytes.
pub fn values_of_options(options: &[u8], protocol: i64) -> Result<Vec<Option<Scalar>>, String> {
    let mut at = 2usize; // consistency
    let take = |at: &mut usize, n: usize| -> Result<&[u8], String> {
        let s = options.get(*at..*at + n).ok_or("query options end early")?;
        *at += n;
        Ok(s)
    };
    let flags: u32 = if protocol >= 5 { u32::from_be_bytes(take(&mut at, 4)?.try_into().expect("4 bytes")) } else { take(&mut at, 1)?[0] as u32 };
    if flags & 0x01 == 0 {
        return Ok(vec![]);
    }
    let n = u16::from_be_bytes(take(&mut at, 2)?.try_into().expect("2 bytes")) as usize;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        if flags & 0x40 != 0 {
            let len = u16::from_be_bytes(take(&mut at, 2)?.try_into().expect("2 bytes")) as usize;
            take(&mut at, len)?;
        }
        let len = i32::from_be_bytes(take(&mut at, 4)?.try_into().expect("4 bytes"));
        if len < 0 {
            out.push(None);
        } else {
            let b = take(&mut at, len as usize)?;
            out.push(Some(Scalar::Text(format!("0x{}", b.iter().map(|x| format!("{x:02x}")).collect::<String>()))));
        }
    }
    Ok(out)
}

/// Reads a capture: JSON lines (a line starting with `{`) or CSV with a header naming `t_ms`
/// (or `time`), `query`, and optionally `keyspace` and `values` (a JSON array).
pub fn read_capture(src: &str, file: &str) -> Result<Vec<Entry>, ImportError> {
    let Some(first) = src.lines().find(|l| !l.trim().is_empty()) else {
        return Err(ImportError::new(file, None, "the capture holds no query"));
    };
    let mut out = Vec::new();
    if first.trim_start().starts_with('{') {
        for (i, l) in src.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(l).map_err(|e| ImportError::new(file, Some(i + 1), format!("not a JSON object: {e}")))?;
            out.push(entry_of(&v, file, i + 1)?);
        }
    } else {
        let mut lines = src.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let header: Vec<String> = lines.next().map(|(_, h)| csv_fields(h)).unwrap_or_default().iter().map(|h| h.trim().to_ascii_lowercase()).collect();
        if !header.iter().any(|h| h == "query") {
            return Err(ImportError::new(
                file,
                Some(1),
                "a CSV capture starts with a header naming its columns: t_ms (or time), query, and optionally keyspace and values",
            ));
        }
        for (i, l) in lines {
            let fields = csv_fields(l);
            let mut obj = serde_json::Map::new();
            for (h, f) in header.iter().zip(fields).filter(|(_, f)| !f.trim().is_empty()) {
                let value = match h.as_str() {
                    "t_ms" => {
                        f.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(serde_json::Value::Number).unwrap_or(serde_json::Value::Null)
                    }
                    "values" => serde_json::from_str(&f).map_err(|e| ImportError::new(file, Some(i + 1), format!("values: not a JSON array: {e}")))?,
                    _ => serde_json::Value::String(f),
                };
                obj.insert(h.clone(), value);
            }
            out.push(entry_of(&serde_json::Value::Object(obj), file, i + 1)?);
        }
    }
    if out.is_empty() {
        return Err(ImportError::new(file, None, "the capture holds no query"));
    }
    Ok(out)
}

fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().expect("a field").push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().expect("a field").push(c),
        }
    }
    out
}

fn entry_of(v: &serde_json::Value, file: &str, line: usize) -> Result<Entry, ImportError> {
    let e = |m: &str| ImportError::new(file, Some(line), m.to_string());
    let query = v.get("query").and_then(|q| q.as_str()).ok_or_else(|| e("no `query`"))?.to_string();
    let t_ms = match (v.get("t_ms").and_then(|t| t.as_f64()), v.get("time").and_then(|t| t.as_str())) {
        (Some(t), _) => t,
        (None, Some(t)) => crate::units::parse_start_ms(t).map_err(|m| e(&format!("time: {m}")))? as f64,
        _ => return Err(e("no start time: give `t_ms` (milliseconds) or `time` (RFC 3339)")),
    };
    if t_ms.is_nan() || t_ms.abs() > MAX_T_MS {
        return Err(e(&format!("t_ms {t_ms} is not a time: give milliseconds (since the Unix epoch, or since the capture's start) within ±{MAX_T_MS:e}")));
    }
    let values = if let Some(opts) = v.get("options").and_then(|o| o.as_str()) {
        let bytes = hex_bytes(opts).ok_or_else(|| e("options: not hex bytes"))?;
        values_of_options(&bytes, v.get("protocol").and_then(|p| p.as_i64()).unwrap_or(4)).map_err(|m| e(&m))?
    } else {
        match v.get("values") {
            None | Some(serde_json::Value::Null) => vec![],
            Some(serde_json::Value::Array(a)) => a.iter().map(json_scalar).collect(),
            Some(_) => return Err(e("values: expected a JSON array")),
        }
    };
    let keyspace = v.get("keyspace").and_then(|k| k.as_str()).filter(|k| !k.is_empty()).map(str::to_string);
    Ok(Entry { t_ms, keyspace, query, values, batch: v.get("batch").is_some(), line })
}

/// Whether a statement is traffic to replay: not a driver's or casslab's own (system tables,
/// casslab_meta, USE), not schema.
fn is_traffic(q: &str) -> bool {
    let u = q.trim_start().to_ascii_uppercase();
    let data = ["SELECT", "INSERT", "UPDATE", "DELETE"].iter().any(|k| u.starts_with(k));
    let lower = q.to_ascii_lowercase();
    data && !lower.contains("casslab_meta")
        && !["system.", "system_schema.", "system_views.", "system_traces.", "system_auth.", "system_distributed."].iter().any(|s| lower.contains(s))
}

/// The keyspace and table a statement names (its own qualifier, or the entry's keyspace).
fn table_of(e: &Entry) -> Option<(String, String)> {
    let words: Vec<&str> = e.query.split(|c: char| c.is_whitespace() || c == '(').filter(|w| !w.is_empty()).collect();
    let at = words.iter().position(|w| ["FROM", "INTO", "UPDATE"].iter().any(|k| w.eq_ignore_ascii_case(k)))?;
    let name = words.get(at + 1)?.trim_end_matches([',', ';']);
    let unquote = |s: &str| if s.starts_with('"') { s.trim_matches('"').to_string() } else { s.to_ascii_lowercase() };
    match name.split_once('.') {
        Some((ks, t)) => Some((unquote(ks), unquote(t))),
        None => Some((e.keyspace.clone()?, unquote(name))),
    }
}

/// The keyspaces a capture's traffic uses (for reading their schema).
pub fn keyspaces(entries: &[Entry]) -> BTreeSet<String> {
    entries.iter().filter(|e| is_traffic(&e.query)).filter_map(|e| table_of(e).map(|(k, _)| k)).collect()
}

fn infer(values: &[&Scalar]) -> &'static str {
    if values.iter().all(|v| matches!(v, Scalar::Int(i) if i32::try_from(*i).is_ok())) {
        "int"
    } else if values.iter().all(|v| matches!(v, Scalar::Int(_))) {
        "bigint"
    } else if values.iter().all(|v| matches!(v, Scalar::Int(_) | Scalar::Float(_))) {
        "double"
    } else if values.iter().all(|v| matches!(v, Scalar::Bool(_))) {
        "boolean"
    } else {
        "text"
    }
}

fn scalar_yaml(v: &Scalar) -> String {
    match v {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => format!("{f:?}"),
        Scalar::Text(s) => quote(s),
    }
}

/// The workload replaying `entries` (read from `file`) at `speed` × their pace. `only`: the
/// keyspace whose traffic to keep (default: all); `schema`: the column types (else inferred
/// from the values). A replay longer than [`crate::limits::MAX_DURATION_S`] is refused.
pub fn capture_workload(entries: &[Entry], file: &str, name: &str, speed: f64, only: Option<&str>, schema: Option<&Schema>) -> Result<Imported, ImportError> {
    if !(speed > 0.0 && speed.is_finite()) {
        return Err(ImportError::new(file, None, format!("a speed of {speed}: give a factor above 0, e.g. 2 for twice as fast")));
    }
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let mut kept: Vec<&Entry> =
        entries.iter().filter(|e| is_traffic(&e.query)).filter(|e| only.is_none_or(|k| table_of(e).is_some_and(|(ks, _)| ks == k))).collect();
    let skipped = entries.len() - kept.len();
    if skipped > 0 {
        notes.push(format!(
            "left out {skipped} statements that are not data traffic{} (schema, USE, system tables, casslab's own)",
            only.map(|k| format!(" of keyspace {k}")).unwrap_or_default()
        ));
    }
    let nulls = kept.iter().filter(|e| e.values.iter().any(Option::is_none)).count();
    if nulls > 0 {
        warnings.push(format!("{nulls} queries bound a null or unset value; they are left out (a generator makes no nulls)"));
        kept.retain(|e| e.values.iter().all(Option::is_some));
    }
    if kept.is_empty() {
        return Err(ImportError::new(file, None, "no data traffic to replay in the capture"));
    }
    kept.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
    let batched = kept.iter().filter(|e| e.batch).count();
    if batched > 0 {
        warnings.push(format!("{batched} statements were sent in batches; each is replayed on its own at the batch's time"));
    }
    let keyspace = only.map(str::to_string).or_else(|| {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for e in &kept {
            if let Some((k, _)) = table_of(e) {
                *counts.entry(k).or_default() += 1;
            }
        }
        counts.into_iter().max_by_key(|(_, n)| *n).map(|(k, _)| k)
    });
    let Some(keyspace) = keyspace else {
        return Err(ImportError::new(file, None, "the capture names no keyspace: give each line a `keyspace`, or qualify its tables"));
    };
    // one operation per distinct statement, in order of first appearance
    let mut ops: Vec<(String, Option<(String, String)>)> = Vec::new();
    let mut op_of: Vec<usize> = Vec::with_capacity(kept.len());
    for e in &kept {
        let key = (e.query.clone(), table_of(e));
        let i = match ops.iter().position(|o| *o == key) {
            Some(i) => i,
            None => {
                ops.push(key);
                ops.len() - 1
            }
        };
        op_of.push(i);
    }
    let t0 = kept[0].t_ms;
    let span_ms = (kept[kept.len() - 1].t_ms - t0) / speed;
    if span_ms.is_nan() || span_ms > crate::limits::MAX_DURATION_S * 1000.0 {
        return Err(ImportError::new(
            file,
            None,
            format!(
                "the capture spans {:.3} s, which at --speed {speed} would replay for {:.3e} s, longer than a run may last (a year); give a larger --speed, or a capture of less time",
                (kept[kept.len() - 1].t_ms - t0) / 1000.0,
                span_ms / 1000.0
            ),
        ));
    }
    let mut y = Yaml::default();
    y.line(0, &format!("name: {}", ident(name)), None);
    y.line(
        0,
        &format!(
            "description: {}",
            quote(&format!(
                "{} captured queries over {:.1} s, replayed at their own times{}",
                kept.len(),
                span_ms / 1000.0,
                if speed != 1.0 { format!(" ({speed}× as fast)") } else { String::new() }
            ))
        ),
        None,
    );
    y.line(0, &format!("params: {{ keyspace: {} }}", ident(&keyspace)), None);
    y.line(0, "keyspace: ${keyspace}", Some("the tables are the cluster's own: the replay writes what the capture wrote"));
    let mut gens = Yaml::default();
    let mut opy = Yaml::default();
    let mut inferred = false;
    let mut names = Vec::new();
    for (i, (query, table)) in ops.iter().enumerate() {
        let name = format!("q{}", i + 1);
        let runs: Vec<&&Entry> = kept.iter().zip(&op_of).filter(|(_, o)| **o == i).map(|(e, _)| e).collect();
        let ms = markers(query);
        let mut args = Vec::new();
        for (m, marker) in ms.iter().enumerate() {
            let column_type = match (marker, table, schema) {
                (Marker::Column(c), Some((ks, t)), Some(s)) => s.get(&format!("{ks}.{t}")).and_then(|cols| cols.get(c)).cloned(),
                (Marker::Limit | Marker::Ttl, _, _) => Some("int".into()),
                (Marker::Timestamp | Marker::Token, _, _) => Some("bigint".into()),
                _ => None,
            };
            let values: Vec<&Scalar> = runs.iter().filter_map(|e| e.values.get(m).and_then(Option::as_ref)).collect();
            if values.len() != runs.len() {
                return Err(ImportError::new(file, Some(runs[0].line), format!("{query}: {} markers but fewer values on some lines", ms.len())));
            }
            let ty = match column_type {
                Some(t) if t.contains('<') => {
                    warnings.push(format!("{name}: `?` {} binds a {t}; collections cannot be replayed, the statement is left out", m + 1));
                    args.clear();
                    break;
                }
                Some(t) => t,
                None if values.iter().any(|v| matches!(v, Scalar::Text(s) if s.starts_with("0x"))) => {
                    return Err(ImportError::new(
                        file,
                        Some(runs[0].line),
                        format!(
                            "{query}: its values are serialized bytes whose types only the schema knows: give --hosts (the cluster the capture was taken on)"
                        ),
                    ));
                }
                None => {
                    inferred = true;
                    infer(&values).to_string()
                }
            };
            let g = format!("{name}_v{m}");
            let list: Vec<String> = values.iter().map(|v| scalar_yaml(v)).collect();
            gens.line(2, &format!("{g}: {{ type: {ty}, dist: sequence, values: [{}] }}", list.join(", ")), None);
            args.push(g);
        }
        if args.len() != ms.len() {
            continue;
        }
        opy.line(2, &format!("{name}: {{ cql: {}, args: [{}] }}", quote(query), args.join(", ")), Some(&format!("{} times", runs.len())));
        names.push((i, name, runs.len()));
    }
    if inferred {
        warnings.push("value types were inferred from the values (whole numbers as int or bigint, others as double, text or boolean); give --hosts to read them from the cluster's schema".into());
    }
    if names.is_empty() {
        return Err(ImportError::new(file, None, "none of the captured statements can be replayed"));
    }
    if !gens.is_empty() {
        y.line(0, "generators:", Some("each lists its statement's captured values, in order"));
        y.raw(&gens.finish());
    }
    y.line(0, "operations:", None);
    y.raw(&opy.finish());
    let mix: Vec<String> = names.iter().map(|(_, n, c)| format!("{n}: {c}")).collect();
    let mut at = Vec::new();
    let mut seq = Vec::new();
    for (e, o) in kept.iter().zip(&op_of) {
        if let Some((_, n, _)) = names.iter().find(|(i, _, _)| i == o) {
            at.push(super::stress_dist::num(((e.t_ms - t0) / speed * 1000.0).round() / 1000.0));
            seq.push(n.clone());
        }
    }
    y.line(0, "run:", None);
    y.line(2, &format!("mix: {{ {} }}", mix.join(", ")), Some("the captured counts"));
    y.line(2, "warmup: 0s", None);
    y.line(2, &format!("duration: {}s", (span_ms / 1000.0).ceil() as u64 + 2), Some("the capture's length, and 2 s for the last queries"));
    y.line(2, "replay:", Some("each query at its captured time: ms after the first"));
    y.line(4, &format!("at_ms: [{}]", at.join(", ")), None);
    y.line(4, &format!("ops: [{}]", seq.join(", ")), None);
    notes.push(format!("{} queries of {} statements over {:.1} s in keyspace {keyspace}", at.len(), names.len(), span_ms / 1000.0));
    Ok(Imported { yaml: y.finish(), warnings, notes, partitions_per_op: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_options_hold_the_values() {
        // LOCAL_QUORUM, flags 0x01 (values) | 0x04 (page size): two values, one null
        let opts = [0x00, 0x06, 0x05, 0x00, 0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x2a, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x13, 0x88];
        assert_eq!(values_of_options(&opts, 4).unwrap(), vec![Some(Scalar::Text("0x0000002a".into())), None]);
        assert_eq!(values_of_options(&[0x00, 0x06, 0x00], 4).unwrap(), vec![]);
        assert!(values_of_options(&[0x00, 0x06, 0x01, 0x00, 0x01, 0x00], 4).is_err());
    }

    #[test]
    fn a_capture_becomes_a_schedule_with_its_mix_and_values() {
        let src = r#"{"t_ms": 1000, "keyspace": "shop", "query": "SELECT * FROM t WHERE k = ?", "values": [7]}
{"t_ms": 1250.5, "keyspace": "shop", "query": "INSERT INTO t (k, v) VALUES (?, ?)", "values": [8, "x"]}
{"t_ms": 1500, "keyspace": "shop", "query": "SELECT * FROM t WHERE k = ?", "values": [3000000000]}
{"t_ms": 1600, "keyspace": "shop", "query": "SELECT * FROM system.local", "values": []}
"#;
        let entries = read_capture(src, "c.jsonl").unwrap();
        let qualified = Entry { t_ms: 0.0, keyspace: None, query: "UPDATE \"Shop\".t SET v = 1".into(), values: vec![], batch: false, line: 1 };
        assert_eq!(table_of(&qualified), Some(("Shop".to_string(), "t".to_string())));
        assert_eq!(keyspaces(&entries), BTreeSet::from(["shop".to_string()]));
        let i = capture_workload(&entries, "c.jsonl", "c", 2.0, None, None).unwrap();
        let w = crate::workload::parse_workload(&i.yaml, "c.yaml", &Default::default()).unwrap_or_else(|e| panic!("{e}\n{}", i.yaml));
        let r = w.run.as_ref().unwrap();
        assert_eq!(r.replay.as_ref().unwrap().at_ms, vec![0.0, 125.25, 250.0], "half the captured times at speed 2");
        assert_eq!(r.replay.as_ref().unwrap().ops, vec!["q1", "q2", "q1"]);
        assert_eq!(r.mix, vec![("q1".to_string(), 2.0), ("q2".to_string(), 1.0)]);
        assert!(i.yaml.contains("q1_v0: { type: bigint, dist: sequence, values: [7, 3000000000] }"), "{}", i.yaml);
        assert!(i.warnings.iter().any(|w| w.contains("inferred")));
        let mut schema = Schema::new();
        schema.insert("shop.t".into(), BTreeMap::from([("k".to_string(), "int".to_string()), ("v".to_string(), "text".to_string())]));
        let i = capture_workload(&entries[1..2], "c.jsonl", "c", 1.0, Some("shop"), Some(&schema)).unwrap();
        assert!(i.yaml.contains("q1_v0: { type: int, dist: sequence, values: [8] }") && i.warnings.is_empty(), "{}", i.yaml);
    }

    #[test]
    fn csv_captures_and_mistakes() {
        let src = "t_ms,keyspace,query,values\n5,ks,\"SELECT v FROM t WHERE k = ? AND s = 'a,b'\",\"[1]\"\n9,ks,UPDATE t SET v = 1 WHERE k = 2,\n";
        let e = read_capture(src, "c.csv").unwrap();
        assert_eq!((e.len(), e[0].query.as_str(), e[0].values.clone()), (2, "SELECT v FROM t WHERE k = ? AND s = 'a,b'", vec![Some(Scalar::Int(1))]));
        assert!(read_capture("a,b\n1,2\n", "c.csv").unwrap_err().message.contains("header"));
        assert_eq!(read_capture("{\"query\": \"x\"}\n", "c.jsonl").unwrap_err().line, Some(1));
        assert!(read_capture("\n", "fql").unwrap_err().message.contains("no query"));
    }

    #[test]
    fn times_beyond_any_clock_and_replays_beyond_a_year_are_refused_with_their_file() {
        let line = |t: &str| format!("{{\"t_ms\": {t}, \"keyspace\": \"ks\", \"query\": \"SELECT v FROM t WHERE k = 1\"}}\n");
        for t in ["1e308", "-1e308"] {
            let e = read_capture(&line(t), "c.jsonl").unwrap_err().to_string();
            assert!(e.starts_with("c.jsonl:1: t_ms") && e.contains("is not a time"), "{e}");
        }
        let entries = read_capture(&format!("{}{}", line("0"), line("2000")), "c.jsonl").unwrap();
        let e = capture_workload(&entries, "c.jsonl", "c", 1e-300, None, None).unwrap_err().to_string();
        assert!(e.starts_with("c.jsonl: the capture spans 2.000 s") && e.contains("give a larger --speed"), "{e}");
        assert!(capture_workload(&entries, "c.jsonl", "c", -1.0, None, None).unwrap_err().to_string().contains("a factor above 0"));
        let i = capture_workload(&entries, "c.jsonl", "c", 1.0, None, None).unwrap();
        assert!(i.yaml.contains("duration: 4s"), "{}", i.yaml);
        // an error about a line names the file and the line
        let bytes =
            read_capture("{\"t_ms\": 0, \"keyspace\": \"ks\", \"query\": \"SELECT v FROM t WHERE k = ?\", \"values\": [\"0x01\"]}\n", "c.jsonl").unwrap();
        let e = capture_workload(&bytes, "c.jsonl", "c", 1.0, None, None).unwrap_err().to_string();
        assert!(e.starts_with("c.jsonl:1: SELECT"), "{e}");
    }
}
