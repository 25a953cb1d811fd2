//! Load that changes over time: the shape of a run's offered rate (open loop) or of its
//! requests in flight (closed loop). A shape is stages in order — a level held, a straight
//! ramp, steps, a sine between two levels (a daily curve compressed into minutes) — and spikes
//! laid over them. It is read from one small text form, the same on the command line and in
//! files (`ramp 100..5000 over 60s, hold 2m, 500 for 30s, spike x5 for 5s every 60s`), or from
//! a file's list of stages (`- {to: 5000, over: 60s}`), and compiled by [`curve`] into the
//! exact schedule of intended start times the engine follows. Plain data and arithmetic:
//! nothing here runs or waits.

pub mod curve;

pub use curve::{Course, Curve, StageInfo, HELD_SHARE};

use crate::limits::{MAX_CONCURRENCY, MAX_SCHEDULE_LEVELS, MAX_SPIKES};
use crate::units::parse_duration_s;
use serde::{Deserialize, Serialize};

/// A load that changes over time: stages one after the other, then spikes over them. Time
/// counts from the start of the run phase (warm-up included), as events' times do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadShape {
    pub stages: Vec<Stage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spikes: Option<Spikes>,
}

/// One stage of a shape. A level is operations per second (or requests in flight).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Stage {
    /// `level` (the level before it when `None`) held for `for_s` (`None`: until the run ends).
    Hold { level: Option<f64>, for_s: Option<f64> },
    /// A straight line from `from` (the level before it when `None`) to `to` over `over_s`.
    Ramp { from: Option<f64>, to: f64, over_s: f64 },
    /// Each level held for `each_s`, in turn.
    Steps { levels: Vec<f64>, each_s: f64 },
    /// From `low` up to `high` and back down, once every `period_s`, for `for_s`.
    Sine { low: f64, high: f64, period_s: f64, for_s: f64 },
}

/// The level multiplied by `factor` for `for_s`, every `every_s`, the first from `first_at_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spikes {
    pub factor: f64,
    pub for_s: f64,
    pub every_s: f64,
    pub first_at_s: f64,
}

/// A shape that cannot be read: the text (or stage) as written and what to write instead.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[error("\"{text}\": {problem}")]
pub struct ShapeError {
    pub text: String,
    pub problem: String,
}

/// How the stages are written, for error messages.
pub const GRAMMAR: &str = "stages separated by commas: N (a fixed level), N for 30s, ramp [A..]B over 60s, hold 2m, steps A B C each 30s \
(or steps A..B by S each 30s), sine LOW..HIGH period 10m for 30m, spike x5 for 5s every 60s [from 30s]";

fn err(text: &str, problem: impl Into<String>) -> ShapeError {
    ShapeError { text: text.trim().to_string(), problem: problem.into() }
}

/// A level: `5000`, `5000/s`, `5k`, at least 0.
fn level(text: &str, word: &str) -> Result<f64, ShapeError> {
    let w = word.trim().trim_end_matches("/s");
    let (num, mult) = match w.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1000.0),
        None => (w, 1.0),
    };
    match num.parse::<f64>().map(|x| x * mult) {
        Ok(x) if x >= 0.0 && x.is_finite() => Ok(x),
        _ => Err(err(text, format!("\"{word}\" is not a level (a number ≥ 0, e.g. 5000 or 5k)"))),
    }
}

/// The levels of `steps A..B by S`, refused before any is made when there would be more than
/// [`MAX_SCHEDULE_LEVELS`].
fn stepped(text: &str, a: f64, b: f64, by: f64) -> Result<Vec<f64>, ShapeError> {
    let n = ((b - a).abs() / by + 1e-9).floor();
    if n.is_nan() || n >= MAX_SCHEDULE_LEVELS as f64 {
        return Err(err(
            text,
            format!(
                "{} levels is more than a schedule may have ({MAX_SCHEDULE_LEVELS}); make the step `by` larger",
                if n < 1e12 { format!("{}", n + 1.0) } else { format!("{n:.1e}") }
            ),
        ));
    }
    let n = n as usize;
    Ok((0..=n).map(|i| if b >= a { a + by * i as f64 } else { a - by * i as f64 }).collect())
}

