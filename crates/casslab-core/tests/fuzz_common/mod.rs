//! What the property tests of the parsers share: how many cases each runs (a few in the test
//! suite, more from `bench/fuzz.sh` through `CASSLAB_FUZZ_CASES`), text made of a grammar's own
//! words (so that cases reach past the first check) mixed with hostile numbers, and a tally
//! that `bench/fuzz.sh` reads: cases run, the slowest input and the process's peak memory.

#![allow(dead_code)]

use proptest::prelude::*;
use proptest::test_runner::Config;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Cases per property: `CASSLAB_FUZZ_CASES`, else a number that keeps the suite to seconds.
pub fn cases(default: u32) -> u32 {
    std::env::var("CASSLAB_FUZZ_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(default)
}

/// A runner config of `cases(default)` cases, without persisted failures (no files written).
pub fn config(default: u32) -> Config {
    Config { cases: cases(default), failure_persistence: None, ..Config::default() }
}

/// Numbers a careless or hostile user writes.
pub fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (1u32..10_000).prop_map(|n| n.to_string()),
        1 => Just("0".to_string()),
        1 => Just("-1".to_string()),
        1 => Just("1e300".to_string()),
        1 => Just("1e-300".to_string()),
        1 => Just("-1e308".to_string()),
        1 => Just("NaN".to_string()),
        1 => Just("inf".to_string()),
        1 => Just("99999999999".to_string()),
        1 => Just("18446744073709551616".to_string()),
        1 => Just("9223372036854775807".to_string()),
        1 => Just("5k".to_string()),
        1 => Just("0.001".to_string()),
        1 => (0u32..100_000).prop_map(|n| n.to_string()),
        1 => any::<f64>().prop_map(|f| f.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
    ]
}

/// Durations as written, sane and not.
pub fn duration() -> impl Strategy<Value = String> {
    prop_oneof![
        10 => (1u32..600).prop_map(|n| format!("{n}s")),
        1 => number().prop_map(|n| format!("{n}s")),
        1 => number().prop_map(|n| format!("{n}ms")),
        1 => number(),
        1 => Just("1000000h".to_string()),
        1 => Just("584942417355y".to_string()),
        1 => Just("1m30s".to_string()),
        1 => "[0-9a-z ]{0,8}",
    ]
}

/// Text made of `words` and hostile numbers and durations, joined by `sep`.
pub fn sentence(words: &'static [&'static str], sep: &'static str, max: usize) -> impl Strategy<Value = String> {
    let word = prop_oneof![4 => prop::sample::select(words).prop_map(str::to_string), 2 => number(), 1 => duration(), 1 => "\\PC{0,6}"];
    prop::collection::vec(word, 0..max).prop_map(move |w| w.join(sep))
}

/// Per property: cases run, cases whose input was accepted (read into a value and used), and
/// the slowest input.
#[derive(Default, Clone, Copy)]
struct Tally {
    cases: u64,
    accepted: u64,
    slowest: Duration,
}

static TALLY: Mutex<Vec<(&'static str, Tally)>> = Mutex::new(Vec::new());

fn with_tally(name: &'static str, f: impl FnOnce(&mut Tally)) {
    let mut all = TALLY.lock().unwrap_or_else(|e| e.into_inner());
    match all.iter_mut().find(|(n, _)| *n == name) {
        Some((_, t)) => f(t),
        None => {
            let mut t = Tally::default();
            f(&mut t);
            all.push((name, t));
        }
    }
}

/// Runs `f` on one input, timed into `name`'s tally.
pub fn timed<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    let took = t.elapsed();
    with_tally(name, |t| {
        t.cases += 1;
        t.slowest = t.slowest.max(took);
    });
    if std::env::var_os("CASSLAB_FUZZ_CASES").is_some() {
        report(name);
    }
    out
}

/// Counts an input of `name` that was accepted (so the cases are seen to reach past the first
/// check).
pub fn accepted(name: &'static str) {
    with_tally(name, |t| t.accepted += 1);
}

/// Prints `name`'s tally and the process's peak memory so far, after every case when
/// `CASSLAB_FUZZ_CASES` is set (`bench/fuzz.sh` keeps each property's last line):
/// `fuzz: NAME CASES cases (ACCEPTED accepted), slowest MS ms, peak RSS MIB MiB`.
pub fn report(name: &'static str) {
    let mut t = Tally::default();
    with_tally(name, |found| t = *found);
    // SAFETY: getrusage fills the struct it is given
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    eprintln!(
        "fuzz: {name} {} cases ({} accepted), slowest {:.1} ms, peak RSS {:.0} MiB",
        t.cases,
        t.accepted,
        t.slowest.as_secs_f64() * 1000.0,
        usage.ru_maxrss as f64 / 1024.0
    );
}
