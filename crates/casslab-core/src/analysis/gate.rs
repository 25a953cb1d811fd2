//! Gates that turn a comparison into pass/fail for a CI pipeline: [`Gate`], a threshold on one
//! figure of one operation (`read.p99 > 45ms` fails when the read p99 is above 45 ms), and
//! [`MaxRegression`], the largest significant regression against the baseline allowed
//! (`10%`). This file parses them and evaluates a gate on a value; which runs they are
//! checked against, and what is printed, is the caller's business.

use super::window::OpRef;
use super::Metric;
use std::fmt;
use std::str::FromStr;

/// The figures a gate can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateMetric {
    Stat(Metric),
    /// Highest latency recorded.
    Max,
    /// Failed operations over the measured phase.
    Errors,
}

/// Every figure a gate reads, as messages and help list them (`p99.9` is read as `p999` too).
pub const GATE_METRICS: [&str; 8] = ["ops_s", "mean", "p50", "p95", "p99", "p999", "max", "errors"];

/// The figures an SLA (`--find-max`) bounds: every gate's but throughput, which is what the
/// search finds.
pub fn sla_metrics() -> impl Iterator<Item = &'static str> {
    GATE_METRICS.into_iter().filter(|m| GateMetric::parse(m) != Some(GateMetric::Stat(Metric::OpsPerS)))
}

impl GateMetric {
    fn parse(s: &str) -> Option<GateMetric> {
        Some(match s {
            "ops_s" => GateMetric::Stat(Metric::OpsPerS),
            "mean" => GateMetric::Stat(Metric::Mean),
            "p50" => GateMetric::Stat(Metric::P50),
            "p95" => GateMetric::Stat(Metric::P95),
            "p99" => GateMetric::Stat(Metric::P99),
            "p999" | "p99.9" => GateMetric::Stat(Metric::P999),
            "max" => GateMetric::Max,
            "errors" => GateMetric::Errors,
            _ => return None,
        })
    }

    pub fn is_latency(self) -> bool {
        matches!(self, GateMetric::Max) || matches!(self, GateMetric::Stat(m) if m.is_latency())
    }

    /// Name in messages: "p99", "max", "errors", "throughput".
    pub fn noun(self) -> &'static str {
        match self {
            GateMetric::Stat(m) => m.noun(),
            GateMetric::Max => "max",
            GateMetric::Errors => "errors",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Gt,
    Ge,
    Lt,
    Le,
}

impl Cmp {
    pub fn as_str(self) -> &'static str {
        match self {
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
        }
    }
}

/// `OP.METRIC CMP VALUE`: the gate fails when the condition holds. Latency values are kept
/// in nanoseconds, throughput in operations per second.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// An operation name, or `total`.
    pub op: String,
    pub metric: GateMetric,
    pub cmp: Cmp,
    pub value: f64,
    /// As the user wrote it.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GateError {
    #[error("\"{0}\": write OP.METRIC, a comparison (>, >=, <, <=) and a value, e.g. 'read.p99 > 45ms'")]
    Syntax(String),
    #[error("\"{text}\": unknown metric \"{metric}\"; use one of {}", GATE_METRICS.join(", "))]
    UnknownMetric { text: String, metric: String },
    #[error("\"{0}\": a latency needs a unit: ns, us, ms or s (e.g. 45ms)")]
    MissingUnit(String),
    #[error("\"{text}\": {metric} is a plain number, without a unit")]
    UnitNotAllowed { text: String, metric: String },
    #[error("\"{0}\": the value is not a non-negative number")]
    BadNumber(String),
    #[error("\"{0}\": write the largest regression allowed as a percentage, e.g. 10%")]
    BadPercentage(String),
    #[error("gate '{gate}': {side} has no operation \"{op}\"; it has {known}")]
    UnknownOp { gate: String, side: String, op: String, known: String },
}

impl GateError {
    /// The same mistake, quoting `text` (what the user wrote) instead of the text parsed.
    fn quoting(self, text: &str) -> GateError {
        let text = text.to_string();
        match self {
            GateError::Syntax(_) => GateError::Syntax(text),
            GateError::UnknownMetric { metric, .. } => GateError::UnknownMetric { text, metric },
            GateError::MissingUnit(_) => GateError::MissingUnit(text),
            GateError::UnitNotAllowed { metric, .. } => GateError::UnitNotAllowed { text, metric },
            GateError::BadNumber(_) => GateError::BadNumber(text),
            GateError::BadPercentage(_) => GateError::BadPercentage(text),
            GateError::UnknownOp { side, op, known, .. } => GateError::UnknownOp { gate: text, side, op, known },
        }
    }
}