/// A duration above 0.
fn span(text: &str, word: &str) -> Result<f64, ShapeError> {
    match parse_duration_s(word) {
        Ok(s) if s > 0.0 => Ok(s),
        Ok(_) => Err(err(text, format!("\"{word}\": a stage lasts longer than 0"))),
        Err(e) => Err(err(text, e.to_string())),
    }
}

/// `A..B` as two levels, or `B` alone as (None, B).
fn range(text: &str, word: &str) -> Result<(Option<f64>, f64), ShapeError> {
    match word.split_once("..") {
        Some((a, b)) => Ok((Some(level(text, a)?), level(text, b)?)),
        None => Ok((None, level(text, word)?)),
    }
}

/// The value after `key` among `words` (`over 60s` → `60s`).
fn after<'a>(text: &str, words: &[&'a str], key: &str) -> Result<&'a str, ShapeError> {
    let at = words.iter().position(|w| w.eq_ignore_ascii_case(key)).ok_or_else(|| err(text, format!("missing `{key} …`; write {GRAMMAR}")))?;
    words.get(at + 1).copied().ok_or_else(|| err(text, format!("`{key}` needs a value")))
}

impl LoadShape {
    /// A fixed level for the whole run.
    pub fn fixed(level: f64) -> LoadShape {
        LoadShape { stages: vec![Stage::Hold { level: Some(level), for_s: None }], spikes: None }
    }

    /// The same shape with every level multiplied by `factor` (one of several runs' share of
    /// it); its times and spikes' factors stay as they are.
    pub fn scaled(&self, factor: f64) -> LoadShape {
        let x = |l: f64| l * factor;
        let stages = self
            .stages
            .iter()
            .map(|s| match s {
                Stage::Hold { level, for_s } => Stage::Hold { level: level.map(x), for_s: *for_s },
                Stage::Ramp { from, to, over_s } => Stage::Ramp { from: from.map(x), to: x(*to), over_s: *over_s },
                Stage::Steps { levels, each_s } => Stage::Steps { levels: levels.iter().map(|l| x(*l)).collect(), each_s: *each_s },
                Stage::Sine { low, high, period_s, for_s } => Stage::Sine { low: x(*low), high: x(*high), period_s: *period_s, for_s: *for_s },
            })
            .collect();
        LoadShape { stages, spikes: self.spikes.clone() }
    }

    /// Reads the text form: stages separated by commas (see [`GRAMMAR`]).
    pub fn parse(text: &str) -> Result<LoadShape, ShapeError> {
        let mut shape = LoadShape { stages: Vec::new(), spikes: None };
        for part in text.split([',', ';']).map(str::trim).filter(|p| !p.is_empty()) {
            if shape.stages.len() >= MAX_SCHEDULE_LEVELS {
                return Err(err(
                    &text[..text.len().min(80)],
                    format!("more stages than a schedule may have ({MAX_SCHEDULE_LEVELS}); use fewer stages or `steps`"),
                ));
            }
            shape.push(part)?;
        }
        shape.check(text)?;
        Ok(shape)
    }

