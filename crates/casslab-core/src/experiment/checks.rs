//! The values of an experiment's design, checked once for the file's keys and the flags of the
//! same name (`repetitions:` and `--repetitions`, `precision:`, `budget:`, `equivalence:`,
//! `judge:`, `window:`), so that a value gets the same answer in both. Each check returns what
//! is wrong and what to write as one sentence; the file's reader adds file:line and the key,
//! the command line adds the flag. The limits themselves are `crate::limits`.

use super::{Variant, JUDGED_METRICS};
use crate::limits;
use crate::units::parse_duration_s;

/// `repetitions`: a whole number of blocks from 1 to [`limits::MAX_REPETITIONS`].
pub fn repetitions(n: i128) -> Result<u32, String> {
    limits::repetitions(n).map_err(|e| e.to_string())
}

/// `5%`, `5` or `0.5 %` as a fraction, any number (the limits say which are allowed).
fn percent(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').trim().parse::<f64>() {
        Ok(p) if p.is_finite() => Ok(p / 100.0),
        _ => Err(format!("\"{text}\" is not a percentage: write e.g. 5%")),
    }
}

/// `precision`: half the width of a judged change's interval that settles it, above 0 % and
/// below 100 %.
pub fn precision(text: &str) -> Result<f64, String> {
    limits::change_fraction("a precision", percent(text)?).map_err(|e| e.to_string())
}

/// `equivalence`: the margin within which two variants are equivalent, above 0 % and below
/// 100 %.
pub fn equivalence(text: &str) -> Result<f64, String> {
    limits::change_fraction("an equivalence margin", percent(text)?).map_err(|e| e.to_string())
}

/// `budget`: the most an experiment may take, above 0 and at most [`limits::MAX_BUDGET_S`].
pub fn budget_s(text: &str) -> Result<f64, String> {
    if let Ok(n) = text.trim().parse::<f64>() {
        return Err(format!("a budget of \"{text}\": {n} what? write {n}m or {n}s"));
    }
    let s = parse_duration_s(text).map_err(|e| e.to_string())?;
    limits::budget_s(s).map_err(|e| e.to_string())
}

/// `window`: the length of the analysis's windows, above 0.
pub fn window_s(text: &str) -> Result<f64, String> {
    match parse_duration_s(text).map_err(|e| e.to_string())? {
        s if s > 0.0 => Ok(s),
        _ => Err(format!("a window of \"{text}\" holds no interval: give a length above 0, e.g. 60s")),
    }
}

/// One judged figure as written: `OP.METRIC`, METRIC one of [`JUDGED_METRICS`].
pub fn figure(text: &str) -> Result<(), String> {
    match crate::units::split_figure(text) {
        Some((op, m)) if !op.is_empty() && (JUDGED_METRICS.contains(&m) || m == "p99.9") => Ok(()),
        _ => Err(format!("\"{text}\": write figures OP.METRIC, METRIC one of {} (e.g. read.p99)", JUDGED_METRICS.join(", "))),
    }
}

/// Every figure of `judge` is written `OP.METRIC` and names an operation that every variant
/// runs (or `total`): a figure is compared only between operations of the same name, so a
/// judged name that a variant lacks would never be judged.
pub fn judged(judge: &[String], variants: &[Variant]) -> Result<(), String> {
    for f in judge {
        figure(f)?;
        let op = crate::units::split_figure(f).map_or(f.as_str(), |(op, _)| op);
        if op == "total" {
            continue;
        }
        for v in variants {
            let known: Vec<String> = v.workload.run.as_ref().map(|r| r.mix.iter().map(|(n, _)| n.clone()).collect()).unwrap_or_default();
            if !known.iter().any(|k| k == op) {
                return Err(format!(
                    "\"{f}\": variant {} runs no operation \"{op}\"{} (judge an operation every variant runs: {}, or total)",
                    v.name,
                    crate::suggest::hint(op, &known),
                    known.join(", ")
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_refused_with_its_limit_and_what_to_write() {
        assert_eq!(repetitions(3), Ok(3));
        assert!(repetitions(0).unwrap_err().contains("from 1 to 1000"));
        assert_eq!(precision("5%"), Ok(0.05));
        assert!(precision("200%").unwrap_err().contains("below 100"));
        assert_eq!(equivalence("5"), Ok(0.05));
        let e = equivalence("-5%").unwrap_err();
        assert!(e.contains("-5%") && e.contains("above 0"), "{e}");
        assert!(equivalence("lots").unwrap_err().contains("not a percentage"));
        assert_eq!(budget_s("20m"), Ok(1200.0));
        assert!(budget_s("20").unwrap_err().contains("20 what? write 20m or 20s"), "a bare number is no budget");
        assert_eq!(figure("read.p99.9"), Ok(()), "the name the tables print");
        assert_eq!(crate::units::split_figure("read.p99.9"), Some(("read", "p99.9")));
        assert_eq!(crate::units::split_figure("total.ops_s"), Some(("total", "ops_s")));
        assert!(budget_s("0s").unwrap_err().contains("runs nothing"));
        assert!(budget_s("1000000h").unwrap_err().contains("longer than a year"));
        assert!(budget_s("200h").unwrap_err().contains("at most 168h"));
        assert!(window_s("0s").unwrap_err().contains("above 0"));
        assert!(figure("read.p98").unwrap_err().contains("p999"));
        assert_eq!(figure("read.p99"), Ok(()));
    }
}