impl FromStr for Gate {
    type Err = GateError;

    fn from_str(text: &str) -> Result<Gate, GateError> {
        let syntax = || GateError::Syntax(text.to_string());
        let (at, cmp) = [(">=", Cmp::Ge), ("<=", Cmp::Le), (">", Cmp::Gt), ("<", Cmp::Lt)]
            .iter()
            .find_map(|(s, c)| text.find(s).map(|i| ((i, s.len()), *c)))
            .ok_or_else(syntax)?;
        let (lhs, rhs) = (text[..at.0].trim(), text[at.0 + at.1..].trim());
        let (op, metric_name) = crate::units::split_figure(lhs).ok_or_else(syntax)?;
        if op.trim().is_empty() || rhs.is_empty() || rhs.contains(['<', '>']) {
            return Err(syntax());
        }
        let metric =
            GateMetric::parse(metric_name.trim()).ok_or_else(|| GateError::UnknownMetric { text: text.to_string(), metric: metric_name.trim().to_string() })?;
        let value = parse_value(text, rhs, metric)?;
        Ok(Gate { op: op.trim().to_string(), metric, cmp, value, text: text.to_string() })
    }
}

fn parse_value(text: &str, v: &str, metric: GateMetric) -> Result<f64, GateError> {
    let split = v.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '_')).unwrap_or(v.len());
    let (num, unit) = (v[..split].replace('_', ""), v[split..].trim());
    let x: f64 = num.parse().ok().filter(|x: &f64| x.is_finite() && *x >= 0.0).ok_or_else(|| GateError::BadNumber(text.into()))?;
    if metric.is_latency() {
        let ns_per = match unit {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            _ => return Err(GateError::MissingUnit(text.into())),
        };
        Ok(x * ns_per)
    } else if unit.is_empty() || (metric == GateMetric::Stat(Metric::OpsPerS) && unit == "/s") {
        Ok(x)
    } else {
        let name = if metric == GateMetric::Errors { "errors" } else { "ops_s" };
        Err(GateError::UnitNotAllowed { text: text.into(), metric: name.into() })
    }
}

impl Gate {
    pub fn op_ref(&self) -> OpRef {
        if self.op == "total" {
            OpRef::Total
        } else {
            OpRef::Op(self.op.clone())
        }
    }

    /// Whether the gate fails on `observed` (ns for latencies). An undefined value (NaN: no
    /// successful operation measured) fails it too: a gate must not pass for lack of data.
    pub fn fails(&self, observed: f64) -> bool {
        if observed.is_nan() {
            return true;
        }
        match self.cmp {
            Cmp::Gt => observed > self.value,
            Cmp::Ge => observed >= self.value,
            Cmp::Lt => observed < self.value,
            Cmp::Le => observed <= self.value,
        }
    }

    /// A value of this gate's metric for messages: "46.2 ms", "5000 ops/s", "3 errors".
    pub fn format_value(&self, v: f64) -> String {
        if v.is_nan() {
            "undefined (no successful operations)".into()
        } else if self.metric.is_latency() {
            format!("{} ms", self.number(v))
        } else if self.metric == GateMetric::Errors {
            format!("{} errors", self.number(v))
        } else {
            format!("{} ops/s", self.number(v))
        }
    }