    /// Adds one stage (or the spikes) written as text.
    fn push(&mut self, part: &str) -> Result<(), ShapeError> {
        let words: Vec<&str> = part.split_whitespace().collect();
        let first = words[0].to_ascii_lowercase();
        let stage = match first.as_str() {
            "hold" if words.len() == 2 => Stage::Hold { level: None, for_s: Some(span(part, words[1])?) },
            "hold" => return Err(err(part, "write `hold 2m`: the level before it, held for a while")),
            "ramp" => {
                let target = words.get(1).filter(|w| !w.eq_ignore_ascii_case("to")).or(words.get(2)).copied().unwrap_or("");
                let (from, to) = range(part, target)?;
                Stage::Ramp { from, to, over_s: span(part, after(part, &words, "over")?)? }
            }
            "steps" => {
                let each_s = span(part, after(part, &words, "each")?)?;
                let end = words.iter().position(|w| w.eq_ignore_ascii_case("each") || w.eq_ignore_ascii_case("by")).unwrap_or(words.len());
                let levels = match (&words[1..end], words.iter().any(|w| w.eq_ignore_ascii_case("by"))) {
                    ([r], true) => {
                        let (Some(a), b) = range(part, r)? else { return Err(err(part, "steps A..B by S each D needs both ends, e.g. 1000..8000")) };
                        let by = level(part, after(part, &words, "by")?)?;
                        if by <= 0.0 {
                            return Err(err(part, "`by` must be above 0"));
                        }
                        stepped(part, a, b, by)?
                    }
                    (list, false) if !list.is_empty() => list.iter().map(|w| level(part, w)).collect::<Result<Vec<_>, _>>()?,
                    _ => return Err(err(part, "write `steps 1000 2000 4000 each 30s` or `steps 1000..8000 by 1000 each 30s`")),
                };
                Stage::Steps { levels, each_s }
            }
            "sine" => {
                let (low, high) = match range(part, words.get(1).copied().unwrap_or(""))? {
                    (Some(l), h) if l <= h => (l, h),
                    _ => return Err(err(part, "write `sine LOW..HIGH period 10m for 30m`, LOW at most HIGH")),
                };
                Stage::Sine { low, high, period_s: span(part, after(part, &words, "period")?)?, for_s: span(part, after(part, &words, "for")?)? }
            }
            "spike" | "spikes" => {
                let f = words.get(1).copied().unwrap_or("");
                let factor = f.trim_start_matches(['x', '×']).trim_end_matches(['x', '×']).parse::<f64>().ok().filter(|x| *x > 0.0 && x.is_finite());
                let factor = factor.ok_or_else(|| err(part, "write `spike x5 for 5s every 60s`: a factor above 0, e.g. x5"))?;
                let (for_s, every_s) = (span(part, after(part, &words, "for")?)?, span(part, after(part, &words, "every")?)?);
                let first_at_s = match words.iter().any(|w| w.eq_ignore_ascii_case("from")) {
                    true => parse_duration_s(after(part, &words, "from")?).map_err(|e| err(part, e.to_string()))?,
                    false => every_s,
                };
                if for_s >= every_s {
                    return Err(err(part, "a spike must be shorter than the time between spikes"));
                }
                if self.spikes.is_some() {
                    return Err(err(part, "one `spike` per shape"));
                }
                self.spikes = Some(Spikes { factor, for_s, every_s, first_at_s });
                return Ok(());
            }
            _ if words.len() == 1 => Stage::Hold { level: Some(level(part, words[0])?), for_s: None },
            _ if words.len() == 3 && words[1].eq_ignore_ascii_case("for") => {
                Stage::Hold { level: Some(level(part, words[0])?), for_s: Some(span(part, words[2])?) }
            }
            _ if words[0].contains("..") => {
                let (from, to) = range(part, words[0])?;
                Stage::Ramp { from, to, over_s: span(part, after(part, &words, "over")?)? }
            }
            _ => return Err(err(part, format!("unknown stage; write {GRAMMAR}"))),
        };
        self.stages.push(stage);
        Ok(())
    }

    /// What a whole shape must be: some stage, at most [`MAX_SCHEDULE_LEVELS`] levels in all,
    /// an open-ended level only last, a level before the first `hold`.
    fn check(&self, text: &str) -> Result<(), ShapeError> {
        if self.stages.is_empty() {
            return Err(err(text, format!("no stage; write {GRAMMAR}")));
        }
        let levels: usize = self.stages.iter().map(|s| if let Stage::Steps { levels, .. } = s { levels.len() } else { 1 }).sum();
        if levels > MAX_SCHEDULE_LEVELS {
            return Err(err(text, format!("{levels} levels is more than a schedule may have ({MAX_SCHEDULE_LEVELS}); use fewer stages or steps")));
        }
        if !self.peak().is_finite() {
            return Err(err(text, "the spikes take the level beyond any number; use a smaller factor"));
        }
        for (i, s) in self.stages.iter().enumerate() {
            if matches!(s, Stage::Hold { for_s: None, .. }) && i + 1 < self.stages.len() {
                return Err(err(text, "a level without `for` lasts until the run ends: only the last stage may be one (write `N for 30s`)"));
            }
        }
        if let Some(Stage::Hold { level: None, .. }) = self.stages.first() {
            return Err(err(text, "`hold` keeps the level before it: start with a level, e.g. `1000 for 30s`"));
        }
        Ok(())
    }

