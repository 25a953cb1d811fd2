//! Property tests: the parsers of what users type cannot panic, whatever they are given —
//! durations and units, rate and in-flight schedules (parsed, compiled into the schedule a run
//! follows and asked for its times), event specs, round-trip times, cassandra-stress command
//! lines. Every input ends in a value or an error; a value is then used as a run would use it.
//! The suite runs a few cases of each (seconds in all); `bench/fuzz.sh` runs many more and
//! prints their counts, the slowest input and the peak memory.

mod fuzz_common;

use casslab_core::limits;
use casslab_core::load_shape::{from_value, Curve, LoadShape};
use casslab_core::network::{parse_client_rtts, parse_rtts, Rtt};
use casslab_core::units::{parse_duration_s, parse_percent, parse_size_bytes, parse_start_ms};
use fuzz_common::{accepted, config, duration, number, report, sentence, timed};
use proptest::prelude::*;

const SHAPE_WORDS: &[&str] = &[
    "steps", "ramp", "hold", "sine", "spike", "x5", "by", "each", "over", "period", "for", "every", "from", "to", "..", "0..1e300", "1..2", "5k", "1s", "0s",
    ",",
];

/// One stage of a schedule, in the grammar, with hostile numbers and durations.
fn stage() -> impl Strategy<Value = String> {
    let (n, d) = (number, duration);
    prop_oneof![
        n(),
        (n(), d()).prop_map(|(a, b)| format!("{a} for {b}")),
        (n(), n(), d()).prop_map(|(a, b, c)| format!("ramp {a}..{b} over {c}")),
        (n(), d()).prop_map(|(a, b)| format!("ramp {a} over {b}")),
        d().prop_map(|a| format!("hold {a}")),
        (prop::collection::vec(n(), 1..5), d()).prop_map(|(l, b)| format!("steps {} each {b}", l.join(" "))),
        (n(), n(), n(), d()).prop_map(|(a, b, c, e)| format!("steps {a}..{b} by {c} each {e}")),
        (n(), n(), d(), d()).prop_map(|(a, b, c, e)| format!("sine {a}..{b} period {c} for {e}")),
        (n(), d(), d(), d()).prop_map(|(a, b, c, e)| format!("spike x{a} for {b} every {c} from {e}")),
    ]
}

/// A schedule: stages in the grammar, or words of it in any order.
fn schedule() -> impl Strategy<Value = String> {
    prop_oneof![3 => prop::collection::vec(stage(), 1..5).prop_map(|s| s.join(", ")), 1 => sentence(SHAPE_WORDS, " ", 14)]
}