    /// `v` as a plain number in the unit users read (ms for latencies), rounded as the tables
    /// round it but with as many more decimals as it takes for the printed figure to sit on
    /// the same side of the limit as `v` itself: a p99 of 2.998 ms under "p99 < 3ms" prints
    /// "2.998", never "3.00" beside "met".
    pub fn number(&self, v: f64) -> String {
        if v.is_nan() {
            return "-".into();
        }
        let latency = self.metric.is_latency();
        let shown = if latency { v / 1e6 } else { v };
        let mut decimals = if !latency || shown >= 100.0 {
            0
        } else if shown >= 10.0 {
            1
        } else {
            2
        };
        loop {
            let text = format!("{shown:.decimals$}");
            let back: f64 = text.parse().unwrap_or(shown);
            let back = if latency { back * 1e6 } else { back };
            if decimals >= 6 || self.fails(back) == self.fails(v) {
                return text;
            }
            decimals += 1;
        }
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The largest significant regression allowed against the baseline, as a fraction (0.10).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaxRegression(pub f64);

impl FromStr for MaxRegression {
    type Err = GateError;

    fn from_str(s: &str) -> Result<MaxRegression, GateError> {
        let t = s.trim();
        let num = t.strip_suffix('%').unwrap_or(t).trim();
        match num.parse::<f64>() {
            Ok(p) if p.is_finite() && p >= 0.0 => Ok(MaxRegression(p / 100.0)),
            _ => Err(GateError::BadPercentage(s.to_string())),
        }
    }
}

/// An SLA that cannot be searched for. Each says what was written (`--find-max TEXT`) once.
#[derive(Debug, thiserror::Error)]
pub enum SlaError {
    #[error("--find-max \"{0}\": write [OP.]METRIC < VALUE, e.g. 'p99 < 10ms' or 'read.p99 < 5ms'")]
    Syntax(String),
    #[error("--find-max \"{text}\": unknown metric \"{metric}\"; an SLA bounds one of {} (throughput, ops_s, is what the search finds)", sla_metrics().collect::<Vec<_>>().join(", "))]
    UnknownMetric { text: String, metric: String },
    /// A value the gate's rules refuse (a latency without a unit, ...); it quotes `TEXT`.
    #[error("--find-max {problem}")]
    Value { problem: GateError },
    #[error("--find-max {0}: the SLA must be about latency or errors (throughput is what is searched)")]
    Throughput(String),
    #[error("--find-max: the run has no operation \"{0}\"")]
    UnknownOperation(String),
    #[error("--find-max {text}: an SLA bounds latency and errors from above; write {fixed}")]
    Backwards { text: String, fixed: String },
}

/// Parses an SLA: `p99 < 10ms` (all operations together) or `read.p99 < 10ms`.
pub fn parse_sla(text: &str) -> Result<Gate, SlaError> {
    let lhs_end = text.find(['<', '>']).unwrap_or(text.len());
    let lhs = text[..lhs_end].trim();
    // `p99.9` is a metric, not an operation and a metric
    let full = if lhs.contains('.') && lhs != "p99.9" { text.to_string() } else { format!("total.{}", text.trim()) };
    let gate: Gate = full.parse().map_err(|e| match e {
        GateError::Syntax(_) => SlaError::Syntax(text.to_string()),
        GateError::UnknownMetric { metric, .. } => SlaError::UnknownMetric { text: text.to_string(), metric },
        e => SlaError::Value { problem: e.quoting(text) },
    })?;
    if matches!(gate.metric, GateMetric::Stat(Metric::OpsPerS)) {
        return Err(SlaError::Throughput(text.to_string()));
    }
    if matches!(gate.cmp, Cmp::Gt | Cmp::Ge) {
        let fixed = text.replacen(">=", "<=", 1).replacen('>', "<", 1);
        return Err(SlaError::Backwards { text: text.to_string(), fixed });
    }
    Ok(gate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sla_bounds_from_above_and_reads_the_printed_names() {
        let e = parse_sla("p99 > 10ms").unwrap_err().to_string();
        assert!(e.contains("bounds latency and errors from above") && e.contains("write p99 < 10ms"), "{e}");
        assert!(parse_sla("read.p99 >= 10ms").unwrap_err().to_string().contains("write read.p99 <= 10ms"));
        let g = parse_sla("p99.9 < 20ms").unwrap();
        assert_eq!((g.op.as_str(), g.metric), ("total", GateMetric::Stat(Metric::P999)));
        assert_eq!(parse_sla("read.p99.9 < 20ms").unwrap().op, "read");
        assert_eq!("read.p99.9 > 45ms".parse::<Gate>().unwrap().metric, GateMetric::Stat(Metric::P999));
    }

    /// A mistake in an SLA quotes what was written, not the `total.` casslab puts before it,
    /// and names only the figures an SLA can bound.
    #[test]
    fn sla_mistakes_quote_what_was_written() {
        let e = |s: &str| parse_sla(s).unwrap_err().to_string();
        assert_eq!(e("p99 < 10"), "--find-max \"p99 < 10\": a latency needs a unit: ns, us, ms or s (e.g. 45ms)");
        assert_eq!(e("read.p99 10ms"), "--find-max \"read.p99 10ms\": write [OP.]METRIC < VALUE, e.g. 'p99 < 10ms' or 'read.p99 < 5ms'");
        let unknown = e("p98 < 10ms");
        assert!(unknown.starts_with("--find-max \"p98 < 10ms\": unknown metric \"p98\"; an SLA bounds one of mean, p50, "), "{unknown}");
        assert!(!unknown.contains("total.") && unknown.contains("ops_s, is what the search finds"), "{unknown}");
        assert!(e("ops_s < 5000").contains("throughput is what is searched"));
        // every figure listed is one an SLA takes
        for m in sla_metrics() {
            let unit = if m == "errors" { "" } else { "ms" };
            assert!(parse_sla(&format!("{m} < 1{unit}")).is_ok(), "{m}");
        }
        assert_eq!(sla_metrics().count(), GATE_METRICS.len() - 1);
        assert!(GATE_METRICS.iter().all(|m| GateMetric::parse(m).is_some()));
    }

    #[test]
    fn gates_parse_with_units() {
        let g: Gate = "read.p99 > 45ms".parse().unwrap();
        assert_eq!((g.op.as_str(), g.metric, g.cmp, g.value), ("read", GateMetric::Stat(Metric::P99), Cmp::Gt, 45e6));
        let g: Gate = "total.ops_s<5000".parse().unwrap();
        assert_eq!((g.op_ref(), g.cmp, g.value), (OpRef::Total, Cmp::Lt, 5000.0));
        let g: Gate = " my.op.p999 >= 1.5s ".parse().unwrap();
        assert_eq!((g.op.as_str(), g.cmp, g.value), ("my.op", Cmp::Ge, 1.5e9));
        assert_eq!("update.max <= 800us".parse::<Gate>().unwrap().value, 800e3);
        assert_eq!("read.errors > 0".parse::<Gate>().unwrap().metric, GateMetric::Errors);
        assert_eq!("read.ops_s < 10_000/s".parse::<Gate>().unwrap().value, 10_000.0);
    }

    #[test]
    fn gate_mistakes_get_clear_messages() {
        let err = |s: &str| s.parse::<Gate>().unwrap_err().to_string();
        assert_eq!(err("read.p99 45ms"), "\"read.p99 45ms\": write OP.METRIC, a comparison (>, >=, <, <=) and a value, e.g. 'read.p99 > 45ms'");
        assert!(err("p99 > 4ms").contains("write OP.METRIC"));
        assert!(err("read.p98 > 4ms").contains("unknown metric \"p98\"; use one of ops_s, mean, p50, p95, p99, p999, max, errors"));
        assert!(err("read.p99 > 45").contains("a latency needs a unit"));
        assert!(err("read.p99 > 45 parsecs").contains("a latency needs a unit: ns, us, ms or s"));
        assert!(err("read.ops_s > 5ms").contains("ops_s is a plain number"));
        assert!(err("read.p99 > -1ms").contains("not a non-negative number"));
        assert!(err("read.p99 > ").contains("write OP.METRIC"));
    }

    #[test]
    fn gates_fail_when_their_condition_holds_or_data_is_missing() {
        let g: Gate = "read.p99 > 45ms".parse().unwrap();
        assert!(g.fails(46e6) && !g.fails(45e6) && !g.fails(10e6));
        assert!(g.fails(f64::NAN));
        assert!("read.p99 >= 45ms".parse::<Gate>().unwrap().fails(45e6));
        assert!("read.ops_s < 1000".parse::<Gate>().unwrap().fails(999.0));
        assert_eq!(g.format_value(46.2e6), "46.2 ms");
        assert_eq!("read.ops_s < 1000".parse::<Gate>().unwrap().format_value(999.4), "999 ops/s");
        // rounding never carries a figure across the limit
        let sla: Gate = "total.p99 < 3ms".parse().unwrap();
        assert_eq!(sla.number(2_998_271.0), "2.998");
        assert_eq!(sla.number(3_000_319.0), "3.00");
        assert_eq!(sla.number(2_500_000.0), "2.50");
        assert_eq!("total.ops_s >= 5000".parse::<Gate>().unwrap().number(4_999.6), "4999.6");
    }

    #[test]
    fn max_regression_is_a_percentage() {
        assert_eq!("10%".parse::<MaxRegression>().unwrap(), MaxRegression(0.10));
        assert_eq!("2.5".parse::<MaxRegression>().unwrap(), MaxRegression(0.025));
        assert!("ten".parse::<MaxRegression>().unwrap_err().to_string().contains("as a percentage, e.g. 10%"));
        assert!("-5%".parse::<MaxRegression>().is_err());
    }
}