    /// What a schedule of requests in flight must be besides a shape: every level at least 1
    /// (a level of 0 would run nothing, as `--concurrency 0` would) and its peak at most
    /// [`MAX_CONCURRENCY`].
    pub fn check_in_flight(&self) -> Result<(), ShapeError> {
        let text = self.to_string();
        let lowest = self.levels().into_iter().fold(f64::INFINITY, f64::min);
        if lowest < 1.0 {
            return Err(err(
                &text,
                format!("a level of {} requests in flight runs nothing: every level of a schedule of requests in flight is at least 1", num(lowest)),
            ));
        }
        if self.peak() > MAX_CONCURRENCY as f64 {
            return Err(err(&text, format!("{} requests in flight is more than casslab keeps in flight ({MAX_CONCURRENCY}); give at most {MAX_CONCURRENCY}, or run several loaders (`--shard 0/N`)", num(self.peak()))));
        }
        Ok(())
    }

    /// Every level the stages name (a held level, a ramp's ends, each step, a sine's ends).
    fn levels(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for s in &self.stages {
            match s {
                Stage::Hold { level, .. } => out.extend(level),
                Stage::Ramp { from, to, .. } => out.extend(from.iter().chain([to])),
                Stage::Steps { levels, .. } => out.extend(levels),
                Stage::Sine { low, high, .. } => out.extend([low, high]),
            }
        }
        out
    }

    /// Whether a run of `horizon_s` seconds can follow the shape: its spikes, laid over that
    /// length, are at most [`MAX_SPIKES`].
    pub fn check_horizon(&self, horizon_s: f64) -> Result<(), ShapeError> {
        let Some(sp) = &self.spikes else { return Ok(()) };
        let laid = ((horizon_s - sp.first_at_s) / sp.every_s).ceil().max(0.0);
        if laid > MAX_SPIKES as f64 {
            return Err(err(
                &self.to_string(),
                format!(
                    "{laid} spikes over a run of {} is more than a run may lay ({MAX_SPIKES}); space them further apart (`every`) or shorten the run",
                    dur(horizon_s)
                ),
            ));
        }
        Ok(())
    }

    /// How long the stages last together (`None`: the last one lasts until the run ends).
    pub fn length_s(&self) -> Option<f64> {
        self.stages.iter().map(Stage::length_s).sum()
    }

    /// The highest level the shape reaches (spikes included).
    pub fn peak(&self) -> f64 {
        let mut before = 0.0_f64;
        let mut peak = 0.0_f64;
        for s in &self.stages {
            let (high, end) = match s {
                Stage::Hold { level, .. } => (level.unwrap_or(before), level.unwrap_or(before)),
                Stage::Ramp { from, to, .. } => (from.unwrap_or(before).max(*to), *to),
                Stage::Steps { levels, .. } => (levels.iter().copied().fold(0.0, f64::max), levels.last().copied().unwrap_or(before)),
                Stage::Sine { high, .. } => (*high, *high),
            };
            peak = peak.max(high);
            before = end;
        }
        peak * self.spikes.as_ref().map_or(1.0, |s| s.factor.max(1.0))
    }

    /// A shape that is one level for the whole run.
    pub fn as_fixed(&self) -> Option<f64> {
        match (self.stages.as_slice(), &self.spikes) {
            ([Stage::Hold { level: Some(l), for_s: None }], None) => Some(*l),
            _ => None,
        }
    }
}

impl Stage {
    pub fn length_s(&self) -> Option<f64> {
        match self {
            Stage::Hold { for_s, .. } => *for_s,
            Stage::Ramp { over_s, .. } => Some(*over_s),
            Stage::Steps { levels, each_s } => Some(*each_s * levels.len() as f64),
            Stage::Sine { for_s, .. } => Some(*for_s),
        }
    }
}

/// A level as written: `5000`, `2.5`.
fn num(x: f64) -> String {
    format!("{}", (x * 1000.0).round() / 1000.0)
}

/// A duration as written: `60s`, `2m`, `1.5s`.
pub fn dur(s: f64) -> String {
    match s {
        s if s >= 60.0 && s % 60.0 == 0.0 => format!("{}m", num(s / 60.0)),
        s => format!("{}s", num(s)),
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::Hold { level: Some(l), for_s: None } => write!(f, "{}", num(*l)),
            Stage::Hold { level: Some(l), for_s: Some(d) } => write!(f, "{} for {}", num(*l), dur(*d)),
            Stage::Hold { level: None, for_s } => write!(f, "hold {}", for_s.map_or("until the end".into(), dur)),
            Stage::Ramp { from: Some(a), to, over_s } => write!(f, "ramp {}..{} over {}", num(*a), num(*to), dur(*over_s)),
            Stage::Ramp { from: None, to, over_s } => write!(f, "ramp {} over {}", num(*to), dur(*over_s)),
            Stage::Steps { levels, each_s } => write!(f, "steps {} each {}", levels.iter().map(|l| num(*l)).collect::<Vec<_>>().join(" "), dur(*each_s)),
            Stage::Sine { low, high, period_s, for_s } => write!(f, "sine {}..{} period {} for {}", num(*low), num(*high), dur(*period_s), dur(*for_s)),
        }
    }
}