/// A schedule that parsed, used as a run uses it: checked for the run's length, compiled, and
/// asked when its operations are due and what level it holds.
fn as_a_run_would(shape: &LoadShape) {
    let horizon_s = shape.length_s().unwrap_or(60.0).min(limits::MAX_DURATION_S);
    if shape.check_horizon(horizon_s).is_err() {
        return;
    }
    let curve = Curve::compile(shape, horizon_s);
    for k in [0u64, 1, 1000, u64::MAX / 2] {
        let _ = curve.time_of(k);
    }
    let _ = (curve.level_at(horizon_s / 2.0), curve.count_at(horizon_s), curve.peak_between(0.0, horizon_s.min(10.0)));
    let _ = shape.check_in_flight();
    let _ = shape.to_string();
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn durations_and_units_never_panic(text in prop_oneof![duration(), number(), "\\PC{0,16}"]) {
        timed("units", || {
            if let Ok(s) = parse_duration_s(&text) {
                accepted("units");
                prop_assert!((0.0..=limits::MAX_DURATION_S).contains(&s), "{text} read as {s}");
            }
            let _ = (parse_start_ms(&text), parse_size_bytes(&text), parse_percent(&text));
            Ok(())
        })?;
    }

    #[test]
    fn rate_schedules_never_panic_parsed_compiled_or_followed(text in schedule()) {
        timed("schedules", || {
            if let Ok(shape) = LoadShape::parse(&text) {
                accepted("schedules");
                as_a_run_would(&shape);
            }
            // a file's list of stages, as maps
            let v = serde_json::json!([{ "steps": [text.clone(), "1"], "each": "1s" }, { "to": text.clone(), "over": "1s" }]);
            if let Ok(shape) = from_value(&v) {
                as_a_run_would(&shape);
            }
        });
    }

    #[test]
    fn event_specs_never_panic(text in prop_oneof![
        (prop_oneof![duration(), Just("setup".to_string())], prop::sample::select(&["kill", "stop", "start", "rate", "ramp", "partition", "isolate", "slow", "lossy", "heal", "compact", "flush", "repair", "add", "decommission", "replace", "snapshot", "setcompactionthroughput", "settraceprobability", "client-loses", "exec"][..]), sentence(&["node1", "node2", "dc2", "ks.t", "over", "|", "node", "50%", "8ms"], " ", 4))
            .prop_map(|(at, action, arg)| format!("{at} {action} {arg}")),
        sentence(&["at", "10s", "kill", "node1", "rate", "ramp", "over", "partition", "|", ":"], " ", 10),
    ]) {
        timed("events", || {
            if casslab_core::events::parse_event(&text).is_ok() {
                accepted("events");
            }
        });
    }

    #[test]
    fn round_trip_times_never_panic(text in prop_oneof![
        (prop::sample::select(&["dc1", "dc2", "dc1; rm -rf /", ""][..]), prop::sample::select(&["dc1", "dc2", "x y"][..]), number(), prop::sample::select(&["ms", "us", "µs", "s", ""][..]), prop::option::of(number()))
            .prop_map(|(a, b, n, u, j)| format!("{a}:{b}={n}{u}{}", j.map(|j| format!("±{j}{u}")).unwrap_or_default())),
        sentence(&["dc1", "dc2", ":", "=", "8ms", "±", "+-", "1ms", "us", "µs", "s", ",", "dc1:dc2=", "dc2="], "", 10),
    ]) {
        timed("rtt", || {
            if let Ok(r) = Rtt::parse(&text) {
                accepted("rtt");
                prop_assert!(r.rtt_us <= casslab_core::network::MAX_RTT_US && r.jitter_us <= r.rtt_us);
            }
            if parse_rtts(std::slice::from_ref(&text)).is_ok() || parse_client_rtts(std::slice::from_ref(&text)).is_ok() {
                accepted("rtt");
            }
            Ok(())
        })?;
    }

    #[test]
    fn cassandra_stress_command_lines_never_panic(text in prop_oneof![
        3 => (prop::collection::vec((prop::sample::select(&["insert", "simple1", "q"][..]), number()), 1..4), prop::option::of(number()), prop::option::of(number()), prop::option::of((number(), number())), prop::option::of(number()))
            .prop_map(|(ops, n, threads, seq, fixed)| {
                let ops: Vec<String> = ops.iter().map(|(o, r)| format!("{o}={r}")).collect();
                let mut line = format!("cassandra-stress user profile=p.yaml ops({})", ops.join(","));
                line.push_str(&n.map(|n| format!(" n={n}")).unwrap_or_default());
                line.push_str(&threads.map(|t| format!(" -rate threads={t}")).unwrap_or_default());
                line.push_str(&fixed.map(|f| format!(" fixed={f}/s")).unwrap_or_default());
                line.push_str(&seq.map(|(a, b)| format!(" -pop seq={a}..{b}")).unwrap_or_default());
                line
            }),
        1 => sentence(&[
        "cassandra-stress", "user", "profile=p.yaml", "ops(", "ops(insert=", "insert=", "simple1=", ")", ",", "n=", "duration=", "cl=QUORUM",
        "-rate", "threads=", "fixed=", "throttle=", "/s", "-pop", "seq=", "dist=", "uniform(", "..", "-insert", "partitions=", "fixed(", "-node",
        "-port", "native=", "-mode", "user=", "password=", "truncate=once", "no-warmup", "-log", "\\(", "'",
    ], "", 16),
    ]) {
        timed("stress-command", || {
            if let Ok(c) = casslab_core::import::stress_command::parse_command(&text) {
                accepted("stress-command");
                // what it accepted runs: ratios that make a mix, requests in flight within the bound
                prop_assert!(c.ops.iter().all(|(_, r)| r.is_finite() && *r >= 0.0) && c.ops.iter().any(|(_, r)| *r > 0.0));
                prop_assert!(c.threads.is_none_or(|t| (1..=limits::MAX_CONCURRENCY as u64).contains(&t)));
                let _ = casslab_core::import::stress_command::casslab_command(&c, "w.yaml", Some(2.5));
            }
            Ok(())
        })?;
    }
}

/// The tallies, printed last (a property test of its own name runs after the others in
/// `--test-threads=1` order: `z`).
#[test]
fn z_report() {
    for name in ["units", "schedules", "events", "rtt", "stress-command"] {
        report(name);
    }
}