/// The text form, which [`LoadShape::parse`] reads back.
impl std::fmt::Display for LoadShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = self.stages.iter().map(Stage::to_string).collect();
        if let Some(s) = &self.spikes {
            parts.push(format!("spike x{} for {} every {} from {}", num(s.factor), dur(s.for_s), dur(s.every_s), dur(s.first_at_s)));
        }
        write!(f, "{}", parts.join(", "))
    }
}

/// Reads a file's `rate:` (or `concurrency:`) value: a number, the text form, or a list whose
/// items are stages as text or as maps (`{to: 5000, over: 60s}`, `{from: 100, to: 5000, over:
/// 60s}`, `{hold: 2m}`, `{rate: 1000, for: 30s}`, `{steps: [1000, 2000], each: 30s}`, `{sine:
/// [500, 5000], period: 10m, for: 30m}`, `{spike: 5, for: 5s, every: 60s}`).
pub fn from_value(v: &serde_json::Value) -> Result<LoadShape, ShapeError> {
    use serde_json::Value;
    match v {
        Value::Number(n) => LoadShape::parse(&n.to_string()),
        Value::String(s) => LoadShape::parse(s),
        Value::Array(items) => {
            let parts = items.iter().map(stage_text).collect::<Result<Vec<_>, _>>()?;
            LoadShape::parse(&parts.join(", "))
        }
        other => Err(err(&other.to_string(), format!("write a level, a schedule as text, or a list of stages ({GRAMMAR})"))),
    }
}

/// One list item of a file's schedule as the text form.
fn stage_text(v: &serde_json::Value) -> Result<String, ShapeError> {
    use serde_json::Value;
    let show = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let Value::Object(m) = v else { return Ok(show(v)) };
    let get = |k: &str| m.get(k).map(show);
    let list = |k: &str| m.get(k).and_then(Value::as_array).map(|a| a.iter().map(show).collect::<Vec<_>>());
    let keys: Vec<&str> = m.keys().map(String::as_str).collect();
    let text = match () {
        _ if m.contains_key("spike") => {
            let from = get("from").map(|f| format!(" from {f}")).unwrap_or_default();
            format!("spike x{} for {} every {}{from}", get("spike").unwrap_or_default(), get("for").unwrap_or_default(), get("every").unwrap_or_default())
        }
        _ if m.contains_key("steps") => format!("steps {} each {}", list("steps").unwrap_or_default().join(" "), get("each").unwrap_or_default()),
        _ if m.contains_key("sine") => {
            let ends = list("sine").unwrap_or_default().join("..");
            format!("sine {ends} period {} for {}", get("period").unwrap_or_default(), get("for").unwrap_or_default())
        }
        _ if m.contains_key("to") => match get("from") {
            Some(from) => format!("ramp {from}..{} over {}", get("to").unwrap_or_default(), get("over").unwrap_or_default()),
            None => format!("ramp {} over {}", get("to").unwrap_or_default(), get("over").unwrap_or_default()),
        },
        _ if m.contains_key("hold") => format!("hold {}", get("hold").unwrap_or_default()),
        _ if m.contains_key("rate") || m.contains_key("level") => {
            let l = get("rate").or_else(|| get("level")).unwrap_or_default();
            match get("for") {
                Some(d) => format!("{l} for {d}"),
                None => l,
            }
        }
        _ => return Err(err(&v.to_string(), format!("unknown stage keys {keys:?}; write {{to: 5000, over: 60s}}, {{hold: 2m}}, {{rate: 1000, for: 30s}}, {{steps: [1000, 2000], each: 30s}}, {{sine: [500, 5000], period: 10m, for: 30m}} or {{spike: 5, for: 5s, every: 60s}}"))),
    };
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scaled_shape_keeps_its_times_and_spikes() {
        let s = LoadShape::parse("ramp 100..1000 over 60s, steps 200 400 each 10s, sine 100..300 period 1m for 2m, spike x5 for 5s every 60s").unwrap();
        let half = s.scaled(0.5);
        assert_eq!(half.peak() * 2.0, s.peak());
        assert_eq!(half.length_s(), s.length_s());
        assert_eq!(half.spikes, s.spikes);
        assert_eq!(half.to_string(), "ramp 50..500 over 1m, steps 100 200 each 10s, sine 50..150 period 1m for 2m, spike x5 for 5s every 1m from 1m");
        assert_eq!(LoadShape::fixed(900.0).scaled(1.0 / 3.0).as_fixed().map(|r| (r * 1e6).round() / 1e6), Some(300.0));
    }

    #[test]
    fn the_text_form_reads_every_kind_of_stage_and_writes_back_alike() {
        let s = LoadShape::parse(
            "ramp 100..5000 over 60s, hold 2m, 500 for 30s, steps 1000 2000 4k each 30s, sine 500..5000 period 10m for 30m, spike x5 for 5s every 60s",
        )
        .unwrap();
        assert_eq!(s.stages.len(), 5);
        assert_eq!(s.stages[0], Stage::Ramp { from: Some(100.0), to: 5000.0, over_s: 60.0 });
        assert_eq!(s.stages[1], Stage::Hold { level: None, for_s: Some(120.0) });
        assert_eq!(s.stages[3], Stage::Steps { levels: vec![1000.0, 2000.0, 4000.0], each_s: 30.0 });
        assert_eq!(s.spikes, Some(Spikes { factor: 5.0, for_s: 5.0, every_s: 60.0, first_at_s: 60.0 }));
        assert_eq!(s.length_s(), Some(60.0 + 120.0 + 30.0 + 90.0 + 1800.0));
        assert_eq!(s.peak(), 25_000.0, "5000 spiked ×5");
        assert_eq!(LoadShape::parse(&s.to_string()).unwrap(), s, "{s}");
        let steps = LoadShape::parse("steps 1000..4000 by 1000 each 10s").unwrap();
        assert_eq!(steps.stages[0], Stage::Steps { levels: vec![1000.0, 2000.0, 3000.0, 4000.0], each_s: 10.0 });
        assert_eq!(LoadShape::parse("ramp to 800 over 10s").unwrap().stages[0], Stage::Ramp { from: None, to: 800.0, over_s: 10.0 });
        assert_eq!(LoadShape::parse("5000/s").unwrap().as_fixed(), Some(5000.0));
        assert_eq!(LoadShape::parse("5000").unwrap().length_s(), None);
        assert_eq!(LoadShape::parse("0..200 over 5s").unwrap().peak(), 200.0);
    }

    #[test]
    fn bad_shapes_say_what_to_write() {
        for (bad, says) in [
            ("", "no stage"),
            ("hold 10s", "start with a level"),
            ("1000, 2000 for 5s", "only the last stage"),
            ("ramp 5000", "missing `over"),
            ("ramp fast over 5s", "not a level"),
            ("1000 for soon", "bad duration"),
            ("1000 for 0s", "longer than 0"),
            ("sine 5000..500 period 1m for 5m", "LOW at most HIGH"),
            ("100, spike x5 for 60s every 60s", "shorter than the time between"),
            ("1000 for 10s, jump 5", "unknown stage"),
        ] {
            let e = LoadShape::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_files_list_of_stages_reads_as_the_text_form() {
        let v: serde_json::Value = serde_json::json!([
            {"to": 5000, "over": "60s"},
            {"hold": "120s"},
            {"to": 500, "over": "30s"},
            {"rate": 800, "for": "10s"},
            {"steps": [1000, 2000], "each": "5s"},
            {"sine": [100, 900], "period": "1m", "for": "2m"},
            "300 for 5s",
            {"spike": 3, "for": "2s", "every": "20s"}
        ]);
        let s = from_value(&v).unwrap();
        assert_eq!(s.stages.len(), 7);
        assert_eq!(s.stages[2], Stage::Ramp { from: None, to: 500.0, over_s: 30.0 });
        assert_eq!(s.spikes.as_ref().map(|s| s.factor), Some(3.0));
        assert_eq!(from_value(&serde_json::json!(2500)).unwrap().as_fixed(), Some(2500.0));
        assert!(from_value(&serde_json::json!([{"jump": 5}])).unwrap_err().to_string().contains("unknown stage keys"));
    }
}
